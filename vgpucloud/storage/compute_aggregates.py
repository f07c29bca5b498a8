"""Host aggregates (Nova's): a name, hosts and metadata.

Nova keeps the availability zone as the metadata key ``availability_zone``; so do we, and
``Aggregate.availability_zone`` is read from it. Mirroring to Placement aggregates is the
API's job (it holds the PlacementStore), not storage's.
"""

from __future__ import annotations

import uuid as uuidlib
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Connection, delete, insert, select, update

from vgpucloud.compute.models import Aggregate
from vgpucloud.errors import Conflict, NotFound
from vgpucloud.storage.hosts import utcnow
from vgpucloud.storage.nova_tables import aggregate_hosts as hosts
from vgpucloud.storage.nova_tables import aggregate_metadata as meta
from vgpucloud.storage.nova_tables import aggregates

AZ_KEY = "availability_zone"
AGGREGATE_NOT_FOUND = "compute.aggregate.not_found"
AGGREGATE_NAME_EXISTS = "compute.aggregate.name_exists"
AGGREGATE_HAS_HOSTS = "compute.aggregate.has_hosts"
HOST_ALREADY_MEMBER = "compute.aggregate.host_exists"
HOST_NOT_MEMBER = "compute.aggregate.host_not_found"


def create(db: Connection, name: str, availability_zone: str | None) -> Aggregate:
    _refuse_taken_name(db, name)
    now = utcnow()
    aggregate_id = db.execute(insert(aggregates).values(
        uuid=str(uuidlib.uuid4()), name=name, created_at=now, updated_at=now)
    ).inserted_primary_key[0]  # type: ignore[index]
    if availability_zone is not None:
        db.execute(insert(meta).values(aggregate_id=aggregate_id, key=AZ_KEY,
                                       value=availability_zone))
    return require(db, aggregate_id)


def update_fields(db: Connection, aggregate_id: int, name: str | None,
                  availability_zone: str | None) -> Aggregate:
    current = require(db, aggregate_id)
    if name is not None and name != current.name:
        _refuse_taken_name(db, name)
        db.execute(update(aggregates).where(aggregates.c.id == aggregate_id).values(name=name))
    if availability_zone is not None:
        set_metadata(db, aggregate_id, {AZ_KEY: availability_zone})
    _touch(db, aggregate_id)
    return require(db, aggregate_id)


def remove(db: Connection, aggregate_id: int) -> None:
    current = require(db, aggregate_id)
    if current.hosts:
        raise Conflict(
            f"Cannot remove host aggregate {aggregate_id} ({current.name}): it still has "
            f"hosts {', '.join(current.hosts)}; remove them first "
            "(openstack aggregate remove host)", code=AGGREGATE_HAS_HOSTS)
    db.execute(delete(meta).where(meta.c.aggregate_id == aggregate_id))
    db.execute(delete(aggregates).where(aggregates.c.id == aggregate_id))


def set_metadata(db: Connection, aggregate_id: int, changes: Mapping[str, str | None]) -> None:
    require(db, aggregate_id)
    for key, value in changes.items():
        db.execute(delete(meta).where(meta.c.aggregate_id == aggregate_id, meta.c.key == key))
        if value is not None:
            db.execute(insert(meta).values(aggregate_id=aggregate_id, key=key, value=value))
    _touch(db, aggregate_id)


def add_host(db: Connection, aggregate_id: int, host: str) -> Aggregate:
    current = require(db, aggregate_id)
    if host in current.hosts:
        raise Conflict(f"Aggregate {aggregate_id} already has host {host}.",
                       code=HOST_ALREADY_MEMBER)
    db.execute(insert(hosts).values(aggregate_id=aggregate_id, host=host))
    _touch(db, aggregate_id)
    return require(db, aggregate_id)


def remove_host(db: Connection, aggregate_id: int, host: str) -> Aggregate:
    require(db, aggregate_id)
    gone = db.execute(delete(hosts).where(hosts.c.aggregate_id == aggregate_id,
                                          hosts.c.host == host)).rowcount
    if gone != 1:
        raise NotFound(f"Cannot remove host {host} from aggregate {aggregate_id}: it is not "
                       "a member (openstack aggregate show lists the hosts)",
                       code=HOST_NOT_MEMBER)
    _touch(db, aggregate_id)
    return require(db, aggregate_id)


def require(db: Connection, aggregate_id: int) -> Aggregate:
    row = db.execute(select(aggregates).where(aggregates.c.id == aggregate_id)).first()
    if row is None:
        raise NotFound(f"Aggregate {aggregate_id} could not be found.", code=AGGREGATE_NOT_FOUND)
    return _aggregates(db, [row])[0]


def list_all(db: Connection) -> list[Aggregate]:
    return _aggregates(db, list(db.execute(select(aggregates).order_by(aggregates.c.id))))


def of_host(db: Connection, host: str) -> list[Aggregate]:
    ids = select(hosts.c.aggregate_id).where(hosts.c.host == host)
    rows = db.execute(select(aggregates).where(aggregates.c.id.in_(ids))
                      .order_by(aggregates.c.id))
    return _aggregates(db, list(rows))


def _aggregates(db: Connection, rows: list[Any]) -> list[Aggregate]:
    ids = [row.id for row in rows]
    members: dict[int, list[str]] = {i: [] for i in ids}
    metadata: dict[int, dict[str, str]] = {i: {} for i in ids}
    for aggregate_id, host in db.execute(select(hosts.c.aggregate_id, hosts.c.host)
                                         .where(hosts.c.aggregate_id.in_(ids))
                                         .order_by(hosts.c.id)):
        members[aggregate_id].append(host)
    for aggregate_id, key, value in db.execute(select(meta.c.aggregate_id, meta.c.key,
                                                      meta.c.value)
                                               .where(meta.c.aggregate_id.in_(ids))):
        metadata[aggregate_id][key] = value
    return [Aggregate(id=row.id, uuid=row.uuid, name=row.name,
                      availability_zone=metadata[row.id].get(AZ_KEY),
                      hosts=tuple(members[row.id]), metadata=metadata[row.id],
                      created_at=row.created_at, updated_at=row.updated_at) for row in rows]


def _refuse_taken_name(db: Connection, name: str) -> None:
    if db.scalar(select(aggregates.c.id).where(aggregates.c.name == name)) is not None:
        raise Conflict(f"Aggregate {name} already exists; pick another name or use the "
                       "existing one", code=AGGREGATE_NAME_EXISTS)


def _touch(db: Connection, aggregate_id: int) -> None:
    db.execute(update(aggregates).where(aggregates.c.id == aggregate_id)
               .values(updated_at=utcnow()))
