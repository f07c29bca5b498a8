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
from collections.abc import Iterable, Mapping, Sequence
from typing import NamedTuple

from vgpucloud.placement.candidates.request import RequestGroup
from vgpucloud.placement.candidates.snapshot import ProviderNode, Snapshot
from vgpucloud.placement.models import AggregateQuery, TraitQuery


class Pick(NamedTuple):
    """One way to satisfy one group: ``amounts`` as (provider id, class, amount) triples,
    ``providers`` the group's entry in ``mappings``."""

    amounts: tuple[tuple[int, str, int], ...]
    providers: frozenset[int]
    members: tuple[int, ...]  # ``providers`` sorted, ready for rendering


# ``Pick(...)`` goes through a Python-level ``__new__``; this builds the same tuple in C.
_new_pick = tuple.__new__


class GroupPicks:
    """The picks of one request group, tree by tree."""

    def __init__(self, snapshot: Snapshot, group: RequestGroup) -> None:
        self.snapshot = snapshot
        self.group = group
        self.tree = _tree_root(snapshot, group)
        self.amounts = tuple(group.resources.items())
        self.check_traits = bool(group.traits.all_names())
        self.check_aggregates = bool(group.member_of.any_of or group.member_of.forbidden)
        # A suffixed group's required traits as the set of providers that have them all
        # (one membership test per provider, from the snapshot's index); what remains to
        # check on each provider is whether anything else (forbidden, in:, member_of) is
        # asked at all.
        required = group.traits.required
        self.with_required = snapshot.with_traits(required) if required else None
        self.check_rest = bool(group.traits.forbidden or group.traits.any_of
                               or self.check_aggregates)
        # Without sharing providers no pick can serve two trees: nothing to intern.
        self.intern = snapshot.has_sharing
        self.same_provider = group.same_provider
        self.classes = tuple(rc for rc, _amount in self.amounts)
        self.counts = tuple(amount for _rc, amount in self.amounts)
        self.in_trees = self._providers_by_tree()
        # The unsuffixed group with nothing but amounts, in a cloud without sharing: the
        # usual flavor request, served by ``_plain_spread_picks``.
        self.plain = (self.in_trees is not None and bool(self.amounts)
                      and not group.same_provider
                      and not (self.check_traits or self.check_aggregates or group.in_tree))
        self.plain_classes = (list(zip(self.in_trees, self.classes, self.counts, strict=True))
                              if self.plain and self.in_trees is not None else [])
        # One Pick object per choice of providers, wherever it appears (engine._unique).
        self._interned: dict[tuple[int, ...], Pick] = {}

    def _providers_by_tree(self) -> list[Mapping[int, list[ProviderNode]]] | None:
        """Per class, root -> the providers of that tree with it; None in a cloud with
        sharing providers, where the snapshot adds those anchored to each tree."""
        snapshot = self.snapshot
        if snapshot.has_sharing:
            return None
        in_trees = [snapshot.class_in_trees(rc) for rc in self.classes]
        if in_trees and self.same_provider and self.with_required is not None:
            # A suffixed group only ever looks at its first class's providers: keep those
            # with the required traits, usually far fewer (one pGPU of four, say).
            in_trees[0] = _by_tree(snapshot, self.with_required, self.classes[0])
        return in_trees

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
        if self.same_provider:
            return self._single_provider_picks(anchor)
        if self.plain:
            return self._plain_spread_picks(anchor)
        return self._spread_picks(anchor)

    # --- suffixed groups: one provider -------------------------------------------------

    def _single_provider_picks(self, anchor: int) -> list[Pick]:
        if not self.amounts:  # resourceless: any provider of the tree, by traits/aggregates
            return [self._pick((provider.id,))
                    for provider in self.snapshot.reachable_from(anchor)
                    if self._own_traits_and_aggregates_match(provider)]
        (first_rc, first_amount), *rest = self.amounts
        tree, required, check_rest = self.tree, self.with_required, self.check_rest
        picks = []
        reachable = (self.in_trees[0].get(anchor, ()) if self.in_trees is not None
                     else self.snapshot.reachable_with_class(anchor, first_rc))
        for provider in reachable:
            if not ((required is None or provider.id in required)
                    and provider.resources[first_rc].fits(first_amount)
                    and (tree is None or provider.root_id == tree)
                    and (not rest or _has_room(provider, rest))
                    and (not check_rest or self._other_filters_match(provider))):
                continue
            if self.intern and provider.shares:
                picks.append(self._pick((provider.id,)))
            else:  # on this tree only: no need to intern it
                pid = provider.id
                amounts = (((pid, first_rc, first_amount),) if not rest else
                           tuple([(pid, rc, amount) for rc, amount in self.amounts]))
                picks.append(_new_pick(Pick, (amounts, frozenset((pid,)), (pid,))))
        return picks

    def _own_traits_and_aggregates_match(self, provider: ProviderNode) -> bool:
        return ((self.with_required is None or provider.id in self.with_required)
                and (not self.check_rest or self._other_filters_match(provider)))

    def _other_filters_match(self, provider: ProviderNode) -> bool:
        """Forbidden and ``in:`` traits and ``member_of``: all but the required traits."""
        group = self.group
        return ((not self.check_traits or _besides_required(group.traits, provider.traits))
                and (not self.check_aggregates
                     or group.member_of.matches(provider.aggregates)))

    # --- the unsuffixed group: one provider per resource class ---------------------------

    def _plain_spread_picks(self, anchor: int) -> list[Pick]:
        """``_spread_picks`` when every class has at most one provider in the tree (the
        root, usually) and nothing but amounts is asked: the one pick, without products."""
        chosen = []
        for by_tree, rc, amount in self.plain_classes:
            providers = by_tree.get(anchor)
            if providers is None:
                return []
            if len(providers) != 1:
                return self._spread_picks(anchor)
            provider = providers[0]
            if not provider.resources[rc].fits(amount):
                return []
            chosen.append(provider.id)
        ids = tuple(chosen)
        # (pid, rc, amount) triples; one id per class by construction
        amounts = tuple(zip(ids, self.classes, self.counts, strict=True))
        return [_new_pick(Pick, (amounts, frozenset(ids), _members(ids)))]

    def _spread_picks(self, anchor: int) -> list[Pick]:
        if not self.amounts:
            return []
        everywhere = not (self.check_aggregates or self.tree is not None)
        by_class = []
        for index, (rc, amount) in enumerate(self.amounts):
            reachable = (self.in_trees[index].get(anchor, ()) if self.in_trees is not None
                         else self.snapshot.reachable_with_class(anchor, rc))
            found = [provider.id
                     for provider in reachable
                     if provider.resources[rc].fits(amount)
                     and (everywhere or self._may_supply(provider, anchor))]
            if not found:  # a class nobody here can give: no pick, skip the others
                return []
            by_class.append(found)
        if not self.check_traits and all(len(found) == 1 for found in by_class):
            # The common shape (one provider per class, often the root for all): one pick.
            return [self._pick(tuple([found[0] for found in by_class]))]
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
            pick = Pick(
                tuple([(pid, rc, amount)
                       for pid, (rc, amount) in zip(per_class, self.amounts, strict=True)]),
                frozenset(chosen), _members(chosen))
            if self.intern or self.check_traits:  # see __init__; the latter for _spread_picks
                self._interned[chosen] = pick
        return pick


def _by_tree(snapshot: Snapshot, ids: Iterable[int], resource_class: str
             ) -> dict[int, list[ProviderNode]]:
    """Root -> the providers among ``ids`` that have ``resource_class``, in id order."""
    found: dict[int, list[ProviderNode]] = {}
    for pid in sorted(ids):
        provider = snapshot.providers[pid]
        if resource_class in provider.resources:
            found.setdefault(provider.root_id, []).append(provider)
    return found


def _members(chosen: tuple[int, ...]) -> tuple[int, ...]:
    """A pick's providers as its ``mappings`` entry lists them: sorted, once each."""
    return chosen if len(chosen) == 1 else tuple(sorted(set(chosen)))


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


def _besides_required(traits: TraitQuery, own: frozenset[str]) -> bool:
    return not (traits.forbidden & own) and all(names & own for names in traits.any_of)


def _in_all(aggregates: AggregateQuery, provider: ProviderNode) -> bool:
    return all(names & provider.aggregates for names in aggregates.any_of)


def _in_forbidden(aggregates: AggregateQuery, provider: ProviderNode) -> bool:
    return bool(aggregates.forbidden & provider.aggregates)


def _tree_root(snapshot: Snapshot, group: RequestGroup) -> int | None:
    if group.in_tree is None:
        return None
    node = snapshot.by_uuid(group.in_tree)
    return node.root_id if node is not None else None
