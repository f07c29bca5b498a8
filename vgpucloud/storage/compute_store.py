"""``SqlComputeStore``: the Compute API's store and the conductor's ``InstanceStore``.

One transaction per method (``storage.tx.transaction``), so every method does all it says
or nothing; the SQL lives in the ``compute_*`` modules, one per concept.

Example (what a conductor does after a successful spawn)::

    store = SqlComputeStore(create_engine("sqlite:///vgpucloud.sqlite"))
    store.update_instance(uuid, expected_task_state=TaskState.SPAWNING,
                          vm_state=VmState.ACTIVE, task_state=None)
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Engine, select

from vgpucloud.compute.api_ports import ComputeHost, InstanceQuery, ServerRequest
from vgpucloud.compute.hosttasks import TASK_EVENTS
from vgpucloud.compute.models import (
    Aggregate,
    Fault,
    Flavor,
    Image,
    Instance,
    InstanceAction,
    TaskState,
    VmState,
)
from vgpucloud.compute.ports import KEEP, Keep
from vgpucloud.storage import compute_actions as actions
from vgpucloud.storage import compute_aggregates as aggregates
from vgpucloud.storage import compute_flavors as flavors
from vgpucloud.storage import compute_images as images
from vgpucloud.storage import compute_instances as instances
from vgpucloud.storage.compute_tables import hosts
from vgpucloud.storage.tx import transaction


class SqlComputeStore:
    """Implements ``compute.ports.InstanceStore`` and ``compute.api_ports.ComputeApiStore``."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    # --- InstanceStore (the conductor's port) ---------------------------------

    def get_instance(self, uuid: str) -> Instance:
        with transaction(self.engine, write=False) as db:
            return instances.require(db, uuid)

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
        given = {"vm_state": vm_state, "task_state": task_state, "host": host, "node": node,
                 "fault": fault}
        changes = {k: v for k, v in given.items() if not isinstance(v, Keep)}
        with transaction(self.engine, write=True) as db:
            return instances.update_fields(db, uuid, expected_task_state, changes)

    def start_event(self, request_id: str, instance_uuid: str, event: str,
                    host: str | None = None) -> None:
        with transaction(self.engine, write=True) as db:
            actions.start_event(db, request_id, instance_uuid, event, host)

    def finish_event(self, request_id: str, instance_uuid: str, event: str, result: str,
                     traceback: str | None = None) -> None:
        with transaction(self.engine, write=True) as db:
            actions.finish_event(db, request_id, instance_uuid, event, result, traceback)

    def aggregates_of_host(self, host: str) -> Sequence[Aggregate]:
        with transaction(self.engine, write=False) as db:
            return aggregates.of_host(db, host)

    # --- instances (the API) ------------------------------------------------

    def create_instances(self, request: ServerRequest) -> Sequence[Instance]:
        with transaction(self.engine, write=True) as db:
            created = instances.create(db, request)
        TASK_EVENTS.notify()  # the build task is committed: wake an idle conductor
        return created

    def list_instances(self, query: InstanceQuery) -> Sequence[Instance]:
        with transaction(self.engine, write=False) as db:
            return instances.list_matching(db, query)

    def request_delete(self, uuid: str, request_id: str, project_id: str,
                       user_id: str) -> Instance:
        with transaction(self.engine, write=True) as db:
            deleting = instances.request_delete(db, uuid, request_id, project_id, user_id)
        TASK_EVENTS.notify()
        return deleting

    def list_actions(self, instance_uuid: str) -> Sequence[InstanceAction]:
        with transaction(self.engine, write=False) as db:
            return actions.list_for_instance(db, instance_uuid)

    def get_action(self, instance_uuid: str, request_id: str) -> InstanceAction:
        with transaction(self.engine, write=False) as db:
            return actions.get_with_events(db, instance_uuid, request_id)

    # --- flavors ------------------------------------------------------------

    def create_flavor(self, flavor: Flavor) -> Flavor:
        with transaction(self.engine, write=True) as db:
            return flavors.create(db, flavor)

    def get_flavor(self, flavor_id: str) -> Flavor:
        with transaction(self.engine, write=False) as db:
            return flavors.require(db, flavor_id)

    def list_flavors(self, is_public: bool | None, project_id: str | None = None,
                     min_ram: int = 0, min_disk: int = 0) -> Sequence[Flavor]:
        with transaction(self.engine, write=False) as db:
            return flavors.list_matching(db, is_public, min_ram, min_disk)

    def update_flavor_description(self, flavor_id: str, description: str | None) -> Flavor:
        with transaction(self.engine, write=True) as db:
            return flavors.set_description(db, flavor_id, description)

    def delete_flavor(self, flavor_id: str) -> None:
        with transaction(self.engine, write=True) as db:
            flavors.remove(db, flavor_id)

    def set_extra_specs(self, flavor_id: str, specs: Mapping[str, str]) -> Flavor:
        with transaction(self.engine, write=True) as db:
            return flavors.set_specs(db, flavor_id, specs)

    def delete_extra_spec(self, flavor_id: str, key: str) -> Flavor:
        with transaction(self.engine, write=True) as db:
            return flavors.delete_spec(db, flavor_id, key)

    # --- images -------------------------------------------------------------

    def create_image(self, image: Image) -> Image:
        with transaction(self.engine, write=True) as db:
            return images.create(db, image)

    def get_image(self, image_id: str) -> Image:
        with transaction(self.engine, write=False) as db:
            return images.require(db, image_id)

    def list_images(self, names: Sequence[str] | None = None,
                    ids: Sequence[str] | None = None) -> Sequence[Image]:
        with transaction(self.engine, write=False) as db:
            return images.list_matching(db, names, ids)

    def delete_image(self, image_id: str) -> None:
        with transaction(self.engine, write=True) as db:
            images.remove(db, image_id)

    # --- host aggregates ----------------------------------------------------

    def create_aggregate(self, name: str, availability_zone: str | None) -> Aggregate:
        with transaction(self.engine, write=True) as db:
            return aggregates.create(db, name, availability_zone)

    def get_aggregate(self, aggregate_id: int) -> Aggregate:
        with transaction(self.engine, write=False) as db:
            return aggregates.require(db, aggregate_id)

    def list_aggregates(self) -> Sequence[Aggregate]:
        with transaction(self.engine, write=False) as db:
            return aggregates.list_all(db)

    def update_aggregate(self, aggregate_id: int, name: str | None,
                         availability_zone: str | None) -> Aggregate:
        with transaction(self.engine, write=True) as db:
            return aggregates.update_fields(db, aggregate_id, name, availability_zone)

    def delete_aggregate(self, aggregate_id: int) -> None:
        with transaction(self.engine, write=True) as db:
            aggregates.remove(db, aggregate_id)

    def set_aggregate_metadata(self, aggregate_id: int,
                               changes: Mapping[str, str | None]) -> Aggregate:
        with transaction(self.engine, write=True) as db:
            aggregates.set_metadata(db, aggregate_id, changes)
            return aggregates.require(db, aggregate_id)

    def add_aggregate_host(self, aggregate_id: int, host: str) -> Aggregate:
        with transaction(self.engine, write=True) as db:
            return aggregates.add_host(db, aggregate_id, host)

    def remove_aggregate_host(self, aggregate_id: int, host: str) -> Aggregate:
        with transaction(self.engine, write=True) as db:
            return aggregates.remove_host(db, aggregate_id, host)

    # --- compute hosts ------------------------------------------------------

    def list_compute_hosts(self) -> Sequence[ComputeHost]:
        with transaction(self.engine, write=False) as db:
            return [_compute_host(row) for row in db.execute(select(hosts).order_by(hosts.c.id))]


def _compute_host(row: Any) -> ComputeHost:
    return ComputeHost(
        id=row.id, name=row.name, uuid=row.uuid, hypervisor_type=row.hypervisor_type,
        hypervisor_version=row.libvirt_version, root_provider_uuid=row.root_provider_uuid,
        enabled=bool(row.enabled), last_heartbeat=row.last_heartbeat,
        created_at=row.created_at, updated_at=row.updated_at)
