"""The fast engine and the brute-force oracle agree on random small clouds and requests."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.placement.candidates.builders import TreeBuilder, keys
from tests.unit.placement.candidates.reference import reference_candidates
from vgpucloud.placement.candidates import (
    CandidateRequest,
    RequestGroup,
    Snapshot,
    find_candidates,
)
from vgpucloud.placement.models import AggregateQuery, TraitQuery

CLASSES = ("VCPU", "VGPU", "DISK_GB")
TRAITS = ("T_A", "T_B", "T_C")
AGGREGATES = ("agg1", "agg2")


@st.composite
def clouds(draw: st.DrawFn) -> Snapshot:
    builder = TreeBuilder()
    names: list[str] = []
    for root_index in range(draw(st.integers(1, 3))):
        count = draw(st.integers(1, 4))
        for index in range(count):
            name = f"r{root_index}p{index}"
            parent = None if index == 0 else draw(st.sampled_from(names[-index:]))
            capacity = draw(st.dictionaries(st.sampled_from(CLASSES), st.integers(2, 5),
                                            min_size=1, max_size=2))
            used = {rc: draw(st.integers(0, 2)) for rc in capacity}
            units = {rc: (draw(st.sampled_from((1, 1, 2))), draw(st.integers(1, 5)),
                          draw(st.sampled_from((1, 1, 1, 2)))) for rc in capacity}
            traits = set(draw(st.sets(st.sampled_from(TRAITS), max_size=2)))
            if parent is None and draw(st.booleans()) and draw(st.booleans()):
                traits.add("MISC_SHARES_VIA_AGGREGATE")
            builder.add(name, parent, traits=traits, used=used, units=units,
                        aggregates=draw(st.sets(st.sampled_from(AGGREGATES), max_size=1)),
                        **capacity)
            names.append(name)
    return builder.build()


trait_queries = st.builds(
    lambda req, forb, any_of: TraitQuery(frozenset(req), frozenset(forb - req),
                                         tuple(frozenset(g) for g in any_of if g)),
    st.sets(st.sampled_from(TRAITS), max_size=1),
    st.sets(st.sampled_from(TRAITS), max_size=1),
    st.lists(st.sets(st.sampled_from(TRAITS), min_size=1, max_size=2), max_size=1),
)
aggregate_queries = st.builds(
    lambda any_of, forbidden: AggregateQuery(tuple(frozenset({a}) for a in any_of),
                                             frozenset(forbidden)),
    st.lists(st.sampled_from(AGGREGATES), max_size=1),
    st.sets(st.sampled_from(AGGREGATES), max_size=1),
)


rarely = st.sampled_from((False, False, True))


@st.composite
def requests(draw: st.DrawFn, snapshot: Snapshot) -> CandidateRequest:
    groups = []
    granular = draw(st.sampled_from((0, 1, 1, 2, 2, 3)))
    suffixes = [""] * draw(st.integers(0, 1)) + ["1", "2", "3"][:granular]
    if not suffixes:
        suffixes = ["1"]
    uuids = [p.uuid for p in snapshot.providers.values()]
    present = sorted({rc for p in snapshot.providers.values() for rc in p.resources}) or ["VCPU"]
    for suffix in suffixes:
        resourceless = suffix != "" and draw(rarely) and draw(st.booleans())
        resources = {} if resourceless else draw(st.dictionaries(
            st.sampled_from(present), st.sampled_from((1, 1, 2)), min_size=1,
            max_size=2 if suffix == "" else 1))
        in_tree = draw(st.sampled_from([*uuids, "not-a-provider"]))
        traits = draw(trait_queries) if draw(rarely) else TraitQuery()
        aggregates = draw(aggregate_queries) if draw(rarely) else AggregateQuery()
        groups.append(RequestGroup(suffix, resources, traits, aggregates,
                                   in_tree if draw(rarely) else None))
    if all(not group.resources for group in groups):
        groups[0] = RequestGroup(groups[0].suffix, {"VCPU": 1})
    resourceless = {g.suffix for g in groups if not g.resources}
    same_subtree: tuple[frozenset[str], ...] = ()
    granular = [g.suffix for g in groups if g.suffix]
    if resourceless or (len(granular) > 1 and draw(st.booleans())):
        same_subtree = (frozenset(granular),)
    root_required = TraitQuery(frozenset(draw(st.sets(st.sampled_from(TRAITS), max_size=1))))
    return CandidateRequest(
        tuple(groups), group_policy=draw(st.sampled_from(["isolate", "none"])),
        root_required=root_required if draw(rarely) else TraitQuery(),
        same_subtree=same_subtree)


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_random_small_clouds_match_brute_force(data: st.DataObject) -> None:
    snapshot = data.draw(clouds())
    request = data.draw(requests(snapshot))
    assert keys(snapshot, find_candidates(snapshot, request)) == \
        reference_candidates(snapshot, request)
