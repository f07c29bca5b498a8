"""Hosts on NVIDIA's kernel variant driver: a vGPU is a VF with a vGPU type, passed through.

The simulated A40s run the variant driver: no mdev bus, VFs ``0000:41:00.4`` ... with
``nvidia/current_vgpu_type``; one vGPU type per GPU across its VFs.
"""

from __future__ import annotations

import datetime
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, update

from tests.functional.agent.cloud import HOST, Cloud
from vgpucloud.agent.virt import FakeDriver, GuestSpec, GuestState, read_domain
from vgpucloud.client.internal import InternalClient
from vgpucloud.client.placement import PlacementClient
from vgpucloud.errors import ConfigError, MdevBusy
from vgpucloud.sim import SimHost
from vgpucloud.storage.compute_tables import tasks

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)

VF_A, VF_B, VF_C = "0000:41:00.4", "0000:41:00.5", "0000:41:00.6"
VF_OTHER_GPU = "0000:61:00.4"
A40_VARIANT = """
[DEFAULT]
host = virtlab606
state_path = {state}

[libvirt]
connection_uri = test:///default

[devices]
enabled_mdev_types = nvidia-557

[mdev_nvidia-557]
device_addresses = 0000:41:00.4,0000:41:00.5,0000:41:00.6,0000:61:00.4
"""


@pytest.fixture
def a40(tmp_path: Path, virt: str, placement: PlacementClient,
        internal: InternalClient) -> Iterator[Cloud]:
    """Two A40s under the variant driver, VFs enabled; four VFs configured for A40-1Q."""
    host = SimHost.create(tmp_path / "root", "a40-variant", gpus=2)
    cloud = Cloud(tmp_path, host, A40_VARIANT, virt, placement, internal)
    yield cloud
    for agent in cloud.agents:
        agent.close()


def vgpu_type(cloud: Cloud, vf: str) -> str | None:
    return cloud.host.sysfs().parent(vf).current_type


def vgpu_total(cloud: Cloud, vf: str) -> int:
    inventories = cloud.placement.get_inventories(cloud.provider(vf)["uuid"])["inventories"]
    return int(inventories["VGPU"]["total"]) if "VGPU" in inventories else 0


def _expire_leases(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(update(tasks).where(tasks.c.state == "leased")
                           .values(lease_expires_at=datetime.datetime(2000, 1, 1)))


def test_unset_vfs_of_the_assigned_type_are_one_vgpu_each(a40: Cloud) -> None:
    a40.agent()
    assert [vgpu_total(a40, vf) for vf in (VF_A, VF_B, VF_C, VF_OTHER_GPU)] == [1, 1, 1, 1]
    traits = a40.placement.get_provider_traits(a40.provider(VF_A)["uuid"])["traits"]
    assert "CUSTOM_MDEV_NVIDIA_557" in traits


def test_spawn_and_destroy_on_a_variant_vf(a40: Cloud) -> None:
    agent = a40.agent()
    instance = a40.allocate({VF_A: 1})
    task = a40.spawn(agent, instance)
    assert task["state"] == "done", task.get("fault")
    [claim] = task["result"]["vfs"]
    assert (claim["address"], claim["type"], task["result"]["mdevs"]) == (VF_A, "nvidia-557", [])
    assert vgpu_type(a40, VF_A) == "nvidia-557"
    assert a40.host.sysfs().mdevs() == ()  # no mdev anywhere: the VF itself is the vGPU
    summary = read_domain(agent.driver.get_xml(instance))
    assert (summary.pci_addresses, summary.mdev_uuids) == ((VF_A,), ())
    assert agent.driver.state(instance) == GuestState.RUNNING
    [row] = agent.ledger.by_owner(instance)
    assert (row.uuid, row.parent, row.state) == (claim["claim"], VF_A, "attached")
    if isinstance(agent.driver, FakeDriver):
        assert a40.host.kernel.holder(VF_A) == "qemu"
    assert vgpu_total(a40, VF_A) == 1  # the running guest's VF is still one vGPU

    done = a40.run_task(agent, "destroy", {"instance_uuid": instance})

    assert done["state"] == "done", done.get("fault")
    assert done["result"]["released_vfs"] == [VF_A]
    assert vgpu_type(a40, VF_A) is None
    assert a40.host.kernel.holder(VF_A) is None
    assert agent.ledger.entries() == []
    a40.placement.delete_allocations(instance)
    again = a40.spawn(agent, a40.allocate({VF_A: 1}))  # the VF is free again
    assert again["state"] == "done", again.get("fault")


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_two_instances_on_two_vfs_of_one_a40(a40: Cloud) -> None:
    agent = a40.agent()
    first, second = a40.allocate({VF_A: 1}), a40.allocate({VF_B: 1})
    assert a40.spawn(agent, first)["state"] == "done"
    assert a40.spawn(agent, second)["state"] == "done"
    assert vgpu_type(a40, VF_A) == vgpu_type(a40, VF_B) == "nvidia-557"
    assert read_domain(agent.driver.get_xml(second)).pci_addresses == (VF_B,)
    assert {r.parent: r.owner for r in agent.ledger.entries()} == {VF_A: first, VF_B: second}
    a40.run_task(agent, "destroy", {"instance_uuid": first})
    assert (vgpu_type(a40, VF_A), vgpu_type(a40, VF_B)) == (None, "nvidia-557")
    assert agent.driver.state(second) == GuestState.RUNNING


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_vf_left_with_a_foreign_type_is_not_used(a40: Cloud) -> None:
    # Somebody set A40-1Q on VF B by hand (no claim of ours): not capacity, never cleared.
    a40.host.sysfs().set_vgpu_type(VF_B, "nvidia-557")
    agent = a40.agent()
    assert agent.reconciled is not None and agent.reconciled.foreign_vfs == [VF_B]
    assert (vgpu_total(a40, VF_A), vgpu_total(a40, VF_B)) == (1, 0)
    with pytest.raises(MdevBusy) as caught:
        agent.ops.vfs.claim("c2177883-f1bb-47f0-914d-32a22e3a8804", VF_B, "nvidia-557", None)
    assert VF_B in caught.value.message and "somebody else" in caught.value.message
    assert agent.ledger.entries() == []

    instance = a40.allocate({VF_A: 1})
    assert a40.spawn(agent, instance)["state"] == "done"
    a40.run_task(agent, "destroy", {"instance_uuid": instance})
    assert (vgpu_type(a40, VF_A), vgpu_type(a40, VF_B)) == (None, "nvidia-557")


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_foreign_type_on_one_vf_blocks_the_other_type_on_its_gpu_only(a40: Cloud) -> None:
    # NVIDIA runs one type per GPU: A40-2Q on VF C leaves no room for A40-1Q on GPU 41.
    a40.host.sysfs().set_vgpu_type(VF_C, "nvidia-558")
    a40.agent()
    assert [vgpu_total(a40, vf) for vf in (VF_A, VF_B, VF_C, VF_OTHER_GPU)] == [0, 0, 0, 1]


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
@pytest.mark.parametrize("type_written", [True, False], ids=["after-write", "before-write"])
def test_restart_after_crash_mid_spawn_converges(
    a40: Cloud, compute_engine: Engine, type_written: bool
) -> None:
    agent = a40.agent()
    instance = a40.allocate({VF_A: 1})
    task = a40.internal.enqueue_task(HOST, "spawn", {"instance_uuid": instance})
    a40.internal.lease_tasks(HOST, agent.owner)
    # The crash: the claim is recorded (and maybe the type written), nothing more.
    [row] = agent.ledger.reserve(instance, VF_A, "nvidia-557", provider="p")
    if type_written:
        a40.host.sysfs().set_vgpu_type(VF_A, "nvidia-557")
    _expire_leases(compute_engine)

    restarted = a40.agent()
    assert restarted.reconciled is not None
    assert restarted.reconciled.foreign_vfs == []  # the pending claim makes the type ours
    restarted.run_once()

    done = a40.internal.get_task(task["uuid"])
    assert done["state"] == "done" and done["attempts"] == 2, done.get("fault")
    assert [c["claim"] for c in done["result"]["vfs"]] == [row.uuid]
    assert vgpu_type(a40, VF_A) == "nvidia-557"
    claimed = restarted.ledger.get(row.uuid)
    assert claimed is not None and claimed.state == "attached"


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_failed_spawn_clears_the_type_it_wrote(a40: Cloud) -> None:
    agent = a40.agent()
    instance = a40.allocate({VF_A: 1})
    # Another guest already has the instance's name: define fails after the type is set.
    agent.driver.define(GuestSpec(uuid=str(uuidlib.uuid4()), name=f"instance-{instance}",
                                  vcpus=1, memory_mb=512, disk_path="/var/lib/other/disk"))
    task = a40.spawn(agent, instance)
    assert task["state"] == "failed" and "rolled back" in task["fault"]
    assert "already used by guest" in task["fault"]
    assert vgpu_type(a40, VF_A) is None
    assert agent.ledger.by_owner(instance) == []


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_host_reboot_restores_the_type_before_the_guest_starts(a40: Cloud) -> None:
    agent = a40.agent()
    instance = a40.allocate({VF_A: 1})
    assert a40.spawn(agent, instance)["state"] == "done"
    freed = a40.allocate({VF_B: 1})
    assert a40.spawn(agent, freed)["state"] == "done"
    a40.run_task(agent, "destroy", {"instance_uuid": freed})

    a40.host.reboot()
    assert isinstance(agent.driver, FakeDriver)
    agent.driver.host_reboot()
    with pytest.raises(ConfigError) as caught:  # VFs are back only after sriov-manage -e
        a40.agent()
    assert any(VF_A in p and "sriov-manage -e" in p for p in caught.value.problems)
    a40.host.enable_vfs()

    rebooted = a40.agent()
    report = rebooted.reconciled
    assert report is not None and report.problems == []
    assert report.retyped == [VF_A] and report.restarted == [instance]
    assert (vgpu_type(a40, VF_A), vgpu_type(a40, VF_B)) == ("nvidia-557", None)
    assert rebooted.driver.state(instance) == GuestState.RUNNING
    assert a40.host.kernel.holder(VF_A) == "qemu"

