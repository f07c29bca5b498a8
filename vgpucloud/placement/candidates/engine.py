"""``find_candidates``: a snapshot and a request in, allocation candidates out. Pure.

Read top to bottom, it is the whole algorithm::

    1. anchors allowed by root_required          (roots with / without some traits)
    2. tree by tree, in anchor order, the picks of every group   (groups.py)
    3. for the anchors every group can serve, combinations of one pick per group,
       pruned by group_policy and capacity, filtered by same_subtree (combine.py),
       generated lazily tree by tree (depth-first) or round-robin (breadth-first)
    4. drop duplicates (only sharing providers make them), and stop as soon as
       ``limit`` (or ``max_allocation_candidates``) candidates are in hand
    5. provider summaries: every provider of the trees the candidates use
"""

from __future__ import annotations

import dataclasses
import itertools
import operator
import random
from collections.abc import Iterable, Iterator

from vgpucloud.placement.candidates.combine import (
    Candidate,
    Rules,
    interleave,
    tree_combinations,
)
from vgpucloud.placement.candidates.groups import GroupPicks, Pick
from vgpucloud.placement.candidates.request import (
    DEFAULT_POLICY,
    CandidateRequest,
    GenerationPolicy,
)
from vgpucloud.placement.candidates.snapshot import ProviderNode, Snapshot

__all__ = ["Candidate", "CandidateResult", "find_candidates"]

_PICKS = operator.attrgetter("picks")
_ANCHOR = operator.attrgetter("anchor")


@dataclasses.dataclass(frozen=True, slots=True)
class CandidateResult:
    candidates: list[Candidate]
    summaries: list[ProviderNode]
    # When ``summaries`` are whole trees (the usual case), their roots in order: a renderer
    # may then work tree by tree. None when they are a selection of providers.
    summary_roots: list[int] | None = None


def find_candidates(snapshot: Snapshot, request: CandidateRequest,
                    policy: GenerationPolicy = DEFAULT_POLICY) -> CandidateResult:
    groups = [GroupPicks(snapshot, group) for group in request.groups]
    rules = Rules.of(request)
    trees = (tree_combinations(snapshot, rules, anchor, picks)
             for anchor, picks in _picks_by_tree(snapshot, request, groups))
    generated = _collect(snapshot, request, policy, interleave(trees, policy.strategy))
    chosen = _limit(generated, request.limit, policy.randomize)
    if request.nested_aware or not snapshot.cloud_has_nested:
        roots = sorted(_roots_used(snapshot, chosen))
        return CandidateResult(chosen, [node for root in roots for node in snapshot.tree_of(root)],
                               roots)
    return CandidateResult(chosen, _selected_summaries(snapshot, generated, chosen))


def _picks_by_tree(snapshot: Snapshot, request: CandidateRequest, groups: list[GroupPicks]
                   ) -> Iterator[tuple[int, list[list[Pick]]]]:
    """For each anchor, in id order, the picks of every group - when every group has some."""
    for anchor in _candidate_anchors(snapshot, request, groups):
        picks = []
        for group in groups:
            found = group.on(anchor)
            if not found:
                break
            picks.append(found)
        else:
            yield anchor, picks


def _candidate_anchors(snapshot: Snapshot, request: CandidateRequest,
                       groups: list[GroupPicks]) -> list[int]:
    """Roots allowed by ``root_required`` where every group might find something."""
    if not groups:
        return []
    anchors: set[int] | None = None
    for group in groups:
        possible = group.anchors()
        if possible is not None:
            anchors = possible if anchors is None else anchors & possible
    if anchors is None:
        anchors = set(snapshot.roots())
    wanted = request.root_required
    if wanted.required or wanted.forbidden or wanted.any_of:
        anchors = {anchor for anchor in anchors
                   if wanted.matches(snapshot.providers[anchor].traits)}
    return sorted(anchors)


def _collect(snapshot: Snapshot, request: CandidateRequest, policy: GenerationPolicy,
             candidates: Iterator[Candidate]) -> list[Candidate]:
    """Unique candidates in generation order, stopping early when the caller can't use more.

    ``max_allocation_candidates`` counts unique candidates before anything else is
    dropped, as in Placement; ``limit`` counts what is returned, so without randomising
    we stop the moment we have ``limit`` of them.
    """
    if snapshot.has_sharing:
        candidates = _unique(candidates)
    stop_at = request.limit if request.limit and not policy.randomize else None
    # The cap is checked after a candidate is counted, so 0 behaves like 1.
    cap = max(policy.max_candidates, 1) if policy.max_candidates >= 0 else None
    if request.nested_aware or not snapshot.cloud_has_nested:
        # Nothing is dropped after generation: both bounds count the same candidates.
        bounds = [bound for bound in (stop_at, cap) if bound is not None]
        return list(itertools.islice(candidates, min(bounds) if bounds else None))
    kept: list[Candidate] = []
    for generated, candidate in enumerate(candidates, 1):
        if _one_provider_per_tree(snapshot, candidate):
            kept.append(candidate)
        if generated == cap or (stop_at and len(kept) >= stop_at):
            break
    return kept


def _unique(candidates: Iterable[Candidate]) -> Iterator[Candidate]:
    """Drop repeats: a sharing provider's pick is offered to every tree it serves, so one
    combination can come from two trees.

    Placement tells candidates apart by (allocations, mappings). Where repeats can arise
    (sharing providers) picks are interned per group, and two different picks of one group
    differ in mapping or in what they give, so the identities of the picks are that key,
    without building it. ``seen`` holds every candidate it keyed: a pick freed meanwhile
    could otherwise hand its ``id()`` to a new, different pick, which would then be
    dropped as a repeat.
    """
    seen: dict[tuple[int, ...], Candidate] = {}
    for candidate in candidates:
        key = tuple(map(id, candidate.picks))
        if key not in seen:
            seen[key] = candidate
            yield candidate


def _one_provider_per_tree(snapshot: Snapshot, candidate: Candidate) -> bool:
    providers = candidate.allocations
    roots = {snapshot.providers[pid].root_id for pid in providers}
    return len(roots) == len(providers)


def _limit(candidates: list[Candidate], limit: int | None, randomize: bool) -> list[Candidate]:
    if limit and limit < len(candidates):
        return random.sample(candidates, limit) if randomize else candidates[:limit]
    if randomize:
        candidates = candidates[:]
        random.shuffle(candidates)
    return candidates


def _selected_summaries(snapshot: Snapshot, generated: list[Candidate],
                        chosen: list[Candidate]) -> list[ProviderNode]:
    """Before 1.29 in a nested cloud, the summaries are only the providers the generated
    candidates name, in the trees of the returned ones (otherwise they are every provider
    of the trees the returned candidates take resources from: ``find_candidates``)."""
    wanted_roots = _roots_used(snapshot, chosen)
    named = {pid for candidate in generated for pick in candidate.picks
             for pid, _rc, _amount in pick.amounts}
    return [snapshot.providers[pid] for pid in sorted(named)
            if snapshot.providers[pid].root_id in wanted_roots]


def _roots_used(snapshot: Snapshot, candidates: list[Candidate]) -> set[int]:
    if not snapshot.has_sharing:  # then every provider of a candidate is in its tree
        return set(map(_ANCHOR, candidates))
    # Candidates repeat the same few picks: look each distinct pick up once (C loops).
    picks = list(itertools.chain.from_iterable(map(_PICKS, candidates)))
    distinct = dict(zip(map(id, picks), picks, strict=True)).values()
    # Providers that give resources: a resourceless group's provider alone does not count.
    providers = {pid for pick in distinct for pid, _rc, _amount in pick.amounts}
    return {snapshot.providers[pid].root_id for pid in providers}
