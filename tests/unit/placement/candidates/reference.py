"""A deliberately naive allocation-candidates oracle: enumerate, then apply every rule literally.

For every root (anchor), every group is assigned every provider that may serve that tree
(for the unsuffixed group: one provider per resource class), the product over groups is
formed in full, and only then are the rules checked one by one. Slow on purpose and
written without looking at the fast path's structure, so the two can disagree.
"""

from __future__ import annotations

import itertools

from vgpucloud.placement.candidates import CandidateRequest, RequestGroup, Snapshot
from vgpucloud.placement.candidates.snapshot import ProviderNode

Key = tuple[frozenset[tuple[str, str, int]], frozenset[tuple[str, frozenset[str]]]]


def reference_candidates(snapshot: Snapshot, request: CandidateRequest) -> set[Key]:
    results: set[Key] = set()
    for anchor in snapshot.providers.values():
        if anchor.parent_id is not None:
            continue
        if not request.root_required.matches(anchor.traits):
            continue
        options = [_group_options(snapshot, group, anchor) for group in request.groups]
        for combination in itertools.product(*options):
            key = _key_if_valid(snapshot, request, combination)
            if key is not None:
                results.add(key)
    return results


def _serves(snapshot: Snapshot, provider: ProviderNode, anchor: ProviderNode) -> bool:
    if provider.root_id == anchor.id:
        return True
    if "MISC_SHARES_VIA_AGGREGATE" not in provider.traits:
        return False
    return any(other.root_id == anchor.id and other.aggregates & provider.aggregates
               for other in snapshot.providers.values())


def _aggs_ok(group: RequestGroup, provider: ProviderNode) -> bool:
    return all(names & provider.aggregates for names in group.member_of.any_of)


def _group_options(snapshot: Snapshot, group: RequestGroup, anchor: ProviderNode
                   ) -> list[tuple[tuple[tuple[ProviderNode, str, int], ...], frozenset[str]]]:
    if group.in_tree is not None and snapshot.by_uuid(group.in_tree) is None:
        return []
    tree = snapshot.by_uuid(group.in_tree).root_id if group.in_tree else None
    everyone = list(snapshot.providers.values())
    options = []
    if group.suffix:
        for provider in everyone:
            if not _serves(snapshot, provider, anchor):
                continue
            if group.resources and tree is not None and provider.root_id != tree:
                continue
            if not all(rc in provider.resources and provider.resources[rc].fits(n)
                       for rc, n in group.resources.items()):
                continue
            if not group.traits.matches(provider.traits):
                continue
            if not group.member_of.matches(provider.aggregates):
                continue
            amounts = tuple((provider, rc, n) for rc, n in group.resources.items())
            options.append((amounts, frozenset({provider.uuid})))
        return options
    classes = list(group.resources.items())
    for chosen in itertools.product(everyone, repeat=len(classes)):
        ok = True
        for provider, (rc, n) in zip(chosen, classes, strict=True):
            own_tree = provider.root_id == anchor.id
            shared = (not own_tree and tree is None and _aggs_ok(group, provider)
                      and _serves(snapshot, provider, anchor))
            ok = ok and (own_tree or shared)
            ok = ok and rc in provider.resources and provider.resources[rc].fits(n)
            ok = ok and (tree is None or provider.root_id == tree)
            ok = ok and (_aggs_ok(group, provider) or _aggs_ok(group, anchor))
            ok = ok and not (group.member_of.forbidden & provider.aggregates)
            ok = ok and not (group.member_of.forbidden & anchor.aggregates)
        if not ok:
            continue
        traits: set[str] = set()
        for provider in chosen:
            traits |= provider.traits
        if any(group.traits.forbidden & p.traits for p in chosen):
            continue
        if not (group.traits.required <= traits
                and all(names & traits for names in group.traits.any_of)):
            continue
        amounts = tuple((p, rc, n) for p, (rc, n) in zip(chosen, classes, strict=True))
        options.append((amounts, frozenset(p.uuid for p in chosen)))
    return options


def _key_if_valid(snapshot: Snapshot, request: CandidateRequest, combination) -> Key | None:  # type: ignore[no-untyped-def]
    if request.group_policy == "isolate":
        granular = [next(iter(uuids)) for (group, (_, uuids))
                    in zip(request.groups, combination, strict=True) if group.suffix]
        if len(set(granular)) != len(granular):
            return None
    totals: dict[tuple[str, str], int] = {}
    for amounts, _ in combination:
        for provider, rc, n in amounts:
            totals[(provider.uuid, rc)] = totals.get((provider.uuid, rc), 0) + n
    for (uuid, rc), total in totals.items():
        inventory = snapshot.by_uuid(uuid).resources[rc]  # type: ignore[union-attr]
        if inventory.used + total > inventory.capacity or total > inventory.max_unit:
            return None
    for names in request.same_subtree:
        uuids = set().union(*(uuids for group, (_, uuids)
                              in zip(request.groups, combination, strict=True)
                              if group.suffix in names))
        if not _one_subtree(snapshot, uuids):
            return None
    mappings = frozenset((group.suffix, uuids) for group, (_, uuids)
                         in zip(request.groups, combination, strict=True))
    return frozenset((u, rc, n) for (u, rc), n in totals.items()), mappings


def _one_subtree(snapshot: Snapshot, uuids: set[str]) -> bool:
    def lineage(uuid: str) -> set[str]:
        node = snapshot.by_uuid(uuid)
        found = set()
        while node is not None:
            found.add(node.uuid)
            node = snapshot.providers[node.parent_id] if node.parent_id else None
        return found

    return any(all(top in lineage(u) for u in uuids) for top in uuids) if uuids else True
