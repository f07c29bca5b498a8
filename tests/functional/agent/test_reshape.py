"""Pre-Stein hosts: VGPU inventory and allocations on the root provider are reshaped onto
the pGPU children in one POST /reshaper, or not at all."""

from __future__ import annotations

import uuid as uuidlib

import pytest

from tests.functional.agent.cloud import HOST, Cloud
from vgpucloud.agent.ledger import Ledger, materialize
from vgpucloud.agent.reshape import ReshapeError
from vgpucloud.agent.virt import FakeDriver, GuestMdev, GuestSpec

pytestmark = [pytest.mark.parametrize("database_url", ["sqlite"], indirect=True),
              pytest.mark.parametrize("virt", ["fake"], indirect=True)]


def _pre_stein_root(m60: Cloud) -> str:
    root = m60.placement.create_provider(HOST, uuid=str(uuidlib.uuid4()))
    m60.placement.put_inventories(root["uuid"], 0, {
        "VCPU": {"total": 48, "allocation_ratio": 16.0},
        "MEMORY_MB": {"total": 65442},
        "VGPU": {"total": 48},
    })
    return str(root["uuid"])


def _allocate_on_root(m60: Cloud, root: str, vgpus: int = 1) -> str:
    instance = str(uuidlib.uuid4())
    m60.placement.put_allocations(instance, {
        "allocations": {root: {"resources": {"VCPU": 2, "VGPU": vgpus}}},
        "project_id": "demo", "user_id": "alice", "consumer_generation": None,
        "consumer_type": "INSTANCE"})
    return instance


def _by_name(m60: Cloud, allocations: dict[str, dict[str, object]]) -> dict[str, object]:
    names = {p["uuid"]: p["name"] for p in m60.placement.list_providers()}
    return {names[rp]: a["resources"] for rp, a in allocations.items()}


def test_reshape_moves_root_vgpu_and_allocations_to_pgpu_children(m60: Cloud) -> None:
    root = _pre_stein_root(m60)
    in_ledger = _allocate_on_root(m60, root)
    in_domain = _allocate_on_root(m60, root)
    ledger = Ledger.in_state_dir(m60.state)
    [row] = ledger.reserve(in_ledger, "0000:85:00.0", "nvidia-35")
    materialize(ledger, m60.host.sysfs(), row)
    ledger.attach(row.uuid, in_ledger)
    ledger.close()
    # An mdev made before the ledger existed, known only from the guest's domain XML.
    old = m60.host.sysfs().create_mdev("0000:84:00.0", "nvidia-35")
    FakeDriver(m60.state / "guests").define(GuestSpec(
        uuid=in_domain, name="instance-00000001", vcpus=2, memory_mb=2048,
        disk_path="/var/lib/nova/instances/disk", mdevs=(GuestMdev(old.uuid, "vfio-pci"),)))

    agent = m60.agent()

    assert agent.reshaped is not None and agent.reshaped.moved_classes == ("VGPU",)
    assert "VGPU" not in m60.placement.get_inventories(root)["inventories"]
    moved = _by_name(m60, m60.placement.get_allocations(in_ledger)["allocations"])
    assert moved == {HOST: {"VCPU": 2}, f"{HOST}_pci_0000_85_00_0": {"VGPU": 1}}
    moved = _by_name(m60, m60.placement.get_allocations(in_domain)["allocations"])
    assert moved == {HOST: {"VCPU": 2}, f"{HOST}_pci_0000_84_00_0": {"VGPU": 1}}
    assert agent.reporter.root_uuid == root
    restarted = m60.agent()
    assert restarted.reshaped is None  # once is enough


def test_reshape_with_an_unplaceable_vgpu_allocation_changes_nothing(m60: Cloud) -> None:
    root = _pre_stein_root(m60)
    orphan = _allocate_on_root(m60, root, vgpus=2)
    before = m60.placement.get_allocations(orphan)["allocations"]

    with pytest.raises(ReshapeError) as caught:
        m60.agent()

    assert orphan in caught.value.message and "VGPU=2" in caught.value.message
    assert "nothing was changed" in caught.value.message
    assert m60.placement.get_inventories(root)["inventories"]["VGPU"]["total"] == 48
    assert m60.placement.get_allocations(orphan)["allocations"] == before
    assert [p["name"] for p in m60.placement.list_providers(in_tree=root)] == [HOST]
