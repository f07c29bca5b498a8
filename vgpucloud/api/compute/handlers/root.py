"""Version documents: ``GET /compute/v2.1/`` (one version) and ``GET /compute/`` (all)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import webob

from vgpucloud.api.compute import faults
from vgpucloud.api.compute.context import ComputeRequest, json_response
from vgpucloud.api.compute.versions import v21_document, versions_document


def v21_home(request: ComputeRequest) -> webob.Response:
    return json_response({"version": v21_document(request.url("/"))})


def versions_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """``/compute``: the versions list, public like Nova's; anything else a 404 fault."""
    request = webob.Request(environ)
    if (request.path_info or "/") in ("/", "") and request.method in ("GET", "HEAD"):
        base = f"{request.host_url}{request.script_name}"
        response = json_response(versions_document(base))
    else:
        response = faults.fault_response(
            404, f"No Compute API at {request.script_name}{request.path_info}; the API is at "
            f"{request.script_name}/v2.1 (see GET {request.script_name}/)")
    return response(environ, start_response)
