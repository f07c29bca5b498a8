"""``find_candidates``: a snapshot and a request in, allocation candidates out. Pure.

Read top to bottom, it is the whole algorithm::

    1. anchors allowed by root_required          (roots with / without some traits)
    2. picks of every group, keyed by anchor     (groups.py)
    3. for the anchors every group can serve, combinations of one pick per group,
       pruned by group_policy and capacity, filtered by same_subtree (combine.py),
       generated lazily tree by tree (depth-first) or round-robin (breadth-first)
    4. consolidate each combination into allocations, drop duplicates, and stop as soon
       as ``limit`` (or ``max_allocation_candidates``) candidates are in hand
    5. provider summaries: every provider of the trees the candidates use
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Iterator
from typing import NamedTuple

from vgpucloud.placement.candidates.combine import Combination, interleave, tree_combinations
from vgpucloud.placement.candidates.groups import AnchorFilter, GroupPicks, picks_for_group
from vgpucloud.placement.candidates.request import (
    DEFAULT_POLICY,
    CandidateRequest,
    GenerationPolicy,
)
from vgpucloud.placement.candidates.snapshot import ProviderNode, Snapshot


class Candidate(NamedTuple):
    """One allocation request: what to claim from which provider, and which provider
    satisfied which group (``mappings``, microversion 1.34)."""

    # provider id -> resource class -> amount, providers in the order groups first used them
    allocations: dict[int, dict[str, int]]
    # group suffix -> provider ids, in request group order
    mappings: dict[str, tuple[int, ...]]


@dataclasses.dataclass(frozen=True, slots=True)
class CandidateResult:
    candidates: list[Candidate]
    summaries: list[ProviderNode]


def find_candidates(snapshot: Snapshot, request: CandidateRequest,
                    policy: GenerationPolicy = DEFAULT_POLICY) -> CandidateResult:
    picks = [picks_for_group(snapshot, group, _anchor_filter(snapshot, request))
             for group in request.groups]
    if not picks or not all(picks):
        return CandidateResult([], [])
    combinations = interleave(
        [tree_combinations(snapshot, request, [group[anchor] for group in picks])
         for anchor in _common_anchors(picks)],
        policy.strategy)
    generated = _collect(snapshot, request, policy, combinations)
    chosen = _limit(generated, request.limit, policy.randomize)
    return CandidateResult(chosen, _summaries(snapshot, request, generated, chosen))


def _anchor_filter(snapshot: Snapshot, request: CandidateRequest) -> AnchorFilter:
    wanted = request.root_required
    if not (wanted.required or wanted.forbidden or wanted.any_of):
        return lambda anchor: True
    return lambda anchor: wanted.matches(snapshot.providers[anchor].traits)


def _common_anchors(picks: list[GroupPicks]) -> list[int]:
    return sorted(set(picks[0]).intersection(*picks[1:]))


def _collect(snapshot: Snapshot, request: CandidateRequest, policy: GenerationPolicy,
             combinations: Iterator[Combination]) -> list[Candidate]:
    """Unique candidates in generation order, stopping early when the caller can't use more.

    ``max_allocation_candidates`` counts unique candidates before anything else is
    dropped, as in Placement; ``limit`` counts what is returned, so without randomising
    we stop the moment we have ``limit`` of them.
    """
    suffixes = [group.suffix for group in request.groups]
    one_per_tree = not request.nested_aware and snapshot.cloud_has_nested
    stop_at = request.limit if request.limit and not policy.randomize else None
    # Placement tells candidates apart by (allocations, mappings). Picks are interned per
    # group and two different picks of one group differ in mapping or in what they give,
    # so the identities of the picks are that key, without building it.
    seen: set[tuple[int, ...]] = set()
    kept: list[Candidate] = []
    for combination in combinations:
        key = tuple(map(id, combination))
        if key in seen:
            continue
        seen.add(key)
        allocations = _consolidate(combination)
        if not one_per_tree or _one_provider_per_tree(snapshot, allocations):
            kept.append(Candidate(allocations, {
                suffix: pick.members
                for suffix, pick in zip(suffixes, combination, strict=True)}))
        if 0 <= policy.max_candidates <= len(seen) or (stop_at and len(kept) >= stop_at):
            break
    return kept


def _consolidate(combination: Combination) -> dict[int, dict[str, int]]:
    allocations: dict[int, dict[str, int]] = {}
    for pick in combination:
        for pid, rc, amount in pick.amounts:
            resources = allocations.setdefault(pid, {})
            resources[rc] = resources.get(rc, 0) + amount
    return allocations


def _one_provider_per_tree(snapshot: Snapshot, allocations: dict[int, dict[str, int]]) -> bool:
    roots = {snapshot.providers[pid].root_id for pid in allocations}
    return len(roots) == len(allocations)


def _limit(candidates: list[Candidate], limit: int | None, randomize: bool) -> list[Candidate]:
    if limit and limit < len(candidates):
        return random.sample(candidates, limit) if randomize else candidates[:limit]
    if randomize:
        candidates = candidates[:]
        random.shuffle(candidates)
    return candidates


def _summaries(snapshot: Snapshot, request: CandidateRequest, generated: list[Candidate],
               chosen: list[Candidate]) -> list[ProviderNode]:
    """Every provider of the trees the returned candidates take resources from; before
    1.29 in a nested cloud, only the providers the generated candidates name."""
    roots = sorted({snapshot.providers[pid].root_id
                    for candidate in chosen for pid in candidate.allocations})
    if request.nested_aware or not snapshot.cloud_has_nested:
        return [node for root in roots for node in snapshot.tree_of(root)]
    named = {pid for candidate in generated for pid in candidate.allocations}
    wanted_roots = set(roots)
    return [snapshot.providers[pid] for pid in sorted(named)
            if snapshot.providers[pid].root_id in wanted_roots]
