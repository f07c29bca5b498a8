"""The domain XML builder: golden documents, hostdev models, and spec validation."""

from __future__ import annotations

import pytest

from vgpucloud.agent.virt.domain import GuestMdev, GuestSpec, build_domain_xml
from vgpucloud.agent.virt.errors import InvalidGuestSpec

GUEST_UUID = "6c1a5b3e-6b1f-4f0b-9a51-2f8d5f7e0c11"
MDEV_A = "c2177883-f1bb-47f0-914d-32a22e3a8804"
MDEV_B = "4b20d080-1b54-4048-85b3-a6a62d165c01"

ONE_T4_VGPU_GUEST = """\
<domain type="kvm">
  <name>instance-0000000a</name>
  <uuid>6c1a5b3e-6b1f-4f0b-9a51-2f8d5f7e0c11</uuid>
  <metadata>
    <vgpucloud:instance xmlns:vgpucloud="https://vgpucloud.dev/xmlns/libvirt/instance/1.0">
      <vgpucloud:image>cirros-0.6.2</vgpucloud:image>
    </vgpucloud:instance>
  </metadata>
  <memory unit="MiB">2048</memory>
  <vcpu>2</vcpu>
  <os>
    <type arch="x86_64" machine="q35">hvm</type>
    <boot dev="hd" />
  </os>
  <features>
    <acpi />
    <apic />
  </features>
  <clock offset="utc" />
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <disk type="file" device="disk">
      <driver name="qemu" type="qcow2" />
      <source file="/var/lib/vgpucloud/instances/6c1a5b3e-6b1f-4f0b-9a51-2f8d5f7e0c11/disk" />
      <target dev="vda" bus="virtio" />
    </disk>
    <serial type="pty">
      <target port="0" />
    </serial>
    <console type="pty">
      <target type="serial" port="0" />
    </console>
    <hostdev mode="subsystem" type="mdev" model="vfio-pci" managed="no" display="off">
      <source>
        <address uuid="c2177883-f1bb-47f0-914d-32a22e3a8804" />
      </source>
    </hostdev>
  </devices>
</domain>
"""

TWO_M60_VGPUS_ON_PC_MACHINE = """\
<domain type="qemu">
  <name>instance-0000002b</name>
  <uuid>6c1a5b3e-6b1f-4f0b-9a51-2f8d5f7e0c11</uuid>
  <metadata>
    <vgpucloud:instance xmlns:vgpucloud="https://vgpucloud.dev/xmlns/libvirt/instance/1.0" />
  </metadata>
  <memory unit="MiB">8192</memory>
  <vcpu>8</vcpu>
  <os>
    <type arch="x86_64" machine="pc-i440fx-8.2">hvm</type>
    <boot dev="hd" />
  </os>
  <features>
    <acpi />
    <apic />
  </features>
  <clock offset="utc" />
  <on_poweroff>destroy</on_poweroff>
  <on_reboot>restart</on_reboot>
  <on_crash>destroy</on_crash>
  <devices>
    <disk type="file" device="disk">
      <driver name="qemu" type="raw" />
      <source file="/srv/guests/instance-0000002b.img" />
      <target dev="vda" bus="virtio" />
    </disk>
    <serial type="pty">
      <target port="0" />
    </serial>
    <console type="pty">
      <target type="serial" port="0" />
    </console>
    <hostdev mode="subsystem" type="mdev" model="vfio-pci" managed="no" display="off">
      <source>
        <address uuid="c2177883-f1bb-47f0-914d-32a22e3a8804" />
      </source>
    </hostdev>
    <hostdev mode="subsystem" type="mdev" model="vfio-pci" managed="no" display="off">
      <source>
        <address uuid="4b20d080-1b54-4048-85b3-a6a62d165c01" />
      </source>
    </hostdev>
  </devices>
</domain>
"""


def spec(**overrides: object) -> GuestSpec:
    fields: dict[str, object] = {
        "uuid": GUEST_UUID,
        "name": "instance-0000000a",
        "vcpus": 2,
        "memory_mb": 2048,
        "disk_path": f"/var/lib/vgpucloud/instances/{GUEST_UUID}/disk",
        "mdevs": (GuestMdev(MDEV_A, "vfio-pci"),),
        "image": "cirros-0.6.2",
    }
    fields.update(overrides)
    return GuestSpec(**fields)  # type: ignore[arg-type]


def test_one_t4_vgpu_guest_golden() -> None:
    assert build_domain_xml(spec()) == ONE_T4_VGPU_GUEST


def test_two_m60_vgpus_on_pc_machine_golden() -> None:
    two = spec(
        name="instance-0000002b", vcpus=8, memory_mb=8192, machine_type="pc-i440fx-8.2",
        domain_type="qemu", disk_path="/srv/guests/instance-0000002b.img", disk_format="raw",
        mdevs=((MDEV_A, "vfio-pci"), (MDEV_B, "vfio-pci")), image=None,
    )
    assert build_domain_xml(two) == TWO_M60_VGPUS_ON_PC_MACHINE


@pytest.mark.parametrize("device_api", ["vfio-ccw", "vfio-ap"])
def test_s390_mdev_models_carry_no_display_attribute(device_api: str) -> None:
    xml = build_domain_xml(spec(mdevs=((MDEV_A, device_api),)))
    hostdev = (
        f'<hostdev mode="subsystem" type="mdev" model="{device_api}" managed="no">\n'
        f"      <source>\n"
        f'        <address uuid="{MDEV_A}" />\n'
    )
    assert hostdev in xml
    assert "display" not in xml


def test_guest_without_vgpu_has_no_hostdev() -> None:
    assert "<hostdev" not in build_domain_xml(spec(mdevs=()))


def test_uuids_from_sysfs_are_normalised() -> None:
    shouting = spec(uuid=GUEST_UUID.upper(), mdevs=((MDEV_A.upper(), "vfio-pci\n"),))
    assert shouting.uuid == GUEST_UUID
    assert shouting.mdevs == (GuestMdev(MDEV_A, "vfio-pci"),)
    assert shouting.mdev_uuids == (MDEV_A,)


def test_image_name_with_markup_is_escaped() -> None:
    xml = build_domain_xml(spec(image="<ubuntu & 'friends'>"))
    assert "<vgpucloud:image>&lt;ubuntu &amp; 'friends'&gt;</vgpucloud:image>" in xml


@pytest.mark.parametrize(
    ("overrides", "named"),
    [
        ({"uuid": "not-a-uuid"}, "not-a-uuid"),
        ({"name": "../etc/passwd"}, "name '../etc/passwd'"),
        ({"name": ""}, "name ''"),
        ({"vcpus": 0}, "vcpus 0"),
        ({"memory_mb": 0}, "memory_mb 0"),
        ({"disk_path": "disk.qcow2"}, "disk_path 'disk.qcow2'"),
        ({"disk_format": "vmdk"}, "disk_format 'vmdk'"),
        ({"machine_type": "virt"}, "machine_type 'virt'"),
        ({"domain_type": "xen"}, "domain_type 'xen'"),
        ({"mdevs": ((MDEV_A, "vfio-platform"),)}, "device_api 'vfio-platform'"),
        ({"mdevs": ((MDEV_A, "vfio-pci"), (MDEV_A, "vfio-pci"))}, "listed twice"),
        ({"mdevs": (("0000:84:00.0", "vfio-pci"),)}, "'0000:84:00.0' is not a UUID"),
    ],
)
def test_malformed_spec_is_refused_naming_the_field(
    overrides: dict[str, object], named: str
) -> None:
    with pytest.raises(InvalidGuestSpec) as caught:
        spec(**overrides)
    assert named in caught.value.message
    assert caught.value.code == "host.virt.invalid_spec"
