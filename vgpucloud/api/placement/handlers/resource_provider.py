"""/resource_providers and /resource_providers/{uuid}."""

from __future__ import annotations

import uuid as uuidlib

import webob

from vgpucloud.api.placement import params, views
from vgpucloud.api.placement.context import (
    PlacementRequest,
    empty_response,
    json_response,
)
from vgpucloud.api.placement.schemas import resource_provider as schema
from vgpucloud.errors import BadRequest, ResourceProviderNotFound
from vgpucloud.placement.models import ProviderFilter


def check_known_names(request: PlacementRequest, query: ProviderFilter) -> None:
    """400 for traits or resource classes that do not exist, as OpenStack answers."""
    missing = sorted(n for n in query.traits.all_names() if not request.store.trait_exists(n))
    if missing:
        raise BadRequest(f"No such trait(s): {', '.join(missing)}")
    if query.resources:
        known = {rc.name for rc in request.store.list_resource_classes()}
        unknown = sorted(set(query.resources) - known)
        if unknown:
            raise BadRequest(
                f"Invalid resource class in resources parameter: {', '.join(unknown)}")


def list_providers(request: PlacementRequest) -> webob.Response:
    query = params.provider_filter(request.query(), request.version)
    check_known_names(request, query)
    return json_response(request, views.providers(request, request.store.list_providers(query)))


def show_provider(request: PlacementRequest) -> webob.Response:
    rp = request.store.get_provider(request.params["uuid"])
    return json_response(request, views.provider(request, rp))


def create_provider(request: PlacementRequest) -> webob.Response:
    data = request.body(schema.POST_V1_14 if request.at_least(14) else schema.POST_V1_0)
    parent = data.get("parent_provider_uuid")
    rp_uuid = _normalized_uuid(data["uuid"]) if "uuid" in data else str(uuidlib.uuid4())
    try:
        rp = request.store.create_provider(data["name"], rp_uuid, parent)
    except ResourceProviderNotFound as exc:
        if parent is None:
            raise
        raise BadRequest(f"The parent provider {parent} does not exist; create it first or "
                         f"omit parent_provider_uuid ({exc.message})") from exc
    location = request.url(f"/resource_providers/{rp.uuid}")
    if request.at_least(20):
        return json_response(request, views.provider(request, rp), 200, location=location)
    return empty_response(201, location=location)


def update_provider(request: PlacementRequest) -> webob.Response:
    data = request.body(schema.PUT_V1_14 if request.at_least(14) else schema.PUT_V1_0)
    current = request.store.get_provider(request.params["uuid"])
    parent = data.get("parent_provider_uuid", current.parent_provider_uuid)
    try:
        rp = request.store.update_provider(
            current.uuid, data["name"], parent, allow_reparent=request.at_least(37))
    except ResourceProviderNotFound as exc:
        raise BadRequest(f"The parent provider {parent} does not exist: {exc.message}") from exc
    return json_response(request, views.provider(request, rp))


def delete_provider(request: PlacementRequest) -> webob.Response:
    request.store.delete_provider(request.params["uuid"])
    return empty_response()


def _normalized_uuid(text: str) -> str:
    # Placement stores the canonical dashed form whatever the client sent.
    return str(uuidlib.UUID(text))
