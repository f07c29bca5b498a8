"""A boot on a host with NVIDIA's kernel variant driver, through the openstack CLI."""

from __future__ import annotations

import os
import shutil
import subprocess
import xml.etree.ElementTree as ET
from pathlib import Path

from tests.conftest import require_service
from tests.e2e.upcloud import UpProcess


def openstack(cloud: UpProcess, *args: str) -> str:
    env = {**os.environ, "OS_CLIENT_CONFIG_FILE": str(cloud.clouds_yaml), "OS_CLOUD": "vgpucloud"}
    result = subprocess.run(["openstack", *args], capture_output=True, text=True, env=env,
                            timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    return result.stdout.strip()


def typed_vfs(host: Path) -> dict[str, str]:
    """VF address -> ``current_vgpu_type`` of every VF whose type is set."""
    found = {}
    for path in (host / "sysfs" / "sys" / "bus" / "pci" / "devices").glob(
            "*/nvidia/current_vgpu_type"):
        value = path.read_text().strip()
        if value != "0":
            found[path.parent.parent.name] = value
    return found


def test_a40_variant_boot_gets_a_typed_vf_as_pci_hostdev_and_delete_clears_it(
    tmp_path: Path,
) -> None:
    if shutil.which("openstack") is None:
        require_service("openstack CLI", "pip install python-openstackclient osc-placement")
    cloud = UpProcess(tmp_path / "state", "--profile", "a40-variant", "--hosts", "1")
    host = tmp_path / "state" / "hosts" / "compute-1"
    try:
        openstack(cloud, "flavor", "create", "--vcpus", "1", "--ram", "512", "--disk", "1",
                  "--property", "resources:VGPU=1", "vgpu_1")
        status = openstack(cloud, "server", "create", "--flavor", "vgpu_1", "--image",
                           "cirros-0.3.5-x86_64-uec", "--wait", "-f", "value", "-c", "status",
                           "s1")
        assert status == "ACTIVE"
        [(vf, vgpu_type)] = typed_vfs(host).items()
        assert vgpu_type == "557"  # A40-1Q, the profile's first type
        domain, bus, slot_function = vf.split(":")
        slot, function = slot_function.split(".")
        [definition] = (host / "state" / "guests" / "qemu").glob("*.xml")
        [hostdev] = ET.parse(definition).getroot().findall("devices/hostdev")
        assert (hostdev.get("type"), hostdev.get("managed")) == ("pci", "yes")
        source = hostdev.find("source/address")
        assert source is not None and source.attrib == {
            "domain": f"0x{domain}", "bus": f"0x{bus}", "slot": f"0x{slot}",
            "function": f"0x{function}"}

        openstack(cloud, "server", "delete", "--wait", "s1")
        assert typed_vfs(host) == {}
    finally:
        assert cloud.interrupt()[0] == 0
