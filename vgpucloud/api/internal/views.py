"""JSON documents of the internal API, e.g. one task::

    {"uuid": "5b0f...", "host": "compute-1", "kind": "spawn", "state": "leased",
     "payload": {"instance_uuid": "..."}, "lease_owner": "compute-1/3f2a",
     "lease_expires_at": "2026-11-21T16:02:24Z", "attempts": 1, "result": null,
     "fault": null, "created_at": "...", "updated_at": "..."}
"""

from __future__ import annotations

import datetime
from typing import Any

from vgpucloud.compute.hosttasks import Host, Task


def timestamp(value: datetime.datetime | None) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def host_view(host: Host) -> dict[str, Any]:
    facts = host.facts
    return {
        "name": host.name,
        "uuid": host.uuid,
        "hypervisor_type": facts.hypervisor_type,
        "libvirt_version": facts.libvirt_version,
        "qemu_version": facts.qemu_version,
        "kernel_version": facts.kernel_version,
        "root_provider_uuid": facts.root_provider_uuid,
        "enabled": host.enabled,
        "last_heartbeat": timestamp(host.last_heartbeat),
        "created_at": timestamp(host.created_at),
        "updated_at": timestamp(host.updated_at),
    }


def task_view(task: Task) -> dict[str, Any]:
    return {
        "uuid": task.uuid,
        "host": task.host,
        "kind": task.kind,
        "payload": dict(task.payload),
        "state": task.state,
        "lease_owner": task.lease_owner,
        "lease_expires_at": timestamp(task.lease_expires_at),
        "attempts": task.attempts,
        "result": None if task.result is None else dict(task.result),
        "fault": task.fault,
        "created_at": timestamp(task.created_at),
        "updated_at": timestamp(task.updated_at),
    }
