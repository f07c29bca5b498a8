"""The ``build`` workflow: schedule, claim, spawn, reschedule — for one ``POST /servers``.

    for each instance, in launch order:   fresh candidates → claim one (every candidate tried)
    fewer claimed than min_count?          every instance ERROR, every claim released
    for each claimed instance:             spawn task on its host (task_state spawning)
    wait for the spawns:                   done → ACTIVE
                                           failed → release, claim elsewhere (failed hosts
                                           excluded), spawn again; at most max_attempts

Durable and idempotent: each step starts from the instance's recorded state, so a
conductor that takes over a crashed one's task resumes instead of starting over. An
instance that already holds allocations is not claimed again; a spawn already queued is
found by its derived task UUID. Every state change is a compare-and-swap on task_state, so
a delete that arrives meanwhile wins and the build lets go of what it claimed.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from sqlalchemy import Engine

from vgpucloud import errors
from vgpucloud.client.placement import PlacementClient
from vgpucloud.compute.models import BuildRequest, Fault, Instance, TaskState, VmState
from vgpucloud.compute.ports import InstanceStore
from vgpucloud.compute.request_spec import RequestSpec, build_request_spec
from vgpucloud.conductor import hosttasks
from vgpucloud.conductor.settings import ConductorSettings
from vgpucloud.scheduler.candidates import host_by_root
from vgpucloud.scheduler.scheduler import NoValidHost, Scheduler

LOG = logging.getLogger(__name__)
SCHEDULE_EVENT = "conductor_schedule_and_build_instances"
BUILD_EVENT = "compute__do_build_and_run_instance"


@dataclasses.dataclass
class Attempt:
    """An instance of this build in flight: where it is, where it failed."""

    instance: Instance
    spec: RequestSpec
    host: str | None = None
    task: str | None = None
    failed_hosts: list[str] = dataclasses.field(default_factory=list)
    faults: list[str] = dataclasses.field(default_factory=list)


class BuildWorkflow:
    def __init__(self, engine: Engine, store: InstanceStore, placement: PlacementClient,
                 scheduler: Scheduler, settings: ConductorSettings,
                 hosts: Callable[[], Sequence[Any]]) -> None:
        self.engine = engine
        self.store = store
        self.placement = placement
        self.scheduler = scheduler
        self.settings = settings
        self.hosts = hosts

    def run(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        request = BuildRequest.from_payload(payload)
        attempts, done, no_fit = self._schedule_all(request)
        if attempts and len(attempts) + done < request.min_count:
            self._fail_all_for_min_count(request, attempts, no_fit)
            return self._summary(request)
        spawning = [a for a in attempts if self._start_spawn(request, a)]
        self._finish_spawns(request, spawning)
        return self._summary(request)

    # --- scheduling -------------------------------------------------------------------

    def _schedule_all(self, request: BuildRequest
                      ) -> tuple[list[Attempt], int, dict[str, NoValidHost]]:
        """Claims for the instances still to place, how many need nothing more, and why
        the others did not fit."""
        attempts: list[Attempt] = []
        no_fit: dict[str, NoValidHost] = {}
        done = 0
        for uuid in request.instance_uuids:
            instance = self.store.get_instance(uuid)
            if instance.vm_state is not VmState.BUILDING or \
                    instance.task_state is TaskState.DELETING:
                done += instance.vm_state is VmState.ACTIVE
                continue  # finished, failed or being deleted: nothing for the build to do
            attempt = Attempt(instance, self._spec(instance))
            if instance.task_state is TaskState.SPAWNING and instance.host:
                attempt.host = instance.host  # resumed: its spawn task is already queued
                attempts.append(attempt)
                continue
            try:
                self._place(request, attempt)
            except NoValidHost as exc:
                no_fit[uuid] = exc
                self._error(request, attempt, TaskState.SCHEDULING, exc.message)
                continue
            attempts.append(attempt)
        return attempts, done, no_fit

    def _spec(self, instance: Instance) -> RequestSpec:
        return build_request_spec(instance.flavor,
                                  limit=self.settings.scheduler.candidate_limit)

    def _place(self, request: BuildRequest, attempt: Attempt) -> None:
        instance = attempt.instance
        self.store.start_event(request.request_id, instance.uuid, SCHEDULE_EVENT)
        try:
            attempt.host = self._existing_claim(instance.uuid) or self.scheduler.claim(
                instance.uuid, instance.project_id, instance.user_id, attempt.spec,
                attempt.failed_hosts).host
        except NoValidHost as exc:
            self.store.finish_event(request.request_id, instance.uuid, SCHEDULE_EVENT,
                                    "Error", exc.message)
            raise
        self.store.finish_event(request.request_id, instance.uuid, SCHEDULE_EVENT, "Success")

    def _existing_claim(self, instance_uuid: str) -> str | None:
        """The host of a claim a crashed conductor made for this instance, if any."""
        allocations = self.placement.get_allocations(instance_uuid).get("allocations", {})
        if not allocations:
            return None
        roots = {(self.placement.get_provider(rp) or {}).get("root_provider_uuid")
                 for rp in allocations}
        owners = host_by_root(self.hosts())
        for root in roots:
            if root in owners:
                LOG.info("instance %s already holds allocations on %s; resuming",
                         instance_uuid, owners[root])
                return owners[root]
        self.placement.delete_allocations(instance_uuid)  # on no known host: start over
        return None

    def _fail_all_for_min_count(self, request: BuildRequest, attempts: list[Attempt],
                                no_fit: Mapping[str, NoValidHost]) -> None:
        why = next(iter(no_fit.values())).reasons if no_fit else "see the other instances"
        message = (f"No valid host was found. Only {len(attempts)} of the "
                   f"{len(request.instance_uuids)} instances fit but min_count is "
                   f"{request.min_count}: {why}")
        for attempt in attempts:
            self.placement.delete_allocations(attempt.instance.uuid)
            self._error(request, attempt, TaskState.SCHEDULING, message)

    # --- spawning ---------------------------------------------------------------------

    def _start_spawn(self, request: BuildRequest, attempt: Attempt) -> bool:
        """Queue the spawn on the claimed host; False when a delete took the instance."""
        assert attempt.host is not None
        instance = attempt.instance
        if instance.task_state is not TaskState.SPAWNING or instance.host != attempt.host:
            try:
                attempt.instance = self.store.update_instance(
                    instance.uuid, expected_task_state=instance.task_state,
                    task_state=TaskState.SPAWNING, host=attempt.host, node=attempt.host)
            except errors.Conflict:
                LOG.info("instance %s was deleted while scheduling; releasing its claim",
                         instance.uuid)
                self.placement.delete_allocations(instance.uuid)
                return False
        self.store.start_event(request.request_id, instance.uuid, BUILD_EVENT, attempt.host)
        attempt.task = hosttasks.submit(self.engine, attempt.host, "spawn", instance.uuid,
                                        hosttasks.spawn_payload(attempt.instance))
        return True

    def _finish_spawns(self, request: BuildRequest, spawning: list[Attempt]) -> None:
        while spawning:
            results = hosttasks.wait(self.engine, [a.task or "" for a in spawning],
                                     self.settings.spawn_timeout, self.settings.poll_interval)
            again = []
            for attempt in spawning:
                result = results[attempt.task or ""]
                if result.state == "done":
                    self._active(request, attempt)
                elif self._reschedule(request, attempt, result):
                    again.append(attempt)
            spawning = again

    def _active(self, request: BuildRequest, attempt: Attempt) -> None:
        uuid = attempt.instance.uuid
        self.store.finish_event(request.request_id, uuid, BUILD_EVENT, "Success")
        try:
            self.store.update_instance(uuid, expected_task_state=TaskState.SPAWNING,
                                       vm_state=VmState.ACTIVE, task_state=None)
        except errors.Conflict:
            LOG.info("instance %s spawned but is being deleted; the delete wins", uuid)

    def _reschedule(self, request: BuildRequest, attempt: Attempt,
                    result: hosttasks.HostTaskResult) -> bool:
        """After a failed spawn: True when the instance was claimed and queued elsewhere."""
        uuid, host = attempt.instance.uuid, result.host
        why = result.fault or f"spawn task {result.uuid} {result.state}"
        attempt.faults.append(f"{host}: {why}")
        self.store.finish_event(request.request_id, uuid, BUILD_EVENT, "Error", why)
        if result.state == "timeout":
            # The agent may still finish it: keep host and claim so a delete cleans up there.
            self._error(request, attempt, TaskState.SPAWNING, f"Build timed out. {why}")
            return False
        self.placement.delete_allocations(uuid)
        attempt.failed_hosts.append(host)
        spawns = len(attempt.failed_hosts)
        if spawns >= self.settings.scheduler.max_attempts:
            self._error(request, attempt, TaskState.SPAWNING,
                        f"Exceeded maximum number of retries ({spawns} spawns failed): "
                        + "; ".join(attempt.faults))
            return False
        try:
            attempt.instance = self.store.update_instance(
                uuid, expected_task_state=TaskState.SPAWNING,
                task_state=TaskState.SCHEDULING, host=None, node=None)
        except errors.Conflict:
            return False  # deleted meanwhile: nothing of ours is left to release
        try:
            self._place(request, attempt)
        except NoValidHost as exc:
            self._error(request, attempt, TaskState.SCHEDULING,
                        f"Rescheduling after a failed spawn ({'; '.join(attempt.faults)}) "
                        f"found no other host. {exc.message}")
            return False
        return self._start_spawn(request, attempt)

    # --- outcomes ---------------------------------------------------------------------

    def _error(self, request: BuildRequest, attempt: Attempt, expected: TaskState,
               message: str) -> None:
        fault = Fault(code=500, message=message[:4000])
        try:
            attempt.instance = self.store.update_instance(
                attempt.instance.uuid, expected_task_state=expected, vm_state=VmState.ERROR,
                task_state=None, fault=fault)
        except errors.Conflict:
            LOG.info("instance %s is being deleted; not marking it ERROR",
                     attempt.instance.uuid)
            return
        LOG.warning("instance %s: ERROR: %s", attempt.instance.uuid, message)

    def _summary(self, request: BuildRequest) -> dict[str, Any]:
        states = {u: self.store.get_instance(u).vm_state.value for u in request.instance_uuids}
        return {"request_id": request.request_id, "instances": states}
