"""``vgpucloud up`` as a new user runs it: a real process, spoken to over HTTP."""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import require_service
from tests.e2e.upcloud import ADMIN, UpProcess


@pytest.fixture
def up(tmp_path: Path) -> Iterator[UpProcess]:
    cloud = UpProcess(tmp_path / "state", "--hosts", "2")
    yield cloud
    if cloud.process.poll() is None:
        cloud.process.kill()
        cloud.process.wait()


def _providers(up: UpProcess) -> dict[str, dict]:
    return {p["name"]: p for p in up.placement("/resource_providers")["resource_providers"]}


def test_two_m60_hosts_come_up_as_nested_providers(up: UpProcess) -> None:
    providers = _providers(up)
    assert set(providers) == {
        f"compute-{h}{suffix}"
        for h in (1, 2)
        for suffix in (
            "",
            "_pci_0000_84_00_0",
            "_pci_0000_85_00_0",
            "_pci_0000_86_00_0",
            "_pci_0000_87_00_0",
        )
    }
    root = providers["compute-1"]
    child = providers["compute-1_pci_0000_84_00_0"]
    assert child["parent_provider_uuid"] == root["uuid"]
    root_inv = up.placement(f"/resource_providers/{root['uuid']}/inventories")["inventories"]
    assert root_inv["VCPU"]["allocation_ratio"] == 16.0
    assert root_inv["MEMORY_MB"]["reserved"] == 512
    child_inv = up.placement(f"/resource_providers/{child['uuid']}/inventories")["inventories"]
    assert child_inv["VGPU"]["total"] == 16 and child_inv["VGPU"]["max_unit"] == 16
    traits = up.placement(f"/resource_providers/{child['uuid']}/traits")["traits"]
    assert "CUSTOM_MDEV_NVIDIA_35" in traits


def test_operator_trait_survives_reports_and_restart(up: UpProcess, tmp_path: Path) -> None:
    child = _providers(up)["compute-2_pci_0000_85_00_0"]
    created = httpx.put(f"{up.url}/placement/traits/CUSTOM_NVIDIA_11", headers=ADMIN, timeout=10)
    assert created.status_code == 201
    current = up.placement(f"/resource_providers/{child['uuid']}/traits")
    up.put(
        f"/resource_providers/{child['uuid']}/traits",
        {
            "resource_provider_generation": current["resource_provider_generation"],
            "traits": [*current["traits"], "CUSTOM_NVIDIA_11"],
        },
    )
    time.sleep(1.5)  # several report rounds at --report-interval 0.3
    traits = up.placement(f"/resource_providers/{child['uuid']}/traits")["traits"]
    assert {"CUSTOM_NVIDIA_11", "CUSTOM_MDEV_NVIDIA_35"} <= set(traits)

    code, output = up.interrupt()
    assert code == 0, output
    assert "stopped; state kept in" in output

    again = UpProcess(tmp_path / "state", "--hosts", "2")
    try:
        same = _providers(again)["compute-2_pci_0000_85_00_0"]
        assert same["uuid"] == child["uuid"]  # providers are stable across restarts
        traits = again.placement(f"/resource_providers/{same['uuid']}/traits")["traits"]
        assert "CUSTOM_NVIDIA_11" in traits
    finally:
        assert again.interrupt()[0] == 0


def test_port_in_use_is_a_clear_error(up: UpProcess, tmp_path: Path) -> None:
    port = up.url.rsplit(":", 1)[1]
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "vgpucloud.cli.main",
            "up",
            "--state-dir",
            str(tmp_path / "other"),
            "--port",
            port,
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert f"--port {port}: cannot listen on 127.0.0.1:{port}" in result.stderr
    assert "--port 0" in result.stderr


def test_the_commands_the_banner_prints_work(tmp_path: Path) -> None:
    """A new user copies the printed export lines and commands into a shell."""
    if shutil.which("openstack") is None:
        require_service("openstack CLI", "pip install python-openstackclient osc-placement")
    cloud = UpProcess(tmp_path / "state", "--hosts", "1")
    try:
        cloud.read_banner()
        exports = [line.strip() for line in cloud.output if line.strip().startswith("export ")]
        commands = [line.strip() for line in cloud.output
                    if line.strip().startswith("openstack ")]
        assert len(exports) == 2 and len(commands) == 3, "".join(cloud.output)
        script = "\n".join(["set -e", *exports, *commands])
        result = subprocess.run(["bash", "-c", script], capture_output=True, text=True,
                                timeout=180, check=False)
        assert result.returncode == 0, result.stderr
        assert "VGPU" in result.stdout and "ACTIVE" in result.stdout
    finally:
        assert cloud.interrupt()[0] == 0
