"""Agent restarts and host reboots: the ledger, sysfs and the domains are reconciled."""

from __future__ import annotations

import datetime

import pytest
from sqlalchemy import Engine, update

from tests.functional.agent.cloud import HOST, Cloud
from vgpucloud.agent.virt import FakeDriver, GuestState
from vgpucloud.errors import ConfigError
from vgpucloud.storage.compute_tables import tasks

pytestmark = pytest.mark.parametrize("database_url", ["sqlite"], indirect=True)


def _expire_leases(engine: Engine) -> None:
    with engine.begin() as connection:
        connection.execute(update(tasks).where(tasks.c.state == "leased")
                           .values(lease_expires_at=datetime.datetime(2000, 1, 1)))


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_restart_after_crash_between_create_and_ledger_update(
    m60: Cloud, compute_engine: Engine
) -> None:
    agent = m60.agent()
    instance = m60.allocate({"0000:85:00.0": 1})
    task = m60.internal.enqueue_task(HOST, "spawn", {"instance_uuid": instance})
    m60.internal.lease_tasks(HOST, agent.owner)
    # The crash: the ledger recorded the intent, the kernel created the mdev, then the
    # agent died before marking it created or defining the guest.
    [row] = agent.ledger.reserve(instance, "0000:85:00.0", "nvidia-35")
    m60.host.sysfs().create_mdev("0000:85:00.0", "nvidia-35", row.uuid)
    _expire_leases(compute_engine)

    restarted = m60.agent()
    assert restarted.reconciled is not None and restarted.reconciled.foreign == []
    restarted.run_once()
    done = m60.internal.get_task(task["uuid"])
    assert done["state"] == "done" and done["attempts"] == 2
    assert [m["uuid"] for m in done["result"]["mdevs"]] == [row.uuid]
    assert [m.uuid for m in m60.host.sysfs().mdevs()] == [row.uuid]
    assert restarted.ledger.get(row.uuid).state == "attached"


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_host_reboot_recreates_mdevs_with_same_uuid_before_guests_start(m60: Cloud) -> None:
    agent = m60.agent()
    instance = m60.allocate({"0000:84:00.0": 1, "0000:86:00.0": 1})
    mdevs = sorted(m["uuid"] for m in m60.spawn(agent, instance)["result"]["mdevs"])
    free_instance = m60.allocate({"0000:85:00.0": 1})
    [freed] = m60.spawn(agent, free_instance)["result"]["mdevs"]
    m60.run_task(agent, "destroy", {"instance_uuid": free_instance})

    m60.host.reboot()
    assert isinstance(agent.driver, FakeDriver)
    agent.driver.host_reboot()
    assert m60.host.sysfs().mdevs() == ()

    rebooted = m60.agent()
    report = rebooted.reconciled
    assert report is not None
    assert sorted(report.recreated) == mdevs
    assert report.forgotten == [freed["uuid"]]  # a free mdev is not worth recreating
    assert report.restarted == [instance]
    assert sorted(m.uuid for m in m60.host.sysfs().mdevs()) == mdevs
    assert rebooted.driver.state(instance) == GuestState.RUNNING
    assert all(m60.host.kernel.holder(uuid) == "qemu" for uuid in mdevs)


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_type_change_under_an_attached_mdev_is_reported_not_retyped(m60: Cloud) -> None:
    agent = m60.agent()
    instance = m60.allocate({"0000:86:00.0": 1})
    [mdev] = m60.spawn(agent, instance)["result"]["mdevs"]
    m60.conf.write_text(m60.conf.read_text().replace(
        "0000:84:00.0,0000:85:00.0", "0000:84:00.0,0000:85:00.0,0000:86:00.0").replace(
        "[mdev_nvidia-36]\ndevice_addresses = 0000:86:00.0", ""))
    m60.conf.write_text(m60.conf.read_text().replace("nvidia-35, nvidia-36", "nvidia-35"))

    restarted = m60.agent()
    assert restarted.reconciled is not None
    [problem] = restarted.reconciled.problems
    assert "0000:86:00.0" in problem and "nvidia-36" in problem and instance in problem
    assert m60.host.sysfs().mdev(mdev["uuid"]).type_id == "nvidia-36"
    assert restarted.driver.state(instance) == GuestState.RUNNING
    child = m60.provider("0000:86:00.0")
    inventory = m60.placement.get_inventories(child["uuid"])["inventories"]["VGPU"]
    assert inventory["reserved"] == inventory["total"]  # fenced: no new guests


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_foreign_mdev_is_listed_and_never_removed(m60: Cloud) -> None:
    foreign = m60.host.sysfs().create_mdev("0000:84:00.0", "nvidia-35")
    agent = m60.agent()
    assert agent.reconciled is not None
    assert [m.uuid for m in agent.reconciled.foreign] == [foreign.uuid]
    instance = m60.allocate({"0000:84:00.0": 1})
    [mdev] = m60.spawn(agent, instance)["result"]["mdevs"]
    assert mdev["uuid"] != foreign.uuid
    m60.run_task(agent, "destroy", {"instance_uuid": instance})
    assert {m.uuid for m in m60.host.sysfs().mdevs()} == {foreign.uuid, mdev["uuid"]}


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_operator_trait_survives_agent_restart(m60: Cloud) -> None:
    m60.agent()
    child = m60.provider("0000:84:00.0")
    m60.placement.ensure_trait("CUSTOM_NVIDIA_11")
    current = m60.placement.get_provider_traits(child["uuid"])
    m60.placement.put_provider_traits(child["uuid"], current["resource_provider_generation"],
                                      [*current["traits"], "CUSTOM_NVIDIA_11"])
    m60.agent()
    traits = set(m60.placement.get_provider_traits(child["uuid"])["traits"])
    assert {"CUSTOM_NVIDIA_11", "CUSTOM_MDEV_NVIDIA_35"} <= traits


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_config_naming_a_missing_pgpu_refuses_to_start(m60: Cloud) -> None:
    m60.conf.write_text(m60.conf.read_text().replace("0000:86:00.0", "0000:99:00.0"))
    with pytest.raises(ConfigError) as caught:
        m60.agent()
    assert any("0000:99:00.0" in p for p in caught.value.problems)


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_type_change_frees_our_unused_mdevs_so_the_new_type_gets_capacity(m60: Cloud) -> None:
    """The seeds' trap: a guest used an nvidia-36 mdev on 0000:86:00.0 and is gone, its mdev
    stays (Nova never deletes mdevs), the operator moves the pGPU to nvidia-35 — and Nova
    reports no capacity for it. Our agent removes its own unused mdev and reports 16."""
    agent = m60.agent()
    instance = m60.allocate({"0000:86:00.0": 1})
    [mdev] = m60.spawn(agent, instance)["result"]["mdevs"]
    assert m60.run_task(agent, "destroy", {"instance_uuid": instance})["state"] == "done"
    m60.placement.delete_allocations(instance)
    assert m60.host.sysfs().mdev(mdev["uuid"]).type_id == "nvidia-36"  # kept for reuse
    m60.conf.write_text(m60.conf.read_text().replace(
        "0000:84:00.0,0000:85:00.0", "0000:84:00.0,0000:85:00.0,0000:86:00.0").replace(
        "[mdev_nvidia-36]\ndevice_addresses = 0000:86:00.0", "").replace(
        "nvidia-35, nvidia-36", "nvidia-35"))

    m60.agent()

    assert mdev["uuid"] not in {m.uuid for m in m60.host.sysfs().mdevs()}
    child = m60.provider("0000:86:00.0")
    inventory = m60.placement.get_inventories(child["uuid"])["inventories"]["VGPU"]
    assert (inventory["total"], inventory["reserved"]) == (16, 0)
    traits = m60.placement.get_provider_traits(child["uuid"])["traits"]
    assert "CUSTOM_MDEV_NVIDIA_35" in traits and "CUSTOM_MDEV_NVIDIA_36" not in traits


@pytest.mark.parametrize("virt", ["fake"], indirect=True)
def test_destroying_the_last_old_type_guest_frees_the_pgpu_for_the_new_type(m60: Cloud) -> None:
    agent = m60.agent()
    instance = m60.allocate({"0000:86:00.0": 1})
    [mdev] = m60.spawn(agent, instance)["result"]["mdevs"]
    m60.conf.write_text(m60.conf.read_text().replace(
        "0000:84:00.0,0000:85:00.0", "0000:84:00.0,0000:85:00.0,0000:86:00.0").replace(
        "[mdev_nvidia-36]\ndevice_addresses = 0000:86:00.0", "").replace(
        "nvidia-35, nvidia-36", "nvidia-35"))
    restarted = m60.agent()  # the guest keeps its nvidia-36 mdev; the pGPU is fenced

    assert m60.run_task(restarted, "destroy", {"instance_uuid": instance})["state"] == "done"
    m60.placement.delete_allocations(instance)
    restarted.report_tree()

    assert mdev["uuid"] not in {m.uuid for m in m60.host.sysfs().mdevs()}
    child = m60.provider("0000:86:00.0")
    inventory = m60.placement.get_inventories(child["uuid"])["inventories"]["VGPU"]
    assert (inventory["total"], inventory["reserved"]) == (16, 0)
