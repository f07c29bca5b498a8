"""What a Compute (or image) handler receives, and the helpers building its responses.

A handler is ``(ComputeRequest) -> webob.Response``: it reads the negotiated microversion,
the caller, the path parameters and the validated body from the request, calls the stores,
and raises ``vgpucloud.errors`` exceptions, which the service renders as Nova faults.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import webob

from vgpucloud.api import faults, jsonbody
from vgpucloud.api.auth import Identity
from vgpucloud.api.microversion import Version
from vgpucloud.compute.api_ports import ComputeApiStore
from vgpucloud.conf import Settings
from vgpucloud.placement.ports import PlacementStore


@dataclasses.dataclass(frozen=True, slots=True)
class ComputeRequest:
    http: webob.Request
    version: Version
    params: dict[str, str]
    identity: Identity
    store: ComputeApiStore
    placement: PlacementStore
    settings: Settings

    def at_least(self, minor: int) -> bool:
        """True when the negotiated version is 2.<minor> or later."""
        return self.version >= (2, minor)

    @property
    def request_id(self) -> str:
        return str(self.http.environ.get("openstack.request_id", ""))

    def body(self, schema: dict[str, Any]) -> Any:
        return jsonbody.parse(self.http, schema)

    def require_admin(self, action: str) -> None:
        if not self.identity.is_admin:
            raise faults.forbidden(
                f"Policy doesn't allow {action} to be performed; it is for cloud admins "
                "(noauth2: X-Auth-Token: admin; keystone: role admin).")

    def url(self, path: str) -> str:
        """An absolute link under the service's mount (``http://h/compute/v2.1/flavors/1``)."""
        return f"{self.http.host_url}{self.http.script_name}{path}"

    def base_url(self, path: str) -> str:
        """A bookmark link: the service root without the version (``…/compute/flavors/1``)."""
        script = self.http.script_name
        root = script.rsplit("/", 1)[0] if "/v2" in script else script
        return f"{self.http.host_url}{root}{path}"


def json_response(body: Any, status: int = 200, *,
                  location: str | None = None) -> webob.Response:
    response = webob.Response(status=status, body=json.dumps(body).encode(),
                              content_type="application/json", charset=None)
    if location:
        response.headers["Location"] = location
    return response


def empty_response(status: int = 204) -> webob.Response:
    response = webob.Response(status=status)
    del response.content_type  # a 204 has no body and no type
    response.headers.pop("Content-Length", None)
    return response


def links(request: ComputeRequest, collection: str, item_id: str | int) -> list[dict[str, str]]:
    return [{"rel": "self", "href": request.url(f"/{collection}/{item_id}")},
            {"rel": "bookmark", "href": request.base_url(f"/{collection}/{item_id}")}]


def isotime(value: Any) -> str | None:
    """Nova's timestamp form: ``2024-05-01T12:00:00Z`` (UTC, no fraction)."""
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")
