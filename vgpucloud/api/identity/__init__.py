"""``/identity``: a Keystone v3 version document, no more.

Clients such as the ``openstack`` CLI discover the identity endpoint before anything else;
tokens are not issued here (noauth2 trusts the token; a real Keystone issues real ones).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import webob

from vgpucloud.api.compute import faults
from vgpucloud.api.compute.context import json_response

MEDIA_TYPES = [{"base": "application/json",
                "type": "application/vnd.openstack.identity-v3+json"}]


def v3_document(href: str) -> dict[str, Any]:
    return {"id": "v3.14", "status": "stable", "updated": "2020-04-07T00:00:00Z",
            "links": [{"rel": "self", "href": href}], "media-types": MEDIA_TYPES}


def identity_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    request = webob.Request(environ)
    base = f"{request.host_url}{request.script_name}"
    path = (request.path_info or "/").rstrip("/") or "/"
    if path == "/":
        response = json_response({"versions": {"values": [v3_document(f"{base}/v3/")]}}, 300)
    elif path == "/v3":
        response = json_response({"version": v3_document(f"{base}/v3/")})
    else:
        response = faults.fault_response(
            404, f"{request.path_info} is not served: this cloud's /identity only describes "
            "its version (noauth2 or an external Keystone issues tokens)")
    return response(environ, start_response)
