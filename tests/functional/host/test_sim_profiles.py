"""The SR-IOV, variant-driver, GVT-g and mtty profiles, and host reboots."""

from __future__ import annotations

from pathlib import Path

import pytest

from vgpucloud.agent.mdev import ParentKind
from vgpucloud.errors import ConfigError, MdevBusy, NoInstancesLeft, ParentGone, TypeNotOffered
from vgpucloud.sim import SimHost

PF = "0000:41:00.0"


def test_a40_vfs_appear_only_after_sriov_manage(tmp_path: Path) -> None:
    host = SimHost.create(tmp_path, "a40", gpus=1, enable_vfs=False)
    assert host.sysfs().parents() == ()
    assert host.enable_vfs() == [PF]
    parents = host.sysfs().parents()
    assert len(parents) == 32
    assert (parents[0].address, parents[-1].address) == ("0000:41:00.4", "0000:41:04.3")
    assert {p.kind for p in parents} == {ParentKind.SRIOV_VF}
    assert {p.physfn for p in parents} == {PF}
    assert all(t.available_instances == 1 for p in parents for t in p.types)


def test_a40_vf_takes_one_instance_and_the_gpu_one_type(tmp_path: Path) -> None:
    host = SimHost.create(tmp_path, "a40", gpus=1)
    sysfs = host.sysfs()
    sysfs.create_mdev("0000:41:00.4", "nvidia-563")  # A40-12Q: 4 per GPU
    vf4 = sysfs.parent("0000:41:00.4")
    assert all(t.available_instances == 0 for t in vf4.types)
    vf5 = sysfs.parent("0000:41:00.5")
    assert {t.id for t in vf5.types if t.available_instances} == {"nvidia-563"}
    with pytest.raises(NoInstancesLeft, match="already holds mdevs of type nvidia-563"):
        sysfs.create_mdev("0000:41:00.5", "nvidia-557")
    for vf in ("0000:41:00.5", "0000:41:00.6", "0000:41:00.7"):
        sysfs.create_mdev(vf, "nvidia-563")
    with pytest.raises(NoInstancesLeft, match=r"\(4 in use\)"):
        sysfs.create_mdev("0000:41:01.0", "nvidia-563")


def test_a40_vfs_cannot_be_disabled_while_in_use(tmp_path: Path) -> None:
    host = SimHost.create(tmp_path, "a40", gpus=1)
    host.sysfs().create_mdev("0000:41:00.4", "nvidia-566")
    with pytest.raises(MdevBusy):
        host.disable_vfs(PF)


def test_variant_driver_vfs_take_a_type_without_mdevs(tmp_path: Path) -> None:
    host = SimHost.create(tmp_path, "a40-variant", gpus=1)
    sysfs = host.sysfs()
    vfs = sysfs.parents()
    assert len(vfs) == 32 and {p.kind for p in vfs} == {ParentKind.NVIDIA_VARIANT}
    assert sysfs.mdevs() == ()
    with pytest.raises(TypeNotOffered, match="kernel variant driver"):
        sysfs.create_mdev("0000:41:00.4", "nvidia-566")
    vf = sysfs.set_vgpu_type("0000:41:00.4", "nvidia-565")  # A40-24Q: 2 per GPU
    assert vf.current_type == "nvidia-565"
    assert sysfs.parent("0000:41:00.5").type_ids == ("nvidia-565",)
    sysfs.set_vgpu_type("0000:41:00.5", "nvidia-565")
    assert sysfs.parent("0000:41:00.6").type_ids == ()
    with pytest.raises(TypeNotOffered):
        sysfs.set_vgpu_type("0000:41:00.6", "nvidia-565")
    with pytest.raises(MdevBusy, match="already has vGPU type nvidia-565"):
        sysfs.set_vgpu_type("0000:41:00.4", "nvidia-557")
    host.hold("0000:41:00.4", "instance-1")
    with pytest.raises(MdevBusy):
        sysfs.clear_vgpu_type("0000:41:00.4")
    host.release("0000:41:00.4")
    sysfs.clear_vgpu_type("0000:41:00.4")
    assert "nvidia-565" in sysfs.parent("0000:41:00.6").type_ids


def test_gvtg_types_share_the_aperture_and_mix(tmp_path: Path) -> None:
    host = SimHost.create(tmp_path, "gvtg")
    sysfs = host.sysfs()
    (igpu,) = sysfs.parents()
    assert igpu.address == "0000:00:02.0" and igpu.driver == "i915"
    assert all(t.name is None for t in igpu.types)
    sysfs.create_mdev(igpu.address, "i915-GVTg_V5_4")
    after = {t.id: t.available_instances for t in sysfs.parent(igpu.address).types}
    assert after == {"i915-GVTg_V5_1": 0, "i915-GVTg_V5_2": 1, "i915-GVTg_V5_4": 3,
                     "i915-GVTg_V5_8": 6}
    assert sysfs.create_mdev(igpu.address, "i915-GVTg_V5_8").type_id == "i915-GVTg_V5_8"


def test_mtty_parent_holds_several_mdevs_for_one_guest(tmp_path: Path) -> None:
    host = SimHost.create(tmp_path, "mtty")
    sysfs = host.sysfs()
    (mtty,) = sysfs.parents()
    assert (mtty.address, mtty.kind) == ("mtty", ParentKind.VIRTUAL)
    first = sysfs.create_mdev("mtty", "mtty-2")
    second = sysfs.create_mdev("mtty", "mtty-1")
    for mdev in (first, second):
        host.hold(mdev.uuid, "instance-1")
    types = {t.id: t.available_instances for t in sysfs.parent("mtty").types}
    assert types == {"mtty-1": 21, "mtty-2": 10}
    assert {m.parent for m in sysfs.mdevs()} == {"mtty"}


def test_host_reboot_drops_mdevs_guests_and_vfs(tmp_path: Path) -> None:
    host = SimHost.create_mixed(tmp_path, [("t4", 1), ("a40", 1)])
    sysfs = host.sysfs()
    t4_mdev = sysfs.create_mdev("0000:18:00.0", "nvidia-321")
    host.hold(t4_mdev.uuid, "instance-1")
    sysfs.create_mdev("0000:41:00.4", "nvidia-566")
    host.reboot()
    assert sysfs.mdevs() == ()
    assert host.kernel.holder(t4_mdev.uuid) is None
    assert [p.address for p in sysfs.parents()] == ["0000:18:00.0"]
    with pytest.raises(ParentGone, match="sriov-manage -e"):
        sysfs.create_mdev("0000:41:00.4", "nvidia-566")
    offered = sysfs.parent("0000:18:00.0").type("nvidia-321")
    assert offered is not None and offered.available_instances == 1
    host.enable_vfs()
    assert sysfs.create_mdev("0000:41:00.4", "nvidia-566").parent == "0000:41:00.4"


def test_bad_sim_requests(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="takes 1 to 1 GPUs"):
        SimHost.create(tmp_path / "a", "gvtg", gpus=2)
    with pytest.raises(ConfigError, match="no such GPU profile"):
        SimHost.create(tmp_path / "b", "h100", gpus=1)
    SimHost.create(tmp_path / "c", "t4", gpus=1)
    with pytest.raises(ConfigError, match="already a simulated host"):
        SimHost.create(tmp_path / "c", "t4", gpus=1)


def test_more_gpus_than_the_profile_lists_get_free_buses(tmp_path: Path) -> None:
    host = SimHost.create(tmp_path, "m60", gpus=6)
    addresses = [p.address for p in host.sysfs().parents()]
    assert len(set(addresses)) == 6
    assert addresses[:4] == ["0000:02:00.0", "0000:03:00.0", "0000:84:00.0", "0000:85:00.0"]
