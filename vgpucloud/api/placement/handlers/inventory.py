"""/resource_providers/{uuid}/inventories[/{resource_class}]."""

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
from vgpucloud.api.placement.schemas import inventory as schema
from vgpucloud.errors import BadRequest, Conflict, NotFound
from vgpucloud.placement.models import Inventory


def build_inventory(
    request: PlacementRequest, rp_uuid: str, resource_class: str, record: Mapping[str, Any]
) -> Inventory:
    """A domain ``Inventory`` from a validated record, with Placement's defaults, after the
    checks that relate two fields."""
    fields = {k: v for k, v in record.items()
              if k not in ("resource_provider_generation", "resource_class")}
    inv = Inventory(resource_class=resource_class, **fields)
    # 1.26 lets an operator reserve everything (take a provider out of service).
    if inv.reserved > inv.total or (inv.reserved == inv.total and not request.at_least(26)):
        relation = "greater than" if request.at_least(26) else "greater than or equal to"
        raise BadRequest(
            f"Unable to update inventory for resource provider {rp_uuid}: Invalid inventory "
            f"for '{resource_class}' on resource provider '{rp_uuid}'. The reserved value "
            f"({inv.reserved}) is {relation} total ({inv.total}).")
    if inv.min_unit > inv.max_unit:
        raise BadRequest(
            f"Unable to update inventory for resource provider {rp_uuid}: Invalid inventory "
            f"for '{resource_class}': min_unit ({inv.min_unit}) is greater than max_unit "
            f"({inv.max_unit}).")
    return inv


def list_inventories(request: PlacementRequest) -> webob.Response:
    generation, invs = request.store.get_inventories(request.params["uuid"])
    return json_response(request, views.inventories(generation, invs))


def replace_inventories(request: PlacementRequest) -> webob.Response:
    rp_uuid = request.params["uuid"]
    data = request.body(schema.PUT_ALL)
    invs = {rc: build_inventory(request, rp_uuid, rc, record)
            for rc, record in data["inventories"].items()}
    generation, stored = request.store.set_inventories(
        rp_uuid, data["resource_provider_generation"], invs)
    return json_response(request, views.inventories(generation, stored))


def delete_inventories(request: PlacementRequest) -> webob.Response:
    request.store.delete_all_inventories(request.params["uuid"])
    return empty_response()


def show_inventory(request: PlacementRequest) -> webob.Response:
    rp_uuid, rc = request.params["uuid"], request.params["resource_class"]
    generation, invs = request.store.get_inventories(rp_uuid)
    if rc not in invs:
        raise NotFound(f"No inventory of class {rc} for {rp_uuid}")
    return json_response(request, views.one_inventory(generation, invs[rc]))


def create_inventory(request: PlacementRequest) -> webob.Response:
    rp_uuid = request.params["uuid"]
    data = request.body(schema.POST_ONE)
    rc = data["resource_class"]
    _, current = request.store.get_inventories(rp_uuid)
    if rc in current:
        raise Conflict(f"Update conflict: Inventory for {rc} on resource provider "
                       f"{rp_uuid} already exists.")
    inv = build_inventory(request, rp_uuid, rc, data)
    generation = request.store.set_inventory(rp_uuid, data["resource_provider_generation"], inv)
    location = request.url(f"/resource_providers/{rp_uuid}/inventories/{rc}")
    return json_response(request, views.one_inventory(generation, inv), 201, location=location)


def update_inventory(request: PlacementRequest) -> webob.Response:
    rp_uuid, rc = request.params["uuid"], request.params["resource_class"]
    data = request.body(schema.PUT_ONE)
    _, current = request.store.get_inventories(rp_uuid)
    if rc not in current:
        raise BadRequest(
            f"No inventory record with resource class {rc} for resource provider {rp_uuid}; "
            "create it with POST or PUT .../inventories first.")
    inv = build_inventory(request, rp_uuid, rc, data)
    generation = request.store.set_inventory(rp_uuid, data["resource_provider_generation"], inv)
    return json_response(request, views.one_inventory(generation, inv))


def delete_inventory(request: PlacementRequest) -> webob.Response:
    rp_uuid, rc = request.params["uuid"], request.params["resource_class"]
    generation, current = request.store.get_inventories(rp_uuid)
    if rc not in current:
        raise NotFound(f"No inventory of class {rc} found for delete on {rp_uuid}")
    request.store.delete_inventory(rp_uuid, generation, rc)
    return empty_response()
