"""Reschedules, the pGPU policy, and many conductors racing for the same pGPUs."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

import httpx

from tests.functional.conductor.cloud import NVIDIA_CONF, GpuCloud
from vgpucloud.client.placement import PlacementClient
from vgpucloud.compute.models import VmState
from vgpucloud.conductor.service import Conductor
from vgpucloud.scheduler.settings import PACK, SPREAD, SchedulerSettings


def _conf(type_id: str, addresses: str) -> str:
    return NVIDIA_CONF.replace("{type}", type_id).replace("{addresses}", addresses)


def test_failed_spawn_reschedules_to_the_other_host(cloud: GpuCloud) -> None:
    for name in ("gpu1", "gpu2"):
        cloud.add_host(name, [("m60", 1)], _conf("nvidia-35", "0000:84:00.0"))
    flavor = cloud.flavor("vgpu_1", {"resources:VGPU": "1"})
    [first] = cloud.boot(flavor)
    assert first.host is not None
    # Someone outside our control fills the first host's pGPU behind Placement's back:
    # pack still prefers it (1/16 used), its spawn fails, the build must move on.
    full = cloud.hosts[first.host].sim.sysfs()
    for _ in range(15):
        full.create_mdev("0000:84:00.0", "nvidia-35")
    [second] = cloud.boot(flavor)
    assert second.vm_state is VmState.ACTIVE, second.fault
    assert second.host != first.host
    assert cloud.vgpu_providers(second.uuid) == {f"{second.host}_pci_0000_84_00_0": 1}


def _two_by_two(make_cloud: Callable[..., GpuCloud], policy: str) -> list[str]:
    cloud = make_cloud(SchedulerSettings(vgpu_policy=policy))
    cloud.add_host("gpu1", [("m60", 2)], _conf("nvidia-35", "0000:84:00.0,0000:85:00.0"))
    flavor = cloud.flavor("vgpu_1", {"resources:VGPU": "1"})
    placed = []
    for _ in range(2):
        [server] = cloud.boot(flavor)
        assert server.vm_state is VmState.ACTIVE
        placed.extend(cloud.vgpu_providers(server.uuid))
    return placed


def test_pack_fills_one_pgpu_first(make_cloud: Callable[..., GpuCloud]) -> None:
    first, second = _two_by_two(make_cloud, PACK)
    assert first == second


def test_spread_uses_the_emptiest_pgpu(make_cloud: Callable[..., GpuCloud]) -> None:
    first, second = _two_by_two(make_cloud, SPREAD)
    assert first != second


def test_100_parallel_boots_on_32_vgpu_slots(cloud: GpuCloud) -> None:
    for name in ("gpu1", "gpu2"):
        cloud.add_host(name, [("m60", 4)],
                       _conf("nvidia-40", "0000:84:00.0,0000:85:00.0,0000:86:00.0,0000:87:00.0"))
    flavor = cloud.flavor("vgpu_1", {"resources:VGPU": "1"})
    servers = [s for _ in range(100) for s in cloud.request(flavor)]
    transport = httpx.WSGITransport(app=cloud.app)
    clients = [PlacementClient("http://cloud/placement", transport=transport) for _ in range(4)]
    conductors = [Conductor(cloud.engine, cloud.store, c, cloud.settings) for c in clients]
    threads = [threading.Thread(target=c.run_forever, args=(cloud.stop,)) for c in conductors]
    for thread in threads:
        thread.start()
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            states = [cloud.store.get_instance(s.uuid) for s in servers]
            if all(s.vm_state is not VmState.BUILDING for s in states):
                break
            time.sleep(0.2)
    finally:
        cloud.stop.set()
        for thread in threads:
            thread.join(timeout=30)
        for client in clients:
            client.close()
    active = [s for s in states if s.vm_state is VmState.ACTIVE]
    errored = [s for s in states if s.vm_state is VmState.ERROR]
    assert (len(active), len(errored)) == (32, 68)
    assert all(s.fault and s.fault.message.startswith("No valid host") for s in errored)
    usage = sum(cloud.placement.get_provider_usages(p["uuid"])["usages"].get("VGPU", 0)
                for p in cloud.placement.list_providers())
    assert usage == 32
    mdevs = cloud.attached_mdevs()
    assert len(mdevs) == 32 and len({m for m, _ in mdevs}) == 32
    assert {owner for _, owner in mdevs} == {s.uuid for s in active}
