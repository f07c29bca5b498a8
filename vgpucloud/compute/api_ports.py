"""What the Compute, image and identity APIs need from storage, beyond ``InstanceStore``.

``storage.compute_store.SqlComputeStore`` implements ``ComputeApiStore``; the API handlers
call it and never touch SQL. Every method is one transaction. Missing things raise
``errors.NotFound`` naming them; taken names ``errors.Conflict``.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Mapping, Sequence
from typing import Protocol

from vgpucloud.compute.models import (
    Aggregate,
    Flavor,
    Image,
    Instance,
    InstanceAction,
)
from vgpucloud.compute.ports import InstanceStore


@dataclasses.dataclass(frozen=True, slots=True)
class ServerRequest:
    """One accepted ``POST /servers``: everything needed to write its instances at once.

    ``names`` has one entry per instance (``vm-1``, ``vm-2`` for a multi-create), and
    ``uuids`` the matching instance UUIDs, minted by the caller so the response can name them.
    """

    request_id: str
    reservation_id: str
    project_id: str
    user_id: str
    flavor: Flavor
    image_ref: str
    names: tuple[str, ...]
    uuids: tuple[str, ...]
    min_count: int
    metadata: Mapping[str, str] = dataclasses.field(default_factory=dict)


@dataclasses.dataclass(frozen=True, slots=True)
class InstanceQuery:
    """``GET /servers`` filters. ``project_id`` None means every project (admin
    ``all_tenants``); ``name`` is a regular expression searched in the name, as Nova does."""

    project_id: str | None = None
    name: str | None = None
    reservation_id: str | None = None
    vm_states: frozenset[str] | None = None
    host: str | None = None
    include_deleted: bool = False
    limit: int | None = None
    marker: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class ComputeHost:
    """A registered compute host as the ``os-services`` and ``os-hypervisors`` APIs show it."""

    id: int
    name: str
    uuid: str
    hypervisor_type: str | None
    hypervisor_version: str | None
    root_provider_uuid: str | None
    enabled: bool
    last_heartbeat: datetime.datetime | None
    created_at: datetime.datetime
    updated_at: datetime.datetime


class ComputeApiStore(InstanceStore, Protocol):
    # --- flavors -------------------------------------------------------------

    def create_flavor(self, flavor: Flavor) -> Flavor:
        """Conflict when the id or the name is taken."""
        ...

    def get_flavor(self, flavor_id: str) -> Flavor: ...

    def list_flavors(self, is_public: bool | None, project_id: str | None = None,
                     min_ram: int = 0, min_disk: int = 0) -> Sequence[Flavor]:
        """``is_public`` None lists public and private flavors (admins' ``is_public=None``)."""
        ...

    def update_flavor_description(self, flavor_id: str, description: str | None) -> Flavor: ...

    def delete_flavor(self, flavor_id: str) -> None: ...

    def set_extra_specs(self, flavor_id: str, specs: Mapping[str, str]) -> Flavor:
        """Add or overwrite the given keys; others stay."""
        ...

    def delete_extra_spec(self, flavor_id: str, key: str) -> Flavor:
        """NotFound naming the key when the flavor does not have it."""
        ...

    # --- images --------------------------------------------------------------

    def create_image(self, image: Image) -> Image: ...

    def get_image(self, image_id: str) -> Image: ...

    def list_images(self, names: Sequence[str] | None = None,
                    ids: Sequence[str] | None = None) -> Sequence[Image]: ...

    def delete_image(self, image_id: str) -> None: ...

    # --- instances -----------------------------------------------------------

    def create_instances(self, request: ServerRequest) -> Sequence[Instance]:
        """In one transaction: the instances (building/scheduling), a ``create`` action
        for each and ONE conductor ``build`` task naming them all."""
        ...

    def list_instances(self, query: InstanceQuery) -> Sequence[Instance]:
        """Newest first. NotFound when ``marker`` names no instance."""
        ...

    def request_delete(self, uuid: str, request_id: str, project_id: str,
                       user_id: str) -> Instance:
        """task_state deleting, a ``delete`` action and a conductor ``delete`` task, in one
        transaction. Deleting an instance already being deleted changes nothing."""
        ...

    def list_actions(self, instance_uuid: str) -> Sequence[InstanceAction]:
        """Newest first, without events."""
        ...

    def get_action(self, instance_uuid: str, request_id: str) -> InstanceAction:
        """With its events."""
        ...

    # --- host aggregates -----------------------------------------------------

    def create_aggregate(self, name: str, availability_zone: str | None) -> Aggregate: ...

    def get_aggregate(self, aggregate_id: int) -> Aggregate: ...

    def list_aggregates(self) -> Sequence[Aggregate]: ...

    def update_aggregate(self, aggregate_id: int, name: str | None,
                         availability_zone: str | None) -> Aggregate: ...

    def delete_aggregate(self, aggregate_id: int) -> None:
        """Conflict while it has hosts (Nova: remove them first)."""
        ...

    def set_aggregate_metadata(self, aggregate_id: int,
                               changes: Mapping[str, str | None]) -> Aggregate:
        """Set each key; a None value removes the key."""
        ...

    def add_aggregate_host(self, aggregate_id: int, host: str) -> Aggregate:
        """Conflict when the host is already in it."""
        ...

    def remove_aggregate_host(self, aggregate_id: int, host: str) -> Aggregate:
        """NotFound when the host is not in it."""
        ...

    # --- compute hosts -------------------------------------------------------

    def list_compute_hosts(self) -> Sequence[ComputeHost]: ...
