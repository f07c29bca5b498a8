"""Compute hosts and their durable tasks: the values the internal API (``/internal/v1``)
serves and the store protocol that ``storage`` implements.

A host task is a durable row with a lease (DESIGN §2, §7)::

    queued --lease--> leased --result--> done | failed
                        |  lease expires
                        +------------------> handed out again (attempts + 1)
"""

from __future__ import annotations

import dataclasses
import datetime
import threading
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

TASK_KINDS = ("spawn", "destroy")
FINAL_STATES = ("done", "failed")


@dataclasses.dataclass(frozen=True, slots=True)
class HostFacts:
    """What an agent tells about its host when it registers."""

    uuid: str | None = None
    hypervisor_type: str | None = None
    libvirt_version: str | None = None
    qemu_version: str | None = None
    kernel_version: str | None = None
    root_provider_uuid: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Host:
    name: str
    uuid: str
    facts: HostFacts
    enabled: bool
    last_heartbeat: datetime.datetime | None
    created_at: datetime.datetime
    updated_at: datetime.datetime


@dataclasses.dataclass(frozen=True, slots=True)
class Task:
    uuid: str
    host: str
    kind: str
    payload: Mapping[str, Any]
    state: str
    lease_owner: str | None
    lease_expires_at: datetime.datetime | None
    attempts: int
    result: Mapping[str, Any] | None
    fault: str | None
    created_at: datetime.datetime
    updated_at: datetime.datetime


class HostTaskStore(Protocol):
    """What the internal API needs from storage. Errors are ``vgpucloud.errors`` classes."""

    def register_host(self, name: str, facts: HostFacts) -> Host: ...

    def heartbeat(self, name: str) -> Host: ...

    def list_hosts(self) -> Sequence[Host]: ...

    def enqueue(self, host: str, kind: str, payload: Mapping[str, Any],
                uuid: str | None = None) -> tuple[Task, bool]: ...

    def lease(self, host: str, owner: str, lease_seconds: int, limit: int) -> Sequence[Task]: ...

    def finish(self, uuid: str, owner: str, state: str, result: Mapping[str, Any] | None,
               fault: str | None) -> Task: ...

    def get_task(self, uuid: str) -> Task: ...


class TaskEvents:
    """A process-wide counter of task changes that waiters can block on.

    Whoever waits for tasks (an agent's long-poll, an idle conductor, a conductor waiting
    for a spawn result) re-reads the database as soon as a task was queued or finished in
    this process, and at its poll interval otherwise: in the all-in-one cloud every writer
    is in-process, so a boot never waits for a poll tick; across processes the poll
    interval bounds the delay. Only a hint: the task rows are the truth.
    """

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._count = 0

    def notify(self) -> None:
        """Call after the transaction that queued or finished a task has committed."""
        with self._changed:
            self._count += 1
            self._changed.notify_all()

    def mark(self) -> int:
        """The current count: read it before checking the database, then ``wait(mark)``."""
        with self._changed:
            return self._count

    def wait(self, mark: int, timeout: float) -> bool:
        """Until something changed after ``mark`` or ``timeout`` passed; True if it changed.
        Changes between ``mark()`` and this call are not lost."""
        with self._changed:
            return self._changed.wait_for(lambda: self._count != mark, max(timeout, 0.0))


TASK_EVENTS = TaskEvents()
