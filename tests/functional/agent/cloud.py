"""Helpers for agent scenarios: a simulated host, its nova.conf, an agent on the in-process
API, and Placement allocations made the way the scheduler would make them."""

from __future__ import annotations

import uuid as uuidlib
from pathlib import Path
from typing import Any

from vgpucloud.agent.provider_tree import child_name
from vgpucloud.agent.service import Agent, build_agent
from vgpucloud.client.internal import InternalClient
from vgpucloud.client.placement import PlacementClient
from vgpucloud.sim import SimHost

HOST = "virtlab606"
M60_TWO_TYPES = """
[DEFAULT]
host = virtlab606
state_path = {state}

[libvirt]
connection_uri = test:///default

[devices]
enabled_mdev_types = nvidia-35, nvidia-36

[mdev_nvidia-35]
device_addresses = 0000:84:00.0,0000:85:00.0

[mdev_nvidia-36]
device_addresses = 0000:86:00.0
"""


class Cloud:
    """One simulated host (``root``) with its nova.conf, and agents built on demand."""

    def __init__(self, tmp_path: Path, host: SimHost, conf_text: str, virt: str,
                 placement: PlacementClient, internal: InternalClient,
                 name: str = HOST) -> None:
        self.name = name
        self.tmp_path = tmp_path
        self.host = host
        self.state = tmp_path / "state"
        self.conf = tmp_path / "nova.conf"
        self.conf.write_text(conf_text.format(state=self.state))
        self.virt = virt
        self.placement = placement
        self.internal = internal
        self.agents: list[Agent] = []

    def agent(self, start: bool = True) -> Agent:
        """A new agent process on this host (a restart, when one ran before)."""
        for old in self.agents:
            old.close()
        agent = build_agent([str(self.conf)], sysfs_root=str(self.host.root), virt=self.virt,
                            placement=self.placement, internal=self.internal)
        self.agents = [agent]
        if start:
            agent.start()
        return agent

    def provider(self, address: str | None = None) -> dict[str, Any]:
        name = self.name if address is None else child_name(self.name, address)
        [found] = self.placement.list_providers(name=name)
        return found

    def allocate(self, vgpus: dict[str, int], *, rc: str = "VGPU") -> str:
        """An instance holding ``rc`` on the pGPU providers of the given addresses, plus
        VCPU and MEMORY_MB on the root, as a boot's claim does."""
        instance = str(uuidlib.uuid4())
        allocations = {self.provider()["uuid"]: {"resources": {"VCPU": 2, "MEMORY_MB": 2048}}}
        for address, count in vgpus.items():
            allocations[self.provider(address)["uuid"]] = {"resources": {rc: count}}
        self.placement.put_allocations(instance, {
            "allocations": allocations, "project_id": "demo", "user_id": "alice",
            "consumer_generation": None, "consumer_type": "INSTANCE"})
        return instance

    def spawn(self, agent: Agent, instance: str) -> dict[str, Any]:
        """Enqueue a spawn task, let the agent run a round, return the finished task."""
        return self.run_task(agent, "spawn", {"instance_uuid": instance, "vcpus": 2,
                                              "memory_mb": 2048})

    def run_task(self, agent: Agent, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
        task = self.internal.enqueue_task(self.name, kind, payload)
        agent.run_once()
        return self.internal.get_task(task["uuid"])
