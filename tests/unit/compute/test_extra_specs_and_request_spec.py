"""Flavor extra specs (Nova's grammar) and the Placement query a flavor becomes."""

from __future__ import annotations

import pytest

from vgpucloud.compute.extra_specs import parse_extra_specs, validate_extra_specs
from vgpucloud.compute.models import Flavor
from vgpucloud.compute.request_spec import build_request_spec
from vgpucloud.errors import BadRequest


def _flavor(**specs: str) -> Flavor:
    return Flavor(id="f1", name="vgpu", vcpus=2, ram=2048, disk=20, swap=512,
                  extra_specs=specs)


def test_seed_vgpu_flavor_with_required_trait() -> None:
    spec = build_request_spec(_flavor(**{"resources:VGPU": "1",
                                         "trait:CUSTOM_NVIDIA_11": "required"}))
    assert spec.params == {"resources": "DISK_GB:21,MEMORY_MB:2048,VCPU:2,VGPU:1",
                           "required": "CUSTOM_NVIDIA_11", "limit": "1000"}


def test_numbered_groups_isolated_on_two_pgpus() -> None:
    spec = build_request_spec(_flavor(**{"resources1:VGPU": "1", "resources2:VGPU": "1",
                                         "trait2:HW_GPU_API_VULKAN": "forbidden",
                                         "group_policy": "isolate"}))
    assert spec.params["resources1"] == "VGPU:1"
    assert spec.params["required2"] == "!HW_GPU_API_VULKAN"
    assert spec.params["group_policy"] == "isolate"


def test_resources_override_flavor_columns_and_zero_drops() -> None:
    spec = build_request_spec(_flavor(**{"resources:VCPU": "0", "resources:DISK_GB": "5",
                                         "resources:VGPU": "2"}))
    assert spec.params["resources"] == "DISK_GB:5,MEMORY_MB:2048,VGPU:2"


def test_aggregate_specs_scoped_and_bare_legacy_key() -> None:
    parsed = parse_extra_specs({"aggregate_instance_extra_specs:gpu": "<or> t4 <or> m60",
                                "ssd": "true", "hw:cpu_policy": "dedicated",
                                "quota:cpu_shares": "1024"})
    assert parsed.aggregate_specs == {"gpu": "<or> t4 <or> m60", "ssd": "true"}
    assert parsed.other == {"quota:cpu_shares": "1024"}


@pytest.mark.parametrize(("specs", "names"), [
    ({"resources:VGPU": "one"}, "resources:VGPU"),
    ({"resources:vgpu": "1"}, "'vgpu' is not a resource class"),
    ({"trait:CUSTOM_NVIDIA_11": "preferred"}, "'required' or 'forbidden'"),
    ({"trait:NOT_A_TRAIT": "required"}, "NOT_A_TRAIT"),
    ({"group_policy": "pack"}, "group_policy=isolate"),
    ({"hw:cpu_policy": "exclusive"}, "shared, dedicated, mixed"),
    ({"hw:numa_nodes": "0"}, "whole number >= 1"),
    ({"resources0:VGPU": "1"}, "group suffix is malformed"),
    ({"aggregate_instance_extra_specs:cores": ">= many"}, "compares numbers"),
])
def test_malformed_extra_spec_is_refused_naming_key(specs: dict[str, str], names: str) -> None:
    with pytest.raises(BadRequest) as caught:
        validate_extra_specs(specs)
    assert names in caught.value.message


def test_keys_set_one_at_a_time_validate_but_boot_needs_group_policy() -> None:
    validate_extra_specs({"resources1:VGPU": "1", "resources2:VGPU": "1"})
    with pytest.raises(BadRequest, match="group_policy"):
        build_request_spec(_flavor(**{"resources1:VGPU": "1", "resources2:VGPU": "1"}))


def test_numbered_trait_without_resources_refused_at_boot() -> None:
    with pytest.raises(BadRequest, match="resources1:<CLASS>"):
        build_request_spec(_flavor(**{"trait1:CUSTOM_NVIDIA_11": "required"}))
