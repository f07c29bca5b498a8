"""Consumers and their allocations (inside a transaction).

A write (``replace``) happens in three steps so that nothing is half-written and no
concurrent writer is silently overwritten:

1. read: the providers (with their generations), the consumers, their old allocations,
   then the inventories and usages of every provider the request touches;
2. check: provider/class existence, consumer generations, min/max/step and capacity
   over the whole request (``placement.capacity``);
3. write: compare-and-swap the generation of every provider whose allocations change
   (first, in id order, so concurrent writers queue on the same row locks instead of
   deadlocking), then of every consumer, then the allocation rows.

Because the generations are read before the usages, a writer that committed between our
read and our write has bumped a generation we are about to swap: we fail with
ConcurrentUpdate instead of over-allocating.
"""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, Row, bindparam, delete, func, insert, select, update

from vgpucloud.errors import BadRequest, ConcurrentUpdate, NotFound
from vgpucloud.placement import capacity
from vgpucloud.placement.consumers import check_consumer_generation
from vgpucloud.placement.models import Allocation, Consumer, ConsumerAllocationRequest, Inventory
from vgpucloud.storage import tables as t
from vgpucloud.storage.lookups import (
    bump_generation,
    get_or_create_all,
    now,
    provider_row,
    resource_class_ids,
    rp,
)

alloc, cons, rc = t.allocations, t.consumers, t.resource_classes
Key = tuple[int, int]  # (resource provider id, resource class id)

# The claim path's statements, built once with bound parameters: on SQLite building a
# statement costs several times more than running it, and a claim runs about ten.
_PROVIDERS_BY_UUID = select(rp.c.id, rp.c.uuid, rp.c.generation).where(
    rp.c.uuid.in_(bindparam("uuids", expanding=True)))
_CONSUMERS_BY_UUID = select(cons).where(cons.c.uuid.in_(bindparam("uuids", expanding=True)))
_OLD_ALLOCATIONS = (
    select(alloc.c.consumer_id, alloc.c.resource_provider_id, alloc.c.resource_class_id,
           alloc.c.used, rp.c.uuid, rp.c.generation)
    .join(rp, rp.c.id == alloc.c.resource_provider_id)
    .where(alloc.c.consumer_id.in_(bindparam("consumer_ids", expanding=True)))
)
_USED = (
    select(alloc.c.resource_provider_id, alloc.c.resource_class_id,
           func.sum(alloc.c.used).label("used"))
    .where(alloc.c.resource_provider_id.in_(bindparam("provider_ids", expanding=True)))
    .group_by(alloc.c.resource_provider_id, alloc.c.resource_class_id)
    .subquery("used")
)
_INVENTORIES_AND_USAGE = (
    select(t.inventories, _USED.c.used)
    .outerjoin(_USED, (_USED.c.resource_provider_id == t.inventories.c.resource_provider_id)
               & (_USED.c.resource_class_id == t.inventories.c.resource_class_id))
    .where(t.inventories.c.resource_provider_id.in_(bindparam("provider_ids", expanding=True)),
           t.inventories.c.resource_class_id.in_(bindparam("class_ids", expanding=True)))
)
_INSERT_CONSUMER = insert(cons)
_INSERT_ALLOCATION = insert(alloc)
_DELETE_ALLOCATIONS = delete(alloc).where(alloc.c.consumer_id == bindparam("consumer_id"))
_SWAP_CONSUMER = update(cons).where(cons.c.id == bindparam("c_id"),
                                    cons.c.generation == bindparam("c_expected"))


# --- reads -------------------------------------------------------------------------


def _consumer_select() -> Any:
    return (
        select(cons.c.id, cons.c.uuid, cons.c.generation, t.projects.c.external_id.label(
            "project"), t.users.c.external_id.label("user"), t.consumer_types.c.name.label("type"))
        .join(t.projects, t.projects.c.id == cons.c.project_id)
        .join(t.users, t.users.c.id == cons.c.user_id)
        .outerjoin(t.consumer_types, t.consumer_types.c.id == cons.c.consumer_type_id)
    )


def read_consumer(connection: Connection, uuid: str) -> Consumer | None:
    row = connection.execute(_consumer_select().where(cons.c.uuid == uuid)).first()
    if row is None:
        return None
    return Consumer(row.uuid, row.project, row.user, row.generation, row.type)


def _allocation_select() -> Any:
    return (
        select(cons.c.uuid.label("consumer"), rp.c.uuid.label("provider"),
               rc.c.name.label("rc"), alloc.c.used)
        .join(cons, cons.c.id == alloc.c.consumer_id)
        .join(rp, rp.c.id == alloc.c.resource_provider_id)
        .join(rc, rc.c.id == alloc.c.resource_class_id)
        .order_by(alloc.c.id)
    )


def consumer_allocations(connection: Connection, uuid: str) -> list[Allocation]:
    rows = connection.execute(_allocation_select().where(cons.c.uuid == uuid))
    return [Allocation(r.consumer, r.provider, r.rc, r.used) for r in rows]


def provider_allocations(connection: Connection, uuid: str) -> tuple[int, list[Allocation]]:
    row = provider_row(connection, uuid)
    rows = connection.execute(_allocation_select().where(alloc.c.resource_provider_id == row.id))
    return row.generation, [Allocation(r.consumer, r.provider, r.rc, r.used) for r in rows]


# --- writes ------------------------------------------------------------------------


@dataclasses.dataclass
class _Plan:
    """Everything read for one write, keyed by internal ids."""

    providers: dict[int, tuple[str, int]] = dataclasses.field(default_factory=dict)  # uuid, gen
    consumers: dict[str, Row[Any]] = dataclasses.field(default_factory=dict)
    old: dict[str, dict[Key, int]] = dataclasses.field(default_factory=dict)
    new: dict[str, dict[Key, int]] = dataclasses.field(default_factory=dict)
    rc_names: dict[int, str] = dataclasses.field(default_factory=dict)

    def changed_providers(self) -> list[int]:
        changed = set()
        for consumer, new in self.new.items():
            old = self.old.get(consumer, {})
            changed |= {key[0] for key in old.keys() | new.keys() if old.get(key) != new.get(key)}
        return sorted(changed)


def replace(
    connection: Connection,
    requests: Sequence[ConsumerAllocationRequest],
    *,
    check_capacity: bool = True,
) -> list[int]:
    """Make each consumer hold exactly its request; returns the ids of changed providers."""
    _check_unique_consumers(requests)
    plan = _read_plan(connection, requests)
    for request in requests:
        row = plan.consumers.get(request.consumer_uuid)
        check_consumer_generation(
            request.consumer_uuid, request.expected_generation,
            row.generation if row is not None else None,
        )
    if check_capacity:
        _check_capacity(connection, plan)
    changed = plan.changed_providers()
    for provider_id in changed:
        provider_uuid, generation = plan.providers[provider_id]
        bump_generation(connection, provider_id, provider_uuid, generation)
    for request in sorted(requests, key=lambda r: r.consumer_uuid):
        _write_consumer(connection, plan, request)
    return changed


def delete_for_consumer(connection: Connection, uuid: str) -> None:
    plan = _Plan()
    row = connection.execute(select(cons).where(cons.c.uuid == uuid)).first()
    if row is not None:
        plan.consumers[uuid] = row
        _read_old(connection, plan)
    if not plan.old.get(uuid):
        raise NotFound(f"No allocations for consumer '{uuid}'")
    plan.new[uuid] = {}
    for provider_id in plan.changed_providers():
        provider_uuid, generation = plan.providers[provider_id]
        bump_generation(connection, provider_id, provider_uuid, generation)
    _remove_consumer(connection, row)


def _check_unique_consumers(requests: Sequence[ConsumerAllocationRequest]) -> None:
    seen: set[str] = set()
    for request in requests:
        if request.consumer_uuid in seen:
            raise BadRequest(
                f"consumer {request.consumer_uuid} appears more than once in the request; "
                "send one entry per consumer"
            )
        seen.add(request.consumer_uuid)


def _read_plan(connection: Connection, requests: Sequence[ConsumerAllocationRequest]) -> _Plan:
    plan = _Plan()
    uuids = {p for r in requests for p in r.resources}
    rows = connection.execute(_PROVIDERS_BY_UUID, {"uuids": sorted(uuids)}).all() if uuids else []
    provider_ids = {row.uuid: row.id for row in rows}
    plan.providers.update({row.id: (row.uuid, row.generation) for row in rows})
    missing_providers = sorted(uuids - provider_ids.keys())
    if missing_providers:
        raise BadRequest(
            f"Allocation for resource provider '{missing_providers[0]}' that does not exist.")
    names = {name for r in requests for amounts in r.resources.values() for name in amounts}
    rc_ids = resource_class_ids(connection, names, f"{capacity.ALLOCATE}No such resource class ")
    plan.rc_names = {rc_id: name for name, rc_id in rc_ids.items()}
    for request in requests:
        plan.new[request.consumer_uuid] = {
            (provider_ids[p], rc_ids[name]): amount
            for p, amounts in request.resources.items()
            for name, amount in amounts.items()
        }
    consumer_rows = connection.execute(
        _CONSUMERS_BY_UUID, {"uuids": [r.consumer_uuid for r in requests]})
    plan.consumers = {row.uuid: row for row in consumer_rows}
    _read_old(connection, plan)
    return plan


def _read_old(connection: Connection, plan: _Plan) -> None:
    """Old allocations of the plan's existing consumers, and their providers' generations."""
    by_id = {row.id: uuid for uuid, row in plan.consumers.items()}
    if not by_id:
        return
    rows = connection.execute(_OLD_ALLOCATIONS, {"consumer_ids": sorted(by_id)})
    for row in rows:
        key = (row.resource_provider_id, row.resource_class_id)
        plan.old.setdefault(by_id[row.consumer_id], {})[key] = row.used
        plan.providers.setdefault(row.resource_provider_id, (row.uuid, row.generation))


def _check_capacity(connection: Connection, plan: _Plan) -> None:
    amounts: dict[Key, list[int]] = defaultdict(list)
    rewritten: dict[Key, int] = defaultdict(int)
    for consumer, new in plan.new.items():
        for key, amount in new.items():
            amounts[key].append(amount)
        for key, used in plan.old.get(consumer, {}).items():
            rewritten[key] += used
    if not amounts:
        return
    provider_ids = {key[0] for key in amounts}
    inventories, usage = _inventories_and_usage(connection, provider_ids, plan.rc_names)
    for key in sorted(amounts):
        provider_uuid = plan.providers[key[0]][0]
        capacity.check_allocation(
            provider_uuid, plan.rc_names[key[1]], inventories.get(key), amounts[key],
            usage.get(key, 0) - rewritten[key],
        )


def _inventories_and_usage(
    connection: Connection, provider_ids: Iterable[int], rc_names: dict[int, str]
) -> tuple[dict[Key, Inventory], dict[Key, int]]:
    """The inventories of these providers in these classes, and what is allocated from each
    (by every consumer), in one query."""
    rows = connection.execute(_INVENTORIES_AND_USAGE, {
        "provider_ids": sorted(provider_ids), "class_ids": sorted(rc_names)})
    inventories: dict[Key, Inventory] = {}
    usage: dict[Key, int] = {}
    for r in rows:
        key = (r.resource_provider_id, r.resource_class_id)
        inventories[key] = Inventory(
            rc_names[r.resource_class_id], r.total, r.reserved, r.min_unit, r.max_unit,
            r.step_size, float(r.allocation_ratio),
        )
        usage[key] = int(r.used or 0)
    return inventories, usage


def usages(connection: Connection, provider_ids: Iterable[int]) -> dict[Key, int]:
    """Units allocated by every consumer, per (provider id, resource class id)."""
    rows = connection.execute(
        select(alloc.c.resource_provider_id, alloc.c.resource_class_id, func.sum(alloc.c.used))
        .where(alloc.c.resource_provider_id.in_(list(provider_ids)))
        .group_by(alloc.c.resource_provider_id, alloc.c.resource_class_id)
    )
    return {(p, r): int(used) for p, r, used in rows}


def _write_consumer(
    connection: Connection, plan: _Plan, request: ConsumerAllocationRequest
) -> None:
    row = plan.consumers.get(request.consumer_uuid)
    new = plan.new[request.consumer_uuid]
    if not new:
        if row is not None:
            _remove_consumer(connection, row)
        return
    owners = [(t.projects, "external_id", request.project_id),
              (t.users, "external_id", request.user_id)]
    if request.consumer_type is not None:
        owners.append((t.consumer_types, "name", request.consumer_type))
    ids = get_or_create_all(connection, owners)
    values: dict[str, Any] = {"project_id": ids[0], "user_id": ids[1], "updated_at": now()}
    if request.consumer_type is not None:
        values["consumer_type_id"] = ids[2]
    if row is None:
        consumer_id = connection.execute(_INSERT_CONSUMER, {
            "uuid": request.consumer_uuid, "generation": 1, "created_at": now(), **values,
        }).inserted_primary_key[0]
    else:
        consumer_id = row.id
        _swap_consumer_generation(connection, row, **values)
        connection.execute(_DELETE_ALLOCATIONS, {"consumer_id": row.id})
    connection.execute(_INSERT_ALLOCATION, [
        {"consumer_id": consumer_id, "resource_provider_id": p, "resource_class_id": r,
         "used": used}
        for (p, r), used in sorted(new.items())
    ])


def _remove_consumer(connection: Connection, row: Row[Any]) -> None:
    _swap_consumer_generation(connection, row)
    connection.execute(_DELETE_ALLOCATIONS, {"consumer_id": row.id})
    connection.execute(delete(cons).where(cons.c.id == row.id))


def _swap_consumer_generation(connection: Connection, row: Row[Any], **values: Any) -> None:
    result = connection.execute(
        _SWAP_CONSUMER.values(generation=row.generation + 1, **values),
        {"c_id": row.id, "c_expected": row.generation})
    if result.rowcount != 1:
        raise ConcurrentUpdate(
            f"consumer generation conflict - consumer {row.uuid} changed after it was read at "
            f"generation {row.generation}; re-read its allocations and retry."
        )
