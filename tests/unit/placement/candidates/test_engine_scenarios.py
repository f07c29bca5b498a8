"""Named situations for the pure engine: what Placement returns, and how much work it takes."""

from __future__ import annotations

import pytest

from tests.unit.placement.candidates.builders import TreeBuilder, placements
from vgpucloud.errors import BadRequest
from vgpucloud.placement.candidates import (
    CandidateRequest,
    GenerationPolicy,
    RequestGroup,
    Snapshot,
    check_request,
    combine,
    find_candidates,
)
from vgpucloud.placement.models import AggregateQuery, TraitQuery


def vgpu_hosts(hosts: int, gpus: int) -> Snapshot:
    """``cnN`` (VCPU 48) with ``cnN_gpuM`` children (VGPU 16), CUSTOM_NVIDIA_11 on gpu0."""
    builder = TreeBuilder()
    for host in range(hosts):
        builder.add(f"cn{host}", VCPU=48, aggregates={"agg-a"} if host == 0 else set())
        for gpu in range(gpus):
            builder.add(f"cn{host}_gpu{gpu}", f"cn{host}", VGPU=16,
                        traits={"CUSTOM_NVIDIA_11"} if gpu == 0 else set())
    return builder.build()


def vgpu_groups(count: int, **kwargs: object) -> CandidateRequest:
    groups = (RequestGroup("", {"VCPU": 1}),
              *(RequestGroup(str(i), {"VGPU": 1}) for i in range(1, count + 1)))
    return CandidateRequest(groups, group_policy="isolate", **kwargs)  # type: ignore[arg-type]


def test_two_t4_hosts_two_isolated_groups_give_ordered_pairs() -> None:
    snapshot = vgpu_hosts(2, 2)
    result = find_candidates(snapshot, vgpu_groups(2))
    assert len(result.candidates) == 4  # (gpu0, gpu1) and (gpu1, gpu0) on each host
    assert {c.mappings["1"] for c in result.candidates} == {(2,), (3,), (5,), (6,)}
    assert len(result.summaries) == 6


def test_wide_tree_with_limit_stops_after_limit_candidates(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    # 4 groups on 64 pGPUs is 16.7 million combinations per host; limit 5 must need no
    # more than the first batch (the candidates that differ in the last group's pick).
    snapshot = vgpu_hosts(3, 64)
    produced = []
    original = combine.tree_combinations

    def counting(*args: object) -> object:
        for batch in original(*args):  # type: ignore[arg-type]
            produced.extend(batch)
            yield batch

    monkeypatch.setattr("vgpucloud.placement.candidates.engine.tree_combinations", counting)
    result = find_candidates(snapshot, vgpu_groups(4, limit=5))
    assert len(result.candidates) == 5
    assert len(produced) == 64 - 3  # gpu0, gpu1, gpu2 taken by groups 1-3


def test_breadth_first_spreads_a_limit_over_hosts() -> None:
    snapshot = vgpu_hosts(3, 4)
    depth = find_candidates(snapshot, vgpu_groups(1, limit=3))
    breadth = find_candidates(snapshot, vgpu_groups(1, limit=3),
                              GenerationPolicy(strategy="breadth-first"))
    hosts = [{name.split("_")[0] for name in p} for p in placements(snapshot, depth)]
    assert hosts == [{"cn0"}] * 3
    hosts = [{name.split("_")[0] for name in p} for p in placements(snapshot, breadth)]
    assert hosts == [{"cn0"}, {"cn1"}, {"cn2"}]
    assert {node.uuid for node in breadth.summaries} >= {"cn0", "cn1", "cn2"}


def test_max_allocation_candidates_caps_before_limit() -> None:
    snapshot = vgpu_hosts(3, 4)
    result = find_candidates(snapshot, vgpu_groups(1), GenerationPolicy(max_candidates=2))
    assert len(result.candidates) == 2


def test_randomized_limit_samples_from_everything() -> None:
    snapshot = vgpu_hosts(3, 4)
    result = find_candidates(snapshot, vgpu_groups(1, limit=4),
                             GenerationPolicy(randomize=True))
    assert len(result.candidates) == 4
    roots = {next(iter(p)).split("_")[0] for p in placements(snapshot, result)}
    assert {node.uuid for node in result.summaries if node.parent_id is None} == roots


def test_before_1_29_nested_candidates_are_hidden() -> None:
    snapshot = vgpu_hosts(1, 2)
    request = CandidateRequest((RequestGroup("", {"VCPU": 1, "VGPU": 1}),), nested_aware=False)
    assert find_candidates(snapshot, request).candidates == []
    single = CandidateRequest((RequestGroup("", {"VGPU": 1}),), nested_aware=False)
    result = find_candidates(snapshot, single)
    assert placements(snapshot, result) == [{"cn0_gpu0": {"VGPU": 1}},
                                            {"cn0_gpu1": {"VGPU": 1}}]
    assert [node.uuid for node in result.summaries] == ["cn0_gpu0", "cn0_gpu1"]


def test_unsuffixed_member_of_through_root_but_suffixed_needs_its_own() -> None:
    snapshot = vgpu_hosts(2, 1)
    agg = AggregateQuery((frozenset({"agg-a"}),))
    spread = CandidateRequest((RequestGroup("", {"VGPU": 1}, member_of=agg),))
    assert placements(snapshot, find_candidates(snapshot, spread)) == [
        {"cn0_gpu0": {"VGPU": 1}}]
    single = CandidateRequest((RequestGroup("1", {"VGPU": 1}, member_of=agg),))
    assert find_candidates(snapshot, single).candidates == []


def test_required_trait_of_unsuffixed_group_met_by_contributing_child() -> None:
    snapshot = vgpu_hosts(1, 2)
    nvidia = TraitQuery(frozenset({"CUSTOM_NVIDIA_11"}))
    request = CandidateRequest((RequestGroup("", {"VCPU": 1, "VGPU": 1}, traits=nvidia),))
    assert placements(snapshot, find_candidates(snapshot, request)) == [
        {"cn0": {"VCPU": 1}, "cn0_gpu0": {"VGPU": 1}}]


def test_nfs_share_serves_only_trees_in_its_aggregate() -> None:
    snapshot = (TreeBuilder()
                .add("cn1", VCPU=8, aggregates={"agg1"})
                .add("cn2", VCPU=8)
                .add("nfs", DISK_GB=100, aggregates={"agg1"},
                     traits={"MISC_SHARES_VIA_AGGREGATE"})
                .build())
    request = CandidateRequest((RequestGroup("", {"VCPU": 1, "DISK_GB": 10}),))
    result = find_candidates(snapshot, request)
    assert placements(snapshot, result) == [{"cn1": {"VCPU": 1}, "nfs": {"DISK_GB": 10}}]
    assert [node.uuid for node in result.summaries] == ["cn1", "nfs"]


def test_groups_summing_past_max_unit_are_dropped() -> None:
    snapshot = TreeBuilder().add("gpu", VGPU=16, units={"VGPU": (1, 4, 1)}).build()
    request = CandidateRequest((RequestGroup("1", {"VGPU": 3}), RequestGroup("2", {"VGPU": 2})),
                               group_policy="none")
    assert find_candidates(snapshot, request).candidates == []


@pytest.mark.parametrize(("request_", "resourceless_allowed", "words"), [
    (CandidateRequest((RequestGroup("1", {"VGPU": 1}), RequestGroup("2", {"VGPU": 1}))),
     True, "group_policy"),
    (CandidateRequest((RequestGroup("1", {}),)), True, "at least one resources"),
    (CandidateRequest((RequestGroup("1", {"VGPU": 1}), RequestGroup("N", {})),
                      group_policy="none"), True, "same_subtree"),
    (CandidateRequest((RequestGroup("1", {}, TraitQuery(frozenset({"X"}))),)), False,
     "orphaned traits"),
    (CandidateRequest((RequestGroup("", {"VCPU": 1}, TraitQuery(
        any_of=(frozenset({"A", "B"}),), forbidden=frozenset({"A", "B"}))),)), True,
     "Conflicting"),
])
def test_requests_placement_refuses(request_: CandidateRequest, resourceless_allowed: bool,
                                    words: str) -> None:
    with pytest.raises(BadRequest, match=words):
        check_request(request_, resourceless_allowed=resourceless_allowed)
