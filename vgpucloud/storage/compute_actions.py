"""Instance actions and their events (``os-instance-actions``).

An action is one user request against one instance, keyed by (instance, request id); its
events are the steps workflows record with ``start_event``/``finish_event``. Both are
idempotent so a conductor that crashed and re-runs a step records it once.
"""

from __future__ import annotations

import datetime
from typing import Any

from sqlalchemy import Connection, insert, select, update

from vgpucloud.compute.models import ActionEvent, InstanceAction
from vgpucloud.errors import NotFound
from vgpucloud.storage.hosts import utcnow
from vgpucloud.storage.nova_tables import instance_action_events as events
from vgpucloud.storage.nova_tables import instance_actions as actions

ACTION_NOT_FOUND = "compute.instance_action.not_found"
ERROR = "Error"


def start_action(db: Connection, request_id: str, action: str, instance_uuid: str,
                 project_id: str, user_id: str, now: datetime.datetime) -> None:
    if _action_row(db, instance_uuid, request_id) is not None:
        return
    db.execute(insert(actions).values(
        request_id=request_id, action=action, instance_uuid=instance_uuid,
        project_id=project_id, user_id=user_id, start_time=now, updated_at=now))


def start_event(db: Connection, request_id: str, instance_uuid: str, event: str,
                host: str | None) -> None:
    action_id = _require_action(db, instance_uuid, request_id).id
    if _event_row(db, action_id, event) is None:
        db.execute(insert(events).values(action_id=action_id, event=event,
                                         start_time=utcnow(), host=host))


def finish_event(db: Connection, request_id: str, instance_uuid: str, event: str,
                 result: str, traceback: str | None) -> None:
    action_id = _require_action(db, instance_uuid, request_id).id
    now = utcnow()
    if _event_row(db, action_id, event) is None:
        # A step that failed before it could record its start still shows up.
        db.execute(insert(events).values(action_id=action_id, event=event, start_time=now))
    db.execute(update(events).where(events.c.action_id == action_id, events.c.event == event)
               .values(finish_time=now, result=result, traceback=traceback))
    changes: dict[str, Any] = {"updated_at": now}
    if result == ERROR:
        changes["message"] = ERROR
    db.execute(update(actions).where(actions.c.id == action_id).values(**changes))


def list_for_instance(db: Connection, instance_uuid: str) -> list[InstanceAction]:
    rows = db.execute(select(actions).where(actions.c.instance_uuid == instance_uuid)
                      .order_by(actions.c.start_time.desc(), actions.c.id.desc()))
    return [_action(row, ()) for row in rows]


def get_with_events(db: Connection, instance_uuid: str, request_id: str) -> InstanceAction:
    row = _require_action(db, instance_uuid, request_id)
    rows = db.execute(select(events).where(events.c.action_id == row.id)
                      .order_by(events.c.start_time, events.c.id))
    return _action(row, tuple(_event(e) for e in rows))


def _action_row(db: Connection, instance_uuid: str, request_id: str) -> Any:
    return db.execute(select(actions).where(actions.c.instance_uuid == instance_uuid,
                                            actions.c.request_id == request_id)).first()


def _require_action(db: Connection, instance_uuid: str, request_id: str) -> Any:
    row = _action_row(db, instance_uuid, request_id)
    if row is None:
        raise NotFound(f"Action for request_id {request_id} on instance {instance_uuid} not "
                       "found; list the instance's actions to see their request ids",
                       code=ACTION_NOT_FOUND)
    return row


def _event_row(db: Connection, action_id: int, event: str) -> Any:
    return db.execute(select(events).where(events.c.action_id == action_id,
                                           events.c.event == event)).first()


def _action(row: Any, found_events: tuple[ActionEvent, ...]) -> InstanceAction:
    return InstanceAction(
        request_id=row.request_id, action=row.action, instance_uuid=row.instance_uuid,
        project_id=row.project_id, user_id=row.user_id, start_time=row.start_time,
        message=row.message, events=found_events)


def _event(row: Any) -> ActionEvent:
    return ActionEvent(event=row.event, start_time=row.start_time,
                       finish_time=row.finish_time, result=row.result,
                       traceback=row.traceback, host=row.host)
