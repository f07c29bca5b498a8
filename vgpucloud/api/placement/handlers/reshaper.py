"""POST /reshaper (1.30+): move inventories and allocations in one atomic step, e.g. when
a host's VGPU inventory moves from the root provider to per-pGPU child providers."""

from __future__ import annotations

import webob

from vgpucloud.api.placement.context import PlacementRequest, empty_response
from vgpucloud.api.placement.handlers.allocation import consumer_request
from vgpucloud.api.placement.handlers.inventory import build_inventory
from vgpucloud.api.placement.schemas import allocation as schema
from vgpucloud.errors import BadRequest, ResourceProviderNotFound


def reshape(request: PlacementRequest) -> webob.Response:
    data = request.body(schema.reshaper_schema)
    inventories = {
        rp_uuid: (entry["resource_provider_generation"],
                  {rc: build_inventory(request, rp_uuid, rc, record)
                   for rc, record in entry["inventories"].items()})
        for rp_uuid, entry in data["inventories"].items()
    }
    allocations = [consumer_request(request, consumer, body)
                   for consumer, body in data["allocations"].items()]
    try:
        request.store.reshape(inventories, allocations)
    except ResourceProviderNotFound as exc:
        raise BadRequest(f"Unable to reshape: {exc.message}") from exc
    return empty_response()
