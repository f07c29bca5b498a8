"""What a Placement handler receives, and the helpers that build its responses.

A handler is ``(PlacementRequest) -> webob.Response``; it reads the negotiated microversion,
path parameters, the validated body and the store from the request, and raises
``vgpucloud.errors`` exceptions, which the service renders as Placement faults.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from collections.abc import Callable
from email.utils import format_datetime
from typing import Any

import webob

from vgpucloud.api import jsonbody
from vgpucloud.api.microversion import Version
from vgpucloud.conf import Settings
from vgpucloud.placement.ports import PlacementStore

SchemaChoice = dict[str, Any] | Callable[[Version], dict[str, Any]]


@dataclasses.dataclass(frozen=True, slots=True)
class PlacementRequest:
    http: webob.Request
    version: Version
    params: dict[str, str]
    store: PlacementStore
    settings: Settings

    def at_least(self, minor: int) -> bool:
        """True when the negotiated version is 1.<minor> or later."""
        return self.version >= (1, minor)

    def body(self, schema: SchemaChoice) -> Any:
        """The JSON body validated against ``schema`` (or ``schema(version)``)."""
        chosen = schema(self.version) if callable(schema) else schema
        return jsonbody.parse(self.http, chosen)

    def query(self) -> list[tuple[str, str]]:
        return list(self.http.GET.items())

    def url(self, path: str) -> str:
        """``/resource_providers/X`` under the service's mount point
        (``/placement/resource_providers/X``), as OpenStack Placement builds links."""
        return f"{self.http.script_name}{path}"


def json_response(
    request: PlacementRequest, body: Any, status: int = 200, *, location: str | None = None,
) -> webob.Response:
    """A JSON response; from 1.15 with ``cache-control: no-cache`` and ``last-modified``."""
    response = webob.Response(
        status=status, body=json.dumps(body).encode(), content_type="application/json",
        charset=None)
    if location:
        response.headers["Location"] = location
    if request.at_least(15):
        mark_uncacheable(response)
    return response


def mark_uncacheable(response: webob.Response) -> None:
    # Placement data changes under any client's feet; OpenStack tells caches so (1.15).
    response.headers["Cache-Control"] = "no-cache"
    response.headers["Last-Modified"] = format_datetime(
        datetime.datetime.now(datetime.UTC), usegmt=True)


def empty_response(status: int = 204, *, location: str | None = None) -> webob.Response:
    response = webob.Response(status=status)
    # A 204 has no body and no type; webob would otherwise announce text/html.
    del response.content_type
    response.headers.pop("Content-Length", None)
    if location:
        response.headers["Location"] = location
    return response
