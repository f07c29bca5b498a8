"""Small helpers to draw provider trees for engine tests, and to compare results as sets."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from vgpucloud.placement.candidates import (
    CandidateResult,
    ProviderNode,
    ResourceCapacity,
    Snapshot,
)

Key = tuple[frozenset[tuple[str, str, int]], frozenset[tuple[str, frozenset[str]]]]


class TreeBuilder:
    """``b.add("cn1", VCPU=8)``, ``b.add("gpu0", parent="cn1", VGPU=4, traits={"X"})``.

    Names double as uuids so failures read like the drawing in the test.
    """

    def __init__(self) -> None:
        self._specs: list[dict[str, object]] = []
        self._ids: dict[str, int] = {}

    def add(self, name: str, parent: str | None = None, *, traits: Iterable[str] = (),
            aggregates: Iterable[str] = (), used: Mapping[str, int] | None = None,
            units: Mapping[str, tuple[int, int, int]] | None = None,
            **capacity: int) -> TreeBuilder:
        self._ids[name] = len(self._ids) + 1
        root = name if parent is None else self._root_of(parent)
        self._specs.append(dict(name=name, parent=parent, root=root, traits=frozenset(traits),
                                aggregates=frozenset(aggregates), used=dict(used or {}),
                                units=dict(units or {}), capacity=capacity))
        return self

    def _root_of(self, name: str) -> str:
        for spec in self._specs:
            if spec["name"] == name:
                return str(spec["root"])
        raise KeyError(name)

    def build(self, *, cloud_has_nested: bool | None = None) -> Snapshot:
        nodes = []
        for spec in self._specs:
            used: dict[str, int] = spec["used"]  # type: ignore[assignment]
            units: dict[str, tuple[int, int, int]] = spec["units"]  # type: ignore[assignment]
            capacity: dict[str, int] = spec["capacity"]  # type: ignore[assignment]
            resources = {
                rc: ResourceCapacity(total, used.get(rc, 0), *units.get(rc, (1, total, 1)))
                for rc, total in capacity.items()
            }
            parent = spec["parent"]
            nodes.append(ProviderNode(
                self._ids[str(spec["name"])], str(spec["name"]),
                self._ids[str(parent)] if parent else None, self._ids[str(spec["root"])],
                resources, spec["traits"], spec["aggregates"]))  # type: ignore[arg-type]
        nested = any(node.parent_id for node in nodes)
        return Snapshot(nodes, cloud_has_nested=nested if cloud_has_nested is None
                        else cloud_has_nested)


def keys(snapshot: Snapshot, result: CandidateResult) -> set[Key]:
    """Each candidate as (allocations, mappings) with uuids, order-free."""
    found = set()
    for candidate in result.candidates:
        allocations = frozenset(
            (snapshot.providers[pid].uuid, rc, amount)
            for pid, resources in candidate.allocations.items()
            for rc, amount in resources.items())
        mappings = frozenset(
            (suffix, frozenset(snapshot.providers[pid].uuid for pid in pids))
            for suffix, pids in candidate.mappings.items())
        found.add((allocations, mappings))
    return found


def placements(snapshot: Snapshot, result: CandidateResult) -> list[dict[str, dict[str, int]]]:
    """Just the allocations of each candidate, by provider name, in result order."""
    return [{snapshot.providers[pid].uuid: dict(resources)
             for pid, resources in candidate.allocations.items()}
            for candidate in result.candidates]
