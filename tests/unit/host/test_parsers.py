"""Parsers of driver-written sysfs files and the name checks guarding every sysfs path."""

from __future__ import annotations

import pytest

from vgpucloud.agent.mdev import MdevType, names
from vgpucloud.agent.mdev.parse import (
    parse_creatable_vgpu_types,
    parse_current_vgpu_type,
    parse_description,
    parse_int,
    variant_type_id,
    variant_type_number,
)
from vgpucloud.errors import InvalidDeviceName

T4_16C = ("num_heads=1, frl_config=60, framebuffer=16384M, max_resolution=4096x2160, "
          "max_instance=1")
GVTG_4 = "low_gm_size: 128MB\nhigh_gm_size: 512MB\nfence: 4\nresolution: 1920x1200\nweight: 4\n"


def _type(description: str) -> MdevType:
    return MdevType("nvidia-321", "GRID T4-16C", description, parse_description(description),
                    1, "vfio-pci")


def test_t4_description_from_the_mosk_blog_parses_every_field() -> None:
    t = _type(T4_16C)
    assert (t.num_heads, t.frl_config, t.framebuffer_mb, t.max_resolution, t.max_instance) == (
        1, 60, 16384, "4096x2160", 1)


def test_gvtg_description_is_key_colon_value_lines() -> None:
    fields = parse_description(GVTG_4)
    assert fields == (("low_gm_size", "128MB"), ("high_gm_size", "512MB"), ("fence", "4"),
                      ("resolution", "1920x1200"), ("weight", "4"))
    t = _type(GVTG_4)
    assert t.max_resolution == "1920x1200"
    assert t.max_instance is None and t.framebuffer_mb is None


def test_empty_or_free_text_description_yields_no_fields() -> None:
    assert parse_description("") == ()
    assert parse_description("a serial port\n") == ()


def test_variant_driver_creatable_types_skip_the_header() -> None:
    text = "ID    : vGPU Name\n557   : NVIDIA A40-1Q\n558   : NVIDIA A40-2Q\n\n"
    assert parse_creatable_vgpu_types(text) == ((557, "NVIDIA A40-1Q"), (558, "NVIDIA A40-2Q"))
    assert parse_creatable_vgpu_types("ID    : vGPU Name\n") == ()


@pytest.mark.parametrize(("text", "expected"), [("0\n", None), ("557\n", 557), ("", None)])
def test_current_vgpu_type(text: str, expected: int | None) -> None:
    assert parse_current_vgpu_type(text) == expected


def test_variant_type_ids_round_trip() -> None:
    assert variant_type_id(557) == "nvidia-557"
    assert variant_type_number("nvidia-557") == 557
    assert variant_type_number("i915-GVTg_V5_4") is None


def test_numa_node_minus_one_means_no_affinity() -> None:
    assert parse_int("-1\n") is None
    assert parse_int("1\n") == 1
    assert parse_int("garbage", 0) == 0


@pytest.mark.parametrize("address", ["0000:84:00.0", "0000:e7:00.0", "0000:41:04.3"])
def test_pci_addresses_accepted(address: str) -> None:
    assert names.check_pci_address(address) == address


@pytest.mark.parametrize("address", ["0000:84:00", "0000:E7:00.0", "84:00.0", "0000:84:00.8",
                                     "../../etc", "0000:84:00.0/x"])
def test_malformed_pci_addresses_refused(address: str) -> None:
    with pytest.raises(InvalidDeviceName, match=r"DDDD:BB:SS\.F"):
        names.check_pci_address(address)


@pytest.mark.parametrize("value", ["../mtty", "mtty/../x", "", "MTTY"])
def test_parent_names_cannot_walk_out_of_sysfs(value: str) -> None:
    with pytest.raises(InvalidDeviceName):
        names.check_parent_name(value)


@pytest.mark.parametrize("value", ["nvidia-35", "i915-GVTg_V5_4", "mtty-2"])
def test_type_ids_accepted(value: str) -> None:
    assert names.check_type_id(value) == value


@pytest.mark.parametrize("value", ["..", "nvidia-35/../../x", "-x", "a b"])
def test_type_ids_refused(value: str) -> None:
    with pytest.raises(InvalidDeviceName):
        names.check_type_id(value)


@pytest.mark.parametrize("value", ["3B3C5F0E-8A0E-4F5A-9C47-2F0C1A6F8F21",
                                   "3b3c5f0e8a0e4f5a9c472f0c1a6f8f21", "{3b3c5f0e-8a0e}"])
def test_non_canonical_uuids_refused(value: str) -> None:
    with pytest.raises(InvalidDeviceName, match="8-4-4-4-12"):
        names.check_uuid(value)


def test_config_addresses_are_normalized_to_the_kernels_lower_case() -> None:
    assert names.normalize_pci_address(" 0000:E7:00.0 ") == "0000:e7:00.0"
