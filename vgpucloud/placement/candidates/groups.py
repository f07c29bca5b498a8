"""Every way one request group can be satisfied, keyed by the tree (anchor) it serves.

A host with two pGPUs and a shared disk::

    cn1                VCPU 48, MEMORY_MB 65442           aggregate A
    ├── cn1_pci_84     VGPU 16   CUSTOM_NVIDIA_11
    └── cn1_pci_85     VGPU 16   CUSTOM_NVIDIA_12
    nfs                DISK_GB 2000, MISC_SHARES_VIA_AGGREGATE, aggregate A

- ``resources1=VGPU:1&required1=CUSTOM_NVIDIA_11`` (suffixed: one provider does it all)
  gives ``{cn1: [Pick(cn1_pci_84)]}``.
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
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable
from typing import NamedTuple

from vgpucloud.placement.candidates.request import RequestGroup
from vgpucloud.placement.candidates.snapshot import ProviderNode, Snapshot
from vgpucloud.placement.models import AggregateQuery

AnchorFilter = Callable[[int], bool]


class Pick(NamedTuple):
    """One way to satisfy one group: ``amounts`` as (provider id, class, amount) triples,
    ``providers`` the group's entry in ``mappings``."""

    amounts: tuple[tuple[int, str, int], ...]
    providers: frozenset[int]
    members: tuple[int, ...]  # ``providers`` sorted, ready for rendering


# anchor root id -> the group's picks for that tree
GroupPicks = dict[int, list[Pick]]


def picks_for_group(snapshot: Snapshot, group: RequestGroup, anchor_ok: AnchorFilter
                    ) -> GroupPicks:
    """All picks of ``group``; an empty dict when it cannot be satisfied anywhere."""
    if group.in_tree is not None and snapshot.by_uuid(group.in_tree) is None:
        return {}  # an unknown in_tree provider: no candidates (not an error)
    if group.same_provider:
        return _single_provider_picks(snapshot, group, anchor_ok)
    return _spread_picks(snapshot, group, anchor_ok)


# --- suffixed groups: one provider ---------------------------------------------------------


def _single_provider_picks(snapshot: Snapshot, group: RequestGroup, anchor_ok: AnchorFilter
                           ) -> GroupPicks:
    picks: GroupPicks = {}
    for provider in _providers_for_whole_group(snapshot, group):
        if not (group.traits.matches(provider.traits)
                and group.member_of.matches(provider.aggregates)):
            continue
        pick = Pick(tuple((provider.id, rc, amount) for rc, amount in group.resources.items()),
                    frozenset((provider.id,)), (provider.id,))
        for anchor in _anchors_of(snapshot, provider):
            if anchor_ok(anchor):
                picks.setdefault(anchor, []).append(pick)
    return picks


def _providers_for_whole_group(snapshot: Snapshot, group: RequestGroup
                               ) -> Iterable[ProviderNode]:
    if not group.resources:
        return snapshot.providers.values()
    tree = _tree_root(snapshot, group)
    (first_rc, first_amount), *rest = group.resources.items()
    return [
        provider for provider in snapshot.with_class(first_rc)
        if (tree is None or provider.root_id == tree)
        and provider.resources[first_rc].fits(first_amount)
        and all(rc in provider.resources and provider.resources[rc].fits(amount)
                for rc, amount in rest)
    ]


def _anchors_of(snapshot: Snapshot, provider: ProviderNode) -> list[int]:
    """Its own root first, then (for a sharing provider) every other tree it serves."""
    anchors = [provider.root_id]
    if provider.shares:
        anchors += sorted(snapshot.anchors(provider.id) - {provider.root_id})
    return anchors


# --- the unsuffixed group: one provider per resource class -------------------------------


def _spread_picks(snapshot: Snapshot, group: RequestGroup, anchor_ok: AnchorFilter
                  ) -> GroupPicks:
    by_class = [_suppliers(snapshot, group, rc, amount, anchor_ok)
                for rc, amount in group.resources.items()]
    if not by_class:
        return {}
    anchors = set(by_class[0]).intersection(*by_class[1:])
    amounts = list(group.resources.items())
    picks: GroupPicks = {}
    # One Pick object per distinct choice, shared by every anchor it serves, so that
    # candidates can be told apart by the identity of their picks (see engine._collect).
    interned: dict[tuple[int, ...], Pick] = {}
    for anchor in sorted(anchors):
        for chosen in itertools.product(*(suppliers[anchor] for suppliers in by_class)):
            if chosen not in interned:
                if not _traits_met(snapshot, group, chosen):
                    continue
                interned[chosen] = Pick(
                    tuple((pid, rc, amount) for pid, (rc, amount) in zip(chosen, amounts,
                                                                          strict=True)),
                    frozenset(chosen), tuple(sorted(set(chosen))))
            picks.setdefault(anchor, []).append(interned[chosen])
    return picks


def _suppliers(snapshot: Snapshot, group: RequestGroup, rc: str, amount: int,
               anchor_ok: AnchorFilter) -> dict[int, list[int]]:
    """anchor -> providers that can give ``amount`` of ``rc`` to that tree."""
    tree = _tree_root(snapshot, group)
    aggregates = group.member_of
    suppliers: dict[int, list[int]] = {}
    for provider in snapshot.with_class(rc):
        if not provider.resources[rc].fits(amount):
            continue
        if tree is not None and provider.root_id != tree:
            continue
        anchors = [provider.root_id]
        if provider.shares and tree is None and _in_all(aggregates, provider):
            anchors += sorted(snapshot.anchors(provider.id) - {provider.root_id})
        for anchor in anchors:
            root = snapshot.providers[anchor]
            if (anchor_ok(anchor)
                    and (_in_all(aggregates, provider) or _in_all(aggregates, root))
                    and not (_in_forbidden(aggregates, provider)
                             or _in_forbidden(aggregates, root))):
                suppliers.setdefault(anchor, []).append(provider.id)
    return suppliers


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
