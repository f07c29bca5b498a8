"""The conductor: leases ``build`` and ``delete`` tasks from the conductor queue and runs
their workflows. Stateless and embeddable; run any number (``vgpucloud conductor``, or a
thread of ``vgpucloud up``)::

    conductor = Conductor(engine, SqlComputeStore(engine), PlacementClient(url), settings)
    conductor.run_forever(stop_event)      # until stop_event is set

Tasks are rows of ``storage.tasks`` on the pseudo host ``CONDUCTOR_QUEUE``; leasing uses
``SKIP LOCKED`` on PostgreSQL/MariaDB, so conductors never run the same task at once, and
a task whose conductor died is handed out again when its lease expires.
"""

from __future__ import annotations

import logging
import threading
import traceback
import uuid as uuidlib
from collections.abc import Callable, Mapping
from typing import Any

from sqlalchemy import Engine

from vgpucloud import errors
from vgpucloud.client.placement import PlacementClient
from vgpucloud.compute.hosttasks import TASK_EVENTS
from vgpucloud.compute.models import CONDUCTOR_QUEUE
from vgpucloud.compute.ports import InstanceStore
from vgpucloud.conductor.build import BuildWorkflow
from vgpucloud.conductor.delete import DeleteWorkflow
from vgpucloud.conductor.settings import ConductorSettings
from vgpucloud.scheduler.scheduler import Scheduler
from vgpucloud.storage import tasks
from vgpucloud.storage.hosts import list_hosts
from vgpucloud.storage.tasks import Task

LOG = logging.getLogger(__name__)


class Conductor:
    def __init__(self, engine: Engine, instance_store: InstanceStore,
                 placement_client: PlacementClient,
                 settings: ConductorSettings | None = None) -> None:
        self.engine = engine
        self.store = instance_store
        self.placement = placement_client
        self.settings = settings or ConductorSettings()
        self.owner = f"conductor:{uuidlib.uuid4().hex[:12]}"
        self.scheduler = Scheduler(placement_client, self.settings.scheduler,
                                   hosts=self._hosts,
                                   aggregates_of_host=instance_store.aggregates_of_host)
        build = BuildWorkflow(engine, instance_store, placement_client, self.scheduler,
                              self.settings, self._hosts)
        delete = DeleteWorkflow(engine, instance_store, placement_client, self.settings)
        self.workflows: dict[str, Callable[[Mapping[str, Any]], dict[str, Any]]] = {
            "build": build.run, "delete": delete.run}

    def _hosts(self) -> list[Any]:
        return list_hosts(self.engine)

    def run_once(self) -> int:
        """Lease and run the available conductor tasks; how many ran."""
        leased = tasks.lease(self.engine, CONDUCTOR_QUEUE, self.owner,
                             self.settings.lease_seconds, self.settings.tasks_per_lease)
        for task in leased:
            self._run(task)
        return len(leased)

    def run_forever(self, stop: threading.Event) -> None:
        LOG.info("conductor %s running", self.owner)
        while not stop.is_set():
            try:
                mark = TASK_EVENTS.mark()
                if not self.run_once():
                    TASK_EVENTS.wait(mark, self.settings.idle_wait)
            except errors.VgpucloudError as exc:
                LOG.error("conductor %s: %s; retrying in %.0fs", self.owner, exc.message,
                          self.settings.idle_wait)
                stop.wait(self.settings.idle_wait)
        LOG.info("conductor %s stopped", self.owner)

    def _run(self, task: Task) -> None:
        workflow = self.workflows.get(task.kind)
        result: dict[str, Any] | None = None
        fault: str | None = None
        if workflow is None:
            fault = (f"conductor task {task.uuid} has unknown kind {task.kind!r}; this "
                     f"conductor runs {', '.join(sorted(self.workflows))}: upgrade it")
        else:
            try:
                result = workflow(task.payload)
            except errors.VgpucloudError as exc:
                fault = f"{task.kind} failed: {exc.message}"
                LOG.error("conductor task %s (%s): %s", task.uuid, task.kind, exc.message)
            except Exception:  # a bug must not kill the loop; the task keeps the trace
                fault = f"{task.kind} crashed: {traceback.format_exc()}"
                LOG.exception("conductor task %s (%s) crashed", task.uuid, task.kind)
        try:
            tasks.finish(self.engine, task.uuid, self.owner, "failed" if fault else "done",
                         result, fault)
        except errors.Conflict as exc:
            LOG.warning("conductor task %s: %s", task.uuid, exc.message)
