"""Instances: create (with their actions and the conductor's build task), read, update.

Functions take a ``Connection`` inside the caller's transaction (``compute_store`` opens
one per port method), so a ``POST /servers`` writes its instances, their ``create`` actions
and the ``build`` task atomically: a conductor never sees a task without its instances.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, insert, select, update

from vgpucloud.compute.api_ports import InstanceQuery, ServerRequest
from vgpucloud.compute.models import (
    CONDUCTOR_QUEUE,
    BuildRequest,
    DeleteRequest,
    Fault,
    Flavor,
    Instance,
    TaskState,
    VmState,
)
from vgpucloud.compute.ports import Keep
from vgpucloud.errors import BadRequest, Conflict, NotFound
from vgpucloud.storage import compute_actions as actions
from vgpucloud.storage.hosts import utcnow
from vgpucloud.storage.nova_tables import instances
from vgpucloud.storage.tasks import enqueue_in

INSTANCE_NOT_FOUND = "compute.instance.not_found"
TASK_STATE_CONFLICT = "compute.instance.unexpected_task_state"


def create(db: Connection, request: ServerRequest) -> list[Instance]:
    now = utcnow()
    flavor = json.dumps(flavor_to_json(request.flavor), sort_keys=True)
    for index, (uuid, name) in enumerate(zip(request.uuids, request.names, strict=True)):
        db.execute(insert(instances).values(
            uuid=uuid, name=name, project_id=request.project_id, user_id=request.user_id,
            flavor=flavor, image_ref=request.image_ref, vm_state=VmState.BUILDING.value,
            task_state=TaskState.SCHEDULING.value, reservation_id=request.reservation_id,
            launch_index=index, metadata=json.dumps(dict(request.metadata), sort_keys=True),
            created_at=now, updated_at=now))
        actions.start_action(db, request.request_id, "create", uuid, request.project_id,
                             request.user_id, now)
    build = BuildRequest(request.request_id, request.uuids, request.min_count)
    enqueue_in(db, CONDUCTOR_QUEUE, "build", build.to_payload())
    return [require(db, uuid) for uuid in request.uuids]


def request_delete(db: Connection, uuid: str, request_id: str, project_id: str,
                   user_id: str) -> Instance:
    current = require(db, uuid)
    if current.vm_state is VmState.DELETED:
        raise NotFound(f"Instance {uuid} could not be found.", code=INSTANCE_NOT_FOUND)
    if current.task_state is TaskState.DELETING:
        return current  # a repeated DELETE: the first one's task is already queued
    now = utcnow()
    db.execute(update(instances).where(instances.c.uuid == uuid).values(
        task_state=TaskState.DELETING.value, updated_at=now))
    actions.start_action(db, request_id, "delete", uuid, project_id, user_id, now)
    enqueue_in(db, CONDUCTOR_QUEUE, "delete", DeleteRequest(request_id, uuid).to_payload())
    return require(db, uuid)


def update_fields(db: Connection, uuid: str, expected_task_state: Any,
                  changes: Mapping[str, Any]) -> Instance:
    """The InstanceStore's ``update_instance``; ``changes`` holds only non-KEEP fields."""
    values = _column_values(changes)
    now = utcnow()
    values["updated_at"] = now
    if changes.get("vm_state") is VmState.ACTIVE:
        values["launched_at"] = now
    if changes.get("vm_state") is VmState.DELETED:
        values["terminated_at"] = now
    statement = update(instances).where(instances.c.uuid == uuid)
    if not isinstance(expected_task_state, Keep):
        expected = None if expected_task_state is None else TaskState(expected_task_state).value
        statement = statement.where(instances.c.task_state.is_(None) if expected is None
                                    else instances.c.task_state == expected)
    if db.execute(statement.values(**values)).rowcount != 1:
        current = require(db, uuid)  # NotFound when it never existed
        raise Conflict(
            f"instance {uuid} has task_state {_shown(current.task_state)}, not "
            f"{_shown(expected_task_state)}; another request (e.g. a delete) changed it: "
            "re-read the instance and act on its current state", code=TASK_STATE_CONFLICT)
    return require(db, uuid)


def _shown(task_state: Any) -> str:
    return "None" if task_state is None else str(getattr(task_state, "value", task_state))


def _column_values(changes: Mapping[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for field, value in changes.items():
        if field == "fault":
            values["fault"] = None if value is None else json.dumps(fault_to_json(value))
        elif field in ("vm_state", "task_state"):
            values[field] = None if value is None else str(value.value)
        else:
            values[field] = value
    return values


def get(db: Connection, uuid: str) -> Instance | None:
    row = db.execute(select(instances).where(instances.c.uuid == uuid)).first()
    return None if row is None else _instance(row)


def require(db: Connection, uuid: str) -> Instance:
    found = get(db, uuid)
    if found is None:
        raise NotFound(f"Instance {uuid} could not be found.", code=INSTANCE_NOT_FOUND)
    return found


def list_matching(db: Connection, query: InstanceQuery) -> list[Instance]:
    statement = select(instances).order_by(instances.c.created_at.desc(), instances.c.id.desc())
    if query.project_id is not None:
        statement = statement.where(instances.c.project_id == query.project_id)
    if query.reservation_id is not None:
        statement = statement.where(instances.c.reservation_id == query.reservation_id)
    if query.host is not None:
        statement = statement.where(instances.c.host == query.host)
    if query.vm_states is not None:
        statement = statement.where(instances.c.vm_state.in_(sorted(query.vm_states)))
    elif not query.include_deleted:
        statement = statement.where(instances.c.vm_state != VmState.DELETED.value)
    found = [_instance(row) for row in db.execute(statement)]
    if query.name is not None:
        pattern = _name_pattern(query.name)
        found = [i for i in found if pattern.search(i.name)]
    return _page(found, query.marker, query.limit)


def _name_pattern(text: str) -> re.Pattern[str]:
    """``?name=vm-`` matches ``vm-1`` and ``my-vm-2``: Nova searches the regex anywhere."""
    try:
        return re.compile(text)
    except re.error as exc:
        raise BadRequest(f"name filter {text!r} is not a valid regular expression ({exc}); "
                         "escape special characters or send a plain name") from exc


def _page(found: Sequence[Instance], marker: str | None, limit: int | None) -> list[Instance]:
    start = 0
    if marker is not None:
        positions = [n for n, instance in enumerate(found) if instance.uuid == marker]
        if not positions:
            raise BadRequest(f"marker [{marker}] not found; pass the id of a server from the "
                             "previous page")
        start = positions[0] + 1
    end = None if limit is None else start + limit
    return list(found[start:end])


def flavor_to_json(flavor: Flavor) -> dict[str, Any]:
    data = dataclasses.asdict(flavor)
    data["extra_specs"] = dict(flavor.extra_specs)
    return data


def flavor_from_json(data: Mapping[str, Any]) -> Flavor:
    return Flavor(**{**data, "extra_specs": dict(data.get("extra_specs", {}))})


def fault_to_json(fault: Fault) -> dict[str, Any]:
    created = fault.created or utcnow()
    return {"code": fault.code, "message": fault.message, "details": fault.details,
            "created": created.isoformat()}


def _fault(text: str | None) -> Fault | None:
    if text is None:
        return None
    data = json.loads(text)
    return Fault(int(data["code"]), str(data["message"]), str(data.get("details", "")),
                 datetime.datetime.fromisoformat(data["created"]) if data.get("created")
                 else None)


def _instance(row: Any) -> Instance:
    return Instance(
        uuid=row.uuid, name=row.name, project_id=row.project_id, user_id=row.user_id,
        flavor=flavor_from_json(json.loads(row.flavor)), image_ref=row.image_ref,
        vm_state=VmState(row.vm_state),
        task_state=None if row.task_state is None else TaskState(row.task_state),
        host=row.host, node=row.node, fault=_fault(row.fault),
        reservation_id=row.reservation_id, launch_index=row.launch_index,
        created_at=row.created_at, updated_at=row.updated_at, launched_at=row.launched_at,
        terminated_at=row.terminated_at, metadata=json.loads(row.metadata))
