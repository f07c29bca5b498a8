"""/resource_classes and /resource_classes/{name} (1.2+)."""

from __future__ import annotations

import webob

from vgpucloud.api import jsonbody
from vgpucloud.api.placement import views
from vgpucloud.api.placement.context import (
    PlacementRequest,
    empty_response,
    json_response,
)
from vgpucloud.api.placement.schemas import resource_class as schema


def list_classes(request: PlacementRequest) -> webob.Response:
    classes = request.store.list_resource_classes()
    body = {"resource_classes": [views.resource_class(request, rc) for rc in classes]}
    return json_response(request, body)


def show_class(request: PlacementRequest) -> webob.Response:
    rc = request.store.get_resource_class(request.params["name"])
    return json_response(request, views.resource_class(request, rc))


def create_class(request: PlacementRequest) -> webob.Response:
    data = request.body(schema.POST_V1_2)
    rc = request.store.create_resource_class(data["name"])
    return empty_response(201, location=request.url(f"/resource_classes/{rc.name}"))


def rename_class(request: PlacementRequest) -> webob.Response:
    """PUT before 1.7: ``{"name": "CUSTOM_NEW"}`` renames a custom class."""
    data = request.body(schema.PUT_V1_2)
    rc = request.store.rename_resource_class(request.params["name"], data["name"])
    return json_response(request, views.resource_class(request, rc))


def ensure_class(request: PlacementRequest) -> webob.Response:
    """PUT from 1.7: no body; 201 when created, 204 when it already existed."""
    name = request.params["name"]
    jsonbody.validate({"name": name}, schema.POST_V1_2)
    if request.store.ensure_resource_class(name):
        return empty_response(201, location=request.url(f"/resource_classes/{name}"))
    return empty_response(204)


def delete_class(request: PlacementRequest) -> webob.Response:
    request.store.delete_resource_class(request.params["name"])
    return empty_response()
