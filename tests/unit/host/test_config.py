"""nova.conf parsing and validation against a host's parents (given as values, no sysfs)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from vgpucloud.agent.config import load_agent_config
from vgpucloud.agent.mdev import MdevType, ParentDevice, ParentKind
from vgpucloud.errors import ConfigError

M60_TYPES = tuple(f"nvidia-{n}" for n in range(35, 46))
T4_TYPES = ("nvidia-222", "nvidia-319", "nvidia-320")


def _parent(address: str, type_ids: tuple[str, ...]) -> ParentDevice:
    types = tuple(MdevType(t, None, "", (), 4, "vfio-pci") for t in type_ids)
    return ParentDevice(address=address, kind=ParentKind.PCI, types=types)


FOUR_M60 = [_parent(f"0000:{bus}:00.0", M60_TYPES) for bus in ("84", "85", "86", "87")]


def _conf(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "nova.conf"
    path.write_text(textwrap.dedent(text))
    return path


def _problems(path: Path, parents: list[ParentDevice] | None = FOUR_M60) -> list[str]:
    with pytest.raises(ConfigError) as caught:
        load_agent_config([path], parents=parents)
    return caught.value.problems


def test_nova_doc_two_types_on_four_m60(tmp_path: Path) -> None:
    path = _conf(tmp_path, """
        [devices]
        enabled_mdev_types = nvidia-35, nvidia-36
        [mdev_nvidia-35]
        device_addresses = 0000:84:00.0,0000:85:00.0
        [mdev_nvidia-36]
        device_addresses = 0000:86:00.0
    """)
    config = load_agent_config([path], parents=FOUR_M60)
    assert {a: (x.type_id, x.mdev_class) for a, x in config.assignments.items()} == {
        "0000:84:00.0": ("nvidia-35", "VGPU"),
        "0000:85:00.0": ("nvidia-35", "VGPU"),
        "0000:86:00.0": ("nvidia-36", "VGPU"),
    }
    assert config.assignment_for("0000:87:00.0") is None


def test_mosk_blog_deprecated_names_and_upper_case_addresses(tmp_path: Path) -> None:
    path = _conf(tmp_path, """
        [devices]
        enabled_vgpu_types = nvidia-319,nvidia-320
        [vgpu_nvidia-319]
        device_addresses = 0000:18:00.0,0000:19:00.0
        [vgpu_nvidia-320]
        device_addresses = 0000:E7:00.0
        max_instances = 1
        mdev_class = CUSTOM_T4_8C
    """)
    parents = [_parent(a, T4_TYPES) for a in ("0000:18:00.0", "0000:19:00.0", "0000:e7:00.0")]
    config = load_agent_config([path], parents=parents)
    e7 = config.assignments["0000:e7:00.0"]
    assert (e7.type_id, e7.mdev_class, e7.max_instances) == ("nvidia-320", "CUSTOM_T4_8C", 1)
    assert config.assignments["0000:18:00.0"].type_id == "nvidia-319"


def test_single_type_without_addresses_is_the_default_for_every_offering_parent(
        tmp_path: Path) -> None:
    path = _conf(tmp_path, "[devices]\nenabled_mdev_types = nvidia-222\n")
    parents = [_parent("0000:18:00.0", T4_TYPES), _parent("0000:84:00.0", M60_TYPES)]
    config = load_agent_config([path], parents=parents)
    assert list(config.assignments) == ["0000:18:00.0"]


def test_default_type_fills_parents_the_listed_type_does_not_take(tmp_path: Path) -> None:
    path = _conf(tmp_path, """
        [devices]
        enabled_mdev_types = nvidia-35, nvidia-36
        [mdev_nvidia-36]
        device_addresses = 0000:86:00.0
    """)
    config = load_agent_config([path], parents=FOUR_M60)
    assert {a: x.type_id for a, x in config.assignments.items()} == {
        "0000:84:00.0": "nvidia-35", "0000:85:00.0": "nvidia-35",
        "0000:86:00.0": "nvidia-36", "0000:87:00.0": "nvidia-35",
    }


def test_same_address_under_two_types_refuses_to_start(tmp_path: Path) -> None:
    path = _conf(tmp_path, """
        [devices]
        enabled_mdev_types = nvidia-35, nvidia-36
        [mdev_nvidia-35]
        device_addresses = 0000:84:00.0
        [mdev_nvidia-36]
        device_addresses = 0000:84:00.0
    """)
    assert _problems(path) == [
        "[mdev_nvidia-35] and [mdev_nvidia-36] device_addresses both list 0000:84:00.0; a GPU "
        "runs one mdev type at a time: keep 0000:84:00.0 under only one of them"
    ]


def test_listed_parent_that_does_not_offer_the_type(tmp_path: Path) -> None:
    path = _conf(tmp_path, """
        [devices]
        enabled_mdev_types = nvidia-222
        [mdev_nvidia-222]
        device_addresses = 0000:84:00.0
    """)
    (problem,) = _problems(path)
    assert problem.startswith("[mdev_nvidia-222] device_addresses: 0000:84:00.0 does not offer "
                              "nvidia-222 (it offers: nvidia-35, nvidia-36,")
    assert problem.endswith("move 0000:84:00.0 to a group of a type it offers")


def test_listed_parent_missing_from_the_host(tmp_path: Path) -> None:
    path = _conf(tmp_path, "[devices]\nenabled_mdev_types = nvidia-35\n"
                           "[mdev_nvidia-35]\ndevice_addresses = 0000:99:00.0\n")
    (problem,) = _problems(path)
    assert "no mdev parent 0000:99:00.0 on this host" in problem
    assert "sriov-manage -e" in problem


def test_malformed_address(tmp_path: Path) -> None:
    path = _conf(tmp_path, "[devices]\nenabled_mdev_types = nvidia-35\n"
                           "[mdev_nvidia-35]\ndevice_addresses = 0000:84:00\n")
    assert _problems(path) == [
        "[mdev_nvidia-35] device_addresses: '0000:84:00' is not a PCI address; write it as "
        "DDDD:BB:SS.F, e.g. 0000:84:00.0 (see `vgpucloud host types`)"
    ]


def test_several_types_without_addresses(tmp_path: Path) -> None:
    path = _conf(tmp_path, "[devices]\nenabled_mdev_types = nvidia-35, nvidia-36, nvidia-37\n"
                           "[mdev_nvidia-37]\ndevice_addresses = 0000:87:00.0\n")
    (problem,) = _problems(path)
    assert problem.startswith("[devices] enabled_mdev_types = nvidia-35, nvidia-36, nvidia-37:"
                              " types nvidia-35, nvidia-36 have no device_addresses")


def test_default_type_no_parent_offers(tmp_path: Path) -> None:
    path = _conf(tmp_path, "[devices]\nenabled_mdev_types = nvidia-222\n")
    (problem,) = _problems(path)
    assert problem.startswith("[devices] enabled_mdev_types: no device on this host offers "
                              "nvidia-222")


def test_bad_mdev_class_and_max_instances(tmp_path: Path) -> None:
    path = _conf(tmp_path, "[devices]\nenabled_mdev_types = nvidia-35\n"
                           "[mdev_nvidia-35]\nmdev_class = custom_m60\nmax_instances = 0\n")
    problems = _problems(path)
    assert len(problems) == 2
    assert problems[0].startswith("[mdev_nvidia-35] mdev_class = custom_m60: must be VGPU or a "
                                  "custom resource class CUSTOM_<NAME>")
    assert problems[1].startswith("[mdev_nvidia-35] max_instances: ")


def test_group_for_a_type_not_enabled(tmp_path: Path) -> None:
    path = _conf(tmp_path, "[devices]\nenabled_mdev_types = nvidia-35\n"
                           "[mdev_nvidia-36]\ndevice_addresses = 0000:86:00.0\n")
    assert _problems(path) == [
        "[mdev_nvidia-36] configures nvidia-36, which is not in [devices] enabled_mdev_types "
        "(nvidia-35); add nvidia-36 there or remove the section"
    ]


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    path = _conf(tmp_path, """
        [devices]
        enabled_mdev_types = nvidia-35, nvidia-36
        [mdev_nvidia-35]
        device_addresses = 0000:84:00.0, bogus
        [mdev_nvidia-36]
        device_addresses = 0000:84:00.0, 0000:99:00.0
    """)
    assert len(_problems(path)) == 3


def test_host_checks_are_skipped_without_parents(tmp_path: Path) -> None:
    path = _conf(tmp_path, "[devices]\nenabled_mdev_types = nvidia-35\n"
                           "[mdev_nvidia-35]\ndevice_addresses = 0000:99:00.0\n")
    config = load_agent_config([path])
    assert config.devices.type_config("nvidia-35") is not None
    assert config.assignments == {}


def test_defaults_match_nova(tmp_path: Path) -> None:
    config = load_agent_config([_conf(tmp_path, "[DEFAULT]\nhost = cmp-1\n")], parents=[])
    assert config.host == "cmp-1"
    assert (config.live_migration_downtime, config.live_migration_downtime_steps,
            config.live_migration_downtime_delay) == (500, 10, 75)
    assert (config.cpu_allocation_ratio, config.ram_allocation_ratio,
            config.disk_allocation_ratio) == (16.0, 1.5, 1.0)
    assert (config.reserved_host_memory_mb, config.reserved_host_disk_mb) == (512, 0)
    assert config.connection_uri == "qemu:///system"
    assert config.devices.types == ()


def test_nova_doc_live_migration_settings(tmp_path: Path) -> None:
    path = _conf(tmp_path, """
        [libvirt]
        connection_uri = qemu+tcp://cmp-1/system
        live_migration_downtime = 500000
        live_migration_downtime_steps = 3
        live_migration_downtime_delay = 3
    """)
    config = load_agent_config([path])
    assert (config.connection_uri, config.live_migration_downtime,
            config.live_migration_downtime_steps, config.live_migration_downtime_delay) == (
        "qemu+tcp://cmp-1/system", 500000, 3, 3)


def test_out_of_range_libvirt_value_names_the_option(tmp_path: Path) -> None:
    path = _conf(tmp_path, "[libvirt]\nlive_migration_downtime_steps = 1\n")
    (problem,) = _problems(path, parents=None)
    assert problem.startswith("[libvirt] live_migration_downtime_steps: ")


def test_missing_config_file(tmp_path: Path) -> None:
    assert _problems(tmp_path / "nope.conf") == [
        f"--config-file {tmp_path / 'nope.conf'}: no such file; pass an existing nova.conf"
    ]
