"""``GET /allocation_candidates`` answers (microversion >= 1.29) as values the filters and
weighers work on. A response like::

    {"allocation_requests": [
        {"allocations": {"3f1c…": {"resources": {"VCPU": 2, "MEMORY_MB": 2048}},
                         "a9d2…": {"resources": {"VGPU": 1}}},
         "mappings": {"": ["3f1c…", "a9d2…"]}}],
     "provider_summaries": {
        "3f1c…": {"resources": {"VCPU": {"capacity": 32, "used": 2}, …}, "traits": [],
                  "parent_provider_uuid": null, "root_provider_uuid": "3f1c…"},
        "a9d2…": {"resources": {"VGPU": {"capacity": 4, "used": 1}},
                  "traits": ["CUSTOM_MDEV_NVIDIA_35"],
                  "parent_provider_uuid": "3f1c…", "root_provider_uuid": "3f1c…"}}}

becomes one ``Candidate`` per allocation request, tied to the compute host whose root
provider it uses.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

HOST_CLASSES = frozenset({"VCPU", "MEMORY_MB", "DISK_GB"})


@dataclasses.dataclass(frozen=True, slots=True)
class Summary:
    """One provider of a candidate: ``resources`` maps class → (capacity, used)."""

    uuid: str
    root: str
    parent: str | None
    resources: Mapping[str, tuple[int, int]]
    traits: frozenset[str]

    def free(self, rc: str) -> int:
        capacity, used = self.resources.get(rc, (0, 0))
        return capacity - used


@dataclasses.dataclass(frozen=True, slots=True)
class Candidate:
    allocations: Mapping[str, Mapping[str, int]]  # provider uuid → class → amount
    root: str
    summaries: Mapping[str, Summary]
    host: str | None = None  # the registered compute host owning ``root``, if any

    def device_providers(self) -> list[Summary]:
        """Providers below the root that this candidate takes from (the pGPUs)."""
        return [self.summaries[rp] for rp in sorted(self.allocations)
                if rp != self.root and rp in self.summaries]

    def claim_body(self, project_id: str, user_id: str) -> dict[str, Any]:
        """``PUT /allocations/{instance}`` at 1.38: a new consumer (generation null)."""
        return {"allocations": {rp: {"resources": dict(res)}
                                for rp, res in self.allocations.items()},
                "project_id": project_id, "user_id": user_id,
                "consumer_generation": None, "consumer_type": "INSTANCE"}


def parse_candidates(body: Mapping[str, Any],
                     host_by_root: Mapping[str, str]) -> list[Candidate]:
    """Every allocation request of ``body`` as a ``Candidate``, in Placement's order."""
    summaries = {uuid: _summary(uuid, raw)
                 for uuid, raw in body.get("provider_summaries", {}).items()}
    found = []
    for request in body.get("allocation_requests", []):
        allocations = {rp: {rc: int(n) for rc, n in a["resources"].items()}
                       for rp, a in request["allocations"].items()}
        root = _root_of(allocations, summaries)
        involved = {rp: summaries[rp] for rp in allocations if rp in summaries}
        found.append(Candidate(allocations, root, involved, host_by_root.get(root)))
    return found


def _summary(uuid: str, raw: Mapping[str, Any]) -> Summary:
    resources = {rc: (int(v["capacity"]), int(v["used"]))
                 for rc, v in raw.get("resources", {}).items()}
    return Summary(uuid, raw.get("root_provider_uuid") or uuid, raw.get("parent_provider_uuid"),
                   resources, frozenset(raw.get("traits", ())))


def _root_of(allocations: Mapping[str, Any], summaries: Mapping[str, Summary]) -> str:
    roots = {summaries[rp].root if rp in summaries else rp for rp in allocations}
    # A sharing provider (e.g. shared DISK_GB) is its own root; the compute node's root is
    # the one that also supplies a host class or a device below it.
    for rp in sorted(allocations):
        summary = summaries.get(rp)
        if summary is not None and (summary.parent or HOST_CLASSES & set(allocations[rp])):
            return summary.root
    return sorted(roots)[0]


def host_by_root(hosts: Sequence[Any]) -> dict[str, str]:
    """Root provider uuid → host name, from ``storage.hosts.list_hosts`` rows."""
    return {h.facts.root_provider_uuid: h.name for h in hosts if h.facts.root_provider_uuid}
