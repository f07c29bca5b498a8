"""The ``delete`` workflow: destroy the guest on its host, free the claim, mark DELETED.

    instance.host set?      destroy task on that host, wait (the agent releases the mdevs)
    DELETE /allocations/I   idempotent: a 404 means a previous run already freed them
    vm_state deleted        terminated_at set by the store

Each step is safe to repeat, so a conductor resuming a crashed one's delete just runs it
again. A destroy that fails leaves the instance ERROR with the agent's reason and keeps
the allocations (the host still holds the devices); deleting again retries.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import Engine

from vgpucloud.client.placement import PlacementClient
from vgpucloud.compute.models import DeleteRequest, Fault, VmState
from vgpucloud.compute.ports import InstanceStore
from vgpucloud.conductor import hosttasks
from vgpucloud.conductor.settings import ConductorSettings

DELETE_EVENT = "compute_terminate_instance"


class DeleteWorkflow:
    def __init__(self, engine: Engine, store: InstanceStore, placement: PlacementClient,
                 settings: ConductorSettings) -> None:
        self.engine = engine
        self.store = store
        self.placement = placement
        self.settings = settings

    def run(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        request = DeleteRequest.from_payload(payload)
        uuid = request.instance_uuid
        instance = self.store.get_instance(uuid)
        if instance.vm_state is VmState.DELETED:
            return {"instance_uuid": uuid, "state": "deleted"}
        self.store.start_event(request.request_id, uuid, DELETE_EVENT, instance.host)
        if instance.host:
            task = hosttasks.submit(self.engine, instance.host, "destroy", uuid,
                                    {"instance_uuid": uuid}, attempt=request.request_id)
            result = hosttasks.wait(self.engine, [task], self.settings.spawn_timeout,
                                    self.settings.poll_interval)[task]
            if result.state != "done":
                why = result.fault or f"destroy task {task} {result.state}"
                self.store.finish_event(request.request_id, uuid, DELETE_EVENT, "Error", why)
                self.store.update_instance(uuid, vm_state=VmState.ERROR, task_state=None,
                                           fault=Fault(500, f"Delete failed on host "
                                                       f"{instance.host}: {why}"))
                return {"instance_uuid": uuid, "state": "error"}
        self.placement.delete_allocations(uuid)
        self.store.update_instance(uuid, vm_state=VmState.DELETED, task_state=None)
        self.store.finish_event(request.request_id, uuid, DELETE_EVENT, "Success")
        return {"instance_uuid": uuid, "state": "deleted"}
