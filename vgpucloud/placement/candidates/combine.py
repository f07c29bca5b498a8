"""Folding one pick per request group into whole candidates, lazily, one tree at a time.

For ``resources=VCPU:1&resources1=VGPU:1&resources2=VGPU:1&group_policy=isolate`` on::

    cn1                 VCPU 48
    ├── cn1_pci_84      VGPU 16
    └── cn1_pci_85      VGPU 16

the picks of cn1 are ``"": [cn1]``, ``"1": [84, 85]``, ``"2": [84, 85]``; the product
(one pick per group) gives four combinations, ``isolate`` keeps (84, 85) and (85, 84):
two candidates with the same allocations but different ``mappings`` — Placement returns
both, so do we.

The product is a depth-first walk that prunes as soon as a partial combination breaks
``isolate`` (two suffixed groups on one provider) or capacity (groups summing past what
a provider has left, or past its ``max_unit``). Both rules only get stricter as groups
are added, so pruning never loses a candidate; it only skips work. ``same_subtree`` is
checked on whole combinations.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence

from vgpucloud.placement.candidates.groups import Pick
from vgpucloud.placement.candidates.request import ISOLATE, CandidateRequest
from vgpucloud.placement.candidates.snapshot import Snapshot

Combination = tuple[Pick, ...]


def tree_combinations(snapshot: Snapshot, request: CandidateRequest,
                      picks_by_group: Sequence[Sequence[Pick]]) -> Iterator[Combination]:
    """Valid combinations for one tree, generated on demand."""
    granular = [group.same_provider for group in request.groups]
    isolate = request.group_policy == ISOLATE
    subtrees = [[i for i, group in enumerate(request.groups) if group.suffix in names]
                for names in request.same_subtree]
    chosen: list[Pick] = []
    used_granular: set[int] = set()
    taken: dict[tuple[int, str], int] = {}
    depth = len(picks_by_group)

    def walk(level: int) -> Iterator[Combination]:
        if level == depth:
            if all(_one_subtree(snapshot, chosen, members) for members in subtrees):
                yield tuple(chosen)
            return
        for pick in picks_by_group[level]:
            (provider,) = pick.providers if isolate and granular[level] else (None,)
            if provider is not None and provider in used_granular:
                continue
            if not _take(snapshot, taken, pick):
                continue
            if provider is not None:
                used_granular.add(provider)
            chosen.append(pick)
            yield from walk(level + 1)
            chosen.pop()
            _give_back(taken, pick)
            if provider is not None:
                used_granular.discard(provider)

    return walk(0)


def _take(snapshot: Snapshot, taken: dict[tuple[int, str], int], pick: Pick) -> bool:
    """Add ``pick`` to the running totals if every provider still has room for the sum."""
    for index, (pid, rc, amount) in enumerate(pick.amounts):
        total = taken.get((pid, rc), 0) + amount
        inventory = snapshot.providers[pid].resources[rc]
        if inventory.used + total > inventory.capacity or total > inventory.max_unit:
            _give_back(taken, pick, upto=index)
            return False
        taken[(pid, rc)] = total
    return True


def _give_back(taken: dict[tuple[int, str], int], pick: Pick, upto: int | None = None) -> None:
    for pid, rc, amount in pick.amounts[:upto]:
        left = taken[(pid, rc)] - amount
        if left:
            taken[(pid, rc)] = left
        else:
            del taken[(pid, rc)]


def _one_subtree(snapshot: Snapshot, chosen: Sequence[Pick], members: Sequence[int]) -> bool:
    """One of the providers of these groups is an ancestor (or itself) of all the others."""
    providers: set[int] = set()
    for index in members:
        providers |= chosen[index].providers
    if len(providers) <= 1:
        return True
    common = set.intersection(*(snapshot.ancestors(pid) for pid in providers))
    return bool(common & providers)


def interleave(trees: Sequence[Iterator[Combination]], strategy: str
               ) -> Iterator[Combination]:
    """``depth-first``: tree after tree. ``breadth-first``: one from each tree in turn, so a
    capped result spreads over as many hosts as possible."""
    if strategy == "depth-first":
        return itertools.chain.from_iterable(trees)
    if strategy == "breadth-first":
        return _round_robin(trees)
    raise ValueError(f"unknown allocation_candidates_generation_strategy {strategy!r}; "
                     "use depth-first or breadth-first")


def _round_robin(trees: Sequence[Iterator[Combination]]) -> Iterator[Combination]:
    active = list(trees)
    while active:
        still = []
        for tree in active:
            item = next(tree, None)
            if item is not None:
                still.append(tree)
                yield item
        active = still
