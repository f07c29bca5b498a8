"""The one WSGI application of ``vgpucloud api``: services mounted by path prefix.

The mount table is data; later milestones add rows::

    /placement      Placement API (OpenStack Placement 1.0-1.39)
    /compute/v2.1   Compute API subset        (later)
    /image/v2       image records             (later)
    /internal/v1    agent API (hosts, heartbeats, host tasks)

``GET /`` lists the mounted services and needs no authentication. Every response, from any
service, carries an ``x-openstack-request-id``.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import webob

from vgpucloud.api import faults
from vgpucloud.api.internal.service import SUMMARY as INTERNAL_SUMMARY
from vgpucloud.api.internal.service import InternalService
from vgpucloud.api.placement.service import PlacementService
from vgpucloud.api.placement.versions import MAX_VERSION, MIN_VERSION
from vgpucloud.api.requestid import ENVIRON_KEY as REQUEST_ID_KEY
from vgpucloud.api.requestid import with_request_id
from vgpucloud.compute.hosttasks import HostTaskStore
from vgpucloud.conf import Settings
from vgpucloud.placement.ports import PlacementStore

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


@dataclasses.dataclass(frozen=True, slots=True)
class Mount:
    """A service at ``prefix``; ``summary`` is its entry in the root version document."""

    prefix: str
    name: str
    app: WSGIApp
    summary: dict[str, Any]


def placement_mount(settings: Settings, store: PlacementStore) -> Mount:
    return Mount("/placement", "placement", PlacementService(settings, store), {
        "min_version": str(MIN_VERSION), "max_version": str(MAX_VERSION)})


def internal_mount(settings: Settings, tasks: HostTaskStore) -> Mount:
    return Mount("/internal/v1", "internal", InternalService(settings, tasks), INTERNAL_SUMMARY)


class MountedApp:
    """Dispatch on the longest matching prefix, moving it from PATH_INFO to SCRIPT_NAME."""

    def __init__(self, mounts: Sequence[Mount]) -> None:
        self.mounts = sorted(mounts, key=lambda m: len(m.prefix), reverse=True)

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "") or "/"
        for mount in self.mounts:
            if path == mount.prefix or path.startswith(mount.prefix + "/"):
                environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + mount.prefix
                environ["PATH_INFO"] = path[len(mount.prefix):]
                return mount.app(environ, start_response)
        if path == "/" and environ.get("REQUEST_METHOD") in ("GET", "HEAD"):
            return self._root(environ, start_response)
        response = faults.error_response(
            404, f"No service at {path}; the services are "
            f"{', '.join(m.prefix for m in self.mounts)} (see GET /).",
            code="vgpucloud.not_found", request_id=environ.get(REQUEST_ID_KEY))
        return response(environ, start_response)

    def _root(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request = webob.Request(environ)
        services = [{"name": m.name, "href": request.host_url + m.prefix, **m.summary}
                    for m in sorted(self.mounts, key=lambda m: m.prefix)]
        response = webob.Response(
            body=json.dumps({"services": services}).encode(),
            content_type="application/json", charset=None)
        return response(environ, start_response)


def make_app(
    settings: Settings, store: PlacementStore, extra_mounts: Sequence[Mount] = ()
) -> WSGIApp:
    """The whole API: Placement plus any ``extra_mounts`` (compute, image, internal)."""
    mounts = [placement_mount(settings, store), *extra_mounts]
    return with_request_id(MountedApp(mounts))
