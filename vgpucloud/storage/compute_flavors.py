"""Flavors and their extra specs.

The API's flavor id is Nova's ``flavorid`` column (any string); the integer ``id`` is only
the join key for extra specs. Deleting a flavor never touches instances: each keeps the
snapshot it booted with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, delete, insert, or_, select, update

from vgpucloud.compute.models import Flavor
from vgpucloud.errors import Conflict, NotFound
from vgpucloud.storage.hosts import utcnow
from vgpucloud.storage.nova_tables import flavor_extra_specs as specs
from vgpucloud.storage.nova_tables import flavors

FLAVOR_NOT_FOUND = "compute.flavor.not_found"
FLAVOR_EXISTS = "compute.flavor.exists"
EXTRA_SPEC_NOT_FOUND = "compute.flavor.extra_spec_not_found"


def create(db: Connection, flavor: Flavor) -> Flavor:
    taken = db.execute(select(flavors.c.flavorid, flavors.c.name).where(or_(
        flavors.c.flavorid == flavor.id, flavors.c.name == flavor.name))).first()
    if taken is not None:
        what = (f"id {flavor.id}" if taken.flavorid == flavor.id else f"name {flavor.name}")
        raise Conflict(f"Flavor with {what} already exists; pick another or delete the "
                       "existing flavor first", code=FLAVOR_EXISTS)
    now = utcnow()
    row_id = db.execute(insert(flavors).values(
        flavorid=flavor.id, name=flavor.name, vcpus=flavor.vcpus, memory_mb=flavor.ram,
        root_gb=flavor.disk, ephemeral_gb=flavor.ephemeral, swap=flavor.swap,
        rxtx_factor=flavor.rxtx_factor, is_public=flavor.is_public,
        description=flavor.description, created_at=now, updated_at=now)
    ).inserted_primary_key[0]  # type: ignore[index]
    for key, value in flavor.extra_specs.items():
        db.execute(insert(specs).values(flavor_id=row_id, key=key, value=value))
    return require(db, flavor.id)


def require(db: Connection, flavor_id: str) -> Flavor:
    row = db.execute(select(flavors).where(flavors.c.flavorid == flavor_id)).first()
    if row is None:
        raise NotFound(f"Flavor {flavor_id} could not be found.", code=FLAVOR_NOT_FOUND)
    return _flavors(db, [row])[0]


def list_matching(db: Connection, is_public: bool | None, min_ram: int,
                  min_disk: int) -> list[Flavor]:
    statement = (select(flavors).where(flavors.c.memory_mb >= min_ram,
                                       flavors.c.root_gb >= min_disk)
                 .order_by(flavors.c.flavorid))
    if is_public is not None:
        statement = statement.where(flavors.c.is_public == is_public)
    return _flavors(db, list(db.execute(statement)))


def set_description(db: Connection, flavor_id: str, description: str | None) -> Flavor:
    row_id = _row_id(db, flavor_id)
    db.execute(update(flavors).where(flavors.c.id == row_id)
               .values(description=description, updated_at=utcnow()))
    return require(db, flavor_id)


def remove(db: Connection, flavor_id: str) -> None:
    row_id = _row_id(db, flavor_id)
    db.execute(delete(specs).where(specs.c.flavor_id == row_id))
    db.execute(delete(flavors).where(flavors.c.id == row_id))


def set_specs(db: Connection, flavor_id: str, changes: Mapping[str, str]) -> Flavor:
    row_id = _row_id(db, flavor_id)
    for key, value in changes.items():
        db.execute(delete(specs).where(specs.c.flavor_id == row_id, specs.c.key == key))
        db.execute(insert(specs).values(flavor_id=row_id, key=key, value=value))
    db.execute(update(flavors).where(flavors.c.id == row_id).values(updated_at=utcnow()))
    return require(db, flavor_id)


def delete_spec(db: Connection, flavor_id: str, key: str) -> Flavor:
    row_id = _row_id(db, flavor_id)
    gone = db.execute(delete(specs).where(specs.c.flavor_id == row_id, specs.c.key == key))
    if gone.rowcount != 1:
        raise NotFound(f"Flavor {flavor_id} has no extra spec with key {key}.",
                       code=EXTRA_SPEC_NOT_FOUND)
    return require(db, flavor_id)


def _row_id(db: Connection, flavor_id: str) -> int:
    row_id = db.scalar(select(flavors.c.id).where(flavors.c.flavorid == flavor_id))
    if row_id is None:
        raise NotFound(f"Flavor {flavor_id} could not be found.", code=FLAVOR_NOT_FOUND)
    return int(row_id)


def _flavors(db: Connection, rows: list[Any]) -> list[Flavor]:
    by_row: dict[int, dict[str, str]] = {row.id: {} for row in rows}
    if by_row:
        for flavor_id, key, value in db.execute(
                select(specs.c.flavor_id, specs.c.key, specs.c.value)
                .where(specs.c.flavor_id.in_(list(by_row))).order_by(specs.c.key)):
            by_row[flavor_id][key] = value
    return [Flavor(id=row.flavorid, name=row.name, vcpus=row.vcpus, ram=row.memory_mb,
                   disk=row.root_gb, ephemeral=row.ephemeral_gb, swap=row.swap,
                   rxtx_factor=row.rxtx_factor, is_public=bool(row.is_public),
                   description=row.description, extra_specs=by_row[row.id])
            for row in rows]
