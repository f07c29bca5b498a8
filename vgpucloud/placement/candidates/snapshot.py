"""What the candidate engine reads: an immutable picture of whole provider trees.

``storage.candidate_cache`` keeps one of the whole cloud per API process, validated against
the database on every request and rebuilt from the unchanged nodes plus the reloaded trees
when something changed; tests build it by hand. Being immutable, one snapshot is read by
many threads at once; the indexes it builds on first use are published only when complete.
A two-host picture::

    cn1 (id 1)  VCPU 48, MEMORY_MB 65442     aggregates: {agg-a}
    ├── cn1_pci_0000_84_00_0 (id 2)  VGPU 16 (4 used)   traits: CUSTOM_NVIDIA_11
    └── cn1_pci_0000_85_00_0 (id 3)  VGPU 16            traits: CUSTOM_NVIDIA_12
    nfs (id 4)  DISK_GB 2000                 aggregates: {agg-a}
                                             traits: MISC_SHARES_VIA_AGGREGATE

``nfs`` shares its disk with every tree that has a provider in ``agg-a``: it is *anchored*
to ``cn1`` (and to itself).
"""

from __future__ import annotations

from collections.abc import Iterable, KeysView, Mapping
from types import MappingProxyType
from typing import NamedTuple

# The standard trait that marks a provider whose inventory other trees may use (os-traits).
SHARING_TRAIT = "MISC_SHARES_VIA_AGGREGATE"
_NO_RESOURCES: Mapping[str, ResourceCapacity] = MappingProxyType({})


class ResourceCapacity(NamedTuple):
    """One resource class on one provider: what is left and which single amounts are allowed.

    NamedTuples, not dataclasses: a request loads thousands of these, and tuples are
    immutable and several times cheaper to build than frozen dataclasses.
    """

    capacity: int  # (total - reserved) * allocation_ratio, floored
    used: int
    min_unit: int = 1
    max_unit: int = 2147483647
    step_size: int = 1

    def fits(self, amount: int) -> bool:
        """Whether one request group may take ``amount`` here (Placement's capacity check)."""
        return (
            self.used + amount <= self.capacity
            and self.min_unit <= amount <= self.max_unit
            and amount % self.step_size == 0
        )


class ProviderNode(NamedTuple):
    """A resource provider with everything the engine asks about it."""

    id: int  # internal id: creation order, also the engine's stable ordering
    uuid: str
    parent_id: int | None
    root_id: int
    resources: Mapping[str, ResourceCapacity] = _NO_RESOURCES
    traits: frozenset[str] = frozenset()
    aggregates: frozenset[str] = frozenset()

    @property
    def shares(self) -> bool:
        return SHARING_TRAIT in self.traits


class Snapshot:
    """The providers of some whole trees (the whole cloud, in the API), indexed for the engine.

    ``cloud_has_nested`` tells whether *any* provider of the cloud has a parent: before
    microversion 1.29 Placement hides multi-provider-per-tree candidates only then.
    """

    def __init__(self, providers: Iterable[ProviderNode], *, cloud_has_nested: bool) -> None:
        self.providers: dict[int, ProviderNode] = {p.id: p for p in sorted(providers,
                                                                            key=_by_id)}
        self.cloud_has_nested = cloud_has_nested
        self._by_uuid = {p.uuid: p for p in self.providers.values()}
        self._trees: dict[int, list[ProviderNode]] = {}
        for provider in self.providers.values():
            self._trees.setdefault(provider.root_id, []).append(provider)
        self._anchors: dict[int, frozenset[int]] = {}
        self._with_class: dict[str, list[ProviderNode]] = {}
        for provider in self.providers.values():
            for resource_class in provider.resources:
                self._with_class.setdefault(resource_class, []).append(provider)
        self._members: dict[str, set[int]] | None = None
        self._sharing = [provider for provider in self.providers.values() if provider.shares]
        # Only sharing providers can offer one pick to several trees (engine._unique).
        self.has_sharing = bool(self._sharing)
        # Indexes built on first use; a snapshot is shared by threads, and building one
        # twice in a race is harmless.
        self._roots_with: dict[str, frozenset[int]] = {}
        self._class_by_tree: dict[str, dict[int, list[ProviderNode]]] = {}
        self._shared_into: dict[int, list[ProviderNode]] | None = None
        self._with_trait: dict[str, frozenset[int]] | None = None

    def by_uuid(self, uuid: str) -> ProviderNode | None:
        return self._by_uuid.get(uuid)

    def with_class(self, resource_class: str) -> list[ProviderNode]:
        """Providers that have an inventory of ``resource_class``, in id order."""
        return self._with_class.get(resource_class, [])

    def roots_with_class(self, resource_class: str) -> frozenset[int]:
        """Roots of the trees with an inventory of ``resource_class``."""
        found = self._roots_with.get(resource_class)
        if found is None:
            found = self._roots_with[resource_class] = frozenset(
                provider.root_id for provider in self.with_class(resource_class))
        return found

    def sharing_with_class(self, resource_class: str) -> list[ProviderNode]:
        return [provider for provider in self._sharing if resource_class in provider.resources]

    def reachable_from(self, anchor: int) -> list[ProviderNode]:
        """The providers of the tree rooted at ``anchor`` and the sharing providers of other
        trees anchored to it, in id order."""
        if not self._sharing:
            return self.tree_of(anchor)
        if self._shared_into is None:
            shared_into: dict[int, list[ProviderNode]] = {}
            for provider in self._sharing:
                for root in sorted(self.anchors(provider.id) - {provider.root_id}):
                    shared_into.setdefault(root, []).append(provider)
            self._shared_into = shared_into
        shared = self._shared_into.get(anchor)
        if not shared:
            return self.tree_of(anchor)
        return sorted([*self.tree_of(anchor), *shared], key=_by_id)

    def class_in_trees(self, resource_class: str) -> Mapping[int, list[ProviderNode]]:
        """Root -> the providers of its tree (only) with ``resource_class``, in id order."""
        by_tree = self._class_by_tree.get(resource_class)
        if by_tree is None:
            by_tree = {}  # filled before it is published to threads
            for provider in self.with_class(resource_class):
                by_tree.setdefault(provider.root_id, []).append(provider)
            self._class_by_tree[resource_class] = by_tree
        return by_tree

    def reachable_with_class(self, anchor: int, resource_class: str) -> list[ProviderNode]:
        """``reachable_from(anchor)``, only the providers with ``resource_class``."""
        own = self.class_in_trees(resource_class).get(anchor, [])
        if not self._sharing:
            return own
        shared = [provider for provider in self.reachable_from(anchor)
                  if provider.root_id != anchor and resource_class in provider.resources]
        return sorted([*own, *shared], key=_by_id) if shared else own

    def with_traits(self, names: Iterable[str]) -> frozenset[int]:
        """Ids of the providers that have every one of ``names``."""
        index = self._trait_index()
        sets = sorted((index.get(name, frozenset()) for name in names), key=len)
        return sets[0].intersection(*sets[1:]) if sets else frozenset(self.providers)

    def trait_names(self) -> KeysView[str]:
        """Every trait some provider has."""
        return self._trait_index().keys()

    def _trait_index(self) -> dict[str, frozenset[int]]:
        index = self._with_trait
        if index is None:
            found: dict[str, set[int]] = {}  # filled before it is published to threads
            for provider in self.providers.values():
                for trait in provider.traits:
                    found.setdefault(trait, set()).add(provider.id)
            index = self._with_trait = {trait: frozenset(ids) for trait, ids in found.items()}
        return index

    def roots(self) -> list[int]:
        return list(self._trees)

    def tree_of(self, root_id: int) -> list[ProviderNode]:
        """Every provider of the tree, in id order."""
        return self._trees.get(root_id, [])

    def ancestors(self, provider_id: int) -> set[int]:
        """The provider and every provider above it."""
        found = {provider_id}
        parent = self.providers[provider_id].parent_id
        while parent is not None:
            found.add(parent)
            parent = self.providers[parent].parent_id
        return found

    def anchors(self, sharing_id: int) -> frozenset[int]:
        """Roots of the trees a sharing provider serves: every tree with a provider in one of
        its aggregates (its own tree included as soon as it is in any aggregate)."""
        if sharing_id not in self._anchors:
            members = self._aggregate_members()
            roots = {
                self.providers[member].root_id
                for aggregate in self.providers[sharing_id].aggregates
                for member in members.get(aggregate, ())
            }
            self._anchors[sharing_id] = frozenset(roots)
        return self._anchors[sharing_id]

    def _aggregate_members(self) -> dict[str, set[int]]:
        if self._members is None:
            members: dict[str, set[int]] = {}  # filled before it is published to threads
            for provider in self.providers.values():
                for aggregate in provider.aggregates:
                    members.setdefault(aggregate, set()).add(provider.id)
            self._members = members
        return self._members


def _by_id(provider: ProviderNode) -> int:
    return provider.id
