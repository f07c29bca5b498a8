"""/resource_providers/{uuid}/aggregates (1.1+; generation in the body from 1.19)."""

from __future__ import annotations

import webob

from vgpucloud.api.placement.context import PlacementRequest, json_response
from vgpucloud.api.placement.schemas import aggregate as schema


def _body(request: PlacementRequest, generation: int, aggregates: list[str]) -> object:
    body: dict[str, object] = {"aggregates": sorted(aggregates)}
    if request.at_least(19):
        body["resource_provider_generation"] = generation
    return body


def list_aggregates(request: PlacementRequest) -> webob.Response:
    generation, aggregates = request.store.get_provider_aggregates(request.params["uuid"])
    return json_response(request, _body(request, generation, aggregates))


def replace_aggregates(request: PlacementRequest) -> webob.Response:
    rp_uuid = request.params["uuid"]
    if request.at_least(19):
        data = request.body(schema.PUT_V1_19)
        aggregates, generation = data["aggregates"], data["resource_provider_generation"]
    else:
        aggregates, generation = request.body(schema.PUT_V1_1), None
    new_generation = request.store.set_provider_aggregates(rp_uuid, aggregates, generation)
    return json_response(request, _body(request, new_generation, aggregates))
