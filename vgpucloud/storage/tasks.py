"""Durable host tasks with a lease (DESIGN §2, §7): enqueue, lease, finish, read.

Leasing hands a host's queued tasks, and its leased tasks whose lease ran out, to one
agent. Two agents (or two API processes serving one agent's retries) never get the same
task:

- PostgreSQL and MariaDB (>= 10.6): ``SELECT ... FOR UPDATE SKIP LOCKED`` picks rows no
  other transaction is leasing right now, then one ``UPDATE`` marks them leased;
- SQLite: one ``UPDATE tasks SET ... WHERE id = (SELECT id ... LIMIT 1) RETURNING id`` per
  task, a compare-and-swap inside the write transaction that SQLite already serialises.

Timestamps are naive UTC from the API process's clock; leases are seconds to minutes long,
so ordinary NTP skew between API replicas does not matter.

Every committed enqueue and finish calls ``TASK_EVENTS.notify()`` (``compute.hosttasks``)
so that waiters in this process look again at once.
"""

from __future__ import annotations

import datetime
import json
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, Connection, Engine, and_, insert, or_, select, update

from vgpucloud.compute.hosttasks import FINAL_STATES, TASK_EVENTS, Host, HostFacts, Task
from vgpucloud.errors import BadRequest, Conflict, NotFound
from vgpucloud.storage import hosts as host_rows
from vgpucloud.storage.compute_tables import tasks
from vgpucloud.storage.hosts import utcnow
from vgpucloud.storage.tx import transaction

TASK_NOT_FOUND = "internal.task.not_found"
NOT_LEASE_OWNER = "internal.task.not_lease_owner"
DUPLICATE_TASK = "internal.task.duplicate"
_SKIP_LOCKED_DIALECTS = ("postgresql", "mysql", "mariadb")



def enqueue(engine: Engine, host: str, kind: str, payload: Mapping[str, Any],
            uuid: str | None = None) -> tuple[Task, bool]:
    """Queue a task; with ``uuid``, enqueueing the same task again returns it (created False)."""
    task, created = _enqueue(engine, host, kind, payload, uuid or str(uuidlib.uuid4()))
    if created:
        TASK_EVENTS.notify()
    return task, created


def _enqueue(engine: Engine, host: str, kind: str, payload: Mapping[str, Any],
             uuid: str) -> tuple[Task, bool]:
    body = json.dumps(payload, sort_keys=True)
    now = utcnow()
    with transaction(engine, write=True) as db:
        existing = _row(db, uuid)
        if existing is not None:
            if (existing.host, existing.kind, existing.payload) != (host, kind, body):
                raise Conflict(f"task {uuid} already exists for {existing.kind} on "
                               f"{existing.host} with another payload; use a new task uuid",
                               code=DUPLICATE_TASK)
            return _task(existing), False
        db.execute(insert(tasks).values(
            uuid=uuid, host=host, kind=kind, payload=body, state="queued", attempts=0,
            created_at=now, updated_at=now))
        return _require(db, uuid), True


def enqueue_in(db: Connection, host: str, kind: str, payload: Mapping[str, Any]) -> str:
    """Queue a task inside the caller's transaction, so it exists exactly when the rows it
    is about do (the Compute API's ``build`` task and its instances); returns its uuid.
    The caller calls ``TASK_EVENTS.notify()`` once its transaction has committed."""
    uuid = str(uuidlib.uuid4())
    now = utcnow()
    db.execute(insert(tasks).values(
        uuid=uuid, host=host, kind=kind, payload=json.dumps(payload, sort_keys=True),
        state="queued", attempts=0, created_at=now, updated_at=now))
    return uuid


def lease(engine: Engine, host: str, owner: str, lease_seconds: int, limit: int) -> list[Task]:
    """Up to ``limit`` of ``host``'s available tasks, oldest first, leased to ``owner``."""
    now = utcnow()
    values = {"state": "leased", "lease_owner": owner,
              "lease_expires_at": now + datetime.timedelta(seconds=lease_seconds),
              "attempts": tasks.c.attempts + 1, "updated_at": now}
    with transaction(engine, write=True) as db:
        if db.dialect.name in _SKIP_LOCKED_DIALECTS:
            pick = (select(tasks.c.id).where(_available(host, now)).order_by(tasks.c.id)
                    .limit(limit).with_for_update(skip_locked=True))
            ids = list(db.scalars(pick))
            if ids:
                db.execute(update(tasks).where(tasks.c.id.in_(ids)).values(**values))
        else:
            ids = []
            for _ in range(limit):
                first = (select(tasks.c.id).where(_available(host, now))
                         .order_by(tasks.c.id).limit(1).scalar_subquery())
                won = db.execute(update(tasks).where(tasks.c.id == first).values(**values)
                                 .returning(tasks.c.id)).scalar()
                if won is None:
                    break
                ids.append(won)
        rows = db.execute(select(tasks).where(tasks.c.id.in_(ids)).order_by(tasks.c.id))
        return [_task(row) for row in rows]


def finish(engine: Engine, uuid: str, owner: str, state: str,
           result: Mapping[str, Any] | None, fault: str | None) -> Task:
    """Record the outcome. Only the lease owner may; repeating its own report is a no-op."""
    task = _finish(engine, uuid, owner, state, result, fault)
    TASK_EVENTS.notify()
    return task


def _finish(engine: Engine, uuid: str, owner: str, state: str,
            result: Mapping[str, Any] | None, fault: str | None) -> Task:
    if state not in FINAL_STATES:
        raise BadRequest(f"task state {state!r} is not a result; use one of "
                         f"{', '.join(FINAL_STATES)}")
    with transaction(engine, write=True) as db:
        current = _require(db, uuid)
        if current.state == state and current.lease_owner == owner:
            return current  # the same report delivered twice
        changed = db.execute(
            update(tasks)
            .where(tasks.c.uuid == uuid, tasks.c.state == "leased", tasks.c.lease_owner == owner)
            .values(state=state, result=None if result is None else json.dumps(result),
                    fault=fault, updated_at=utcnow())).rowcount
        if changed != 1:
            holder = current.lease_owner or "nobody"
            raise Conflict(
                f"task {uuid} is {current.state} (lease owner {holder}), not leased by "
                f"{owner}; its lease expired and it was handed out again: drop this result",
                code=NOT_LEASE_OWNER)
        return _require(db, uuid)


def get_task(engine: Engine, uuid: str) -> Task:
    with transaction(engine, write=False) as db:
        return _require(db, uuid)


def _available(host: str, now: datetime.datetime) -> ColumnElement[bool]:
    expired = and_(tasks.c.state == "leased", tasks.c.lease_expires_at < now)
    return and_(tasks.c.host == host, or_(tasks.c.state == "queued", expired))


def _row(db: Connection, uuid: str) -> Any:
    return db.execute(select(tasks).where(tasks.c.uuid == uuid)).first()


def _require(db: Connection, uuid: str) -> Task:
    row = _row(db, uuid)
    if row is None:
        raise NotFound(f"task {uuid} does not exist; check the uuid (GET /tasks/{{uuid}})",
                       code=TASK_NOT_FOUND)
    return _task(row)


def _task(row: Any) -> Task:
    return Task(uuid=row.uuid, host=row.host, kind=row.kind, payload=json.loads(row.payload),
                state=row.state, lease_owner=row.lease_owner,
                lease_expires_at=row.lease_expires_at, attempts=row.attempts,
                result=None if row.result is None else json.loads(row.result),
                fault=row.fault, created_at=row.created_at, updated_at=row.updated_at)


class SqlHostTaskStore:
    """The internal API's ``HostTaskStore`` over ``engine``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    def register_host(self, name: str, facts: HostFacts) -> Host:
        return host_rows.register_host(self.engine, name, facts)

    def heartbeat(self, name: str) -> Host:
        return host_rows.heartbeat(self.engine, name)

    def list_hosts(self) -> Sequence[Host]:
        return host_rows.list_hosts(self.engine)

    def enqueue(self, host: str, kind: str, payload: Mapping[str, Any],
                uuid: str | None = None) -> tuple[Task, bool]:
        return enqueue(self.engine, host, kind, payload, uuid)

    def lease(self, host: str, owner: str, lease_seconds: int, limit: int) -> Sequence[Task]:
        return lease(self.engine, host, owner, lease_seconds, limit)

    def finish(self, uuid: str, owner: str, state: str, result: Mapping[str, Any] | None,
               fault: str | None) -> Task:
        return finish(self.engine, uuid, owner, state, result, fault)

    def get_task(self, uuid: str) -> Task:
        return get_task(self.engine, uuid)
