"""The desired provider tree of simulated hosts, computed from nova.conf and sysfs."""

from __future__ import annotations

from pathlib import Path

import pytest

from vgpucloud.agent.config import load_agent_config
from vgpucloud.agent.provider_tree import (
    HostResources,
    child_name,
    desired_tree,
    mdev_type_trait,
)
from vgpucloud.sim.host import SimHost

SEED_HOST = HostResources(vcpus=48, memory_mb=65442, disk_gb=49)

SEED_TWO_TYPES = """
[DEFAULT]
host = virtlab606

[devices]
enabled_mdev_types = nvidia-35, nvidia-36

[mdev_nvidia-35]
device_addresses = 0000:84:00.0,0000:85:00.0

[mdev_nvidia-36]
device_addresses = 0000:86:00.0
"""


def _config(tmp_path: Path, text: str, host: SimHost):
    conf = tmp_path / "nova.conf"
    conf.write_text(text)
    return load_agent_config([conf], parents=host.sysfs().parents())


@pytest.fixture
def m60_host(tmp_path: Path) -> SimHost:
    return SimHost.create(tmp_path / "root", "m60", gpus=4)


def test_seed_m60_two_types_by_address(tmp_path: Path, m60_host: SimHost) -> None:
    config = _config(tmp_path, SEED_TWO_TYPES, m60_host)
    sysfs = m60_host.sysfs()
    tree = desired_tree(config, SEED_HOST, sysfs.parents(), sysfs.mdevs())

    assert tree.root.name == "virtlab606"
    assert tree.root.inventories["VCPU"] == {
        "total": 48, "reserved": 0, "min_unit": 1, "max_unit": 48, "step_size": 1,
        "allocation_ratio": 16.0,
    }
    assert tree.root.inventories["MEMORY_MB"]["reserved"] == 512
    assert tree.root.inventories["MEMORY_MB"]["allocation_ratio"] == 1.5
    assert tree.root.inventories["DISK_GB"]["total"] == 49
    names = [c.name for c in tree.children]
    assert names == [
        "virtlab606_pci_0000_84_00_0",
        "virtlab606_pci_0000_85_00_0",
        "virtlab606_pci_0000_86_00_0",
    ]  # 0000:87:00.0 is not configured: no provider
    vgpus = {c.name: c.inventories["VGPU"]["total"] for c in tree.children}
    assert vgpus == {names[0]: 16, names[1]: 16, names[2]: 16}
    assert tree.children[0].traits >= {"CUSTOM_MDEV_NVIDIA_35"}
    assert tree.children[2].traits >= {"CUSTOM_MDEV_NVIDIA_36"}
    assert child_name("virtlab606", "0000:87:00.0") in tree.present


def test_existing_mdevs_count_towards_total_and_foreign_ones_do_not(
    tmp_path: Path, m60_host: SimHost
) -> None:
    config = _config(tmp_path, SEED_TWO_TYPES, m60_host)
    sysfs = m60_host.sysfs()
    ours = sysfs.create_mdev("0000:84:00.0", "nvidia-35")
    foreign = sysfs.create_mdev("0000:84:00.0", "nvidia-35")
    tree = desired_tree(config, SEED_HOST, sysfs.parents(), sysfs.mdevs(), foreign={foreign.uuid})
    by_name = {c.name: c for c in tree.children}
    # 16 in all: 14 still available + ours; the foreign one is not ours to hand out.
    assert by_name["virtlab606_pci_0000_84_00_0"].inventories["VGPU"]["total"] == 15
    assert ours.uuid != foreign.uuid


def test_type_changed_under_old_mdevs_leaves_no_capacity(tmp_path: Path, m60_host: SimHost) -> None:
    """The seeds' type-change trap: an nvidia-36 mdev left on 0000:86:00.0 and the operator
    switches it to nvidia-35; NVIDIA's driver offers 0 nvidia-35 while it exists."""
    m60_host.sysfs().create_mdev("0000:86:00.0", "nvidia-36")
    changed = """
[DEFAULT]
host = virtlab606
[devices]
enabled_mdev_types = nvidia-35
[mdev_nvidia-35]
device_addresses = 0000:84:00.0,0000:85:00.0,0000:86:00.0
"""
    config = _config(tmp_path, changed, m60_host)
    sysfs = m60_host.sysfs()
    tree = desired_tree(config, SEED_HOST, sysfs.parents(), sysfs.mdevs())
    by_name = {c.name: c for c in tree.children}
    assert by_name["virtlab606_pci_0000_86_00_0"].inventories == {}
    assert by_name["virtlab606_pci_0000_84_00_0"].inventories["VGPU"]["total"] == 16


def test_max_instances_and_custom_class(tmp_path: Path, m60_host: SimHost) -> None:
    text = """
[DEFAULT]
host = h1
[devices]
enabled_mdev_types = nvidia-35
[mdev_nvidia-35]
mdev_class = CUSTOM_M60_0B
max_instances = 4
"""
    config = _config(tmp_path, text, m60_host)
    sysfs = m60_host.sysfs()
    tree = desired_tree(config, SEED_HOST, sysfs.parents(), sysfs.mdevs())
    assert len(tree.children) == 4  # a group without addresses is the default for all
    for child in tree.children:
        assert child.inventories == {"CUSTOM_M60_0B": {
            "total": 4, "reserved": 0, "min_unit": 1, "max_unit": 4, "step_size": 1,
            "allocation_ratio": 1.0}}
    assert tree.custom_resource_classes() == {"CUSTOM_M60_0B"}


def test_numa_trait_follows_the_parent_node(tmp_path: Path, m60_host: SimHost) -> None:
    config = _config(tmp_path, SEED_TWO_TYPES, m60_host)
    parents = {p.address: p for p in m60_host.sysfs().parents()}
    tree = desired_tree(config, SEED_HOST, tuple(parents.values()), ())
    for child in tree.children:
        node = parents[child.parent_address].numa_node
        assert f"CUSTOM_NUMA_NODE_{node}" in child.traits


@pytest.mark.parametrize(("type_id", "trait"), [
    ("nvidia-35", "CUSTOM_MDEV_NVIDIA_35"),
    ("i915-GVTg_V5_4", "CUSTOM_MDEV_I915_GVTG_V5_4"),
    ("mtty-2", "CUSTOM_MDEV_MTTY_2"),
])
def test_mdev_type_trait_names(type_id: str, trait: str) -> None:
    assert mdev_type_trait(type_id) == trait
