"""Reading mdevs back out of domain XML: ours, virsh's, and broken documents."""

from __future__ import annotations

import uuid

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vgpucloud.agent.virt.domain import (
    GuestMdev,
    GuestSpec,
    build_domain_xml,
    mdev_uuids_in,
    read_domain,
)
from vgpucloud.agent.virt.errors import InvalidDomainXml

# What `virsh dumpxml` prints for a running guest someone else defined: a whole GPU passed
# through, a USB key, a SR-IOV NIC VF, and two vGPUs (one with an upper-case UUID).
VIRSH_DUMPXML_MIXED_HOSTDEVS = """\
<domain type='kvm' id='7'>
  <name>render-farm-3</name>
  <uuid>0f7cbb0e-3d1e-4b8a-a1f3-5f2e1c9a7d10</uuid>
  <memory unit='KiB'>16777216</memory>
  <vcpu placement='static'>8</vcpu>
  <os><type arch='x86_64' machine='pc-q35-8.2'>hvm</type><boot dev='hd'/></os>
  <devices>
    <emulator>/usr/bin/qemu-system-x86_64</emulator>
    <hostdev mode='subsystem' type='pci' managed='yes'>
      <driver name='vfio'/>
      <source><address domain='0x0000' bus='0x84' slot='0x00' function='0x0'/></source>
      <alias name='hostdev0'/>
    </hostdev>
    <hostdev mode='subsystem' type='usb' managed='no'>
      <source><vendor id='0x0781'/><product id='0x5567'/></source>
    </hostdev>
    <interface type='hostdev' managed='yes'>
      <source><address type='pci' domain='0x0000' bus='0x3b' slot='0x02' function='0x1'/></source>
    </interface>
    <hostdev mode='subsystem' type='mdev' managed='no' model='vfio-pci' display='off'>
      <source><address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/></source>
      <alias name='hostdev1'/>
      <address type='pci' domain='0x0000' bus='0x06' slot='0x00' function='0x0'/>
    </hostdev>
    <hostdev mode='subsystem' type='mdev' managed='no' model='vfio-pci'>
      <source><address uuid='4B20D080-1B54-4048-85B3-A6A62D165C01'/></source>
    </hostdev>
  </devices>
</domain>
"""


def test_virsh_dumpxml_with_other_hostdevs_yields_only_the_mdevs() -> None:
    assert mdev_uuids_in(VIRSH_DUMPXML_MIXED_HOSTDEVS) == [
        "c2177883-f1bb-47f0-914d-32a22e3a8804",
        "4b20d080-1b54-4048-85b3-a6a62d165c01",
    ]


def test_guest_defined_by_someone_else_is_not_ours() -> None:
    summary = read_domain(VIRSH_DUMPXML_MIXED_HOSTDEVS)
    assert summary.name == "render-farm-3"
    assert summary.uuid == "0f7cbb0e-3d1e-4b8a-a1f3-5f2e1c9a7d10"
    assert summary.ours is False
    assert len(summary.mdev_uuids) == 2


def test_snapshot_document_nesting_a_domain_is_read() -> None:
    snapshot = f"<domainsnapshot><name>before-upgrade</name>{VIRSH_DUMPXML_MIXED_HOSTDEVS}" \
        "</domainsnapshot>"
    assert len(mdev_uuids_in(snapshot)) == 2


mdev_lists = st.lists(st.uuids(), unique=True, max_size=4)
device_apis = st.sampled_from(["vfio-pci", "vfio-ccw", "vfio-ap"])


@given(guest=st.uuids(), mdevs=mdev_lists, api=device_apis, image=st.none() | st.text())
def test_round_trip_of_generated_xml(
    guest: uuid.UUID, mdevs: list[uuid.UUID], api: str, image: str | None
) -> None:
    # XML 1.0 cannot carry most control characters, so keep the image name printable.
    image = None if image is None else "".join(c for c in image if c.isprintable())
    spec = GuestSpec(
        uuid=str(guest), name="instance-0000000a", vcpus=1, memory_mb=512,
        disk_path="/var/lib/vgpucloud/instances/disk", image=image,
        mdevs=tuple(GuestMdev(str(m), api) for m in mdevs),
    )
    summary = read_domain(build_domain_xml(spec))
    assert summary.uuid == str(guest)
    assert summary.name == "instance-0000000a"
    assert list(summary.mdev_uuids) == [str(m) for m in mdevs]
    assert summary.ours is True


NAMED = "<name>x</name><uuid>0f7cbb0e-3d1e-4b8a-a1f3-5f2e1c9a7d10</uuid>"


@pytest.mark.parametrize(
    ("document", "cause"),
    [
        ("<domain><name>x</name>", "not well-formed"),
        ("<network><name>default</name></network>", "root <network>"),
        ("<domain type='kvm'><name>x</name></domain>", "needs <domain> with <name> and <uuid>"),
        ("<domain><name>x</name><uuid>nope</uuid></domain>", "malformed <uuid> 'nope'"),
        (f"<domain>{NAMED}<devices><hostdev type='mdev'><source/></hostdev></devices></domain>",
         "found None"),
        (f"<domain>{NAMED}<devices><hostdev type='mdev'><source><address uuid='0000:84:00.0'/>"
         "</source></hostdev></devices></domain>", "found '0000:84:00.0'"),
    ],
)
def test_broken_documents_are_refused_naming_the_cause(document: str, cause: str) -> None:
    with pytest.raises(InvalidDomainXml) as caught:
        read_domain(document)
    assert cause in caught.value.message
