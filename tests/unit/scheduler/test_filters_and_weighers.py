"""Filters and weighers on parsed candidates; no Placement, no database."""

from __future__ import annotations

import datetime

import pytest

from vgpucloud.compute.models import Aggregate, Flavor
from vgpucloud.compute.request_spec import build_request_spec
from vgpucloud.scheduler.aggregate_ops import matches
from vgpucloud.scheduler.candidates import parse_candidates
from vgpucloud.scheduler.filters import FilterContext, HostView, run_filters
from vgpucloud.scheduler.settings import PACK, SPREAD, SchedulerSettings
from vgpucloud.scheduler.weighers import weigh

NOW = datetime.datetime(2025, 1, 1, 12, 0, 0)


def _body(used_by_pgpu: dict[str, int]) -> dict[str, object]:
    """Two hosts (roots r1, r2), pGPUs g1 on r1 and g2 on r2, 4 VGPU each."""
    roots = {"g1": "r1", "g2": "r2"}
    requests, summaries = [], {}
    for gpu, used in used_by_pgpu.items():
        root = roots[gpu]
        requests.append({"allocations": {root: {"resources": {"VCPU": 1}},
                                         gpu: {"resources": {"VGPU": 1}}}})
        summaries[root] = {"resources": {"VCPU": {"capacity": 8, "used": 0},
                                         "MEMORY_MB": {"capacity": 4096, "used": 0}},
                           "traits": [], "parent_provider_uuid": None,
                           "root_provider_uuid": root}
        summaries[gpu] = {"resources": {"VGPU": {"capacity": 4, "used": used}}, "traits": [],
                          "parent_provider_uuid": root, "root_provider_uuid": root}
    return {"allocation_requests": requests, "provider_summaries": summaries}


def _ctx(specs: dict[str, str], hosts: dict[str, HostView],
         aggregates: dict[str, list[Aggregate]] | None = None) -> FilterContext:
    spec = build_request_spec(Flavor("f", "f", 1, 512, 1, extra_specs=specs))
    return FilterContext(spec, hosts, lambda h: (aggregates or {}).get(h, []), NOW, 60)


def _up(name: str, seconds_ago: int = 5, enabled: bool = True) -> HostView:
    return HostView(name, enabled, NOW - datetime.timedelta(seconds=seconds_ago))


def test_candidates_map_to_hosts_by_root_provider() -> None:
    found = parse_candidates(_body({"g1": 0, "g2": 0}), {"r1": "host1"})
    assert [(c.root, c.host) for c in found] == [("r1", "host1"), ("r2", None)]


def test_down_disabled_and_unregistered_hosts_are_rejected_with_reasons() -> None:
    found = parse_candidates(_body({"g1": 0, "g2": 0}), {"r1": "host1", "r2": "host2"})
    passed, rejected = run_filters(found, _ctx({}, {"host1": _up("host1", 300),
                                                    "host2": _up("host2", enabled=False)}))
    assert passed == []
    reasons = {r.host: r.reason for r in rejected}
    assert reasons["host1"].startswith("down: last heartbeat 300s ago")
    assert reasons["host2"] == "the compute service is disabled"


def test_aggregate_metadata_must_satisfy_flavor() -> None:
    found = parse_candidates(_body({"g1": 0, "g2": 0}), {"r1": "host1", "r2": "host2"})
    aggregates = {"host1": [Aggregate(1, "a1", "t4s", metadata={"gpu": "t4"})],
                  "host2": [Aggregate(2, "a2", "m60s", metadata={"gpu": "m60"})]}
    ctx = _ctx({"aggregate_instance_extra_specs:gpu": "t4"},
               {"host1": _up("host1"), "host2": _up("host2")}, aggregates)
    passed, rejected = run_filters(found, ctx)
    assert [c.host for c in passed] == ["host1"]
    assert "gpu=m60 does not satisfy" in rejected[0].reason


@pytest.mark.parametrize(("policy", "first"), [(PACK, "g2"), (SPREAD, "g1")])
def test_vgpu_policy_orders_pgpus_by_fullness(policy: str, first: str) -> None:
    found = parse_candidates(_body({"g1": 1, "g2": 3}), {"r1": "h1", "r2": "h2"})
    ordered = weigh(found, SchedulerSettings(vgpu_policy=policy))
    assert [d.uuid for d in ordered[0].device_providers()] == [first]


@pytest.mark.parametrize(("value", "wanted", "expected"), [
    ("t4", "t4", True), ("t4", "<or> m60 <or> t4", True), ("a40", "<or> m60 <or> t4", False),
    ("16", ">= 8", True), ("4", "= 8", False), ("nvidia-grid", "<in> grid", True),
    ("abc", "s< abd", True), ("x", "== 3", False),
])
def test_aggregate_operators(value: str, wanted: str, expected: bool) -> None:
    assert matches(value, wanted) is expected
