"""A whole cloud in one process for conductor scenarios: the API (Placement + internal) on
the test database through ``httpx.WSGITransport``, simulated hosts each with a real
``Agent`` running in a thread (fake virt driver), the real compute store, and conductors.

    cloud = GpuCloud(tmp_path, engine, app)
    cloud.add_host("gpu1", "m60", gpus=2, conf=NVIDIA_35.format(addresses="0000:84:00.0"))
    flavor = cloud.flavor("vgpu_1", {"resources:VGPU": "1"})
    [server] = cloud.boot(flavor)          # POST /servers's store call + one conductor round
"""

from __future__ import annotations

import dataclasses
import threading
import uuid as uuidlib
from pathlib import Path
from typing import Any

import httpx
from sqlalchemy import Engine

from vgpucloud.agent.provider_tree import child_name
from vgpucloud.agent.service import Agent, build_agent
from vgpucloud.client.internal import InternalClient
from vgpucloud.client.placement import PlacementClient
from vgpucloud.compute.api_ports import ServerRequest
from vgpucloud.compute.models import Flavor, Instance
from vgpucloud.conductor.service import Conductor
from vgpucloud.conductor.settings import ConductorSettings
from vgpucloud.scheduler.settings import SchedulerSettings
from vgpucloud.sim import SimHost
from vgpucloud.storage.compute_store import SqlComputeStore

NVIDIA_CONF = """
[DEFAULT]
host = {host}
state_path = {state}

[libvirt]
connection_uri = test:///default

[devices]
enabled_mdev_types = {type}

[mdev_{type}]
device_addresses = {addresses}
"""

# Two non-NVIDIA parents of 4 VGPU each: a guest may take several vGPUs of one parent.
GVTG_AND_MTTY_CONF = """
[DEFAULT]
host = {host}
state_path = {state}

[libvirt]
connection_uri = test:///default

[devices]
enabled_mdev_types = i915-GVTg_V5_4, mtty-1

[mdev_i915-GVTg_V5_4]
device_addresses = 0000:00:02.0

[mdev_mtty-1]
device_addresses = mtty
max_instances = 4
"""


@dataclasses.dataclass
class SimulatedHost:
    name: str
    sim: SimHost
    agent: Agent
    thread: threading.Thread | None = None

    def pgpu_provider(self, placement: PlacementClient, address: str) -> dict[str, Any]:
        [found] = placement.list_providers(name=child_name(self.name, address))
        return found


class GpuCloud:
    def __init__(self, tmp_path: Path, engine: Engine, app: Any,
                 scheduler: SchedulerSettings | None = None) -> None:
        self.tmp_path = tmp_path
        self.engine = engine
        self.app = app
        transport = httpx.WSGITransport(app=app)
        self.placement = PlacementClient("http://cloud/placement", transport=transport)
        self.internal = InternalClient("http://cloud/internal/v1", transport=transport)
        self.store = SqlComputeStore(engine)
        self.settings = ConductorSettings(scheduler=scheduler or SchedulerSettings(),
                                          spawn_timeout=30.0, poll_interval=0.02,
                                          idle_wait=0.05)
        self.conductor = Conductor(engine, self.store, self.placement, self.settings)
        self.hosts: dict[str, SimulatedHost] = {}
        self.stop = threading.Event()

    def add_host(self, name: str, gpus: list[tuple[str, int]], conf: str) -> SimulatedHost:
        root = self.tmp_path / name
        sim = SimHost.create_mixed(root / "root", gpus)
        conf_path = root / "nova.conf"
        conf_path.write_text(conf.format(host=name, state=root / "state"))
        agent = build_agent([str(conf_path)], sysfs_root=str(sim.root), virt="fake",
                            placement=self.placement, internal=self.internal,
                            wait_seconds=0.05)
        agent.start()
        host = SimulatedHost(name, sim, agent)
        host.thread = threading.Thread(target=agent.run_forever, args=(self.stop, 0.05),
                                       name=f"agent-{name}", daemon=True)
        host.thread.start()
        self.hosts[name] = host
        return host

    def flavor(self, name: str, extra_specs: dict[str, str], *, vcpus: int = 1,
               ram: int = 512, disk: int = 1) -> Flavor:
        flavor = Flavor(id=str(uuidlib.uuid4()), name=name, vcpus=vcpus, ram=ram, disk=disk,
                        extra_specs=extra_specs)
        return self.store.create_flavor(flavor)

    def request(self, flavor: Flavor, count: int = 1, min_count: int = 1) -> list[Instance]:
        """What ``POST /servers`` stores: the instances and one ``build`` conductor task."""
        uuids = tuple(str(uuidlib.uuid4()) for _ in range(count))
        names = tuple(f"vm-{i + 1}" for i in range(count)) if count > 1 else ("vm",)
        request = ServerRequest(
            request_id=f"req-{uuidlib.uuid4()}", reservation_id=f"r-{uuidlib.uuid4().hex[:8]}",
            project_id="demo", user_id="alice", flavor=flavor, image_ref="cirros",
            names=names, uuids=uuids, min_count=min_count)
        return list(self.store.create_instances(request))

    def boot(self, flavor: Flavor, count: int = 1, min_count: int = 1) -> list[Instance]:
        created = self.request(flavor, count, min_count)
        while self.conductor.run_once():
            pass
        return [self.store.get_instance(i.uuid) for i in created]

    def delete(self, instance: Instance) -> Instance:
        self.store.request_delete(instance.uuid, f"req-{uuidlib.uuid4()}", "demo", "alice")
        while self.conductor.run_once():
            pass
        return self.store.get_instance(instance.uuid)

    def vgpu_providers(self, instance_uuid: str) -> dict[str, int]:
        """pGPU provider name → VGPU the instance holds there."""
        allocations = self.placement.get_allocations(instance_uuid)["allocations"]
        names = {p["uuid"]: p["name"] for p in self.placement.list_providers()}
        return {names[rp]: a["resources"]["VGPU"] for rp, a in allocations.items()
                if "VGPU" in a["resources"]}

    def attached_mdevs(self) -> list[tuple[str, str]]:
        """(mdev uuid, owner instance) for every attached mdev in every host's ledger."""
        return [(e.uuid, str(e.owner)) for h in self.hosts.values()
                for e in h.agent.ledger.entries() if e.state == "attached"]

    def close(self) -> None:
        self.stop.set()
        for host in self.hosts.values():
            if host.thread:
                host.thread.join(timeout=10)
            host.agent.close()
        self.placement.close()
        self.internal.close()
