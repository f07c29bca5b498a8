"""Executing leased host tasks and reporting their results.

A task document (``GET /internal/v1/tasks/{uuid}``) is run by the handler of its ``kind``;
the handler's return value becomes the ``done`` result, a ``VgpucloudError`` the ``failed``
fault (its message names the device, the cause and the fix). Handlers are idempotent
(DESIGN rule 8), so a task redelivered after a crash or an expired lease simply runs again.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping
from typing import Any

from vgpucloud.client.internal import InternalClient
from vgpucloud.client.placement import PlacementError
from vgpucloud.errors import Conflict, VgpucloudError

LOG = logging.getLogger(__name__)
RETRY = "retry"
Handler = Callable[[Mapping[str, Any]], dict[str, Any]]


@dataclasses.dataclass(frozen=True, slots=True)
class Outcome:
    task_uuid: str
    kind: str
    state: str  # done | failed | retry (not reported: the lease expires, the task returns)
    result: dict[str, Any] | None = None
    fault: str | None = None


class TaskRunner:
    """Runs tasks with ``handlers`` (kind -> handler) and reports to the internal API."""

    def __init__(self, internal: InternalClient, owner: str,
                 handlers: Mapping[str, Handler]) -> None:
        self.internal = internal
        self.owner = owner
        self.handlers = dict(handlers)

    def execute(self, task: Mapping[str, Any]) -> Outcome:
        uuid, kind = str(task["uuid"]), str(task["kind"])
        handler = self.handlers.get(kind)
        if handler is None:
            return Outcome(uuid, kind, "failed", fault=(
                f"this agent cannot run {kind!r} tasks (it runs: "
                f"{', '.join(sorted(self.handlers))}); upgrade the agent on this host"))
        try:
            return Outcome(uuid, kind, "done", result=handler(task.get("payload") or {}))
        except PlacementError as exc:
            # Placement unreachable or failing: nothing on the host changed yet. Leave the
            # task leased; when the lease runs out it is handed out again and retried.
            LOG.warning("task %s (%s) postponed: %s", uuid, kind, exc.message)
            return Outcome(uuid, kind, RETRY, fault=exc.message)
        except VgpucloudError as exc:
            LOG.warning("task %s (%s) failed: %s", uuid, kind, exc.message)
            return Outcome(uuid, kind, "failed", fault=exc.message)
        except Exception as exc:
            LOG.exception("task %s (%s) failed unexpectedly", uuid, kind)
            return Outcome(uuid, kind, "failed", fault=(
                f"unexpected error running {kind} task {uuid}: {exc!r}; the agent log "
                "has the traceback"))

    def report(self, outcome: Outcome) -> bool:
        """False when the lease was lost meanwhile: the new owner's run is the one that counts."""
        try:
            self.internal.report_result(outcome.task_uuid, self.owner, outcome.state,
                                        result=outcome.result, fault=outcome.fault)
        except Conflict as exc:
            LOG.warning("result of task %s dropped: %s", outcome.task_uuid, exc.message)
            return False
        return True

    def run(self, task: Mapping[str, Any]) -> Outcome:
        outcome = self.execute(task)
        if outcome.state != RETRY:
            self.report(outcome)
        return outcome
