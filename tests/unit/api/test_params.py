"""Query-string parsing of Placement filters into domain queries."""

from __future__ import annotations

import pytest

from vgpucloud.api.microversion import Version
from vgpucloud.api.placement import params
from vgpucloud.errors import BadRequest, QueryBadValue, QueryDuplicateKey
from vgpucloud.placement.models import AggregateQuery, TraitQuery

AGG_A = "0b9b2a38-7a0d-4f4f-8f7e-3a1e6e6e1b2c"
AGG_B = "5f8c1c3e-2b7a-4c4e-9d8e-1a2b3c4d5e6f"
LATEST = Version(1, 39)


def test_resources_parse_to_amounts() -> None:
    assert params.parse_resources("VCPU:2,MEMORY_MB:1024,VGPU:1") == {
        "VCPU": 2, "MEMORY_MB": 1024, "VGPU": 1}


@pytest.mark.parametrize("text", ["VCPU", "VCPU:x", "vcpu:1", "VCPU:1,VCPU:2", "", "VCPU:1,"])
def test_malformed_resources_are_bad_values(text: str) -> None:
    with pytest.raises(QueryBadValue):
        params.parse_resources(text)


def test_zero_amount_is_a_bad_value() -> None:
    with pytest.raises(QueryBadValue, match="positive integer"):
        params.parse_resources("VGPU:0")


def test_required_with_forbidden_and_any_of_at_1_39() -> None:
    query = params.parse_required(["CUSTOM_A,!CUSTOM_B", "in:CUSTOM_C,CUSTOM_D"], LATEST)
    assert query == TraitQuery(frozenset({"CUSTOM_A"}), frozenset({"CUSTOM_B"}),
                               (frozenset({"CUSTOM_C", "CUSTOM_D"}),))


def test_forbidden_trait_needs_1_22() -> None:
    with pytest.raises(QueryBadValue, match=r"1\.22"):
        params.parse_required(["!CUSTOM_B"], Version(1, 21))
    assert params.parse_required(["!CUSTOM_B"], Version(1, 22)).forbidden == {"CUSTOM_B"}


def test_in_syntax_and_repeated_required_need_1_39() -> None:
    with pytest.raises(QueryBadValue, match=r"1\.39"):
        params.parse_required(["in:CUSTOM_A,CUSTOM_B"], Version(1, 38))
    with pytest.raises(QueryDuplicateKey):
        params.parse_required(["CUSTOM_A", "CUSTOM_B"], Version(1, 38))


def test_trait_both_required_and_forbidden_conflicts() -> None:
    with pytest.raises(QueryBadValue, match="Conflicting"):
        params.parse_required(["CUSTOM_A,!CUSTOM_A"], LATEST)


@pytest.mark.parametrize("value", ["", "CUSTOM_A,,CUSTOM_B", "in:"])
def test_empty_trait_names_are_bad_values(value: str) -> None:
    with pytest.raises(QueryBadValue):
        params.parse_required([value], LATEST)


def test_member_of_in_and_forbidden() -> None:
    query = params.parse_member_of([f"in:{AGG_A},{AGG_B}", f"!{AGG_A}"], Version(1, 32))
    assert query == AggregateQuery((frozenset({AGG_A, AGG_B}),), frozenset({AGG_A}))


def test_forbidden_member_of_in_list() -> None:
    query = params.parse_member_of([f"!in:{AGG_A},{AGG_B}"], Version(1, 32))
    assert query == AggregateQuery((), frozenset({AGG_A, AGG_B}))


def test_forbidden_member_of_needs_1_32() -> None:
    with pytest.raises(QueryBadValue):
        params.parse_member_of([f"!{AGG_A}"], Version(1, 31))


def test_repeated_member_of_needs_1_24() -> None:
    with pytest.raises(QueryDuplicateKey):
        params.parse_member_of([AGG_A, AGG_B], Version(1, 23))
    assert len(params.parse_member_of([AGG_A, AGG_B], Version(1, 24)).any_of) == 2


@pytest.mark.parametrize("value", ["not-a-uuid", f"in:{AGG_A},nope", f"{AGG_A},{AGG_B}"])
def test_bad_member_of_values(value: str) -> None:
    with pytest.raises(QueryBadValue):
        params.parse_member_of([value], LATEST)


def test_provider_filter_from_all_parameters() -> None:
    query = params.provider_filter([
        ("name", "cn1"), ("in_tree", AGG_A), ("resources", "VGPU:1"),
        ("required", "CUSTOM_MDEV_NVIDIA_35"), ("member_of", AGG_B)], LATEST)
    assert query.name == "cn1"
    assert query.in_tree == AGG_A
    assert query.resources == {"VGPU": 1}
    assert query.traits.required == {"CUSTOM_MDEV_NVIDIA_35"}
    assert query.member_of.any_of == (frozenset({AGG_B}),)


def test_duplicate_single_keys_are_rejected() -> None:
    with pytest.raises(QueryDuplicateKey, match="'name'"):
        params.provider_filter([("name", "a"), ("name", "b")], LATEST)


def test_parameters_newer_than_the_microversion_are_unknown() -> None:
    with pytest.raises(BadRequest, match="in_tree"):
        params.provider_filter([("in_tree", AGG_A)], Version(1, 13))
    with pytest.raises(BadRequest, match="resources"):
        params.provider_filter([("resources", "VGPU:1")], Version(1, 3))


def test_bad_in_tree_uuid() -> None:
    with pytest.raises(QueryBadValue, match="in_tree"):
        params.provider_filter([("in_tree", "x")], LATEST)


def test_parse_bool() -> None:
    assert params.parse_bool("associated", "True") is True
    assert params.parse_bool("associated", "false") is False
    with pytest.raises(QueryBadValue):
        params.parse_bool("associated", "yes")
