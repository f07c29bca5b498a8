"""How Placement values look on the wire, per microversion. Handlers fetch, views render."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vgpucloud.api.placement.context import PlacementRequest
from vgpucloud.placement.models import (
    Allocation,
    Consumer,
    Inventory,
    ResourceClass,
    ResourceProvider,
)


def provider_links(request: PlacementRequest, uuid: str) -> list[dict[str, str]]:
    base = request.url(f"/resource_providers/{uuid}")
    links = [("self", base), ("inventories", f"{base}/inventories"),
             ("usages", f"{base}/usages")]
    if request.at_least(1):
        links.append(("aggregates", f"{base}/aggregates"))
    if request.at_least(6):
        links.append(("traits", f"{base}/traits"))
    if request.at_least(11):
        links.append(("allocations", f"{base}/allocations"))
    return [{"rel": rel, "href": href} for rel, href in links]


def provider(request: PlacementRequest, rp: ResourceProvider) -> dict[str, Any]:
    body: dict[str, Any] = {"uuid": rp.uuid, "name": rp.name, "generation": rp.generation}
    if request.at_least(14):
        body["parent_provider_uuid"] = rp.parent_provider_uuid
        body["root_provider_uuid"] = rp.root_provider_uuid
    body["links"] = provider_links(request, rp.uuid)
    return body


def providers(request: PlacementRequest, rps: Iterable[ResourceProvider]) -> dict[str, Any]:
    return {"resource_providers": [provider(request, rp) for rp in rps]}


def inventory(inv: Inventory) -> dict[str, Any]:
    return {"total": inv.total, "reserved": inv.reserved, "min_unit": inv.min_unit,
            "max_unit": inv.max_unit, "step_size": inv.step_size,
            "allocation_ratio": inv.allocation_ratio}


def inventories(generation: int, invs: Mapping[str, Inventory]) -> dict[str, Any]:
    return {"inventories": {rc: inventory(inv) for rc, inv in sorted(invs.items())},
            "resource_provider_generation": generation}


def one_inventory(generation: int, inv: Inventory) -> dict[str, Any]:
    return {"resource_provider_generation": generation, **inventory(inv)}


def resource_class(request: PlacementRequest, rc: ResourceClass) -> dict[str, Any]:
    href = request.url(f"/resource_classes/{rc.name}")
    return {"name": rc.name, "links": [{"rel": "self", "href": href}]}


def consumer_allocations(
    request: PlacementRequest, consumer: Consumer | None, allocations: Iterable[Allocation],
    provider_generations: Mapping[str, int],
) -> dict[str, Any]:
    """GET /allocations/{consumer_uuid}::

        {"allocations": {RP: {"generation": 3, "resources": {"VGPU": 1}}},
         "project_id": "p", "user_id": "u", "consumer_generation": 1, "consumer_type": "INSTANCE"}
    """
    by_provider: dict[str, dict[str, Any]] = {}
    for alloc in allocations:
        entry = by_provider.setdefault(alloc.provider_uuid, {
            "generation": provider_generations[alloc.provider_uuid], "resources": {}})
        entry["resources"][alloc.resource_class] = alloc.used
    body: dict[str, Any] = {"allocations": by_provider}
    if consumer is None or not by_provider:
        return body
    if request.at_least(12):
        body["project_id"] = consumer.project_id
        body["user_id"] = consumer.user_id
    if request.at_least(28):
        body["consumer_generation"] = consumer.generation
    if request.at_least(38):
        body["consumer_type"] = consumer.consumer_type or "unknown"
    return body


def provider_allocations(generation: int, allocations: Iterable[Allocation]) -> dict[str, Any]:
    by_consumer: dict[str, dict[str, Any]] = {}
    for alloc in allocations:
        entry = by_consumer.setdefault(alloc.consumer_uuid, {"resources": {}})
        entry["resources"][alloc.resource_class] = alloc.used
    return {"allocations": by_consumer, "resource_provider_generation": generation}
