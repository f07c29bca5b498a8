"""The compute side's nouns: flavors, images, instances, actions. Pure values.

The Compute API creates instances and hands the work to conductors through durable
conductor tasks (``storage.tasks`` rows with ``host = CONDUCTOR_QUEUE``); conductors
schedule, claim in Placement and hand host work to agents as ``spawn``/``destroy`` tasks.

An instance's life, as Nova shows it (``status`` is derived from ``vm_state``)::

    POST /servers ──► building/scheduling ──► building/spawning ──► active        (ACTIVE)
                            │                         │
                            └──── no fit ─────────────┴── failed ──► error        (ERROR)
    DELETE ──► <any>/deleting ──► deleted                                         (DELETED)
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
from collections.abc import Mapping
from typing import Any

# The conductor's work queue in the durable task table: a pseudo host name that no
# compute host can have (host names never contain '@').
CONDUCTOR_QUEUE = "@conductor"


class VmState(enum.StrEnum):
    BUILDING = "building"
    ACTIVE = "active"
    ERROR = "error"
    DELETED = "deleted"


class TaskState(enum.StrEnum):
    SCHEDULING = "scheduling"
    SPAWNING = "spawning"
    DELETING = "deleting"


STATUS_BY_VM_STATE = {
    VmState.BUILDING: "BUILD",
    VmState.ACTIVE: "ACTIVE",
    VmState.ERROR: "ERROR",
    VmState.DELETED: "DELETED",
}


@dataclasses.dataclass(frozen=True, slots=True)
class Flavor:
    """A flavor as Nova stores it; ``ram`` in MiB, ``disk`` in GiB (Nova's wire names)."""

    id: str
    name: str
    vcpus: int
    ram: int
    disk: int
    ephemeral: int = 0
    swap: int = 0
    rxtx_factor: float = 1.0
    is_public: bool = True
    description: str | None = None
    extra_specs: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Image:
    """An image record (no bits): what ``openstack server create --image`` resolves."""

    id: str
    name: str
    status: str = "active"
    disk_format: str = "qcow2"
    container_format: str = "bare"
    min_disk: int = 0
    min_ram: int = 0
    size: int | None = None
    visibility: str = "public"
    owner: str | None = None
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None
    properties: Mapping[str, Any] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class Fault:
    """Why an instance is in ERROR, shown as the server's ``fault``."""

    code: int
    message: str
    details: str = ""
    created: datetime.datetime | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Instance:
    uuid: str
    name: str
    project_id: str
    user_id: str
    flavor: Flavor  # a snapshot taken at boot: later flavor edits do not change it
    image_ref: str  # image id
    vm_state: VmState
    task_state: TaskState | None = None
    host: str | None = None
    node: str | None = None
    fault: Fault | None = None
    reservation_id: str = ""
    launch_index: int = 0
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None
    launched_at: datetime.datetime | None = None
    terminated_at: datetime.datetime | None = None
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)

    @property
    def status(self) -> str:
        """BUILD/ACTIVE/ERROR/DELETED; a server being deleted keeps its status and shows
        ``task_state = deleting``, as Nova does."""
        return STATUS_BY_VM_STATE[self.vm_state]


@dataclasses.dataclass(frozen=True, slots=True)
class Aggregate:
    """A host aggregate (Nova's, not Placement's): hosts + metadata, mirrored to a Placement
    aggregate of the same UUID on the hosts' root providers so ``member_of`` works."""

    id: int
    uuid: str
    name: str
    availability_zone: str | None = None
    hosts: tuple[str, ...] = ()
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)
    created_at: datetime.datetime | None = None
    updated_at: datetime.datetime | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ActionEvent:
    """One step of an action, named as Nova names them
    (``conductor_schedule_and_build_instances``, ``compute__do_build_and_run_instance``)."""

    event: str
    start_time: datetime.datetime
    finish_time: datetime.datetime | None = None
    result: str | None = None  # "Success" or "Error"
    traceback: str | None = None
    host: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class InstanceAction:
    """``os-instance-actions`` entry: one user request against one instance."""

    request_id: str
    action: str  # "create", "delete"
    instance_uuid: str
    project_id: str
    user_id: str
    start_time: datetime.datetime
    message: str | None = None  # "Error" when an event failed
    events: tuple[ActionEvent, ...] = ()


@dataclasses.dataclass(frozen=True, slots=True)
class BuildRequest:
    """Payload of a conductor ``build`` task: one ``POST /servers`` (all its instances, so
    ``min_count`` can be honoured as a whole)::

        {"request_id": "req-4c0f…", "instance_uuids": ["a68…", "5294…"], "min_count": 1}
    """

    request_id: str
    instance_uuids: tuple[str, ...]
    min_count: int = 1

    def to_payload(self) -> dict[str, Any]:
        return {"request_id": self.request_id, "instance_uuids": list(self.instance_uuids),
                "min_count": self.min_count}

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> BuildRequest:
        return cls(str(payload["request_id"]), tuple(str(u) for u in payload["instance_uuids"]),
                   int(payload.get("min_count", 1)))


@dataclasses.dataclass(frozen=True, slots=True)
class DeleteRequest:
    """Payload of a conductor ``delete`` task: ``{"request_id": "req-…", "instance_uuid": "…"}``."""

    request_id: str
    instance_uuid: str

    def to_payload(self) -> dict[str, Any]:
        return {"request_id": self.request_id, "instance_uuid": self.instance_uuid}

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> DeleteRequest:
        return cls(str(payload["request_id"]), str(payload["instance_uuid"]))
