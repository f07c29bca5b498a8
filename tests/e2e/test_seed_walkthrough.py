"""The Nova vGPU guide's commands, verbatim, with the real ``openstack`` CLI against
``vgpucloud up`` (seeds/nova-vgpu-doc.rst). Outputs are the CLI's own tables, parsed here.

The cloud: one simulated host with four Tesla M60 pGPUs and ``enabled_mdev_types =
nvidia-35`` (what ``vgpucloud up --hosts 1`` generates).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import require_service
from tests.e2e.upcloud import UpProcess

IMAGE = "cirros-0.3.5-x86_64-uec"


def table(output: str) -> list[dict[str, str]]:
    """Rows of an ``openstack`` table, e.g.::

        +--------------------------------------+-----------+--------+
        | ID                                   | Name      | Status |
        +--------------------------------------+-----------+--------+
        | f8f2dd54-a462-49ae-97f9-0c449d973d07 | test-vgpu | ACTIVE |
        +--------------------------------------+-----------+--------+
    """
    lines = [line for line in output.splitlines() if line.startswith("|")]
    if not lines:
        return []
    split = [[cell.strip() for cell in line.strip().strip("|").split("|")] for line in lines]
    return [dict(zip(split[0], row, strict=True)) for row in split[1:]]


def fields(output: str) -> dict[str, str]:
    """A ``Field | Value`` table (``server show``, ``server create``) as a dict."""
    return {row["Field"]: row["Value"] for row in table(output)}


class Cli:
    def __init__(self, clouds_yaml: Path) -> None:
        executable = shutil.which("openstack")
        if executable is None:
            require_service("openstack CLI", "pip install python-openstackclient osc-placement")
        self.executable = str(executable)
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        self.env.update(OS_CLIENT_CONFIG_FILE=str(clouds_yaml), OS_CLOUD="vgpucloud")

    def __call__(self, command: str) -> str:
        """Run ``openstack <command>`` exactly as written in the guide (shell quoting)."""
        result = subprocess.run(f"{self.executable} {command}", shell=True, env=self.env,
                                capture_output=True, text=True, timeout=120, check=False)
        assert result.returncode == 0, f"openstack {command}\n{result.stderr}"
        return result.stdout


@pytest.fixture(scope="module")
def cloud(tmp_path_factory: pytest.TempPathFactory) -> Iterator[UpProcess]:
    up = UpProcess(tmp_path_factory.mktemp("seed") / "state", "--hosts", "1")
    yield up
    up.interrupt()


@pytest.fixture(scope="module")
def openstack(cloud: UpProcess) -> Cli:
    return Cli(cloud.clouds_yaml)


def test_the_guide_end_to_end(cloud: UpProcess, openstack: Cli) -> None:
    # Configure a flavor (Controller)
    openstack("flavor create --vcpus 1 --ram 512 --disk 1 vgpu_1")
    openstack('flavor set vgpu_1 --property "resources:VGPU=1"')

    # Create instances with virtual GPU devices
    created = fields(openstack(f"server create --flavor vgpu_1 --image {IMAGE} --wait test-vgpu"))
    assert created["status"] == "ACTIVE", created

    # Checking allocations and inventories for virtual GPUs
    providers = {row["name"]: row for row in table(openstack("resource provider list"))}
    root = providers["compute-1"]
    pgpus = {f"compute-1_pci_0000_{bus}_00_0" for bus in ("84", "85", "86", "87")}
    assert pgpus <= set(providers)
    inventory = {row["resource_class"]: row for row in table(
        openstack(f"resource provider inventory list {root['uuid']}"))}
    assert inventory["VCPU"]["allocation_ratio"] == "16.0"
    assert inventory["VCPU"]["total"] == "48"
    assert inventory["MEMORY_MB"]["reserved"] == "512"
    assert inventory["MEMORY_MB"]["allocation_ratio"] == "1.5"
    child = providers["compute-1_pci_0000_85_00_0"]["uuid"]
    [vgpu] = table(openstack(f"resource provider inventory list {child}"))
    assert (vgpu["resource_class"], vgpu["total"], vgpu["max_unit"]) == ("VGPU", "16", "16")
    allocations = table(openstack(f"resource provider allocation show {created['id']}"))
    by_provider = {row["resource_provider"]: row["resources"] for row in allocations}
    assert set(by_provider) - {root["uuid"]} <= {providers[p]["uuid"] for p in pgpus}
    assert "VCPU" in by_provider[root["uuid"]] and "VGPU" not in by_provider[root["uuid"]]
    assert any("'VGPU': 1" in r or '"VGPU": 1' in r for r in by_provider.values())

    # (Optional) Provide custom traits for multiple GPU types
    openstack("--os-placement-api-version 1.6 trait create CUSTOM_NVIDIA_11")
    openstack(f"--os-placement-api-version 1.6 resource provider trait set "
              f"--trait CUSTOM_NVIDIA_11 {child}")
    openstack("flavor set --property trait:CUSTOM_NVIDIA_11=required vgpu_1")
    decorated = fields(openstack(
        f"server create --flavor vgpu_1 --image {IMAGE} --wait test-vgpu-11"))
    assert decorated["status"] == "ACTIVE"
    placed = {row["resource_provider"] for row in table(
        openstack(f"resource provider allocation show {decorated['id']}"))}
    assert placed == {root["uuid"], child}

    servers = {row["Name"]: row for row in table(openstack("server list"))}
    assert {servers["test-vgpu"]["Status"], servers["test-vgpu-11"]["Status"]} == {"ACTIVE"}
    assert servers["test-vgpu"]["Image"] == IMAGE and servers["test-vgpu"]["Flavor"] == "vgpu_1"

    openstack("server delete test-vgpu test-vgpu-11")
    deadline = time.monotonic() + 60
    while table(openstack("server list")) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert table(openstack("server list")) == []
    assert table(openstack(f"resource provider allocation show {created['id']}")) == []
    usage = {row["resource_class"]: row["usage"] for row in table(
        openstack(f"resource provider usage show {child}"))}
    assert usage == {"VGPU": "0"}
