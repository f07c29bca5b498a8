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
