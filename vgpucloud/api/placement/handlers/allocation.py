"""/allocations/{consumer_uuid}, POST /allocations (1.13+) and
/resource_providers/{uuid}/allocations."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import webob

from vgpucloud.api.placement import views
from vgpucloud.api.placement.context import (
    PlacementRequest,
    empty_response,
    json_response,
)
from vgpucloud.api.placement.schemas import allocation as schema
from vgpucloud.errors import BadRequest, ResourceProviderNotFound
from vgpucloud.placement.models import (
    ConsumerAllocationRequest,
    ExpectedGeneration,
    GenerationCheck,
)

# OpenStack Placement's [placement] incomplete_consumer_project_id / _user_id default:
# the owner recorded for consumers written before 1.8 made project and user mandatory.
INCOMPLETE_CONSUMER_ID = "00000000-0000-0000-0000-000000000000"


def show_consumer_allocations(request: PlacementRequest) -> webob.Response:
    consumer_uuid = request.params["consumer_uuid"]
    allocations = request.store.get_consumer_allocations(consumer_uuid)
    consumer = request.store.get_consumer(consumer_uuid) if allocations else None
    generations = {uuid: request.store.get_provider(uuid).generation
                   for uuid in {a.provider_uuid for a in allocations}}
    return json_response(
        request, views.consumer_allocations(request, consumer, allocations, generations))


def _resources_from_list(items: list[dict[str, Any]]) -> dict[str, dict[str, int]]:
    """Pre-1.12 list form -> provider uuid -> resource class -> amount."""
    resources: dict[str, dict[str, int]] = {}
    for item in items:
        resources.setdefault(item["resource_provider"]["uuid"], {}).update(item["resources"])
    return resources


def consumer_request(
    request: PlacementRequest, consumer_uuid: str, data: Mapping[str, Any]
) -> ConsumerAllocationRequest:
    """The domain request for one consumer's body at the negotiated version."""
    allocations = data["allocations"]
    if isinstance(allocations, list):
        resources = _resources_from_list(allocations)
    else:
        resources = {rp: dict(entry["resources"]) for rp, entry in allocations.items()}
    # Older microversions keep what the body cannot say from the existing consumer; from
    # 1.38 the body says everything and the read is skipped.
    existing = None if request.at_least(38) else request.store.get_consumer(consumer_uuid)
    if request.at_least(8):
        project_id, user_id = data["project_id"], data["user_id"]
    elif existing is not None:
        project_id, user_id = existing.project_id, existing.user_id
    else:
        project_id = user_id = INCOMPLETE_CONSUMER_ID
    expected: ExpectedGeneration = GenerationCheck.SKIP
    if request.at_least(28):
        expected = data["consumer_generation"]
    consumer_type = data.get("consumer_type") if request.at_least(38) else (
        existing.consumer_type if existing is not None else None)
    return ConsumerAllocationRequest(
        consumer_uuid=consumer_uuid, resources=resources, project_id=project_id,
        user_id=user_id, expected_generation=expected, consumer_type=consumer_type)


def write_allocations(
    request: PlacementRequest, requests: list[ConsumerAllocationRequest]
) -> None:
    """Hand the writes to the store; a provider that does not exist is the client's error."""
    try:
        request.store.replace_allocations(requests)
    except ResourceProviderNotFound as exc:
        raise BadRequest(
            f"Unable to allocate inventory: {exc.message}; allocate only on existing "
            "resource providers.") from exc


def replace_consumer_allocations(request: PlacementRequest) -> webob.Response:
    consumer_uuid = request.params["consumer_uuid"]
    data = request.body(schema.put_schema)
    write_allocations(request, [consumer_request(request, consumer_uuid, data)])
    return empty_response()


def post_allocations(request: PlacementRequest) -> webob.Response:
    data = request.body(schema.post_schema)
    write_allocations(request, [consumer_request(request, consumer, body)
                                for consumer, body in data.items()])
    return empty_response()


def delete_consumer_allocations(request: PlacementRequest) -> webob.Response:
    request.store.delete_allocations(request.params["consumer_uuid"])
    return empty_response()


def list_provider_allocations(request: PlacementRequest) -> webob.Response:
    generation, allocations = request.store.get_provider_allocations(request.params["uuid"])
    return json_response(request, views.provider_allocations(generation, allocations))
