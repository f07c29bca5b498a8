"""A T4 host with a custom resource class, and ``vgpucloud agent --once`` over real HTTP."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import waitress
from waitress.server import BaseWSGIServer

from tests.functional.agent.cloud import Cloud
from vgpucloud.cli.main import main
from vgpucloud.client.internal import InternalClient
from vgpucloud.client.placement import PlacementClient
from vgpucloud.sim import SimHost

pytestmark = [pytest.mark.parametrize("database_url", ["sqlite"], indirect=True),
              pytest.mark.parametrize("virt", ["fake"], indirect=True)]

T4_CUSTOM_CLASS = """
[DEFAULT]
host = t4-1
state_path = {state}

[devices]
enabled_mdev_types = nvidia-223

[mdev_nvidia-223]
mdev_class = CUSTOM_T4_2B
max_instances = 4
"""


@pytest.fixture
def t4(tmp_path: Path, virt: str, placement: PlacementClient,
       internal: InternalClient) -> Iterator[Cloud]:
    cloud = Cloud(tmp_path, SimHost.create(tmp_path / "root", "t4", gpus=2), T4_CUSTOM_CLASS,
                  virt, placement, internal, name="t4-1")
    yield cloud
    for agent in cloud.agents:
        agent.close()


def _t4_provider(cloud: Cloud, address: str) -> dict[str, Any]:
    return cloud.provider(address)


def test_t4_default_type_with_custom_class_and_cap(t4: Cloud) -> None:
    agent = t4.agent()
    child = _t4_provider(t4, "0000:18:00.0")
    inventory = t4.placement.get_inventories(child["uuid"])["inventories"]
    assert list(inventory) == ["CUSTOM_T4_2B"] and inventory["CUSTOM_T4_2B"]["total"] == 4
    instance = "5c1f9c1e-7a4e-4c55-9a53-1f0e5b7f6a01"
    t4.placement.put_allocations(instance, {
        "allocations": {child["uuid"]: {"resources": {"CUSTOM_T4_2B": 1}}},
        "project_id": "demo", "user_id": "alice", "consumer_generation": None,
        "consumer_type": "INSTANCE"})
    task = t4.run_task(agent, "spawn", {"instance_uuid": instance})
    assert task["state"] == "done", task["fault"]
    [mdev] = task["result"]["mdevs"]
    assert (mdev["parent"], mdev["type"]) == ("0000:18:00.0", "nvidia-223")


def test_two_vgpus_on_one_nvidia_gpu_are_refused(t4: Cloud) -> None:
    agent = t4.agent()
    child = _t4_provider(t4, "0000:19:00.0")
    instance = "5c1f9c1e-7a4e-4c55-9a53-1f0e5b7f6a02"
    t4.placement.put_allocations(instance, {
        "allocations": {child["uuid"]: {"resources": {"CUSTOM_T4_2B": 2}}},
        "project_id": "demo", "user_id": "alice", "consumer_generation": None,
        "consumer_type": "INSTANCE"})
    task = t4.run_task(agent, "spawn", {"instance_uuid": instance})
    assert task["state"] == "failed"
    assert "0000:19:00.0" in task["fault"] and "group_policy=isolate" in task["fault"]
    assert t4.host.sysfs().mdevs() == ()


@pytest.fixture
def served(api_app: Any) -> Iterator[str]:
    server = waitress.create_server(api_app, host="127.0.0.1", port=0, threads=4)
    assert isinstance(server, BaseWSGIServer)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.effective_port}"
    server.close()
    thread.join(timeout=5)


def test_cli_agent_once_runs_a_queued_spawn(t4: Cloud, served: str,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    args = ["agent", "--config-file", str(t4.conf), "--api", served, "--sysfs-root",
            str(t4.host.root), "--virt", "fake", "--once"]
    assert main(args) == 0  # first run: reports the tree and registers
    child = _t4_provider(t4, "0000:18:00.0")
    instance = "5c1f9c1e-7a4e-4c55-9a53-1f0e5b7f6a03"
    t4.placement.put_allocations(instance, {
        "allocations": {child["uuid"]: {"resources": {"CUSTOM_T4_2B": 1}}},
        "project_id": "demo", "user_id": "alice", "consumer_generation": None,
        "consumer_type": "INSTANCE"})
    task = t4.internal.enqueue_task("t4-1", "spawn", {"instance_uuid": instance})
    assert main(args) == 0
    assert f"task {task['uuid']} (spawn): done" in capsys.readouterr().out
    assert len(t4.host.sysfs().mdevs_on("0000:18:00.0")) == 1
