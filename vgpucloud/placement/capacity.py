"""Capacity rules of Placement (pure): valid inventories, allowed allocations, safe shrinking.

Storage gathers the numbers (inventory, usage) inside its transaction and asks these
functions; they raise the error a client sees, worded like OpenStack Placement's where
clients or operators match on it, followed by the numbers that explain it.

Capacity is ``(total - reserved) * allocation_ratio`` (``Inventory.capacity``): a T4 pGPU
provider with ``VGPU total=16`` takes sixteen 1-VGPU consumers and refuses the seventeenth.
"""

from __future__ import annotations

from collections.abc import Sequence

from vgpucloud.errors import BadRequest, Conflict, InventoryInUse
from vgpucloud.placement.models import MAX_FLOAT, Inventory

ALLOCATE = "Unable to allocate inventory: "


def check_inventory(provider_uuid: str, inventory: Inventory) -> None:
    """Refuse an inventory whose fields contradict each other (BadRequest)."""
    problem = inventory_problem(inventory)
    if problem:
        raise BadRequest(
            f"Unable to update inventory for resource provider {provider_uuid}: invalid "
            f"inventory of {inventory.resource_class}: {problem}."
        )


def inventory_problem(inventory: Inventory) -> str | None:
    """What is wrong with ``inventory`` on its own, or None."""
    inv = inventory
    if inv.total < 0 or inv.reserved < 0:
        return "total and reserved must not be negative"
    if inv.reserved > inv.total:
        return f"the reserved value {inv.reserved} is greater than total {inv.total}"
    if inv.min_unit < 1 or inv.max_unit < 1 or inv.step_size < 1:
        return "min_unit, max_unit and step_size must be at least 1"
    if inv.min_unit > inv.max_unit:
        return f"min_unit {inv.min_unit} is greater than max_unit {inv.max_unit}"
    if not 0 < inv.allocation_ratio <= MAX_FLOAT:
        return f"allocation_ratio {inv.allocation_ratio} must be above 0 and at most {MAX_FLOAT}"
    return None


def check_usage_fits(
    provider_uuid: str, inventory: Inventory, used: int, *, fencing_allowed: bool = True
) -> None:
    """Refuse an inventory change that leaves less room than is already allocated.

    Raising ``reserved`` up to ``total`` is always allowed (``fencing_allowed``): it stops new
    claims without touching existing ones, which is how an agent fences a pGPU whose type can
    no longer be created while guests still hold its vGPUs. Shrinking ``total`` or the
    ratio below what is allocated is refused. The reshaper passes ``fencing_allowed=False``:
    allocations it moves must fit the final inventory, reserved part excluded.
    """
    room = int(inventory.total * inventory.allocation_ratio) if fencing_allowed else (
        inventory.capacity)
    if used > room:
        raise InventoryInUse(
            f"Inventory for '{inventory.resource_class}' on resource provider "
            f"'{provider_uuid}' in use: {used} allocated but the new inventory has capacity "
            f"{room}; move or delete those allocations first."
        )


def check_removal(provider_uuid: str, resource_class: str, used: int) -> None:
    """Refuse removing an inventory that still has allocations against it."""
    if used:
        raise InventoryInUse(
            f"Inventory for '{resource_class}' on resource provider '{provider_uuid}' in use: "
            f"{used} allocated; move or delete those allocations before removing the inventory."
        )


def check_allocation(
    provider_uuid: str,
    resource_class: str,
    inventory: Inventory | None,
    amounts: Sequence[int],
    used_by_others: int,
) -> None:
    """Refuse allocating ``amounts`` (one per consumer written now) of ``resource_class`` on
    the provider when it has no such inventory, an amount breaks min/max/step, or together
    with ``used_by_others`` (consumers not being rewritten) they exceed the capacity.
    """
    where = f"'{resource_class}' on resource provider '{provider_uuid}'"
    if inventory is None:
        raise Conflict(f"{ALLOCATE}Inventory for {where} invalid.")
    for amount in amounts:
        problem = inventory.unit_problem(amount)
        if problem:
            raise Conflict(
                f"{ALLOCATE}Unable to create allocation for {where}. The requested amount "
                f"would violate inventory constraints: {problem}."
            )
    asked = sum(amounts)
    if used_by_others + asked > inventory.capacity:
        raise Conflict(
            f"{ALLOCATE}Unable to create allocation for {where}. The requested amount would "
            f"exceed the capacity: asked for {asked}, {used_by_others} of "
            f"{inventory.capacity} already in use."
        )
