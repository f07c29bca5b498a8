"""GET /placement/ — the version document; no authentication, as in OpenStack."""

from __future__ import annotations

import webob

from vgpucloud.api.placement.context import PlacementRequest, json_response
from vgpucloud.api.placement.versions import MAX_VERSION, MIN_VERSION


def version_document() -> dict[str, object]:
    return {"versions": [{
        "id": "v1.0", "max_version": str(MAX_VERSION), "min_version": str(MIN_VERSION),
        "status": "CURRENT", "links": [{"rel": "self", "href": ""}],
    }]}


def home(request: PlacementRequest) -> webob.Response:
    return json_response(request, version_document())
