"""Allocation candidates as JSON text, built from fragments instead of dicts.

A 1.34+ answer repeats the same few pieces thousands of times: four thousand candidates
of ``resources=VCPU:1&resources1=VGPU:1`` name one thousand hosts and four thousand pGPUs.
So each piece is rendered once and the answer is glued from them::

    pick of group "1" on cn1_pci_84  ->  ', "<uuid 84>": {"resources": {"VGPU": 1}}'
                                         ', "1": ["<uuid 84>"]'
    candidate (cn1, cn1_pci_84)      ->  '{"allocations": {' + root part + gpu part + '}, '
                                         '"mappings": {' + ... + '}}'
    cn1_pci_84's summary, its share   ->  kept across requests while the provider's
    of an allocation, its mapping         snapshot node is the same object (the read model
                                         replaces a node whenever its provider changes)

The text is exactly what ``json.dumps`` makes of ``render`` (the plain dict rendering,
which stays the reference and serves the rare pre-1.12 list shape): same keys, same
order, same separators. A candidate whose groups share a provider has amounts that add
up; it is rendered from its consolidated dict.
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from json.encoder import encode_basestring_ascii as quoted  # json.dumps of one str, in C
from operator import attrgetter, itemgetter
from typing import Any

from vgpucloud.api.microversion import Version
from vgpucloud.placement.candidates import (
    Candidate,
    CandidateRequest,
    CandidateResult,
    ProviderNode,
    Snapshot,
)
from vgpucloud.placement.candidates.groups import Pick

# (every class?, the asked classes when not, with traits?, nested?)
SummaryShape = tuple[bool, frozenset[str] | None, bool, bool]


def render_text(snapshot: Snapshot, request: CandidateRequest, result: CandidateResult,
                version: Version) -> str:
    """The JSON document of a 1.12+ answer."""
    with_mappings = version >= (1, 34)
    candidates = result.candidates
    if any(map(_SHARED, candidates)):
        requests = _requests_one_by_one(snapshot, candidates, with_mappings)
    else:
        requests = _requests_by_column(snapshot, candidates, with_mappings)
    shape = summary_shape(request, version)
    if result.summary_roots is None:
        summaries = ", ".join([TEXTS.summary(snapshot, node, shape)
                               for node in result.summaries])
    else:
        summaries = ", ".join([TREE_TEXTS.summaries(snapshot, root, shape)
                               for root in result.summary_roots])
    return f'{{"allocation_requests": [{requests}], "provider_summaries": {{{summaries}}}}}'


def summary_shape(request: CandidateRequest, version: Version) -> SummaryShape:
    every_class = version >= (1, 27)
    return (every_class, None if every_class else frozenset(request.resource_classes()),
            version >= (1, 17), version >= (1, 29))


# --- allocation requests --------------------------------------------------------------------

_OPEN, _MIDDLE, _CLOSE = ', {"allocations": {', '}, "mappings": {', "}}"
_PICKS = attrgetter("picks")
_SHARED = attrgetter("shared")


def _requests_by_column(snapshot: Snapshot, candidates: list[Candidate], with_mappings: bool
                        ) -> str:
    """Every candidate's text, glued column by column.

    With two groups, candidate k is the row
    ``, {"allocations": {`` A1[k] A2[k] ``}, "mappings": {`` M1[k] M2[k] ``}}`` where Aj and Mj
    are the texts of the pick of group j: each column is filled for all candidates at
    once (C loops over ``map`` and slices) and the rows are joined once. Only valid when
    no candidate has two picks on one provider.
    """
    if not candidates:
        return ""
    width = len(candidates[0].picks)
    stride = 2 * width + 3 if with_mappings else width + 2
    count = len(candidates)
    rows: list[str] = [_OPEN] * (count * stride)
    rows[stride - 1::stride] = [_CLOSE if with_mappings else "}}"] * count
    if with_mappings:
        rows[width + 1::stride] = [_MIDDLE] * count
    first_with_resources = next(
        (j for j, pick in enumerate(candidates[0].picks) if pick.amounts), 0)
    picks_of = list(map(_PICKS, candidates))
    for j, suffix in enumerate(candidates[0].suffixes):
        column = list(map(itemgetter(j), picks_of))
        ids = list(map(id, column))
        allocations: dict[int, str] = {}
        mappings: dict[int, str] = {}
        first_allocation, first_mapping = j == first_with_resources, j == 0
        for key, pick in dict(zip(ids, column, strict=True)).items():
            allocations[key], mappings[key] = _pick_parts(
                snapshot, suffix, pick, first_allocation=first_allocation,
                first_mapping=first_mapping)
        rows[1 + j::stride] = map(allocations.__getitem__, ids)
        if with_mappings:
            rows[width + 2 + j::stride] = map(mappings.__getitem__, ids)
    return "".join(rows)[2:]


def _requests_one_by_one(snapshot: Snapshot, candidates: list[Candidate],
                         with_mappings: bool) -> str:
    """Candidates whose groups may share a provider: those are consolidated into a dict."""
    rendered = []
    for candidate in candidates:
        if candidate.shared:
            rendered.append(json.dumps(request_dict(snapshot, candidate, with_mappings)))
            continue
        rendered.append(_requests_by_column(snapshot, [candidate], with_mappings))
    return ", ".join(rendered)


def _pick_parts(snapshot: Snapshot, suffix: str, pick: Pick, *, first_allocation: bool,
                first_mapping: bool) -> tuple[str, str]:
    """The allocations and mappings texts of one pick, led by ", " unless they come first."""
    providers = snapshot.providers
    if len(pick.members) == 1:  # the common case: kept with the provider across requests
        return TEXTS.single_pick(providers[pick.members[0]], pick.amounts, suffix,
                                 first_allocation, first_mapping)
    by_provider: dict[int, list[tuple[str, int]]] = {}
    for pid, rc, amount in pick.amounts:
        by_provider.setdefault(pid, []).append((rc, amount))
    allocations = ", ".join([TEXTS.allocation(providers[pid], tuple(resources))
                             for pid, resources in by_provider.items()])
    uuids = ", ".join([quoted(providers[pid].uuid) for pid in pick.members])
    mapping = f"{quoted(suffix)}: [{uuids}]"
    return (allocations if first_allocation or not allocations else ", " + allocations,
            mapping if first_mapping else ", " + mapping)


def request_dict(snapshot: Snapshot, candidate: Candidate, with_mappings: bool
                 ) -> dict[str, Any]:
    """One 1.12+ allocation request as a dict (the reference shape)."""
    providers = snapshot.providers
    item: dict[str, Any] = {"allocations": {
        providers[pid].uuid: {"resources": resources}
        for pid, resources in candidate.allocations.items()}}
    if with_mappings:
        item["mappings"] = {suffix: [providers[pid].uuid for pid in pids]
                            for suffix, pids in candidate.mappings.items()}
    return item


# --- provider summaries -----------------------------------------------------------------------


def summary_dict(snapshot: Snapshot, node: ProviderNode, shape: SummaryShape
                 ) -> dict[str, Any]:
    """One provider summary as a dict (the reference shape)."""
    every_class, asked, with_traits, nested = shape
    summary: dict[str, Any] = {"resources": {
        rc: {"capacity": inventory.capacity, "used": inventory.used}
        for rc, inventory in node.resources.items() if every_class or rc in asked}}  # type: ignore[operator]
    if with_traits:
        summary["traits"] = sorted(node.traits)
    if nested:
        providers = snapshot.providers
        summary["parent_provider_uuid"] = (
            providers[node.parent_id].uuid if node.parent_id is not None else None)
        summary["root_provider_uuid"] = providers[node.root_id].uuid
    return summary


# Texts kept per provider: a few response shapes times the request groups in use.
_TEXTS_PER_PROVIDER = 64


class ProviderTexts:
    """Rendered pieces about one provider (its summary, its share of an allocation, its
    entry in a mapping), kept per provider id for as long as its snapshot node is the same
    object: the read model builds a new node whenever anything about the provider (or its
    place in a tree) changes, so an identical node means identical texts. One entry per
    provider id, of at most ``_TEXTS_PER_PROVIDER`` texts, bounds the memory; threads may
    race to fill an entry, harmlessly."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[ProviderNode, dict[Hashable, Any]]] = {}

    def _of(self, node: ProviderNode) -> dict[Hashable, Any]:
        entry = self._texts.get(node.id)
        if entry is None or entry[0] is not node:
            entry = self._texts[node.id] = (node, {})
        elif len(entry[1]) >= _TEXTS_PER_PROVIDER:
            entry[1].clear()  # many different requests (amounts, suffixes): start over
        return entry[1]

    def summary(self, snapshot: Snapshot, node: ProviderNode, shape: SummaryShape) -> str:
        """``"<uuid>": {"resources": ...}``"""
        texts = self._of(node)
        text = texts.get(shape)
        if text is None:
            text = texts[shape] = (
                f"{quoted(node.uuid)}: {json.dumps(summary_dict(snapshot, node, shape))}")
        return text

    def allocation(self, node: ProviderNode, resources: tuple[tuple[str, int], ...]) -> str:
        """``"<uuid>": {"resources": {"VGPU": 1}}``"""
        texts = self._of(node)
        text = texts.get(resources)
        if text is None:
            amounts = ", ".join([f"{quoted(rc)}: {amount:d}" for rc, amount in resources])
            text = texts[resources] = f'{quoted(node.uuid)}: {{"resources": {{{amounts}}}}}'
        return text

    def single_pick(self, node: ProviderNode, amounts: tuple[tuple[int, str, int], ...],
                    suffix: str, first_allocation: bool, first_mapping: bool
                    ) -> tuple[str, str]:
        """Both texts of a pick that takes ``amounts`` from ``node`` alone."""
        texts = self._of(node)
        key = (amounts, suffix, first_allocation, first_mapping)
        parts = texts.get(key)
        if parts is None:
            resources = tuple((rc, amount) for _, rc, amount in amounts)
            allocation = self.allocation(node, resources) if resources else ""
            mapping = self.mapping(node, suffix)
            parts = texts[key] = (
                allocation if first_allocation or not allocation else ", " + allocation,
                mapping if first_mapping else ", " + mapping)
        return parts

    def mapping(self, node: ProviderNode, suffix: str) -> str:
        """``"<suffix>": ["<uuid>"]``"""
        texts = self._of(node)
        key = ("mapping", suffix)
        text = texts.get(key)
        if text is None:
            text = texts[key] = f"{quoted(suffix)}: [{quoted(node.uuid)}]"
        return text


TEXTS = ProviderTexts()


class TreeTexts:
    """The joined summaries of every provider of one tree, kept per root for as long as the
    snapshot's list of the tree's nodes is the same object - that is, for the life of one
    snapshot (the read model builds a new one after any write). An answer that names a
    thousand trees then glues a thousand texts instead of five thousand."""

    def __init__(self) -> None:
        self._texts: dict[int, tuple[list[ProviderNode], dict[SummaryShape, str]]] = {}

    def summaries(self, snapshot: Snapshot, root: int, shape: SummaryShape) -> str:
        tree = snapshot.tree_of(root)
        entry = self._texts.get(root)
        if entry is None or entry[0] is not tree:
            entry = self._texts[root] = (tree, {})
        text = entry[1].get(shape)
        if text is None:
            text = entry[1][shape] = ", ".join([TEXTS.summary(snapshot, node, shape)
                                                for node in tree])
        return text


TREE_TEXTS = TreeTexts()
