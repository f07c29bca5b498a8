"""``Sysfs`` against simulated hosts: discovery, every precondition, the driver's rules."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vgpucloud.agent.mdev import ParentKind, Sysfs
from vgpucloud.errors import (
    HostDeviceError,
    InvalidDeviceName,
    MdevBusy,
    MdevExists,
    MdevNotFound,
    NoInstancesLeft,
    ParentGone,
    TypeNotOffered,
)
from vgpucloud.sim import SimHost

UUID = "3b3c5f0e-8a0e-4f5a-9c47-2f0c1a6f8f21"


@pytest.fixture
def m60(tmp_path: Path) -> SimHost:
    return SimHost.create(tmp_path / "m60", "m60", gpus=4)


def _available(sysfs: Sysfs, parent: str, type_id: str) -> int:
    offered = sysfs.parent(parent).type(type_id)
    assert offered is not None
    return offered.available_instances


def test_four_m60_discovered_like_the_nova_doc(m60: SimHost) -> None:
    parents = m60.sysfs().parents()
    assert [p.address for p in parents] == [f"0000:{b}:00.0" for b in ("84", "85", "86", "87")]
    first = parents[0]
    assert (first.kind, first.vendor_id, first.device_id, first.driver, first.numa_node) == (
        ParentKind.PCI, "0x10de", "0x13f2", "nvidia", 0)
    assert parents[3].numa_node == 1
    assert first.type_ids == tuple(f"nvidia-{n}" for n in range(35, 46))
    t35 = first.type("nvidia-35")
    assert t35 is not None
    assert (t35.name, t35.available_instances, t35.max_instance, t35.device_api) == (
        "GRID M60-0B", 16, 16, "vfio-pci")


def test_t4_host_types_match_the_mosk_blog(tmp_path: Path) -> None:
    host = SimHost.create(tmp_path, "t4", gpus=8)
    parents = host.sysfs().parents()
    assert [p.address for p in parents] == [
        "0000:18:00.0", "0000:19:00.0", "0000:35:00.0", "0000:36:00.0",
        "0000:e7:00.0", "0000:e8:00.0", "0000:f4:00.0", "0000:f5:00.0"]
    t = parents[0].type("nvidia-223")
    assert t is not None
    assert t.description == ("num_heads=4, frl_config=45, framebuffer=2048M, "
                             "max_resolution=5120x2880, max_instance=8")
    assert len(parents[0].types) == 17


def test_create_shrinks_and_remove_grows_available_instances(m60: SimHost) -> None:
    sysfs = m60.sysfs()
    mdev = sysfs.create_mdev("0000:84:00.0", "nvidia-35", UUID)
    assert (mdev.uuid, mdev.parent, mdev.type_id) == (UUID, "0000:84:00.0", "nvidia-35")
    assert mdev.iommu_group is not None
    assert _available(sysfs, "0000:84:00.0", "nvidia-35") == 15
    assert _available(sysfs, "0000:85:00.0", "nvidia-35") == 16
    assert sysfs.mdevs() == (mdev,)
    sysfs.remove_mdev(UUID)
    assert _available(sysfs, "0000:84:00.0", "nvidia-35") == 16
    assert sysfs.mdevs() == ()


def test_one_type_per_pgpu_causes_the_type_change_no_valid_host(m60: SimHost) -> None:
    sysfs = m60.sysfs()
    old = sysfs.create_mdev("0000:84:00.0", "nvidia-35")
    parent = sysfs.parent("0000:84:00.0")
    assert {t.id: t.available_instances for t in parent.types if t.id != "nvidia-35"} == {
        t: 0 for t in parent.type_ids if t != "nvidia-35"}
    with pytest.raises(NoInstancesLeft, match="already holds mdevs of type nvidia-35") as caught:
        sysfs.create_mdev("0000:84:00.0", "nvidia-36")
    assert "remove the unused mdevs" in caught.value.message
    sysfs.remove_mdev(old.uuid)
    assert sysfs.create_mdev("0000:84:00.0", "nvidia-36").type_id == "nvidia-36"


def test_last_instance_then_no_instances_left(m60: SimHost) -> None:
    sysfs = m60.sysfs()
    sysfs.create_mdev("0000:84:00.0", "nvidia-45")
    with pytest.raises(NoInstancesLeft, match=r"no instance of nvidia-45 left \(1 in use\)"):
        sysfs.create_mdev("0000:84:00.0", "nvidia-45")


def test_type_not_offered_lists_what_is(m60: SimHost) -> None:
    with pytest.raises(TypeNotOffered, match=r"does not offer mdev type nvidia-222 \(it offers: "
                                             r"nvidia-35, nvidia-36"):
        m60.sysfs().create_mdev("0000:84:00.0", "nvidia-222")


def test_parent_gone(m60: SimHost) -> None:
    with pytest.raises(ParentGone, match=r"0000:99:00\.0 is not in"):
        m60.sysfs().create_mdev("0000:99:00.0", "nvidia-35")


def test_uuid_already_used(m60: SimHost) -> None:
    sysfs = m60.sysfs()
    sysfs.create_mdev("0000:84:00.0", "nvidia-35", UUID)
    with pytest.raises(MdevExists, match=UUID):
        sysfs.create_mdev("0000:85:00.0", "nvidia-35", UUID)


@pytest.mark.parametrize(("parent", "type_id", "uuid"), [
    ("0000:84:00.0", "nvidia-35", UUID.upper()),
    ("../../../etc", "nvidia-35", UUID),
    ("0000:84:00.0", "../../x", UUID),
])
def test_bad_names_never_reach_the_kernel(m60: SimHost, parent: str, type_id: str,
                                          uuid: str) -> None:
    with pytest.raises(InvalidDeviceName):
        m60.sysfs().create_mdev(parent, type_id, uuid)
    assert m60.sysfs().mdevs() == ()


def test_remove_refused_while_a_guest_holds_the_mdev(m60: SimHost) -> None:
    sysfs = m60.sysfs()
    sysfs.create_mdev("0000:84:00.0", "nvidia-35", UUID)
    m60.hold(UUID, "instance-1")
    with pytest.raises(MdevBusy, match="a guest holds the device"):
        sysfs.remove_mdev(UUID)
    assert m60.kernel.holder(UUID) == "instance-1"
    m60.release(UUID)
    sysfs.remove_mdev(UUID)


def test_remove_unknown_mdev(m60: SimHost) -> None:
    with pytest.raises(MdevNotFound, match=UUID):
        m60.sysfs().remove_mdev(UUID)


def test_tree_symlink_leaving_root_is_refused(m60: SimHost, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "available_instances").write_text("1\n")
    types = m60.root / "sys" / "devices" / "pci0000:80" / "0000:80:05.0" / "0000:84:00.0"
    types = types / "mdev_supported_types"
    os.rename(types / "nvidia-35", tmp_path / "moved")
    (types / "nvidia-35").symlink_to(outside)
    with pytest.raises(HostDeviceError, match="outside"):
        m60.sysfs().create_mdev("0000:84:00.0", "nvidia-35")
    assert not (outside / "create").exists()


def test_parent_linked_outside_the_tree_is_not_discovered(m60: SimHost, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    (outside / "mdev_supported_types" / "nvidia-35").mkdir(parents=True)
    (m60.root / "sys" / "class" / "mdev_bus" / "0000:99:00.0").symlink_to(outside)
    assert "0000:99:00.0" not in [p.address for p in m60.sysfs().parents()]
    with pytest.raises(ParentGone):
        m60.sysfs().create_mdev("0000:99:00.0", "nvidia-35")


def test_kernel_layout_uses_relative_links(m60: SimHost) -> None:
    sysfs = m60.sysfs()
    sysfs.create_mdev("0000:84:00.0", "nvidia-35", UUID)
    bus_link = m60.root / "sys" / "bus" / "mdev" / "devices" / UUID
    assert not os.readlink(bus_link).startswith("/")
    assert os.readlink(bus_link / "mdev_type") == "../mdev_supported_types/nvidia-35"
    devices = m60.root / "sys" / "class" / "mdev_bus" / "0000:84:00.0" / "mdev_supported_types"
    assert (devices / "nvidia-35" / "devices" / UUID).resolve() == bus_link.resolve()


def test_real_kernel_writer_is_used_without_a_sim(tmp_path: Path) -> None:
    # A plain tree with no fake kernel: Sysfs writes the file itself (as on a real host).
    host = SimHost.create(tmp_path / "h", "m60", gpus=1)
    plain = Sysfs(host.root)
    create = host.root / "sys/class/mdev_bus/0000:84:00.0/mdev_supported_types/nvidia-35/create"
    with pytest.raises(MdevNotFound):
        plain.create_mdev("0000:84:00.0", "nvidia-35", UUID)  # nothing acted on the write
    assert create.read_text() == UUID


def test_two_processes_see_one_host(m60: SimHost) -> None:
    other = SimHost(m60.root)
    m60.sysfs().create_mdev("0000:84:00.0", "nvidia-35", UUID)
    with pytest.raises(MdevExists):
        other.sysfs().create_mdev("0000:85:00.0", "nvidia-35", UUID)
    m60.hold(UUID, "vm")
    assert other.kernel.holder(UUID) == "vm"
