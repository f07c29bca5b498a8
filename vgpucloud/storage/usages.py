"""Usages: per provider (GET /resource_providers/{uuid}/usages) and per project (GET /usages)."""

from __future__ import annotations

from collections import defaultdict

from sqlalchemy import Connection, func, select

from vgpucloud.storage import tables as t
from vgpucloud.storage.inventories import read as read_inventories
from vgpucloud.storage.inventories import usage as provider_usage
from vgpucloud.storage.lookups import provider_row

ALL, UNKNOWN = "all", "unknown"


def for_provider(connection: Connection, uuid: str) -> tuple[int, dict[str, int]]:
    """Every class the provider has inventory of, with its usage (0 when unused)."""
    row = provider_row(connection, uuid)
    used = provider_usage(connection, row.id)
    classes = read_inventories(connection, row.id)
    return row.generation, {name: used.get(name, 0) for name in classes}


def for_project(
    connection: Connection, project_id: str, user_id: str | None, consumer_type: str | None
) -> dict[str, dict[str, int]]:
    """``{group: {resource class: used, ..., "consumer_count": n}}``.

    ``consumer_type`` None: one group per consumer type (``unknown`` for consumers without
    one) plus ``all``; ``all``: only ``all``; ``unknown`` or a type name: only that group.
    The ``all`` group is what GET /usages returned before microversion 1.38; it is always
    present (possibly only ``{"consumer_count": 0}``) unless a single group was asked for.
    """
    alloc, cons, rc, types = t.allocations, t.consumers, t.resource_classes, t.consumer_types
    group = func.coalesce(types.c.name, UNKNOWN).label("group")
    query = (
        select(group, rc.c.name, func.sum(alloc.c.used))
        .select_from(alloc)
        .join(cons, cons.c.id == alloc.c.consumer_id)
        .join(rc, rc.c.id == alloc.c.resource_class_id)
        .join(t.projects, t.projects.c.id == cons.c.project_id)
        .outerjoin(types, types.c.id == cons.c.consumer_type_id)
        .where(t.projects.c.external_id == project_id)
        .group_by(group, rc.c.name)
    )
    if user_id is not None:
        query = query.join(t.users, t.users.c.id == cons.c.user_id).where(
            t.users.c.external_id == user_id
        )
    if consumer_type == UNKNOWN:
        query = query.where(cons.c.consumer_type_id.is_(None))
    elif consumer_type not in (None, ALL):
        query = query.where(types.c.name == consumer_type)
    result: dict[str, dict[str, int]] = defaultdict(dict)
    for name, resource_class, used in connection.execute(query):
        bucket = ALL if consumer_type == ALL else name
        result[bucket][resource_class] = result[bucket].get(resource_class, 0) + int(used)
        if consumer_type is None:
            result[ALL][resource_class] = result[ALL].get(resource_class, 0) + int(used)
    for bucket, count in _consumer_counts(connection, project_id, user_id, consumer_type).items():
        result[bucket]["consumer_count"] = count
    if consumer_type in (None, ALL):
        result[ALL].setdefault("consumer_count", 0)
    return dict(result)


def _consumer_counts(
    connection: Connection, project_id: str, user_id: str | None, consumer_type: str | None
) -> dict[str, int]:
    cons, types = t.consumers, t.consumer_types
    group = func.coalesce(types.c.name, UNKNOWN).label("group")
    query = (
        select(group, func.count(cons.c.id))
        .select_from(cons)
        .join(t.projects, t.projects.c.id == cons.c.project_id)
        .outerjoin(types, types.c.id == cons.c.consumer_type_id)
        .where(t.projects.c.external_id == project_id)
        .group_by(group)
    )
    if user_id is not None:
        query = query.join(t.users, t.users.c.id == cons.c.user_id).where(
            t.users.c.external_id == user_id
        )
    counts = {name: int(n) for name, n in connection.execute(query)}
    if consumer_type == ALL:
        return {ALL: sum(counts.values())}
    if consumer_type is not None:
        return {consumer_type: counts[consumer_type]} if consumer_type in counts else {}
    return {**counts, ALL: sum(counts.values())}
