"""The sysfs layout of a simulated host: directories, attribute files and relative symlinks
laid out as the kernel does, so that ``Sysfs`` and the real ``mdevctl`` can read the tree
in place or bind-mounted over ``/sys``.

Only the fake kernel (``vgpucloud.sim.kernel``) calls these functions; every path here is
relative to ``<root>/sys`` and built from names the kernel already validated.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from pathlib import Path

from vgpucloud.sim.profiles import GpuProfile, Layout, TypeSpec

VFIO_MDEV_DRIVER = "vfio_mdev"


def write_attr(path: Path, value: str | int) -> None:
    """Replace an attribute file atomically, so a concurrent reader never sees it empty."""
    text = f"{value}\n"
    with contextlib.suppress(FileNotFoundError):
        if path.read_text() == text:
            return  # unchanged: most refreshes touch few of a GPU's counters
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def link(path: Path, target: Path) -> None:
    """A relative symlink, like the kernel's, valid wherever the tree is mounted."""
    if path.is_symlink():
        path.unlink()
    path.symlink_to(os.path.relpath(target, path.parent))


def ensure_skeleton(sys: Path, drivers: set[str]) -> None:
    for rel in ("class/mdev_bus", "bus/mdev/devices", f"bus/mdev/drivers/{VFIO_MDEV_DRIVER}",
                "bus/pci/devices", "kernel/iommu_groups", "devices/virtual"):
        (sys / rel).mkdir(parents=True, exist_ok=True)
    for driver in drivers:
        (sys / "bus" / "pci" / "drivers" / driver).mkdir(parents=True, exist_ok=True)


def port_dir(sys: Path, address: str) -> Path:
    """The PCI root port a device on ``address``'s bus hangs off (cosmetic but realistic):
    ``0000:84:00.0`` -> ``sys/devices/pci0000:80/0000:80:05.0``."""
    domain, bus = address.split(":")[:2]
    bus_no = int(bus, 16)
    if bus_no == 0:
        return sys / "devices" / f"pci{domain}:00"
    root = bus_no & 0xE0
    return (sys / "devices" / f"pci{domain}:{root:02x}"
            / f"{domain}:{root:02x}:{(bus_no - root) + 1:02x}.0")


def iommu_group(sys: Path, number: int, member: Path) -> None:
    group = sys / "kernel" / "iommu_groups" / str(number)
    (group / "devices").mkdir(parents=True, exist_ok=True)
    link(group / "devices" / member.name, member)
    link(member / "iommu_group", group)


def add_pci_device(sys: Path, address: str, profile: GpuProfile, *, numa_node: int,
                   group: int, parent_dir: Path | None = None) -> Path:
    """A PCI function with its identity files, driver, IOMMU group and bus link."""
    device = (parent_dir or port_dir(sys, address)) / address
    device.mkdir(parents=True, exist_ok=True)
    write_attr(device / "vendor", profile.vendor_id)
    write_attr(device / "device", profile.device_id)
    write_attr(device / "class", profile.pci_class)
    write_attr(device / "numa_node", numa_node)
    link(device / "driver", sys / "bus" / "pci" / "drivers" / profile.driver)
    link(device / "subsystem", sys / "bus" / "pci")
    link(sys / "bus" / "pci" / "devices" / address, device)
    iommu_group(sys, group, device)
    return device


def add_virtual_device(sys: Path, driver: str) -> Path:
    device = sys / "devices" / "virtual" / driver / driver
    device.mkdir(parents=True, exist_ok=True)
    return device


def add_mdev_types(sys: Path, device: Path, types: tuple[TypeSpec, ...]) -> None:
    """``mdev_supported_types/<type>/...`` and the ``class/mdev_bus`` entry of a parent."""
    for spec in types:
        type_dir = device / "mdev_supported_types" / spec.id
        (type_dir / "devices").mkdir(parents=True, exist_ok=True)
        # New files nobody reads yet: plain writes (the kernel's refresh sets the counts).
        if spec.name is not None:
            (type_dir / "name").write_text(f"{spec.name}\n")
        if spec.description:
            (type_dir / "description").write_text(spec.description.rstrip("\n") + "\n")
        (type_dir / "device_api").write_text(f"{spec.device_api}\n")
        (type_dir / "available_instances").write_text("0\n")
        (type_dir / "create").touch()
    link(sys / "class" / "mdev_bus" / device.name, device)


def add_mdev(sys: Path, parent: Path, type_id: str, uuid: str, group: int) -> Path:
    """The device directory of a new mdev and every link the kernel makes to it."""
    mdev = parent / uuid
    mdev.mkdir()
    link(mdev / "mdev_type", parent / "mdev_supported_types" / type_id)
    link(mdev / "driver", sys / "bus" / "mdev" / "drivers" / VFIO_MDEV_DRIVER)
    link(mdev / "subsystem", sys / "bus" / "mdev")
    (mdev / "remove").touch()
    write_attr(mdev / "uevent", f"MDEV_TYPE={type_id}")
    link(parent / "mdev_supported_types" / type_id / "devices" / uuid, mdev)
    link(sys / "bus" / "mdev" / "devices" / uuid, mdev)
    iommu_group(sys, group, mdev)
    return mdev


def remove_mdev(sys: Path, mdev: Path) -> None:
    type_id = Path(os.readlink(mdev / "mdev_type")).name
    group = Path(os.readlink(mdev / "iommu_group")).name
    for entry in (sys / "bus" / "mdev" / "devices" / mdev.name,
                  mdev.parent / "mdev_supported_types" / type_id / "devices" / mdev.name):
        entry.unlink(missing_ok=True)
    shutil.rmtree(sys / "kernel" / "iommu_groups" / group, ignore_errors=True)
    shutil.rmtree(mdev)


def remove_pci_device(sys: Path, device: Path) -> None:
    """Unplug a function (a VF when SR-IOV is disabled) and every link to it."""
    address = device.name
    for entry in (sys / "bus" / "pci" / "devices" / address, sys / "class" / "mdev_bus" / address):
        entry.unlink(missing_ok=True)
    group = Path(os.readlink(device / "iommu_group")).name
    shutil.rmtree(sys / "kernel" / "iommu_groups" / group, ignore_errors=True)
    shutil.rmtree(device)


def vf_address(pf: str, index: int, first_offset: int = 4) -> str:
    """The routing id of VF ``index``: NVIDIA GPUs put VF 0 at function 4 of the PF's slot,
    so ``0000:41:00.0`` has VFs ``0000:41:00.4`` ... ``0000:41:04.3`` (32 VFs)."""
    domain, bus, slot_fn = pf.split(":")
    slot, fn = slot_fn.split(".")
    rid = int(bus, 16) * 256 + int(slot, 16) * 8 + int(fn) + first_offset + index
    return f"{domain}:{rid >> 8:02x}:{(rid >> 3) & 0x1F:02x}.{rid & 7}"


def mdev_dirs(parent: Path) -> list[Path]:
    """The mdevs living under a parent device directory."""
    return sorted(p for p in parent.iterdir()
                  if p.is_dir() and not p.is_symlink() and (p / "mdev_type").is_symlink())


def layout_drivers(profiles: list[GpuProfile]) -> set[str]:
    return {p.driver for p in profiles if p.layout is not Layout.VIRTUAL}
