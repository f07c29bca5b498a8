"""``SqlPlacementStore``: the ``placement.ports.PlacementStore`` on SQLite, PostgreSQL or MariaDB.

Each method is one transaction (``storage.tx``) delegating to the module of its concept:
``providers``, ``inventories``, ``catalogue`` (resource classes and traits),
``associations`` (a provider's traits and aggregates), ``allocations``, ``reshaper`` and
``usages``. Build it from an engine (``storage.engine.create_engine``) shared by the
threads of one process::

    store = SqlPlacementStore(create_engine("postgresql://vgpucloud@db/vgpucloud"))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from contextlib import AbstractContextManager

from sqlalchemy import Connection, Engine

from vgpucloud.placement.candidates import CandidateRequest, Snapshot
from vgpucloud.placement.models import (
    Allocation,
    Consumer,
    ConsumerAllocationRequest,
    Inventory,
    ProviderFilter,
    ResourceClass,
    ResourceProvider,
)
from vgpucloud.storage import allocations as allocation_rows
from vgpucloud.storage import (
    associations,
    candidate_queries,
    catalogue,
    providers,
    reshaper,
    usages,
)
from vgpucloud.storage import inventories as inventory_rows
from vgpucloud.storage.candidate_cache import CandidateReadModel
from vgpucloud.storage.engine import create_engine
from vgpucloud.storage.tx import transaction


class SqlPlacementStore:
    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.candidate_model = CandidateReadModel()  # validated on every request

    @classmethod
    def from_url(cls, url: str) -> SqlPlacementStore:
        return cls(create_engine(url))

    def _read(self) -> AbstractContextManager[Connection]:
        return transaction(self.engine, write=False)

    def _write(self) -> AbstractContextManager[Connection]:
        return transaction(self.engine, write=True)

    # --- resource providers ----------------------------------------------------------

    def create_provider(
        self, name: str, uuid: str | None = None, parent_provider_uuid: str | None = None
    ) -> ResourceProvider:
        with self._write() as c:
            return providers.create(c, name, uuid, parent_provider_uuid)

    def get_provider(self, uuid: str) -> ResourceProvider:
        with self._read() as c:
            return providers.get(c, uuid)

    def list_providers(self, query: ProviderFilter) -> list[ResourceProvider]:
        with self._read() as c:
            return providers.list_providers(c, query)

    def update_provider(
        self, uuid: str, name: str, parent_provider_uuid: str | None, *, allow_reparent: bool
    ) -> ResourceProvider:
        with self._write() as c:
            return providers.update_provider(c, uuid, name, parent_provider_uuid, allow_reparent)

    def delete_provider(self, uuid: str) -> None:
        with self._write() as c:
            providers.delete_provider(c, uuid)

    # --- inventories -------------------------------------------------------------------

    def get_inventories(self, uuid: str) -> tuple[int, dict[str, Inventory]]:
        with self._read() as c:
            return inventory_rows.get(c, uuid)

    def set_inventories(
        self, uuid: str, generation: int, inventories: Mapping[str, Inventory]
    ) -> tuple[int, dict[str, Inventory]]:
        with self._write() as c:
            return inventory_rows.replace_all(c, uuid, generation, inventories)

    def set_inventory(self, uuid: str, generation: int, inventory: Inventory) -> int:
        with self._write() as c:
            return inventory_rows.set_one(c, uuid, generation, inventory)

    def delete_inventory(self, uuid: str, generation: int, resource_class: str) -> int:
        with self._write() as c:
            return inventory_rows.delete_one(c, uuid, generation, resource_class)

    def delete_all_inventories(self, uuid: str) -> int:
        with self._write() as c:
            return inventory_rows.delete_all(c, uuid)

    # --- resource classes --------------------------------------------------------------

    def list_resource_classes(self) -> list[ResourceClass]:
        with self._read() as c:
            return catalogue.list_resource_classes(c)

    def get_resource_class(self, name: str) -> ResourceClass:
        with self._read() as c:
            return catalogue.get_resource_class(c, name)

    def create_resource_class(self, name: str) -> ResourceClass:
        with self._write() as c:
            return catalogue.create_resource_class(c, name)

    def ensure_resource_class(self, name: str) -> bool:
        with self._write() as c:
            return catalogue.ensure_resource_class(c, name)

    def rename_resource_class(self, name: str, new_name: str) -> ResourceClass:
        with self._write() as c:
            return catalogue.rename_resource_class(c, name, new_name)

    def delete_resource_class(self, name: str) -> None:
        with self._write() as c:
            catalogue.delete_resource_class(c, name)

    # --- traits ------------------------------------------------------------------------

    def list_traits(
        self, *, name_in: Iterable[str] | None = None, name_startswith: str | None = None,
        associated: bool | None = None,
    ) -> list[str]:
        with self._read() as c:
            return catalogue.list_traits(c, name_in, name_startswith, associated)

    def trait_exists(self, name: str) -> bool:
        with self._read() as c:
            return catalogue.trait_exists(c, name)

    def ensure_trait(self, name: str) -> bool:
        with self._write() as c:
            return catalogue.ensure_trait(c, name)

    def delete_trait(self, name: str) -> None:
        with self._write() as c:
            catalogue.delete_trait(c, name)

    def get_provider_traits(self, uuid: str) -> tuple[int, list[str]]:
        with self._read() as c:
            return associations.get_traits(c, uuid)

    def set_provider_traits(self, uuid: str, generation: int, traits: Sequence[str]) -> int:
        with self._write() as c:
            return associations.set_traits(c, uuid, generation, traits)

    def delete_provider_traits(self, uuid: str) -> int:
        with self._write() as c:
            return associations.delete_traits(c, uuid)

    # --- aggregates ----------------------------------------------------------------------

    def get_provider_aggregates(self, uuid: str) -> tuple[int, list[str]]:
        with self._read() as c:
            return associations.get_aggregates(c, uuid)

    def set_provider_aggregates(
        self, uuid: str, aggregates: Sequence[str], generation: int | None
    ) -> int:
        with self._write() as c:
            return associations.set_aggregates(c, uuid, aggregates, generation)

    # --- allocations and consumers --------------------------------------------------------

    def get_consumer(self, consumer_uuid: str) -> Consumer | None:
        with self._read() as c:
            return allocation_rows.read_consumer(c, consumer_uuid)

    def get_consumer_allocations(self, consumer_uuid: str) -> list[Allocation]:
        with self._read() as c:
            return allocation_rows.consumer_allocations(c, consumer_uuid)

    def get_provider_allocations(self, uuid: str) -> tuple[int, list[Allocation]]:
        with self._read() as c:
            return allocation_rows.provider_allocations(c, uuid)

    def replace_allocations(self, requests: Sequence[ConsumerAllocationRequest]) -> None:
        with self._write() as c:
            allocation_rows.replace(c, requests)

    def delete_allocations(self, consumer_uuid: str) -> None:
        with self._write() as c:
            allocation_rows.delete_for_consumer(c, consumer_uuid)

    def reshape(
        self,
        inventories: Mapping[str, tuple[int, Mapping[str, Inventory]]],
        allocations: Sequence[ConsumerAllocationRequest],
    ) -> None:
        with self._write() as c:
            reshaper.reshape(c, inventories, allocations)

    # --- usages --------------------------------------------------------------------------

    def get_provider_usages(self, uuid: str) -> tuple[int, dict[str, int]]:
        with self._read() as c:
            return usages.for_provider(c, uuid)

    def get_usages(
        self, project_id: str, user_id: str | None = None, consumer_type: str | None = None
    ) -> dict[str, dict[str, int]]:
        with self._read() as c:
            return usages.for_project(c, project_id, user_id, consumer_type)

    # --- allocation candidates -------------------------------------------------------

    def candidate_snapshot(self, request: CandidateRequest) -> Snapshot:
        with self._read() as c:
            return candidate_queries.load_snapshot(c, request, self.candidate_model)
