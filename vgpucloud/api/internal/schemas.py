"""JSON schemas of the internal API's request bodies (strict: typos fail)."""

from __future__ import annotations

from typing import Any

from vgpucloud.compute.hosttasks import FINAL_STATES, TASK_KINDS

MAX_LEASE_SECONDS = 3600
# Long-poll bound: long enough to save requests, short enough for proxies' idle timeouts.
MAX_WAIT_SECONDS = 30
MAX_TASKS_PER_LEASE = 100

_VERSION = {"type": ["string", "null"], "maxLength": 32}
_UUID = {"type": "string", "format": "uuid"}

register_host: dict[str, Any] = {
    "type": "object",
    "properties": {
        "uuid": _UUID,
        "hypervisor_type": {"type": ["string", "null"], "maxLength": 64},
        "libvirt_version": _VERSION,
        "qemu_version": _VERSION,
        "kernel_version": _VERSION,
        "root_provider_uuid": {"anyOf": [_UUID, {"type": "null"}]},
    },
    "additionalProperties": False,
}

lease: dict[str, Any] = {
    "type": "object",
    "properties": {
        "owner": {"type": "string", "minLength": 1, "maxLength": 255},
        "lease_seconds": {"type": "integer", "minimum": 1, "maximum": MAX_LEASE_SECONDS},
        "wait_seconds": {"type": "number", "minimum": 0, "maximum": MAX_WAIT_SECONDS},
        "max_tasks": {"type": "integer", "minimum": 1, "maximum": MAX_TASKS_PER_LEASE},
    },
    "required": ["owner", "lease_seconds"],
    "additionalProperties": False,
}

enqueue: dict[str, Any] = {
    "type": "object",
    "properties": {
        "uuid": _UUID,
        "host": {"type": "string", "minLength": 1, "maxLength": 255},
        "kind": {"enum": list(TASK_KINDS)},
        "payload": {"type": "object"},
    },
    "required": ["host", "kind", "payload"],
    "additionalProperties": False,
}

result: dict[str, Any] = {
    "type": "object",
    "properties": {
        "owner": {"type": "string", "minLength": 1, "maxLength": 255},
        "state": {"enum": list(FINAL_STATES)},
        "result": {"type": ["object", "null"]},
        "fault": {"type": ["string", "null"], "maxLength": 65535},
    },
    "required": ["owner", "state"],
    "additionalProperties": False,
}
