"""Boots through the whole loop: compute store → conductor → Placement → agent → ledger."""

from __future__ import annotations

from tests.functional.conductor.cloud import GVTG_AND_MTTY_CONF, NVIDIA_CONF, GpuCloud
from vgpucloud.compute.models import VmState

M60_84 = NVIDIA_CONF.replace("{type}", "nvidia-35").replace("{addresses}", "0000:84:00.0")
M60_84_85 = NVIDIA_CONF.replace("{type}", "nvidia-35").replace(
    "{addresses}", "0000:84:00.0,0000:85:00.0")


def test_vgpu_flavor_boots_active_with_mdev_on_pgpu(cloud: GpuCloud) -> None:
    cloud.add_host("gpu1", [("m60", 1)], M60_84)
    flavor = cloud.flavor("vgpu_1", {"resources:VGPU": "1"})
    [server] = cloud.boot(flavor)
    assert server.vm_state is VmState.ACTIVE, server.fault
    assert server.host == "gpu1" and server.task_state is None
    assert cloud.vgpu_providers(server.uuid) == {"gpu1_pci_0000_84_00_0": 1}
    assert [owner for _, owner in cloud.attached_mdevs()] == [server.uuid]
    events = cloud.store.list_actions(server.uuid)[0]
    detail = cloud.store.get_action(server.uuid, events.request_id)
    assert {(e.event, e.result) for e in detail.events} == {
        ("conductor_schedule_and_build_instances", "Success"),
        ("compute__do_build_and_run_instance", "Success")}


def test_bug_1874664_two_pgpus_of_4_fit_two_4_vgpu_servers(cloud: GpuCloud) -> None:
    cloud.add_host("gpu1", [("gvtg", 1), ("mtty", 1)], GVTG_AND_MTTY_CONF)
    flavor = cloud.flavor("vgpu_4", {"resources:VGPU": "4"})
    servers = cloud.boot(flavor, count=2)
    assert [s.vm_state for s in servers] == [VmState.ACTIVE, VmState.ACTIVE], \
        [s.fault for s in servers]
    placed = [cloud.vgpu_providers(s.uuid) for s in servers]
    assert sorted(name for p in placed for name in p) == ["gpu1_pci_0000_00_02_0",
                                                         "gpu1_pci_mtty"]
    assert all(list(p.values()) == [4] for p in placed)
    assert len(cloud.attached_mdevs()) == 8


def test_required_trait_lands_on_the_pgpu_carrying_it(cloud: GpuCloud) -> None:
    host = cloud.add_host("gpu1", [("m60", 2)], M60_84_85)
    marked = host.pgpu_provider(cloud.placement, "0000:85:00.0")
    cloud.placement.ensure_trait("CUSTOM_NVIDIA_11")
    traits = cloud.placement.get_provider_traits(marked["uuid"])
    cloud.placement.put_provider_traits(marked["uuid"], traits["resource_provider_generation"],
                                        [*traits["traits"], "CUSTOM_NVIDIA_11"])
    flavor = cloud.flavor("vgpu_11", {"resources:VGPU": "1",
                                      "trait:CUSTOM_NVIDIA_11": "required"})
    servers = cloud.boot(flavor, count=3)
    assert all(s.vm_state is VmState.ACTIVE for s in servers)
    assert all(cloud.vgpu_providers(s.uuid) == {"gpu1_pci_0000_85_00_0": 1} for s in servers)


def test_no_fit_goes_error_with_explaining_fault_and_no_allocations(cloud: GpuCloud) -> None:
    cloud.add_host("gpu1", [("gvtg", 1), ("mtty", 1)],
                   GVTG_AND_MTTY_CONF.replace("max_instances = 4", "max_instances = 2"))
    flavor = cloud.flavor("vgpu_5", {"resources:VGPU": "5"})
    [server] = cloud.boot(flavor)
    assert server.vm_state is VmState.ERROR and server.fault is not None
    assert server.fault.message.startswith("No valid host was found.")
    assert "no provider with 5 free VGPU; best: gpu1_pci_0000_00_02_0 has 4" \
        in server.fault.message
    assert cloud.placement.get_allocations(server.uuid)["allocations"] == {}
    assert cloud.attached_mdevs() == []


def test_no_fit_names_the_best_pgpu_of_the_trait(cloud: GpuCloud) -> None:
    host = cloud.add_host("gpu1", [("gvtg", 1), ("mtty", 1)], GVTG_AND_MTTY_CONF)
    mtty = host.pgpu_provider(cloud.placement, "mtty")
    cloud.placement.ensure_trait("CUSTOM_NVIDIA_11")
    traits = cloud.placement.get_provider_traits(mtty["uuid"])
    cloud.placement.put_provider_traits(mtty["uuid"], traits["resource_provider_generation"],
                                        [*traits["traits"], "CUSTOM_NVIDIA_11"])
    two = cloud.flavor("vgpu_2", {"resources:VGPU": "2", "trait:CUSTOM_NVIDIA_11": "required"})
    [first] = cloud.boot(two)
    assert first.vm_state is VmState.ACTIVE
    four = cloud.flavor("vgpu_4", {"resources:VGPU": "4", "trait:CUSTOM_NVIDIA_11": "required"})
    [server] = cloud.boot(four)
    assert server.vm_state is VmState.ERROR and server.fault is not None
    assert ("no provider with 4 free VGPU of CUSTOM_NVIDIA_11; best: gpu1_pci_mtty has 2"
            in server.fault.message)


def test_multi_create_below_min_count_errors_all_and_releases(cloud: GpuCloud) -> None:
    cloud.add_host("gpu1", [("gvtg", 1), ("mtty", 1)], GVTG_AND_MTTY_CONF)
    flavor = cloud.flavor("vgpu_4", {"resources:VGPU": "4"})
    servers = cloud.boot(flavor, count=3, min_count=3)
    assert [s.vm_state for s in servers] == [VmState.ERROR] * 3
    assert all(cloud.placement.get_allocations(s.uuid)["allocations"] == {} for s in servers)
    assert "min_count is 3" in (servers[0].fault.message if servers[0].fault else "")
    assert cloud.attached_mdevs() == []


def test_delete_frees_allocations_and_mdevs(cloud: GpuCloud) -> None:
    host = cloud.add_host("gpu1", [("m60", 1)], M60_84)
    flavor = cloud.flavor("vgpu_1", {"resources:VGPU": "1"})
    [server] = cloud.boot(flavor)
    assert server.vm_state is VmState.ACTIVE
    gone = cloud.delete(server)
    assert gone.vm_state is VmState.DELETED and gone.terminated_at is not None
    assert cloud.placement.get_allocations(server.uuid)["allocations"] == {}
    assert cloud.attached_mdevs() == []
    assert [e.state for e in host.agent.ledger.entries()] == ["free"]
