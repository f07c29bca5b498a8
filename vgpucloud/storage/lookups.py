"""Resolve client names and uuids to ids, build domain values from rows, bump generations.

Every query module builds on these, inside the caller's transaction.
"""

from __future__ import annotations

import datetime
import functools
from collections.abc import Collection, Iterable, Sequence
from typing import Any

from sqlalchemy import Connection, Row, Select, Table, bindparam, insert, select, update
from sqlalchemy.exc import IntegrityError

from vgpucloud.errors import BadRequest, ConcurrentUpdate, ResourceProviderNotFound
from vgpucloud.placement.models import ResourceProvider
from vgpucloud.storage import tables as t

rp = t.resource_providers
_parent = rp.alias("parent")
_root = rp.alias("root")

PROVIDER_CONFLICT = "resource provider generation conflict"


def now() -> datetime.datetime:
    # Naive UTC: DateTime columns are timezone-less on every backend.
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


def provider_select() -> Select[Any]:
    """Providers with their parent's and root's uuid, as ``provider_from_row`` reads them."""
    return select(
        rp.c.id, rp.c.uuid, rp.c.name, rp.c.generation, rp.c.parent_provider_id,
        rp.c.root_provider_id, _parent.c.uuid.label("parent_uuid"),
        _root.c.uuid.label("root_uuid"),
    ).select_from(
        rp.outerjoin(_parent, _parent.c.id == rp.c.parent_provider_id)
        .outerjoin(_root, _root.c.id == rp.c.root_provider_id)
    )


def provider_from_row(row: Row[Any]) -> ResourceProvider:
    return ResourceProvider(
        uuid=row.uuid,
        name=row.name,
        generation=row.generation,
        parent_provider_uuid=row.parent_uuid,
        root_provider_uuid=row.root_uuid or row.uuid,
    )


def provider_row(connection: Connection, uuid: str) -> Row[Any]:
    """The provider's row (see ``provider_select``); ResourceProviderNotFound if none."""
    row = connection.execute(provider_select().where(rp.c.uuid == uuid)).first()
    if row is None:
        raise ResourceProviderNotFound(f"No resource provider with uuid {uuid} found.")
    return row


# Built once: constructing a statement costs more than running it on SQLite (see
# allocations.py, whose claim path is made of such statements).
_BUMP = (
    update(rp)
    .where(rp.c.id == bindparam("b_id"), rp.c.generation == bindparam("b_expected"))
    .values(generation=bindparam("b_new"), updated_at=bindparam("b_at"))
)


def bump_generation(
    connection: Connection, provider_id: int, provider_uuid: str, expected: int
) -> int:
    """Compare-and-swap the provider's generation from ``expected`` to ``expected + 1``."""
    result = connection.execute(_BUMP, {
        "b_id": provider_id, "b_expected": expected, "b_new": expected + 1, "b_at": now()})
    if result.rowcount != 1:
        raise ConcurrentUpdate(
            f"{PROVIDER_CONFLICT}: resource provider {provider_uuid} is no longer at "
            f"generation {expected}; re-read it and retry."
        )
    return expected + 1


def check_generation(row: Row[Any], expected: int) -> None:
    """Fail early when the client's generation is already stale."""
    if row.generation != expected:
        raise ConcurrentUpdate(
            f"{PROVIDER_CONFLICT}: resource provider {row.uuid} is at generation "
            f"{row.generation}, the request expected {expected}; re-read it and retry."
        )


def ids_by_name(
    connection: Connection, table: Table, names: Iterable[str], column: str = "name"
) -> dict[str, int]:
    """``{name: id}`` for the names that exist in ``table``."""
    wanted = set(names)
    if not wanted:
        return {}
    col = table.c[column]
    rows = connection.execute(select(col, table.c.id).where(col.in_(wanted)))
    return {name: row_id for name, row_id in rows}


# Built once: resource class ids are looked up on every claim, and building a SQLAlchemy
# statement costs more than running it on SQLite.
_RESOURCE_CLASS_IDS = select(t.resource_classes.c.name, t.resource_classes.c.id).where(
    t.resource_classes.c.name.in_(bindparam("names", expanding=True)))


def resource_class_ids(
    connection: Connection, names: Collection[str], unknown: str
) -> dict[str, int]:
    """``{name: id}``; BadRequest ``unknown`` + the missing names when any does not exist."""
    if not names:
        return {}
    found = {name: row_id for name, row_id in
             connection.execute(_RESOURCE_CLASS_IDS, {"names": sorted(set(names))})}
    missing = sorted(set(names) - found.keys())
    if missing:
        raise BadRequest(f"{unknown}{', '.join(missing)}.")
    return found


def names_by_id(connection: Connection, table: Table, ids: Iterable[int]) -> dict[int, str]:
    wanted = set(ids)
    if not wanted:
        return {}
    rows = connection.execute(select(table.c.id, table.c.name).where(table.c.id.in_(wanted)))
    return {row_id: name for row_id, name in rows}


def get_or_create(connection: Connection, table: Table, column: str, value: str) -> int:
    """The id of the row whose ``column`` is ``value``, inserting it if missing.

    The insert runs in a savepoint so that losing a race to a concurrent creator (unique
    violation) leaves our transaction usable and we read the winner's row.
    """
    col = table.c[column]
    found = connection.scalar(select(table.c.id).where(col == value))
    if found is not None:
        return int(found)
    try:
        with connection.begin_nested():
            result = connection.execute(insert(table).values({column: value}))
            return int(result.inserted_primary_key[0])
    except IntegrityError:
        found = connection.scalar(select(table.c.id).where(col == value))
        if found is None:
            raise
        return int(found)


def get_or_create_all(
    connection: Connection, wanted: Sequence[tuple[Table, str, str]]
) -> list[int]:
    """``get_or_create`` for several (table, column, value) at once: the rows that exist
    (the usual case: a project, a user and a consumer type seen before) are read in one
    round trip."""
    query = _ids_query(tuple((table, column) for table, column, _ in wanted))
    found = connection.execute(query, {f"v{i}": value for i, (_, _, value) in
                                       enumerate(wanted)}).one()
    return [
        int(row_id) if row_id is not None else get_or_create(connection, table, column, value)
        for row_id, (table, column, value) in zip(found, wanted, strict=True)
    ]


@functools.lru_cache(maxsize=64)
def _ids_query(columns: tuple[tuple[Table, str], ...]) -> Select[Any]:
    """``SELECT (SELECT id FROM t0 WHERE c0 = :v0), (SELECT id FROM t1 ...), ...``"""
    return select(*(
        select(table.c.id).where(table.c[column] == bindparam(f"v{i}")).scalar_subquery()
        for i, (table, column) in enumerate(columns)))
