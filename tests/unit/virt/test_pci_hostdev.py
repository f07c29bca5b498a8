"""Variant-driver VFs in the domain XML: ``<hostdev type='pci'>`` built, read back, held."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from vgpucloud.agent.virt.domain import GuestMdev, GuestSpec, build_domain_xml, read_domain
from vgpucloud.agent.virt.errors import InvalidDomainXml, InvalidGuestSpec
from vgpucloud.agent.virt.fake import FakeDriver

GUEST = "6c1a5b3e-6b1f-4f0b-9a51-2f8d5f7e0c11"
MDEV = "c2177883-f1bb-47f0-914d-32a22e3a8804"


def vf_guest(*addresses: str, mdevs: tuple[str, ...] = ()) -> GuestSpec:
    return GuestSpec(uuid=GUEST, name="instance-0000000a", vcpus=2, memory_mb=2048,
                     disk_path=f"/var/lib/vgpucloud/instances/{GUEST}/disk",
                     mdevs=tuple(GuestMdev(m, "vfio-pci") for m in mdevs),
                     pci_devices=addresses)


def test_a40_variant_vf_becomes_a_managed_pci_hostdev() -> None:
    root = ET.fromstring(build_domain_xml(vf_guest("0000:41:00.4")))
    [hostdev] = root.findall("devices/hostdev")
    assert hostdev.attrib == {"mode": "subsystem", "type": "pci", "managed": "yes"}
    [address] = hostdev.findall("source/address")
    assert address.attrib == {"domain": "0x0000", "bus": "0x41", "slot": "0x00",
                              "function": "0x4"}


def test_vf_and_mdev_guest_reads_back_both() -> None:
    spec = vf_guest("0000:C1:1f.7", "0000:41:00.4", mdevs=(MDEV,))
    summary = read_domain(build_domain_xml(spec))
    assert spec.pci_devices == ("0000:c1:1f.7", "0000:41:00.4")  # kernel spelling
    assert summary.pci_addresses == ("0000:c1:1f.7", "0000:41:00.4")
    assert summary.mdev_uuids == (MDEV,)
    assert summary.held_devices == (MDEV, "0000:c1:1f.7", "0000:41:00.4")


def test_virsh_dumpxml_with_decimal_pci_numbers_is_read() -> None:
    xml = (f"<domain><name>x</name><uuid>{GUEST}</uuid><devices>"
           "<hostdev mode='subsystem' type='pci' managed='yes'><source>"
           "<address domain='0' bus='65' slot='0' function='4'/></source></hostdev>"
           "</devices></domain>")
    assert read_domain(xml).pci_addresses == ("0000:41:00.4",)


@pytest.mark.parametrize(("addresses", "cause"), [
    (("41:00.4",), "is not a PCI address"),
    (("0000:41:20.4",), "is not a PCI address"),  # slots end at 0x1f
    (("0000:41:00.4", "0000:41:00.4"), "listed twice"),
])
def test_bad_vf_address_is_refused_naming_it(addresses: tuple[str, ...], cause: str) -> None:
    with pytest.raises(InvalidGuestSpec) as caught:
        vf_guest(*addresses)
    assert cause in caught.value.message and addresses[0] in caught.value.message


def test_pci_hostdev_without_address_is_refused() -> None:
    xml = (f"<domain><name>x</name><uuid>{GUEST}</uuid><devices>"
           "<hostdev type='pci'><source><address bus='0x41'/></source></hostdev>"
           "</devices></domain>")
    with pytest.raises(InvalidDomainXml) as caught:
        read_domain(xml)
    assert "PCI <hostdev>" in caught.value.message


def test_fake_driver_tells_the_kernel_the_guest_holds_its_vf(tmp_path: Path) -> None:
    calls: list[tuple[str, tuple[str, ...]]] = []
    driver = FakeDriver(tmp_path, lambda d: calls.append(("start", d)),
                        lambda d: calls.append(("stop", d)), mdev_exists=lambda m: True,
                        fsync=False)
    driver.define(vf_guest("0000:41:00.4"))
    driver.start(GUEST)
    driver.undefine(GUEST)
    assert calls == [("start", ("0000:41:00.4",)), ("stop", ("0000:41:00.4",))]
