"""What the conductor needs from compute storage (``storage`` implements it).

The Compute API has a wider store of its own (flavors, images, aggregates, listing); this
port is the narrow part workflows use, so a conductor depends on nothing it does not call.
Every method is one transaction.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Protocol

from vgpucloud.compute.models import Aggregate, Fault, Instance, TaskState, VmState


class Keep(enum.Enum):
    """Marker for "leave this field as it is" in ``update_instance``."""

    KEEP = "keep"


KEEP = Keep.KEEP


class InstanceStore(Protocol):
    def get_instance(self, uuid: str) -> Instance:
        """Deleted instances too (their vm_state is DELETED); NotFound if never existed."""
        ...

    def update_instance(
        self,
        uuid: str,
        *,
        expected_task_state: TaskState | Keep | None = KEEP,
        vm_state: VmState | Keep = KEEP,
        task_state: TaskState | Keep | None = KEEP,
        host: str | Keep | None = KEEP,
        node: str | Keep | None = KEEP,
        fault: Fault | Keep | None = KEEP,
    ) -> Instance:
        """Change the given fields. With ``expected_task_state``, a compare-and-swap: if the
        instance's task_state differs, raise ``errors.Conflict`` and change nothing (a delete
        that started meanwhile wins over a build step). Becoming ACTIVE sets launched_at;
        becoming DELETED sets terminated_at."""
        ...

    def start_event(self, request_id: str, instance_uuid: str, event: str,
                    host: str | None = None) -> None:
        """Record that ``event`` of the action ``request_id`` started (idempotent)."""
        ...

    def finish_event(self, request_id: str, instance_uuid: str, event: str, result: str,
                     traceback: str | None = None) -> None:
        """``result`` is "Success" or "Error"; an Error also marks the action's message."""
        ...

    def aggregates_of_host(self, host: str) -> Sequence[Aggregate]: ...
