"""Our domain XML against libvirt's own RelaxNG schema (``virt-xml-validate FILE domain``)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_service
from vgpucloud.agent.virt.domain import GuestMdev, GuestSpec, build_domain_xml

GUEST = "6c1a5b3e-6b1f-4f0b-9a51-2f8d5f7e0c11"
MDEVS = ("c2177883-f1bb-47f0-914d-32a22e3a8804", "4b20d080-1b54-4048-85b3-a6a62d165c01")


def guest(device_api: str = "vfio-pci", count: int = 1, **overrides: object) -> GuestSpec:
    fields: dict[str, object] = {
        "uuid": GUEST, "name": "instance-0000000a", "vcpus": 2, "memory_mb": 2048,
        "disk_path": f"/var/lib/vgpucloud/instances/{GUEST}/disk", "image": "cirros-0.6.2",
        "mdevs": tuple(GuestMdev(m, device_api) for m in MDEVS[:count]),
    }
    fields.update(overrides)
    return GuestSpec(**fields)  # type: ignore[arg-type]


def validate(xml: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    # virt-xml-validate is a shell script around xmllint; without it, it exits 127.
    if shutil.which("virt-xml-validate") is None or shutil.which("xmllint") is None:
        require_service("virt-xml-validate",
                        "apt-get install libvirt-clients libxml2-utils to check the schema")
    path = tmp_path / "domain.xml"
    path.write_text(xml)
    return subprocess.run(["virt-xml-validate", str(path), "domain"],
                          capture_output=True, text=True, check=False)


@pytest.mark.parametrize(
    "spec",
    [
        guest(),
        guest(count=2),
        guest(count=0),
        guest("vfio-ccw"),
        guest("vfio-ap"),
        guest(machine_type="pc", domain_type="qemu", disk_format="raw"),
        guest(count=0, pci_devices=("0000:41:00.4",)),
        guest(pci_devices=("0000:41:00.4", "0000:c1:1f.7")),
    ],
    ids=["one-vgpu", "two-vgpus", "no-vgpu", "vfio-ccw", "vfio-ap", "pc-tcg-raw",
         "variant-vf", "mdev-and-two-vfs"],
)
def test_generated_domain_validates_with_libvirt_schema(spec: GuestSpec, tmp_path: Path) -> None:
    result = validate(build_domain_xml(spec), tmp_path)
    assert result.returncode == 0, result.stderr + result.stdout


def test_schema_check_catches_a_broken_hostdev(tmp_path: Path) -> None:
    # Proves the check can fail: libvirt has no 'vfio-platform' mdev model.
    xml = build_domain_xml(guest()).replace('model="vfio-pci"', 'model="vfio-platform"')
    assert validate(xml, tmp_path).returncode != 0


def test_schema_check_catches_a_broken_pci_hostdev(tmp_path: Path) -> None:
    # Proves the check can fail for PCI hostdevs too: a PCI source needs a PCI address.
    xml = build_domain_xml(guest(count=0, pci_devices=("0000:41:00.4",)))
    assert validate(xml.replace('bus="0x41"', 'bus="forty-one"'), tmp_path).returncode != 0
