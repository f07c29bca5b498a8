"""A guest driver in pure Python: the default of the embedded cloud and the scale runs.

It keeps files the way libvirtd keeps them, so an operator (or a test) can look::

    <state_dir>/qemu/instance-0000000a.xml   persistent definition  (/etc/libvirt/qemu/NAME.xml)
    <state_dir>/run/instance-0000000a.xml    live definition, while running  (/run/libvirt/qemu)
    <state_dir>/run/instance-0000000a.json   {"uuid": ..., "name": ..., "state": "running"}

A guest without a ``run/`` state file is shut off, so deleting ``run/`` is exactly what a
host reboot does to libvirt's guests (see :meth:`FakeDriver.host_reboot`). Every file is
written to a temporary file in the same directory and renamed over the old one, so a crash
leaves the old file or the new one, never half of either. A new FakeDriver on the same
directory sees the same guests; one driver per directory at a time, like one libvirtd per host.

The driver knows nothing of the simulated kernel: the composition root passes
``on_start(mdev_uuids)`` / ``on_stop(mdev_uuids)`` to tell it which mdevs a guest now holds
or released, and ``mdev_exists(uuid)`` so that starting a guest whose mdev is gone fails as
QEMU would. Like the kernel, it refuses to start a guest on an mdev another running guest holds.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path

from vgpucloud.agent.virt.domain import GuestSpec, build_domain_xml, canonical_uuid, read_domain
from vgpucloud.agent.virt.driver import GuestInfo, GuestState, HostInfo, Version
from vgpucloud.agent.virt.errors import (
    GuestNameConflict,
    GuestNotFound,
    GuestStartFailed,
    VirtError,
)

MdevHook = Callable[[tuple[str, ...]], None]
MdevCheck = Callable[[str], bool]

# An Ubuntu 24.04 host: recent enough for mdev live migration, so simulations can do it.
DEFAULT_HOST_INFO = HostInfo(
    hypervisor_type="fake",
    libvirt_version=Version(10, 0, 0),
    qemu_version=Version(8, 2, 2),
    kernel_version=Version(6, 8, 0),
)


def atomic_write(path: Path, text: str, *, fsync: bool = True) -> None:
    """Replace ``path`` with ``text`` through a temporary file and a rename.

    The temporary file lives in the same directory (a rename is only atomic within one
    file system) and is named ``.<name>.<random>.tmp`` so readers never mistake it for data.
    """
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as tmp:
            tmp.write(text)
            tmp.flush()
            if fsync:
                os.fsync(tmp.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


class FakeDriver:
    """Guests as files under ``state_dir``; see the module docstring for the layout."""

    def __init__(
        self,
        state_dir: str | os.PathLike[str],
        on_start: MdevHook | None = None,
        on_stop: MdevHook | None = None,
        *,
        mdev_exists: MdevCheck | None = None,
        host_info: HostInfo = DEFAULT_HOST_INFO,
        fsync: bool = True,
    ) -> None:
        self.state_dir = Path(state_dir)
        self.config_dir = self.state_dir / "qemu"
        self.run_dir = self.state_dir / "run"
        self._on_start = on_start
        self._on_stop = on_stop
        self._mdev_exists = mdev_exists
        self._host_info = host_info
        self._fsync = fsync
        self._lock = threading.RLock()
        self.config_dir.mkdir(parents=True, exist_ok=True)
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self._names = self._load_index()  # guest uuid -> name

    # --- VirtDriver ------------------------------------------------------------

    def host_info(self) -> HostInfo:
        return self._host_info

    def define(self, spec: GuestSpec) -> None:
        with self._lock:
            self._check_identity(spec)
            if spec.uuid not in self._names:
                # Run files of an earlier guest of this name, left by a crash, are not ours.
                self._unlink(self.run_dir / f"{spec.name}.json")
                self._unlink(self.run_dir / f"{spec.name}.xml")
            self._write(self.config_dir / f"{spec.name}.xml", build_domain_xml(spec))
            self._names[spec.uuid] = spec.name

    def start(self, guest_uuid: str) -> None:
        with self._lock:
            name = self._name_of(guest_uuid)
            if self._is_running(name):
                return
            live_xml = (self.config_dir / f"{name}.xml").read_text(encoding="utf-8")
            summary = read_domain(live_xml)
            self._check_mdevs_usable(name, summary.mdev_uuids)
            # The hooks get PCI hostdevs (variant-driver VFs) too: QEMU opens those as well.
            devices = summary.held_devices
            self._write(self.run_dir / f"{name}.xml", live_xml)
            held = False
            try:
                # QEMU opens the mdevs while it starts, before the guest counts as running.
                if self._on_start is not None:
                    self._on_start(devices)
                held = True
                self._write_state(name, canonical_uuid(guest_uuid, "guest"), GuestState.RUNNING)
            except BaseException:
                self._unlink(self.run_dir / f"{name}.xml")
                if held and self._on_stop is not None:
                    self._on_stop(devices)
                raise

    def stop(self, guest_uuid: str) -> None:
        with self._lock:
            name = self._name_of(guest_uuid)
            if not self._is_running(name):
                return
            held = read_domain(self._live_xml(name)).held_devices
            # The state file goes first: once it is gone the guest is off, whatever follows.
            self._unlink(self.run_dir / f"{name}.json")
            self._unlink(self.run_dir / f"{name}.xml")
            if self._on_stop is not None:
                self._on_stop(held)

    def undefine(self, guest_uuid: str) -> None:
        with self._lock:
            key = canonical_uuid(guest_uuid, "guest")
            if key not in self._names:
                return
            self.stop(key)
            self._unlink(self.config_dir / f"{self._names[key]}.xml")
            del self._names[key]

    def state(self, guest_uuid: str) -> GuestState | None:
        with self._lock:
            name = self._names.get(canonical_uuid(guest_uuid, "guest"))
            if name is None:
                return None
            return GuestState.RUNNING if self._is_running(name) else GuestState.SHUTOFF

    def list_guests(self) -> list[GuestInfo]:
        with self._lock:
            return [self._guest_info(guest_uuid, name)
                    for guest_uuid, name in sorted(self._names.items(), key=lambda i: i[1])]

    def get_xml(self, guest_uuid: str) -> str:
        """The live XML of a running guest, the persistent one otherwise (as ``virsh dumpxml``)."""
        with self._lock:
            return self._live_xml(self._name_of(guest_uuid))

    def close(self) -> None:
        """Nothing to release: every call already left its files complete on disk."""

    # --- simulation ------------------------------------------------------------

    def host_reboot(self) -> None:
        """What a host reboot does to guests: every one is shut off, definitions stay.

        No ``on_stop`` hook runs: a rebooted kernel has lost its mdevs as well, and the
        simulated kernel is reset by whoever reboots it.
        """
        with self._lock:
            for path in self.run_dir.iterdir():
                self._unlink(path)

    # --- internals -------------------------------------------------------------

    def _load_index(self) -> dict[str, str]:
        names: dict[str, str] = {}
        for path in self.config_dir.iterdir():
            if path.name.startswith(".") and path.name.endswith(".tmp"):
                self._unlink(path)  # left by a crash between write and rename
                continue
            if path.suffix != ".xml":
                continue
            try:
                summary = read_domain(path.read_text(encoding="utf-8"))
            except VirtError as exc:
                raise VirtError(
                    f"Guest definition {path} cannot be read ({exc.message}); move it away "
                    f"or fix it, then restart the agent."
                ) from exc
            names[summary.uuid] = summary.name
        for path in self.run_dir.glob(".*.tmp"):
            self._unlink(path)
        return names

    def _check_identity(self, spec: GuestSpec) -> None:
        # The same rules as libvirt's virDomainObjListAdd: a UUID keeps its name, and a
        # name belongs to one UUID.
        known_name = self._names.get(spec.uuid)
        if known_name is not None and known_name != spec.name:
            raise GuestNameConflict.renamed(spec.uuid, spec.name, known_name)
        for other_uuid, other_name in self._names.items():
            if other_name == spec.name and other_uuid != spec.uuid:
                raise GuestNameConflict.name_taken(spec.name, spec.uuid, other_uuid)

    def _check_mdevs_usable(self, name: str, mdevs: tuple[str, ...]) -> None:
        for mdev_uuid in mdevs:
            if self._mdev_exists is not None and not self._mdev_exists(mdev_uuid):
                raise GuestStartFailed(
                    f"Cannot start guest {name}: device not found: mediated device "
                    f"'{mdev_uuid}' not found. Create the mdev (the agent does this from "
                    f"its ledger) or redefine the guest without it."
                )
            for other_uuid, other_name in self._names.items():
                if other_name != name and self._is_running(other_name) and mdev_uuid in (
                    read_domain(self._live_xml(other_name)).mdev_uuids
                ):
                    raise GuestStartFailed(
                        f"Cannot start guest {name}: mediated device '{mdev_uuid}' is busy, "
                        f"running guest {other_name} ({other_uuid}) holds it. Stop that guest "
                        f"or give {name} another mdev."
                    )

    def _guest_info(self, guest_uuid: str, name: str) -> GuestInfo:
        summary = read_domain(self._live_xml(name))
        state = GuestState.RUNNING if self._is_running(name) else GuestState.SHUTOFF
        return GuestInfo(guest_uuid, name, state, summary.mdev_uuids, summary.ours)

    def _name_of(self, guest_uuid: str) -> str:
        key = canonical_uuid(guest_uuid, "guest")
        name = self._names.get(key)
        if name is None:
            raise GuestNotFound(key)
        return name

    def _is_running(self, name: str) -> bool:
        path = self.run_dir / f"{name}.json"
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return False
        except ValueError as exc:
            raise VirtError(
                f"Guest state file {path} is not JSON ({exc}); delete it to mark the "
                f"guest shut off."
            ) from None
        return bool(record.get("state") == GuestState.RUNNING)

    def _live_xml(self, name: str) -> str:
        live = self.run_dir / f"{name}.xml"
        path = live if self._is_running(name) and live.exists() else self.config_dir / f"{name}.xml"
        return path.read_text(encoding="utf-8")

    def _write_state(self, name: str, guest_uuid: str, state: GuestState) -> None:
        record = {"uuid": guest_uuid, "name": name, "state": state.value}
        self._write(self.run_dir / f"{name}.json", json.dumps(record, indent=2) + "\n")

    def _write(self, path: Path, text: str) -> None:
        atomic_write(path, text, fsync=self._fsync)

    @staticmethod
    def _unlink(path: Path) -> None:
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
