"""The port between Placement's HTTP handlers and its storage.

``storage.placement_store.SqlPlacementStore`` implements it; ``api`` handlers call it and
never touch SQL. Every method is one transaction: it either does all it says or nothing.

Contract shared by all methods:

- Unknown providers raise ``errors.ResourceProviderNotFound``; other missing things
  ``errors.NotFound``, with a message naming the thing.
- A ``generation`` argument is a compare-and-swap: if the provider's current generation differs,
  ``errors.ConcurrentUpdate`` is raised and nothing is written. Every successful write to a
  provider's inventories, traits, aggregates or allocations increments its generation by one.
- Capacity problems raise ``errors.Conflict`` (allocations) or ``errors.InventoryInUse``
  (inventory shrinking below usage), naming provider, resource class, asked and available.
- Messages use Placement's wording where clients or humans rely on it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Protocol

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


class PlacementStore(Protocol):
    # --- resource providers ------------------------------------------------

    def create_provider(
        self, name: str, uuid: str | None = None, parent_provider_uuid: str | None = None
    ) -> ResourceProvider:
        """Create a provider (generation 0). Raises DuplicateName for a taken name or uuid,
        ResourceProviderNotFound for an unknown parent."""
        ...

    def get_provider(self, uuid: str) -> ResourceProvider: ...

    def list_providers(self, query: ProviderFilter) -> list[ResourceProvider]:
        """Providers matching every field of ``query``, ordered by internal id (creation order).

        ``resources``: providers whose own inventory has capacity left (and a max_unit large
        enough) for each amount. ``traits`` and ``member_of`` apply to the provider's own
        traits and aggregates.
        """
        ...

    def update_provider(
        self, uuid: str, name: str, parent_provider_uuid: str | None, *, allow_reparent: bool
    ) -> ResourceProvider:
        """Rename and/or set the parent. With ``allow_reparent`` False (before 1.37) only
        setting a parent on a root that has none is allowed; otherwise any move within
        the forest that creates no loop. Bumps the generation."""
        ...

    def delete_provider(self, uuid: str) -> None:
        """Raises CannotDeleteParent when it has children, ProviderInUse when it holds
        allocations."""
        ...

    # --- inventories -------------------------------------------------------

    def get_inventories(self, uuid: str) -> tuple[int, dict[str, Inventory]]:
        """(provider generation, inventories by resource class)."""
        ...

    def set_inventories(
        self, uuid: str, generation: int, inventories: Mapping[str, Inventory]
    ) -> tuple[int, dict[str, Inventory]]:
        """Replace all inventories. Unknown resource class -> BadRequest; removing or
        shrinking a class below its usage -> InventoryInUse. Returns the new state."""
        ...

    def set_inventory(self, uuid: str, generation: int, inventory: Inventory) -> int:
        """Create or update one class's inventory; returns the new generation."""
        ...

    def delete_inventory(self, uuid: str, generation: int, resource_class: str) -> int: ...

    def delete_all_inventories(self, uuid: str) -> int:
        """DELETE /resource_providers/{uuid}/inventories (1.5); no generation check by the
        API, but InventoryInUse if anything is allocated."""
        ...

    # --- resource classes ----------------------------------------------------

    def list_resource_classes(self) -> list[ResourceClass]: ...

    def get_resource_class(self, name: str) -> ResourceClass: ...

    def create_resource_class(self, name: str) -> ResourceClass:
        """CUSTOM_* only; DuplicateName if it exists."""
        ...

    def ensure_resource_class(self, name: str) -> bool:
        """PUT (1.7): create if missing. Returns True if created."""
        ...

    def rename_resource_class(self, name: str, new_name: str) -> ResourceClass:
        """PUT before 1.7."""
        ...

    def delete_resource_class(self, name: str) -> None:
        """Standard classes are refused (BadRequest); in-use ones are a Conflict."""
        ...

    # --- traits --------------------------------------------------------------

    def list_traits(
        self, *, name_in: Iterable[str] | None = None, name_startswith: str | None = None,
        associated: bool | None = None,
    ) -> list[str]: ...

    def trait_exists(self, name: str) -> bool: ...

    def ensure_trait(self, name: str) -> bool:
        """Create a CUSTOM_* trait if missing. Returns True if created."""
        ...

    def delete_trait(self, name: str) -> None:
        """Standard traits -> BadRequest; traits on a provider -> Conflict."""
        ...

    def get_provider_traits(self, uuid: str) -> tuple[int, list[str]]: ...

    def set_provider_traits(self, uuid: str, generation: int, traits: Sequence[str]) -> int:
        """Replace the provider's traits; unknown trait names -> BadRequest naming them."""
        ...

    def delete_provider_traits(self, uuid: str) -> int: ...

    # --- aggregates ----------------------------------------------------------

    def get_provider_aggregates(self, uuid: str) -> tuple[int, list[str]]: ...

    def set_provider_aggregates(
        self, uuid: str, aggregates: Sequence[str], generation: int | None
    ) -> int:
        """``generation`` None is the pre-1.19 form (no check, but the generation still bumps
        since 1.19 semantics apply to stored state)."""
        ...

    # --- allocations and consumers --------------------------------------------

    def get_consumer(self, consumer_uuid: str) -> Consumer | None: ...

    def get_consumer_allocations(self, consumer_uuid: str) -> list[Allocation]: ...

    def get_provider_allocations(self, uuid: str) -> tuple[int, list[Allocation]]: ...

    def replace_allocations(self, requests: Sequence[ConsumerAllocationRequest]) -> None:
        """Atomically make each consumer hold exactly what its request says (PUT one
        consumer; POST /allocations for many). Checks, before writing anything: every
        provider exists and has an inventory of each class; min/max/step; capacity over
        all requests at once; consumer generations. Consumers left with no allocations are
        deleted. Bumps the generation of every provider whose allocations changed."""
        ...

    def delete_allocations(self, consumer_uuid: str) -> None:
        """NotFound if the consumer has none."""
        ...

    def reshape(
        self,
        inventories: Mapping[str, tuple[int, Mapping[str, Inventory]]],
        allocations: Sequence[ConsumerAllocationRequest],
    ) -> None:
        """POST /reshaper: replace inventories of the listed providers (with their generations)
        and the allocations of the listed consumers in one transaction; capacity is checked
        only against the final state."""
        ...

    # --- usages --------------------------------------------------------------

    def get_provider_usages(self, uuid: str) -> tuple[int, dict[str, int]]:
        """Usage of every class the provider has inventory for (0 when unused)."""
        ...

    def get_usages(
        self, project_id: str, user_id: str | None = None, consumer_type: str | None = None
    ) -> dict[str, dict[str, int]]:
        """Usages by consumer type ("all" groups everything, "unknown" untyped) with a
        ``consumer_count`` entry, as GET /usages returns at 1.38; callers before 1.38 use
        the "all" group without the count."""
        ...

    # --- allocation candidates -------------------------------------------------------

    def candidate_snapshot(self, request: CandidateRequest) -> Snapshot:
        """The whole trees that can matter for ``request`` (storage.candidate_queries).
        Unknown resource classes or traits -> BadRequest naming them."""
        ...
