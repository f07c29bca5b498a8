"""Libvirt domain XML for vgpucloud guests: a pure builder and a pure reader.

Nothing here touches libvirt, a file or the kernel: :func:`build_domain_xml` turns a
:class:`GuestSpec` into the XML both drivers define, and :func:`mdev_uuids_in` /
:func:`read_domain` read the mediated devices (and, for hosts on NVIDIA's kernel variant
driver, the VFs passed through as PCI hostdevs) back out of *any* domain XML — ours, one
``virsh dumpxml`` printed, or a file under ``/etc/libvirt/qemu`` — which is how the agent
learns which guest holds which mdev after a host reboot, and how the "find mdev devices in
dumped domain XMLs" step of the classic orphan-mdev cleanup becomes one function call.

Every vgpucloud guest carries a ``<metadata>`` marker in the ``vgpucloud`` namespace, so
guests somebody else defined on the same host are told apart and never touched.
"""

from __future__ import annotations

import dataclasses
import re
import uuid as uuidlib
import xml.etree.ElementTree as ET
from typing import NamedTuple

from vgpucloud.agent.virt.errors import InvalidDomainXml, InvalidGuestSpec

# The mdev ``device_api`` values libvirt can attach (schema ``hostdevsubsysmdev``);
# the kernel also knows vfio-platform and vfio-amba, which libvirt cannot use as mdevs.
SUPPORTED_DEVICE_APIS = ("vfio-pci", "vfio-ccw", "vfio-ap")
METADATA_NS = "https://vgpucloud.dev/xmlns/libvirt/instance/1.0"
DOMAIN_TYPES = ("kvm", "qemu")
DISK_FORMATS = ("qcow2", "raw")

# libvirt refuses '/' in a name, and the fake driver uses the name as a file name, so
# a name is a plain token like nova's ``instance-%08x``.
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,99}$")
# QEMU x86 machine types: the aliases and their versioned forms (pc-q35-8.2, pc-i440fx-8.2).
_MACHINE_RE = re.compile(r"^(q35|pc|pc-q35-\d+\.\d+|pc-i440fx-\d+\.\d+)$")
# A PCI address as the kernel names it (domain:bus:slot.function), e.g. 0000:41:00.4.
_PCI_ADDRESS_RE = re.compile(
    r"^(?P<domain>[0-9a-f]{4}):(?P<bus>[0-9a-f]{2}):(?P<slot>[0-1][0-9a-f])\.(?P<function>[0-7])$")


class GuestMdev(NamedTuple):
    """One mediated device handed to a guest: its UUID and its type's ``device_api``."""

    uuid: str
    device_api: str


@dataclasses.dataclass(frozen=True, slots=True)
class GuestSpec:
    """Everything the domain XML of one guest is built from.

    ``uuid`` is the instance UUID (libvirt's domain UUID, as in nova); ``disk_path`` the
    root disk file the agent prepared; ``image`` is only recorded in the metadata.
    UUIDs are normalised to lower case; a malformed field raises InvalidGuestSpec.
    """

    uuid: str
    name: str
    vcpus: int
    memory_mb: int
    disk_path: str
    mdevs: tuple[GuestMdev, ...] = ()
    disk_format: str = "qcow2"
    machine_type: str = "q35"
    domain_type: str = "kvm"
    image: str | None = None
    # Whole PCI functions passed through, e.g. ``("0000:41:00.4",)``: VFs that NVIDIA's
    # kernel variant driver turned into a vGPU (no mdev, no UUID).
    pci_devices: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "uuid", canonical_uuid(self.uuid, "GuestSpec.uuid"))
        object.__setattr__(self, "mdevs", _checked_mdevs(self.mdevs, self.name))
        object.__setattr__(self, "pci_devices", _checked_pci_devices(self.pci_devices,
                                                                     self.name))
        problems = _spec_problems(self)
        if problems:
            raise InvalidGuestSpec(
                f"Guest spec for {self.name!r} ({self.uuid}) is invalid: " + "; ".join(problems)
            )

    @property
    def mdev_uuids(self) -> tuple[str, ...]:
        return tuple(m.uuid for m in self.mdevs)


@dataclasses.dataclass(frozen=True, slots=True)
class DomainSummary:
    """What :func:`read_domain` finds in a domain XML document."""

    uuid: str
    name: str
    mdev_uuids: tuple[str, ...]
    ours: bool  # carries the vgpucloud metadata marker
    pci_addresses: tuple[str, ...] = ()  # PCI hostdevs, as 0000:41:00.4

    @property
    def held_devices(self) -> tuple[str, ...]:
        """What the guest opens on the host while it runs: its mdevs and PCI functions."""
        return self.mdev_uuids + self.pci_addresses


def canonical_uuid(value: str, what: str) -> str:
    """``value`` as a lower-case hyphenated UUID; InvalidGuestSpec naming ``what`` if it is not."""
    try:
        return str(uuidlib.UUID(str(value)))
    except ValueError:
        raise InvalidGuestSpec(
            f"{what} {value!r} is not a UUID; use the canonical form "
            f"like 'c2177883-f1bb-47f0-914d-32a22e3a8804'."
        ) from None


def _checked_mdevs(mdevs: tuple[GuestMdev, ...], name: str) -> tuple[GuestMdev, ...]:
    checked: list[GuestMdev] = []
    for raw_uuid, raw_api in mdevs:
        mdev_uuid = canonical_uuid(raw_uuid, f"mdev of guest {name!r}")
        device_api = str(raw_api).strip()  # sysfs files end with a newline
        if device_api not in SUPPORTED_DEVICE_APIS:
            raise InvalidGuestSpec(
                f"mdev {mdev_uuid} of guest {name!r} has device_api {device_api!r}, which "
                f"libvirt cannot attach; supported: {', '.join(SUPPORTED_DEVICE_APIS)}. "
                f"Enable an mdev type whose device_api is one of those."
            )
        if any(m.uuid == mdev_uuid for m in checked):
            raise InvalidGuestSpec(
                f"mdev {mdev_uuid} is listed twice for guest {name!r}; libvirt refuses a "
                f"hostdev twice. Give each vGPU its own mdev."
            )
        checked.append(GuestMdev(mdev_uuid, device_api))
    return tuple(checked)


def canonical_pci_address(value: str, what: str) -> str:
    """``value`` as the kernel spells a PCI address (``0000:41:00.4``, lower case)."""
    address = str(value).strip().lower()
    if not _PCI_ADDRESS_RE.match(address):
        raise InvalidGuestSpec(
            f"{what} {value!r} is not a PCI address; write it as DDDD:BB:SS.F, "
            f"e.g. '0000:41:00.4' (the name under /sys/bus/pci/devices)."
        )
    return address


def _checked_pci_devices(devices: tuple[str, ...], name: str) -> tuple[str, ...]:
    checked: list[str] = []
    for raw in devices:
        address = canonical_pci_address(raw, f"PCI device of guest {name!r}")
        if address in checked:
            raise InvalidGuestSpec(
                f"PCI device {address} is listed twice for guest {name!r}; a PCI function "
                f"can be passed through once. Give each vGPU its own VF."
            )
        checked.append(address)
    return tuple(checked)


def _spec_problems(spec: GuestSpec) -> list[str]:
    checks = [
        (bool(_NAME_RE.match(spec.name)),
         f"name {spec.name!r} must be letters, digits, '.', '_', '+' or '-' "
         f"(like 'instance-0000000a')"),
        (spec.vcpus >= 1, f"vcpus {spec.vcpus} must be at least 1"),
        (spec.memory_mb >= 1, f"memory_mb {spec.memory_mb} must be at least 1"),
        (spec.disk_path.startswith("/") and "\x00" not in spec.disk_path,
         f"disk_path {spec.disk_path!r} must be an absolute path"),
        (spec.disk_format in DISK_FORMATS,
         f"disk_format {spec.disk_format!r} must be one of {', '.join(DISK_FORMATS)}"),
        (bool(_MACHINE_RE.match(spec.machine_type)),
         f"machine_type {spec.machine_type!r} must be q35, pc, pc-q35-X.Y or pc-i440fx-X.Y"),
        (spec.domain_type in DOMAIN_TYPES,
         f"domain_type {spec.domain_type!r} must be one of {', '.join(DOMAIN_TYPES)}"),
    ]
    return [problem for ok, problem in checks if not ok]


# --- builder -----------------------------------------------------------------


def build_domain_xml(spec: GuestSpec) -> str:
    """The libvirt domain XML of ``spec``: a BIOS-booted x86 guest with one virtio disk,
    a serial console, one ``<hostdev type='mdev'>`` per mdev vGPU and one
    ``<hostdev type='pci'>`` per variant-driver VF. No network: the guest
    layer does not own one, and libvirt does not need it."""
    domain = ET.Element("domain", type=spec.domain_type)
    _text(domain, "name", spec.name)
    _text(domain, "uuid", spec.uuid)
    domain.append(_metadata(spec))
    _text(domain, "memory", str(spec.memory_mb), unit="MiB")
    _text(domain, "vcpu", str(spec.vcpus))
    domain.append(_os(spec))
    features = ET.SubElement(domain, "features")
    ET.SubElement(features, "acpi")
    ET.SubElement(features, "apic")
    ET.SubElement(domain, "clock", offset="utc")
    _text(domain, "on_poweroff", "destroy")
    _text(domain, "on_reboot", "restart")
    _text(domain, "on_crash", "destroy")
    domain.append(_devices(spec))
    ET.indent(domain, space="  ")
    return ET.tostring(domain, encoding="unicode") + "\n"


def mdev_hostdev(mdev: GuestMdev) -> ET.Element:
    """``<hostdev mode='subsystem' type='mdev' model=... managed='no'>`` for one mdev.

    ``managed='no'``: libvirt must not create or remove the mdev, the agent's ledger owns
    its life. ``display='off'`` only with vfio-pci: libvirt rejects ``display`` for the
    other models, and we never ask QEMU for a vGPU console (it needs a graphics device).
    """
    hostdev = ET.Element("hostdev", mode="subsystem", type="mdev",
                         model=mdev.device_api, managed="no")
    if mdev.device_api == "vfio-pci":
        hostdev.set("display", "off")
    source = ET.SubElement(hostdev, "source")
    ET.SubElement(source, "address", uuid=mdev.uuid)
    return hostdev


def pci_hostdev(address: str) -> ET.Element:
    """``<hostdev mode='subsystem' type='pci' managed='yes'>`` for one PCI function::

        <hostdev mode='subsystem' type='pci' managed='yes'>
          <source><address domain='0x0000' bus='0x41' slot='0x00' function='0x4'/></source>
        </hostdev>

    ``managed='yes'``: libvirt detaches the VF from its host driver when the guest starts
    and gives it back when the guest stops; the agent only sets and clears its vGPU type.
    """
    match = _PCI_ADDRESS_RE.match(canonical_pci_address(address, "PCI hostdev"))
    assert match is not None  # canonical_pci_address raised otherwise
    hostdev = ET.Element("hostdev", mode="subsystem", type="pci", managed="yes")
    source = ET.SubElement(hostdev, "source")
    ET.SubElement(source, "address", domain=f"0x{match['domain']}", bus=f"0x{match['bus']}",
                  slot=f"0x{match['slot']}", function=f"0x{match['function']}")
    return hostdev


def _text(parent: ET.Element, tag: str, text: str, **attrs: str) -> ET.Element:
    child = ET.SubElement(parent, tag, attrs)
    child.text = text
    return child


def _metadata(spec: GuestSpec) -> ET.Element:
    # Written with a literal prefix so that no global ET.register_namespace is needed.
    metadata = ET.Element("metadata")
    marker = ET.SubElement(metadata, "vgpucloud:instance", {"xmlns:vgpucloud": METADATA_NS})
    if spec.image is not None:
        _text(marker, "vgpucloud:image", spec.image)
    return metadata


def _os(spec: GuestSpec) -> ET.Element:
    os_element = ET.Element("os")
    _text(os_element, "type", "hvm", arch="x86_64", machine=spec.machine_type)
    ET.SubElement(os_element, "boot", dev="hd")
    return os_element


def _devices(spec: GuestSpec) -> ET.Element:
    devices = ET.Element("devices")
    disk = ET.SubElement(devices, "disk", type="file", device="disk")
    ET.SubElement(disk, "driver", name="qemu", type=spec.disk_format)
    ET.SubElement(disk, "source", file=spec.disk_path)
    ET.SubElement(disk, "target", dev="vda", bus="virtio")
    serial = ET.SubElement(devices, "serial", type="pty")
    ET.SubElement(serial, "target", port="0")
    console = ET.SubElement(devices, "console", type="pty")
    ET.SubElement(console, "target", type="serial", port="0")
    devices.extend(mdev_hostdev(m) for m in spec.mdevs)
    devices.extend(pci_hostdev(a) for a in spec.pci_devices)
    return devices


# --- reader ------------------------------------------------------------------


def mdev_uuids_in(xml: str) -> list[str]:
    """UUIDs of the mdev hostdevs in a domain XML document, in document order.

    Reads what ``virsh dumpxml`` prints; PCI and USB hostdevs are not mdevs and are skipped::

        <domain type='kvm' id='3'>
          <name>instance-00000004</name>
          <devices>
            <hostdev mode='subsystem' type='pci' managed='yes'>
              <source><address domain='0x0000' bus='0x84' slot='0x00' function='0x0'/></source>
            </hostdev>
            <hostdev mode='subsystem' type='mdev' managed='no' model='vfio-pci' display='off'>
              <source><address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/></source>
              <alias name='hostdev0'/>
            </hostdev>
          </devices>
        </domain>

    gives ``['c2177883-f1bb-47f0-914d-32a22e3a8804']``.
    """
    return _mdev_uuids(_parse(xml))


def read_domain(xml: str) -> DomainSummary:
    """UUID, name, mdev UUIDs, PCI hostdevs and our marker from a domain XML document::

        <domain type='kvm'>
          <name>instance-0000000a</name>
          <uuid>6c1a5b3e-6b1f-4f0b-9a51-2f8d5f7e0c11</uuid>
          <metadata>
            <vgpucloud:instance xmlns:vgpucloud='https://vgpucloud.dev/xmlns/libvirt/instance/1.0'/>
          </metadata>
          <devices>
            <hostdev mode='subsystem' type='mdev' model='vfio-pci' managed='no'>
              <source><address uuid='c2177883-f1bb-47f0-914d-32a22e3a8804'/></source>
            </hostdev>
            <hostdev mode='subsystem' type='pci' managed='yes'>
              <source><address domain='0x0000' bus='0x41' slot='0x00' function='0x4'/></source>
            </hostdev>
          </devices>
        </domain>

    gives ``DomainSummary(uuid='6c1a5b3e-…', name='instance-0000000a',
    mdev_uuids=('c2177883-…',), ours=True, pci_addresses=('0000:41:00.4',))``.
    """
    root = _parse(xml)
    name = root.findtext("name")
    raw_uuid = root.findtext("uuid")
    if root.tag != "domain" or not name or not raw_uuid:
        raise InvalidDomainXml(
            f"Document with root <{root.tag}> is not a libvirt domain: it needs <domain> "
            f"with <name> and <uuid>. Pass the output of 'virsh dumpxml NAME'."
        )
    try:
        guest_uuid = str(uuidlib.UUID(raw_uuid.strip()))
    except ValueError:
        raise InvalidDomainXml(f"Domain {name!r} has a malformed <uuid> {raw_uuid!r}.") from None
    ours = root.find(f"metadata/{{{METADATA_NS}}}instance") is not None
    return DomainSummary(guest_uuid, name.strip(), tuple(_mdev_uuids(root)), ours,
                         tuple(_pci_addresses(root)))


def _parse(xml: str) -> ET.Element:
    try:
        return ET.fromstring(xml)
    except ET.ParseError as exc:
        raise InvalidDomainXml(
            f"Domain XML is not well-formed ({exc}); pass a complete document such as "
            f"the output of 'virsh dumpxml NAME'."
        ) from None


def _mdev_uuids(root: ET.Element) -> list[str]:
    # iter(), not a fixed path: a <domainsnapshot> or migration document nests <domain>.
    found: list[str] = []
    for hostdev in root.iter("hostdev"):
        if hostdev.get("type") != "mdev":
            continue
        address = hostdev.find("source/address")
        raw = address.get("uuid") if address is not None else None
        try:
            found.append(str(uuidlib.UUID(raw or "")))
        except ValueError:
            raise InvalidDomainXml(
                f"An mdev <hostdev> has no valid <source><address uuid=...> (found {raw!r}); "
                f"libvirt itself would refuse this domain."
            ) from None
    return found


def _pci_addresses(root: ET.Element) -> list[str]:
    found: list[str] = []
    for hostdev in root.iter("hostdev"):
        if hostdev.get("type") != "pci":
            continue
        address = hostdev.find("source/address")
        fields = ("domain", "bus", "slot", "function")
        raw = {f: address.get(f) for f in fields} if address is not None else {}
        try:
            numbers = [int(raw[f] or "", 0) for f in fields]
        except (KeyError, ValueError):
            raise InvalidDomainXml(
                f"A PCI <hostdev> has no valid <source><address domain= bus= slot= "
                f"function=> (found {raw!r}); libvirt itself would refuse this domain."
            ) from None
        found.append("{:04x}:{:02x}:{:02x}.{:x}".format(*numbers))
    return found
