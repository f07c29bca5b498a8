"""``Sysfs(root)``: the one seam between vgpucloud and the kernel's mediated devices.

Reads go straight to files under ``<root>/sys``. Writes (``create``, ``remove``,
``current_vgpu_type``) go through a ``Kernel``: on a real host that is ``HostKernel``, which
writes the file and lets the kernel act; on a simulated host ``vgpucloud.sim`` passes its
fake kernel, which applies the same effects to the tree and fails with the same errno values
the kernel and the vendor driver use. Either way ``Sysfs`` checks every precondition first
(valid names, parent present, type offered, an instance left, UUID unused) and turns kernel
errno values into the typed errors of ``vgpucloud.errors``, so callers see one behaviour.

Layout read (what the kernel lays out)::

    sys/class/mdev_bus/0000:84:00.0 -> ../../devices/pci0000:80/0000:80:02.0/0000:84:00.0
    .../0000:84:00.0/mdev_supported_types/nvidia-35/{name,description,available_instances,
                                                     device_api,create,devices/}
    sys/bus/mdev/devices/<uuid> -> ../../../devices/.../0000:84:00.0/<uuid>
    .../<uuid>/{mdev_type -> ../mdev_supported_types/nvidia-35, iommu_group, remove}
    sys/bus/pci/devices/0000:41:00.4/nvidia/{creatable_vgpu_types,current_vgpu_type}
"""

from __future__ import annotations

import dataclasses
import errno
import os
import uuid as uuidlib
from collections.abc import Iterator
from pathlib import Path
from typing import Protocol

from vgpucloud.agent.mdev import names
from vgpucloud.agent.mdev.model import Mdev, MdevType, ParentDevice, ParentKind
from vgpucloud.agent.mdev.parse import (
    parse_creatable_vgpu_types,
    parse_current_vgpu_type,
    parse_description,
    parse_int,
    variant_type_id,
    variant_type_number,
)
from vgpucloud.errors import (
    HostDeviceError,
    MdevBusy,
    MdevExists,
    MdevNotFound,
    NoInstancesLeft,
    ParentGone,
    TypeNotOffered,
)


class Kernel(Protocol):
    """Whatever acts on a sysfs write. Raises ``OSError`` with the kernel's errno."""

    def write(self, path: Path, data: str) -> None: ...


class HostKernel:
    """The real kernel: write the attribute file and let the kernel act on it."""

    def write(self, path: Path, data: str) -> None:
        # One unbuffered write(2), so the kernel's errno surfaces here and not at close().
        fd = os.open(path, os.O_WRONLY)
        try:
            os.write(fd, data.encode())
        finally:
            os.close(fd)


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (FileNotFoundError, NotADirectoryError, PermissionError):
        return None


def _link_name(path: Path) -> str | None:
    try:
        return Path(os.readlink(path)).name
    except OSError:
        return None


class Sysfs:
    """Mediated devices under ``root`` (``/`` on a host, a directory in simulations)."""

    def __init__(self, root: str | os.PathLike[str] = "/", kernel: Kernel | None = None) -> None:
        self.root = Path(root)
        self.sys = self.root / "sys"
        self.kernel: Kernel = kernel if kernel is not None else HostKernel()

    def __repr__(self) -> str:
        return f"Sysfs({str(self.root)!r}, kernel={type(self.kernel).__name__})"

    # --- reading --------------------------------------------------------------

    def parents(self) -> tuple[ParentDevice, ...]:
        """Every mdev parent and every variant-driver VF, sorted by address."""
        found = [*self._mdev_parents(), *self._variant_vfs()]
        return tuple(sorted(found, key=lambda p: p.address))

    def parent(self, address: str) -> ParentDevice:
        names.check_parent_name(address)
        parent = self._mdev_parent(address) or self._variant_vf(address)
        if parent is None:
            raise ParentGone(
                f"parent device {address} is not in {self.sys}/class/mdev_bus nor a "
                "variant-driver VF: check that the GPU driver is loaded (and, for SR-IOV "
                "GPUs, that VFs are enabled with sriov-manage -e), or fix the address"
            )
        return parent

    def mdevs(self) -> tuple[Mdev, ...]:
        bus = self.sys / "bus" / "mdev" / "devices"
        if not bus.is_dir():
            return ()
        found = (self._read_mdev(entry) for entry in sorted(bus.iterdir()))
        return tuple(m for m in found if m is not None)

    def mdev(self, uuid: str) -> Mdev:
        names.check_uuid(uuid)
        found = self._read_mdev(self.sys / "bus" / "mdev" / "devices" / uuid)
        if found is None:
            raise MdevNotFound(
                f"mdev {uuid} is not in {self.sys}/bus/mdev/devices: it was removed or the "
                "host rebooted; recreate it or forget it"
            )
        return found

    def mdevs_on(self, parent: str) -> tuple[Mdev, ...]:
        return tuple(m for m in self.mdevs() if m.parent == parent)

    # --- writing --------------------------------------------------------------

    def create_mdev(self, parent: str, type_id: str, uuid: str | None = None) -> Mdev:
        """``echo UUID > .../<parent>/mdev_supported_types/<type>/create``, checked first."""
        uuid = names.check_uuid(uuid) if uuid is not None else str(uuidlib.uuid4())
        names.check_type_id(type_id)
        device = self.parent(parent)
        if device.kind is ParentKind.NVIDIA_VARIANT:
            raise TypeNotOffered(
                f"{parent} is driven by NVIDIA's kernel variant driver and has no mdev types; "
                "assign a vGPU type with set_vgpu_type and pass the VF through instead"
            )
        offered = self._offered(device, type_id)
        if offered.available_instances <= 0:
            raise NoInstancesLeft(self._no_instances_message(device, offered))
        if self._read_mdev(self.sys / "bus" / "mdev" / "devices" / uuid) is not None:
            raise MdevExists(
                f"an mdev with uuid {uuid} already exists; reuse it or pick a new uuid"
            )
        target = self._type_dir(device.address, type_id) / "create"
        self._write(target, uuid, what=f"create mdev {uuid} ({type_id} on {parent})")
        return self.mdev(uuid)

    def remove_mdev(self, uuid: str) -> None:
        """``echo 1 > /sys/bus/mdev/devices/<uuid>/remove``; refused while a guest holds it."""
        self.mdev(uuid)
        target = self.sys / "bus" / "mdev" / "devices" / uuid / "remove"
        self._write(target, "1", what=f"remove mdev {uuid}")

    def set_vgpu_type(self, vf: str, type_id: str) -> ParentDevice:
        """Variant driver: ``echo 557 > /sys/bus/pci/devices/<vf>/nvidia/current_vgpu_type``."""
        names.check_pci_address(vf)
        names.check_type_id(type_id)
        device = self._variant_vf(vf)
        if device is None:
            raise ParentGone(
                f"{vf} is not a VF driven by NVIDIA's kernel variant driver (no "
                f"{self.sys}/bus/pci/devices/{vf}/nvidia); enable VFs or fix the address"
            )
        if device.current_type is not None:
            raise MdevBusy(
                f"VF {vf} already has vGPU type {device.current_type}; clear it first "
                "(clear_vgpu_type) once no guest uses the VF"
            )
        offered = self._offered(device, type_id)
        if offered.available_instances <= 0:
            raise NoInstancesLeft(self._no_instances_message(device, offered))
        number = variant_type_number(type_id)
        target = self.sys / "bus" / "pci" / "devices" / vf / "nvidia" / "current_vgpu_type"
        self._write(target, str(number), what=f"set vGPU type {type_id} on {vf}")
        return self.parent(vf)

    def clear_vgpu_type(self, vf: str) -> None:
        """Variant driver: ``echo 0 > .../nvidia/current_vgpu_type``."""
        names.check_pci_address(vf)
        if self._variant_vf(vf) is None:
            raise ParentGone(f"{vf} is not a variant-driver VF; fix the address")
        target = self.sys / "bus" / "pci" / "devices" / vf / "nvidia" / "current_vgpu_type"
        self._write(target, "0", what=f"clear the vGPU type of {vf}")

    # --- internals ------------------------------------------------------------

    def _offered(self, device: ParentDevice, type_id: str) -> MdevType:
        offered = device.type(type_id)
        if offered is None:
            listed = ", ".join(device.type_ids) or "none"
            raise TypeNotOffered(
                f"{device.address} does not offer mdev type {type_id} (it offers: {listed}); "
                "pick one of those types or another parent device"
            )
        return offered

    def _no_instances_message(self, device: ParentDevice, offered: MdevType) -> str:
        on_gpu = [m for m in self.mdevs() if self._gpu_of(m.parent) == device.gpu]
        others = sorted({m.type_id for m in on_gpu if m.type_id != offered.id})
        if others:
            return (
                f"{device.address} has no instance of {offered.id} left: GPU {device.gpu} "
                f"already holds mdevs of type {', '.join(others)} and NVIDIA GPUs run one "
                "type at a time; remove the unused mdevs of the old type "
                "(`vgpucloud host mdevs` lists them) or use another GPU"
            )
        used = sum(1 for m in on_gpu if m.type_id == offered.id)
        return (
            f"{device.address} has no instance of {offered.id} left ({used} in use); "
            "free one by deleting a guest that uses it, or use another parent device"
        )

    def _gpu_of(self, parent: str) -> str:
        physfn = self._device_dir(parent)
        link = _link_name(physfn / "physfn") if physfn is not None else None
        return link or parent

    def _write(self, target: Path, data: str, *, what: str) -> None:
        self._check_inside(target)
        try:
            self.kernel.write(target, data)
        except OSError as exc:
            raise translate_os_error(exc, what) from exc

    def _check_inside(self, target: Path) -> None:
        # The names were validated; this also refuses a tree whose symlinks leave <root>/sys.
        real_sys = os.path.realpath(self.sys)
        real_dir = os.path.realpath(target.parent)
        if os.path.commonpath([real_sys, real_dir]) != real_sys:
            raise HostDeviceError(
                f"{target} resolves to {real_dir}, outside {real_sys}; the sysfs tree is "
                "corrupt or hostile: fix the tree or the --sysfs-root"
            )

    def _type_dir(self, parent: str, type_id: str) -> Path:
        return self.sys / "class" / "mdev_bus" / parent / "mdev_supported_types" / type_id

    def _device_dir(self, address: str) -> Path | None:
        for base in (self.sys / "class" / "mdev_bus", self.sys / "bus" / "pci" / "devices"):
            if (base / address).exists():
                return (base / address).resolve()
        return None

    def _mdev_parents(self) -> Iterator[ParentDevice]:
        bus = self.sys / "class" / "mdev_bus"
        if not bus.is_dir():
            return
        for entry in sorted(bus.iterdir()):
            parent = self._mdev_parent(entry.name)
            if parent is not None:
                yield parent

    def _mdev_parent(self, address: str) -> ParentDevice | None:
        entry = self.sys / "class" / "mdev_bus" / address
        types_dir = entry / "mdev_supported_types"
        if not types_dir.is_dir():
            return None
        device_dir = entry.resolve()
        if not device_dir.is_relative_to(self.sys.resolve()):
            return None  # the kernel never links outside /sys: not a device we trust
        types = tuple(
            self._read_type(d) for d in sorted(types_dir.iterdir())
            if names.MDEV_TYPE_RE.match(d.name) and d.is_dir()
        )
        physfn = _link_name(device_dir / "physfn")
        if "virtual" in device_dir.relative_to(self.sys.resolve()).parts:
            kind = ParentKind.VIRTUAL
        else:
            kind = ParentKind.SRIOV_VF if physfn else ParentKind.PCI
        return self._with_pci_facts(address, kind, types, device_dir)

    def _variant_vfs(self) -> Iterator[ParentDevice]:
        pci = self.sys / "bus" / "pci" / "devices"
        if not pci.is_dir():
            return
        for entry in sorted(pci.iterdir()):
            if names.PCI_ADDRESS_RE.match(entry.name):
                vf = self._variant_vf(entry.name)
                if vf is not None:
                    yield vf

    def _variant_vf(self, address: str) -> ParentDevice | None:
        entry = self.sys / "bus" / "pci" / "devices" / address
        creatable = _read(entry / "nvidia" / "creatable_vgpu_types")
        if creatable is None:
            return None
        current = parse_current_vgpu_type(_read(entry / "nvidia" / "current_vgpu_type") or "")
        types = tuple(
            MdevType(id=variant_type_id(number), name=name, description="", fields=(),
                     available_instances=0 if current else 1, device_api="vfio-pci")
            for number, name in parse_creatable_vgpu_types(creatable)
        )
        parent = self._with_pci_facts(address, ParentKind.NVIDIA_VARIANT, types, entry.resolve())
        current_id = variant_type_id(current) if current else None
        return dataclasses.replace(parent, current_type=current_id)

    def _with_pci_facts(self, address: str, kind: ParentKind, types: tuple[MdevType, ...],
                        device_dir: Path) -> ParentDevice:
        vendor = _read(device_dir / "vendor")
        device = _read(device_dir / "device")
        numa = _read(device_dir / "numa_node")
        virtfns = sorted(
            (p for p in device_dir.glob("virtfn*") if p.name[6:].isdigit()),
            key=lambda p: int(p.name[6:]),
        )
        return ParentDevice(
            address=address,
            kind=kind,
            types=types,
            vendor_id=vendor.strip() if vendor else None,
            device_id=device.strip() if device else None,
            numa_node=parse_int(numa) if numa is not None else None,
            driver=_link_name(device_dir / "driver"),
            physfn=_link_name(device_dir / "physfn"),
            virtfns=tuple(n for n in (_link_name(p) for p in virtfns) if n),
        )

    @staticmethod
    def _read_type(type_dir: Path) -> MdevType:
        name = _read(type_dir / "name")
        description = _read(type_dir / "description") or ""
        return MdevType(
            id=type_dir.name,
            name=name.strip() if name is not None else None,
            description=description.strip(),
            fields=parse_description(description),
            available_instances=parse_int(_read(type_dir / "available_instances") or "", 0) or 0,
            device_api=(_read(type_dir / "device_api") or "").strip(),
        )

    def _read_mdev(self, entry: Path) -> Mdev | None:
        if not names.UUID_RE.match(entry.name) or not entry.exists():
            return None
        type_id = _link_name(entry / "mdev_type")
        if type_id is None:
            return None
        group = _link_name(entry / "iommu_group")
        return Mdev(
            uuid=entry.name,
            parent=entry.resolve().parent.name,
            type_id=type_id,
            iommu_group=int(group) if group and group.isdigit() else None,
        )


_NO_INSTANCES = {errno.EDQUOT, errno.EUSERS, errno.ENOSPC}


def translate_os_error(exc: OSError, what: str) -> HostDeviceError:
    """The typed error for a kernel errno, naming the operation and the fix."""
    reason = exc.strerror or str(exc)
    if exc.errno == errno.EBUSY:
        return MdevBusy(
            f"cannot {what}: the kernel says {reason!r}; a guest holds the device: "
            "stop or delete the guest first"
        )
    if exc.errno == errno.EEXIST:
        return MdevExists(f"cannot {what}: an mdev with that uuid already exists; "
                          "reuse it or pick a new uuid")
    if exc.errno in _NO_INSTANCES:
        return NoInstancesLeft(f"cannot {what}: the driver has no instance left ({reason}); "
                               "free one or use another parent")
    if exc.errno in (errno.ENODEV, errno.ENOENT):
        return ParentGone(f"cannot {what}: the device vanished ({reason}); rescan the host")
    if exc.errno in (errno.EACCES, errno.EPERM):
        return HostDeviceError(f"cannot {what}: {reason}; run the agent as root")
    return HostDeviceError(f"cannot {what}: the kernel refused it ({reason}); "
                           "check the host's kernel log (dmesg) for the driver's reason")
