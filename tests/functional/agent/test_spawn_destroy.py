"""Spawn and destroy on a simulated M60 host against the in-process API, with the fake
driver and with libvirt's test:///default driver."""

from __future__ import annotations

import pytest

from tests.functional.agent.cloud import HOST, Cloud
from vgpucloud.agent.virt import GuestState

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def test_agent_start_reports_the_seed_tree_and_registers(m60: Cloud) -> None:
    agent = m60.agent()
    names = sorted(p["name"] for p in m60.placement.list_providers(
        in_tree=agent.reporter.root_uuid))
    assert names == [HOST, f"{HOST}_pci_0000_84_00_0", f"{HOST}_pci_0000_85_00_0",
                     f"{HOST}_pci_0000_86_00_0"]
    child = m60.provider("0000:86:00.0")
    inventory = m60.placement.get_inventories(child["uuid"])["inventories"]
    assert inventory["VGPU"]["total"] == 16
    traits = m60.placement.get_provider_traits(child["uuid"])["traits"]
    assert "CUSTOM_MDEV_NVIDIA_36" in traits
    [host] = m60.internal.list_hosts()
    assert host["name"] == HOST and host["root_provider_uuid"] == agent.reporter.root_uuid
    assert host["libvirt_version"]


def test_one_vgpu_instance_gets_an_mdev_on_its_allocated_pgpu(m60: Cloud) -> None:
    agent = m60.agent()
    instance = m60.allocate({"0000:85:00.0": 1})
    task = m60.spawn(agent, instance)
    assert task["state"] == "done", task["fault"]
    [mdev] = task["result"]["mdevs"]
    assert (mdev["parent"], mdev["type"]) == ("0000:85:00.0", "nvidia-35")
    assert m60.host.sysfs().mdev(mdev["uuid"]).parent == "0000:85:00.0"
    assert agent.ledger.get(mdev["uuid"]).state == "attached"
    assert agent.driver.state(instance) == GuestState.RUNNING
    assert agent.driver.list_guests()
    assert mdev["uuid"] in next(g for g in agent.driver.list_guests()
                                if g.uuid == instance).mdev_uuids
    if m60.virt == "fake":
        assert m60.host.kernel.holder(mdev["uuid"]) == "qemu"


def test_destroy_frees_the_mdev_and_the_next_instance_reuses_it(m60: Cloud) -> None:
    agent = m60.agent()
    first = m60.allocate({"0000:84:00.0": 1})
    [mdev] = m60.spawn(agent, first)["result"]["mdevs"]
    gone = m60.run_task(agent, "destroy", {"instance_uuid": first})
    assert gone["state"] == "done" and gone["result"]["released_mdevs"] == [mdev["uuid"]]
    assert agent.driver.state(first) is None
    assert agent.ledger.get(mdev["uuid"]).state == "free"
    assert m60.host.kernel.holder(mdev["uuid"]) is None
    m60.placement.delete_allocations(first)

    second = m60.allocate({"0000:84:00.0": 1})
    [again] = m60.spawn(agent, second)["result"]["mdevs"]
    assert again["uuid"] == mdev["uuid"]  # reused, not a second mdev
    assert len(m60.host.sysfs().mdevs_on("0000:84:00.0")) == 1


def test_two_vgpu_instance_gets_mdevs_on_two_pgpus(m60: Cloud) -> None:
    agent = m60.agent()
    instance = m60.allocate({"0000:84:00.0": 1, "0000:85:00.0": 1})
    task = m60.spawn(agent, instance)
    assert task["state"] == "done", task["fault"]
    parents = sorted(m["parent"] for m in task["result"]["mdevs"])
    assert parents == ["0000:84:00.0", "0000:85:00.0"]
    guest = next(g for g in agent.driver.list_guests() if g.uuid == instance)
    assert len(guest.mdev_uuids) == 2


def test_spawn_delivered_twice_converges_to_one_set_of_mdevs(m60: Cloud) -> None:
    agent = m60.agent()
    instance = m60.allocate({"0000:86:00.0": 1})
    first = m60.spawn(agent, instance)["result"]
    second = m60.spawn(agent, instance)["result"]
    assert first == second
    assert len(m60.host.sysfs().mdevs()) == 1


def test_failed_create_rolls_back_and_names_the_device(m60: Cloud) -> None:
    agent = m60.agent()
    instance = m60.allocate({"0000:84:00.0": 1})
    # Someone else puts an nvidia-36 mdev on the pGPU: NVIDIA now refuses nvidia-35 there.
    foreign = m60.host.sysfs().create_mdev("0000:84:00.0", "nvidia-36")
    task = m60.spawn(agent, instance)
    assert task["state"] == "failed"
    assert "0000:84:00.0" in task["fault"] and "nvidia-35" in task["fault"]
    assert "rolled back" in task["fault"]
    assert agent.ledger.by_owner(instance) == []
    assert agent.driver.state(instance) is None
    assert [m.uuid for m in m60.host.sysfs().mdevs()] == [foreign.uuid]  # never touched


def test_vgpus_on_a_provider_of_another_host_fail_clearly(m60: Cloud) -> None:
    agent = m60.agent()
    other = m60.placement.create_provider("elsewhere")
    m60.placement.put_inventories(other["uuid"], 0, {"VGPU": {"total": 4}})
    instance = "0b9b2a38-7a0d-4f4f-8f7e-3a1e6e6e1b2c"
    m60.placement.put_allocations(instance, {
        "allocations": {other["uuid"]: {"resources": {"VGPU": 1}}},
        "project_id": "demo", "user_id": "alice", "consumer_generation": None,
        "consumer_type": "INSTANCE"})
    task = m60.spawn(agent, instance)
    assert task["state"] == "failed"
    assert other["uuid"] in task["fault"] and "not in the tree" in task["fault"]
