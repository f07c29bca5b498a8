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

Each pick already fits its providers on its own (``groups``), so capacity is only
re-checked when a pick lands on a provider an earlier pick of the combination also
uses - rare outside ``group_policy=none`` - and the walk remembers that it happened
(``Candidate.shared``) so that consumers of the candidate know its amounts add up.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from vgpucloud.placement.candidates.groups import Pick
from vgpucloud.placement.candidates.request import ISOLATE, CandidateRequest
from vgpucloud.placement.candidates.snapshot import Snapshot

NOWHERE: frozenset[int] = frozenset()


class Candidate(NamedTuple):
    """One allocation request: one pick per request group, in request order.

    ``allocations`` (what to claim from which provider) and ``mappings`` (which provider
    satisfied which group, microversion 1.34) are derived on demand: most candidates are
    rendered straight from their picks and never need them as dicts.
    """

    picks: tuple[Pick, ...]
    suffixes: tuple[str, ...]
    shared: bool  # two picks take from one provider: their amounts add up
    anchor: int  # the root of the tree it was found for

    @property
    def allocations(self) -> dict[int, dict[str, int]]:
        """provider id -> resource class -> amount, providers in the order groups first
        used them."""
        allocations: dict[int, dict[str, int]] = {}
        for pick in self.picks:
            for pid, rc, amount in pick.amounts:
                resources = allocations.setdefault(pid, {})
                resources[rc] = resources.get(rc, 0) + amount
        return allocations

    @property
    def mappings(self) -> dict[str, tuple[int, ...]]:
        """group suffix -> provider ids, in request group order."""
        return {suffix: pick.members
                for suffix, pick in zip(self.suffixes, self.picks, strict=True)}


class Rules(NamedTuple):
    """What the walk needs from the request, worked out once per request."""

    suffixes: tuple[str, ...]
    separate: tuple[bool, ...]  # per group: must not share a provider with another such
    subtrees: tuple[tuple[int, ...], ...]  # group indexes that must share one subtree

    @classmethod
    def of(cls, request: CandidateRequest) -> Rules:
        isolate = request.group_policy == ISOLATE
        return cls(
            tuple(group.suffix for group in request.groups),
            tuple(isolate and group.same_provider for group in request.groups),
            tuple(tuple(i for i, group in enumerate(request.groups) if group.suffix in names)
                  for names in request.same_subtree))


def tree_combinations(snapshot: Snapshot, rules: Rules, anchor: int,
                      picks_by_group: Sequence[Sequence[Pick]]) -> Iterator[list[Candidate]]:
    """Valid combinations for the tree rooted at ``anchor``, generated on demand, in
    batches: the candidates that differ only in the last group's pick come out together
    (one list per prefix), which keeps the per-candidate work of the walk small."""
    return _walk(_Tree(snapshot, rules, anchor, picks_by_group), 0, (), NOWHERE, NOWHERE,
                 False)


class _Tree(NamedTuple):
    snapshot: Snapshot
    rules: Rules
    anchor: int
    picks_by_group: Sequence[Sequence[Pick]]


# Module-level functions, not closures: a nested generator that calls itself through its
# own cell is a reference cycle, which would keep every pick of the request alive until
# the cyclic garbage collector ran (and made it scan them all).
def _walk(tree: _Tree, level: int, prefix: tuple[Pick, ...], occupied: frozenset[int],
          isolated: frozenset[int], shared: bool) -> Iterator[list[Candidate]]:
    """Extend ``prefix`` (one pick for each group before ``level``) in every valid way;
    ``occupied`` are the providers it uses, ``isolated`` those used by isolated groups."""
    if level == len(tree.picks_by_group) - 1:
        batch = _last_picks(tree, prefix, occupied, isolated, shared)
        if batch:
            yield batch
        return
    snapshot, alone = tree.snapshot, tree.rules.separate[level]
    for pick in tree.picks_by_group[level]:
        providers = pick.providers
        if alone and not isolated.isdisjoint(providers):
            continue
        overlap = not occupied.isdisjoint(providers)
        if overlap and not _fits_with(snapshot, prefix, pick):
            continue
        picks, now_occupied = (*prefix, pick), occupied | providers
        now_isolated, now_shared = isolated | providers if alone else isolated, shared or overlap
        if level + 2 < len(tree.picks_by_group):
            yield from _walk(tree, level + 1, picks, now_occupied, now_isolated, now_shared)
        else:  # one generator less per prefix: the last level is a plain function
            batch = _last_picks(tree, picks, now_occupied, now_isolated, now_shared)
            if batch:
                yield batch


# ``Candidate(...)`` goes through a Python-level ``__new__``; this is the same tuple built
# straight in C - thousands of times per request, in the loop below.
_new_candidate = tuple.__new__


def _last_picks(tree: _Tree, prefix: tuple[Pick, ...], occupied: frozenset[int],
                isolated: frozenset[int], shared: bool) -> list[Candidate]:
    """The candidates that complete ``prefix`` with a pick of the last group: a plain loop,
    the innermost one of the walk, where almost all the candidates are made."""
    snapshot, (suffixes, separate, subtrees), anchor, picks_by_group = tree
    alone = separate[-1] and bool(isolated)
    batch: list[Candidate] = []
    for pick in picks_by_group[-1]:
        providers = pick.providers
        if alone and not isolated.isdisjoint(providers):
            continue
        overlap = not occupied.isdisjoint(providers)
        if overlap and not _fits_with(snapshot, prefix, pick):
            continue
        picks = (*prefix, pick)
        if not subtrees or all(_one_subtree(snapshot, picks, members) for members in subtrees):
            batch.append(_new_candidate(Candidate, (picks, suffixes, shared or overlap, anchor)))
    return batch


def _fits_with(snapshot: Snapshot, chosen: Sequence[Pick], pick: Pick) -> bool:
    """Whether every provider still has room for ``pick`` on top of the chosen picks."""
    for pid, rc, amount in pick.amounts:
        total = amount + sum(earlier_amount for earlier in chosen
                             for earlier_pid, earlier_rc, earlier_amount in earlier.amounts
                             if earlier_pid == pid and earlier_rc == rc)
        inventory = snapshot.providers[pid].resources[rc]
        if inventory.used + total > inventory.capacity or total > inventory.max_unit:
            return False
    return True


def _one_subtree(snapshot: Snapshot, chosen: Sequence[Pick], members: Sequence[int]) -> bool:
    """One of the providers of these groups is an ancestor (or itself) of all the others."""
    providers: set[int] = set()
    for index in members:
        providers |= chosen[index].providers
    if len(providers) <= 1:
        return True
    common = set.intersection(*(snapshot.ancestors(pid) for pid in providers))
    return bool(common & providers)


def interleave(trees: Iterable[Iterator[list[Candidate]]], strategy: str
               ) -> Iterator[Candidate]:
    """``depth-first``: tree after tree. ``breadth-first``: one from each tree in turn, so a
    capped result spreads over as many hosts as possible."""
    flat = itertools.chain.from_iterable
    if strategy == "depth-first":
        return flat(flat(trees))
    if strategy == "breadth-first":
        return _round_robin([flat(tree) for tree in trees])
    raise ValueError(f"unknown allocation_candidates_generation_strategy {strategy!r}; "
                     "use depth-first or breadth-first")


def _round_robin(trees: Iterable[Iterator[Candidate]]) -> Iterator[Candidate]:
    active = list(trees)
    while active:
        still = []
        for tree in active:
            item = next(tree, None)
            if item is not None:
                still.append(tree)
                yield item
        active = still
