"""The fragment-glued JSON text of GET /allocation_candidates is exactly ``json.dumps`` of the
plain dict rendering, on random small clouds, at every response shape."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.placement.candidates.builders import TreeBuilder
from tests.unit.placement.candidates.test_against_reference import clouds, requests
from vgpucloud.api.microversion import Version
from vgpucloud.api.placement.handlers.allocation_candidates import render
from vgpucloud.api.placement.handlers.candidate_rendering import render_text
from vgpucloud.placement.candidates import CandidateRequest, RequestGroup, find_candidates
from vgpucloud.placement.models import TraitQuery

SHAPES = [Version(1, minor) for minor in (12, 17, 27, 29, 34, 36, 39)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_small_clouds_render_like_json_dumps(data: st.DataObject) -> None:
    snapshot = data.draw(clouds())
    request = data.draw(requests(snapshot))
    result = find_candidates(snapshot, request)
    for version in SHAPES:
        assert render_text(snapshot, request, result, version) == json.dumps(
            render(snapshot, request, result, version))
    # Summaries cover the trees the candidates take resources from, and only those.
    roots = {snapshot.providers[pid].root_id
             for candidate in result.candidates for pid in candidate.allocations}
    assert {node.root_id for node in result.summaries} == roots


def test_groups_on_one_provider_add_up_in_the_text() -> None:
    # group_policy=none lets groups 1 and 2 both land on gpu0: 1 + 2 VGPU from it.
    snapshot = (TreeBuilder().add("cn1", VCPU=8).add("gpu0", "cn1", VGPU=4)
                .add("gpu1", "cn1", VGPU=4).build())
    request = CandidateRequest((RequestGroup("", {"VCPU": 1}), RequestGroup("1", {"VGPU": 1}),
                                RequestGroup("2", {"VGPU": 2})), group_policy="none")
    result = find_candidates(snapshot, request)
    text = render_text(snapshot, request, result, Version(1, 39))
    assert text == json.dumps(render(snapshot, request, result, Version(1, 39)))
    assert {"cn1": {"resources": {"VCPU": 1}}, "gpu0": {"resources": {"VGPU": 3}}} in [
        item["allocations"] for item in json.loads(text)["allocation_requests"]]


def test_tree_summaries_follow_a_new_snapshot_of_the_same_tree() -> None:
    # The joined summaries of a tree are kept per root: a later snapshot in which gpu0 got
    # an allocation (same ids, new nodes) must show the new usage, not the kept text.
    request = CandidateRequest((RequestGroup("", {"VCPU": 1}), RequestGroup("1", {"VGPU": 1})))
    for used in (0, 3):
        snapshot = (TreeBuilder().add("cn1", VCPU=8, traits=["CUSTOM_A"])
                    .add("gpu0", "cn1", VGPU=4, used={"VGPU": used}).build())
        result = find_candidates(snapshot, request)
        assert result.summary_roots == [snapshot.by_uuid("cn1").id]  # type: ignore[union-attr]
        text = render_text(snapshot, request, result, Version(1, 39))
        assert text == json.dumps(render(snapshot, request, result, Version(1, 39)))
        assert json.loads(text)["provider_summaries"]["gpu0"]["resources"]["VGPU"] == {
            "capacity": 4, "used": used}


def test_required_traits_of_a_suffixed_group_come_from_the_snapshot_index() -> None:
    # Only gpu1 has CUSTOM_NVIDIA_11; gpu0 has another trait, gpu2 none.
    snapshot = (TreeBuilder().add("cn1", VCPU=8)
                .add("gpu0", "cn1", VGPU=4, traits=["CUSTOM_NVIDIA_12"])
                .add("gpu1", "cn1", VGPU=4, traits=["CUSTOM_NVIDIA_11", "CUSTOM_X"])
                .add("gpu2", "cn1", VGPU=4).build())
    assert {snapshot.providers[pid].uuid
            for pid in snapshot.with_traits(["CUSTOM_NVIDIA_11", "CUSTOM_X"])} == {"gpu1"}
    assert "CUSTOM_NVIDIA_12" in snapshot.trait_names()
    traits = TraitQuery(frozenset({"CUSTOM_NVIDIA_11"}))
    request = CandidateRequest((RequestGroup("", {"VCPU": 1}),
                                RequestGroup("1", {"VGPU": 1}, traits)))
    result = find_candidates(snapshot, request)
    assert [candidate.mappings["1"] for candidate in result.candidates] == [
        (snapshot.by_uuid("gpu1").id,)]  # type: ignore[union-attr]
