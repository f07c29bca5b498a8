"""Every way one request group can be satisfied, tree (anchor) by tree, computed on demand.

A host with two pGPUs and a shared disk::

    cn1                VCPU 48, MEMORY_MB 65442           aggregate A
    ├── cn1_pci_84     VGPU 16   CUSTOM_NVIDIA_11
    └── cn1_pci_85     VGPU 16   CUSTOM_NVIDIA_12
    nfs                DISK_GB 2000, MISC_SHARES_VIA_AGGREGATE, aggregate A

- ``resources1=VGPU:1&required1=CUSTOM_NVIDIA_11`` (suffixed: one provider does it all)
  gives, on ``cn1``, ``[Pick(cn1_pci_84)]``.
- ``resources=VCPU:1,DISK_GB:10`` (unsuffixed: one provider per resource class, any
  provider of the tree or a sharing provider anchored to it) gives
  ``{cn1: [Pick(VCPU from cn1, DISK_GB from nfs)]}``; ``nfs`` alone cannot serve VCPU, so
  its own tree yields nothing.

Rules, as Placement applies them:

- a suffixed group's provider must itself have the required traits, lack the forbidden
  ones and be in the ``member_of`` aggregates; a sharing provider's pick is offered to
  every tree it is anchored to.
- the unsuffixed group's ``member_of`` is met by each provider *or its tree's root*
  (the anchor, for a sharing provider); its required traits by the *union* of the
  providers that contribute resources, and none of those may have a forbidden trait.
- ``in_tree`` keeps a group inside one tree (and off sharing providers elsewhere); it is
  ignored by a resourceless group, exactly as Placement does.

Picks are computed for one tree at a time, when the engine reaches it: with ``limit`` it
stops after the first trees, and the providers of the others are never looked at. A pick
that can serve several trees (it uses a sharing provider) is one object wherever it
appears, so that candidates can be told apart by the identity of their picks
(``engine._unique``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import NamedTuple

from vgpucloud.placement.candidates.request import RequestGroup
from vgpucloud.placement.candidates.snapshot import ProviderNode, Snapshot
from vgpucloud.placement.models import AggregateQuery


class Pick(NamedTuple):
    """One way to satisfy one group: ``amounts`` as (provider id, class, amount) triples,
    ``providers`` the group's entry in ``mappings``."""

    amounts: tuple[tuple[int, str, int], ...]
    providers: frozenset[int]
    members: tuple[int, ...]  # ``providers`` sorted, ready for rendering


class GroupPicks:
    """The picks of one request group, tree by tree."""

    def __init__(self, snapshot: Snapshot, group: RequestGroup) -> None:
        self.snapshot = snapshot
        self.group = group
        self.tree = _tree_root(snapshot, group)
        self.amounts = tuple(group.resources.items())
        self.check_traits = bool(group.traits.all_names())
        self.check_aggregates = bool(group.member_of.any_of or group.member_of.forbidden)
        # One Pick object per choice of providers, wherever it appears (engine._unique).
        self._interned: dict[tuple[int, ...], Pick] = {}

    def anchors(self) -> set[int] | None:
        """Every anchor that might have picks (a superset), or None for "any tree"."""
        if self.group.in_tree is not None and self.tree is None:
            return set()  # an unknown in_tree provider: no candidates (not an error)
        if not self.amounts:
            return None
        first_rc = self.amounts[0][0]
        found = set(self.snapshot.roots_with_class(first_rc))
        for provider in self.snapshot.sharing_with_class(first_rc):
            found |= self.snapshot.anchors(provider.id)
        return found

    def on(self, anchor: int) -> list[Pick]:
        """The group's picks for the tree rooted at ``anchor``, in Placement's order."""
        if self.group.same_provider:
            return self._single_provider_picks(anchor)
        return self._spread_picks(anchor)

    # --- suffixed groups: one provider -------------------------------------------------

    def _single_provider_picks(self, anchor: int) -> list[Pick]:
        if not self.amounts:  # resourceless: any provider of the tree, by traits/aggregates
            return [self._pick((provider.id,))
                    for provider in self.snapshot.reachable_from(anchor)
                    if self._own_traits_and_aggregates_match(provider)]
        (first_rc, first_amount), *rest = self.amounts
        tree, sharing = self.tree, self.snapshot.has_sharing
        picks = []
        for provider in self.snapshot.reachable_with_class(anchor, first_rc):
            if not (provider.resources[first_rc].fits(first_amount)
                    and (tree is None or provider.root_id == tree)
                    and (not rest or _has_room(provider, rest))
                    and self._own_traits_and_aggregates_match(provider)):
                continue
            if sharing and provider.shares:
                picks.append(self._pick((provider.id,)))
            else:  # on this tree only: no need to intern it
                pid = provider.id
                picks.append(Pick(tuple([(pid, rc, amount) for rc, amount in self.amounts]),
                                  frozenset((pid,)), (pid,)))
        return picks

    def _own_traits_and_aggregates_match(self, provider: ProviderNode) -> bool:
        group = self.group
        return ((not self.check_traits or group.traits.matches(provider.traits))
                and (not self.check_aggregates
                     or group.member_of.matches(provider.aggregates)))

    # --- the unsuffixed group: one provider per resource class ---------------------------

    def _spread_picks(self, anchor: int) -> list[Pick]:
        if not self.amounts:
            return []
        everywhere = not (self.check_aggregates or self.tree is not None)
        by_class = [[provider.id
                     for provider in self.snapshot.reachable_with_class(anchor, rc)
                     if provider.resources[rc].fits(amount)
                     and (everywhere or self._may_supply(provider, anchor))]
                    for rc, amount in self.amounts]
        picks = []
        for chosen in itertools.product(*by_class):
            if (not self.check_traits or chosen in self._interned
                    or _traits_met(self.snapshot, self.group, chosen)):
                picks.append(self._pick(chosen))
        return picks

    def _may_supply(self, provider: ProviderNode, anchor: int) -> bool:
        """Whether ``provider`` may give resources to the tree rooted at ``anchor``; always,
        without ``member_of`` and ``in_tree``."""
        aggregates, root = self.group.member_of, self.snapshot.providers[anchor]
        if self.tree is not None and provider.root_id != self.tree:
            return False
        if provider.root_id != anchor and not (self.tree is None
                                               and _in_all(aggregates, provider)):
            return False  # a sharing provider of another tree
        return ((_in_all(aggregates, provider) or _in_all(aggregates, root))
                and not (_in_forbidden(aggregates, provider)
                         or _in_forbidden(aggregates, root)))

    def _pick(self, chosen: tuple[int, ...]) -> Pick:
        """The one Pick object for these providers (one for the whole suffixed group, or
        one per class of the unsuffixed group)."""
        pick = self._interned.get(chosen)
        if pick is None:
            per_class = chosen * len(self.amounts) if self.group.same_provider else chosen
            pick = self._interned[chosen] = Pick(
                tuple([(pid, rc, amount)
                       for pid, (rc, amount) in zip(per_class, self.amounts, strict=True)]),
                frozenset(chosen), chosen if len(chosen) == 1 else tuple(sorted(set(chosen))))
        return pick


def _has_room(provider: ProviderNode, amounts: Sequence[tuple[str, int]]) -> bool:
    resources = provider.resources
    for rc, amount in amounts:
        inventory = resources.get(rc)
        if inventory is None or not inventory.fits(amount):
            return False
    return True


def _traits_met(snapshot: Snapshot, group: RequestGroup, chosen: tuple[int, ...]) -> bool:
    traits = group.traits
    seen: set[str] = set()
    for pid in set(chosen):
        own = snapshot.providers[pid].traits
        if traits.forbidden & own:
            return False
        seen |= own
    return traits.required <= seen and all(names & seen for names in traits.any_of)


def _in_all(aggregates: AggregateQuery, provider: ProviderNode) -> bool:
    return all(names & provider.aggregates for names in aggregates.any_of)


def _in_forbidden(aggregates: AggregateQuery, provider: ProviderNode) -> bool:
    return bool(aggregates.forbidden & provider.aggregates)


def _tree_root(snapshot: Snapshot, group: RequestGroup) -> int | None:
    if group.in_tree is None:
        return None
    node = snapshot.by_uuid(group.in_tree)
    return node.root_id if node is not None else None
