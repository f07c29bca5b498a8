"""Host work from the conductor's side: enqueue a ``spawn``/``destroy`` task for an agent
and wait (bounded) for its result.

Task UUIDs are derived from (kind, instance, host), so a conductor that resumes a workflow
after a crash finds the task its predecessor queued instead of queueing a second one.
"""

from __future__ import annotations

import dataclasses
import time
import uuid as uuidlib
from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine

from vgpucloud.compute.hosttasks import FINAL_STATES, TASK_EVENTS
from vgpucloud.compute.models import Instance
from vgpucloud.storage import tasks

_NAMESPACE = uuidlib.UUID("5b0e3f0c-8d4e-4c1e-9f55-6a3c1d2b7e90")


@dataclasses.dataclass(frozen=True, slots=True)
class HostTaskResult:
    uuid: str
    host: str
    state: str  # done | failed | timeout
    fault: str | None = None


def task_uuid(kind: str, instance_uuid: str, host: str, attempt: str = "") -> str:
    """A task's uuid derived from what it is for, so a conductor resuming a crashed one's
    workflow finds the task already queued instead of queueing a second one. ``attempt``
    separates user requests: a second ``DELETE`` after a failed destroy is a new task."""
    return str(uuidlib.uuid5(_NAMESPACE, f"{kind}:{instance_uuid}:{host}:{attempt}"))


def spawn_payload(instance: Instance) -> dict[str, Any]:
    """What the agent's ``spawn`` needs; the domain name is unique (display names are not)."""
    return {"instance_uuid": instance.uuid, "name": f"instance-{instance.uuid}",
            "vcpus": instance.flavor.vcpus, "memory_mb": instance.flavor.ram,
            "image": instance.image_ref}


def submit(engine: Engine, host: str, kind: str, instance_uuid: str,
           payload: Mapping[str, Any], attempt: str = "") -> str:
    uuid = task_uuid(kind, instance_uuid, host, attempt)
    task, _ = tasks.enqueue(engine, host, kind, payload, uuid)
    return task.uuid


def wait(engine: Engine, uuids: list[str], timeout: float,
         poll_interval: float) -> dict[str, HostTaskResult]:
    """Results of every task in ``uuids``; those unfinished after ``timeout`` are 'timeout'."""
    deadline = time.monotonic() + timeout
    results: dict[str, HostTaskResult] = {}
    pending = list(uuids)
    while pending:
        mark = TASK_EVENTS.mark()
        for uuid in list(pending):
            task = tasks.get_task(engine, uuid)
            if task.state in FINAL_STATES:
                results[uuid] = HostTaskResult(uuid, task.host, task.state, task.fault)
                pending.remove(uuid)
        if not pending:
            break
        if time.monotonic() >= deadline:
            for uuid in pending:
                host = tasks.get_task(engine, uuid).host
                results[uuid] = HostTaskResult(
                    uuid, host, "timeout",
                    f"the agent of host {host} did not finish task {uuid} within "
                    f"{timeout:g}s; check that its agent runs (vgpucloud agent) and is "
                    "leasing tasks")
            break
        TASK_EVENTS.wait(mark, poll_interval)
    return results
