"""Inventories of a provider: read, replace, set or remove one class (inside a transaction).

Every write compares the client's generation first (a cheap early failure), validates
with ``placement.capacity`` against the provider's current usage, and ends with the
compare-and-swap that makes a concurrent writer fail instead of being overwritten.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, Row, delete, func, insert, select, update

from vgpucloud.errors import NotFound
from vgpucloud.placement import capacity
from vgpucloud.placement.models import Inventory
from vgpucloud.storage import tables as t
from vgpucloud.storage.lookups import (
    bump_generation,
    check_generation,
    provider_row,
    resource_class_ids,
)

inv, rc = t.inventories, t.resource_classes
_FIELDS = ("total", "reserved", "min_unit", "max_unit", "step_size", "allocation_ratio")


def read(connection: Connection, provider_id: int) -> dict[str, Inventory]:
    rows = connection.execute(
        select(rc.c.name, *(inv.c[f] for f in _FIELDS))
        .join(rc, rc.c.id == inv.c.resource_class_id)
        .where(inv.c.resource_provider_id == provider_id)
        .order_by(rc.c.name)
    )
    return {row.name: _inventory(row) for row in rows}


def _inventory(row: Row[Any]) -> Inventory:
    return Inventory(
        resource_class=row.name, total=row.total, reserved=row.reserved,
        min_unit=row.min_unit, max_unit=row.max_unit, step_size=row.step_size,
        allocation_ratio=float(row.allocation_ratio),
    )


def usage(connection: Connection, provider_id: int) -> dict[str, int]:
    """Units allocated on the provider, by resource class name (classes in use only)."""
    alloc = t.allocations
    rows = connection.execute(
        select(rc.c.name, func.sum(alloc.c.used))
        .join(rc, rc.c.id == alloc.c.resource_class_id)
        .where(alloc.c.resource_provider_id == provider_id)
        .group_by(rc.c.name)
    )
    return {name: int(used) for name, used in rows}


def get(connection: Connection, uuid: str) -> tuple[int, dict[str, Inventory]]:
    row = provider_row(connection, uuid)
    return row.generation, read(connection, row.id)


def replace_all(
    connection: Connection,
    uuid: str,
    generation: int,
    inventories: Mapping[str, Inventory],
    *,
    check_usage: bool = True,
) -> tuple[int, dict[str, Inventory]]:
    """PUT /resource_providers/{uuid}/inventories. ``check_usage`` False is for the
    reshaper, which checks the final state of the whole request instead."""
    row = provider_row(connection, uuid)
    check_generation(row, generation)
    for name, inventory in inventories.items():
        capacity.check_inventory(uuid, _named(name, inventory))
    ids = resource_class_ids(
        connection, list(inventories),
        f"Unknown resource class in inventory for resource provider {uuid}: ",
    )
    current = read(connection, row.id)
    if check_usage:
        used = usage(connection, row.id)
        for name in current.keys() - inventories.keys():
            capacity.check_removal(uuid, name, used.get(name, 0))
        for name, inventory in inventories.items():
            capacity.check_usage_fits(uuid, _named(name, inventory), used.get(name, 0))
    new_generation = bump_generation(connection, row.id, uuid, generation)
    removed = [name for name in current if name not in inventories]
    if removed:
        _delete_classes(connection, row.id, removed)
    for name, inventory in inventories.items():
        _upsert(connection, row.id, ids[name], _named(name, inventory), name in current)
    return new_generation, read(connection, row.id)


def set_one(connection: Connection, uuid: str, generation: int, inventory: Inventory) -> int:
    """PUT /resource_providers/{uuid}/inventories/{rc}: create or update one class."""
    row = provider_row(connection, uuid)
    check_generation(row, generation)
    capacity.check_inventory(uuid, inventory)
    name = inventory.resource_class
    ids = resource_class_ids(
        connection, [name], f"Unknown resource class in inventory for resource provider {uuid}: "
    )
    existing = read(connection, row.id)
    capacity.check_usage_fits(uuid, inventory, usage(connection, row.id).get(name, 0))
    new_generation = bump_generation(connection, row.id, uuid, generation)
    _upsert(connection, row.id, ids[name], inventory, name in existing)
    return new_generation


def delete_one(connection: Connection, uuid: str, generation: int, resource_class: str) -> int:
    row = provider_row(connection, uuid)
    check_generation(row, generation)
    if resource_class not in read(connection, row.id):
        raise NotFound(
            f"No inventory of class {resource_class} found for delete on resource provider "
            f"{uuid}."
        )
    capacity.check_removal(uuid, resource_class, usage(connection, row.id).get(resource_class, 0))
    new_generation = bump_generation(connection, row.id, uuid, generation)
    _delete_classes(connection, row.id, [resource_class])
    return new_generation


def delete_all(connection: Connection, uuid: str) -> int:
    """No client generation (API 1.5), but still a compare-and-swap against what we read."""
    row = provider_row(connection, uuid)
    used = {name: n for name, n in usage(connection, row.id).items() if n}
    if used:
        capacity.check_removal(uuid, ", ".join(sorted(used)), sum(used.values()))
    new_generation = bump_generation(connection, row.id, uuid, row.generation)
    connection.execute(delete(inv).where(inv.c.resource_provider_id == row.id))
    return new_generation


def _named(name: str, inventory: Inventory) -> Inventory:
    """The inventory under the class name it is keyed by (the key is authoritative)."""
    if inventory.resource_class == name:
        return inventory
    return Inventory(name, inventory.total, inventory.reserved, inventory.min_unit,
                     inventory.max_unit, inventory.step_size, inventory.allocation_ratio)


def _upsert(
    connection: Connection, provider_id: int, rc_id: int, inventory: Inventory, exists: bool
) -> None:
    values = {f: getattr(inventory, f) for f in _FIELDS}
    if exists:
        connection.execute(
            update(inv)
            .where(inv.c.resource_provider_id == provider_id, inv.c.resource_class_id == rc_id)
            .values(**values)
        )
    else:
        connection.execute(
            insert(inv).values(resource_provider_id=provider_id, resource_class_id=rc_id, **values)
        )


def _delete_classes(connection: Connection, provider_id: int, names: list[str]) -> None:
    rc_ids = select(rc.c.id).where(rc.c.name.in_(names))
    connection.execute(
        delete(inv).where(
            inv.c.resource_provider_id == provider_id, inv.c.resource_class_id.in_(rc_ids)
        )
    )
