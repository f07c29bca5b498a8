"""The guest driver over libvirt-python: the only module that imports ``libvirt``.

The import is lazy, so the rest of vgpucloud (and the fake driver) works where
libvirt-python is not installed. ``connection_uri`` is ``[libvirt] connection_uri`` of
nova.conf: ``qemu:///system`` on a compute host, ``test:///default`` in the tests.

About libvirt's test driver (``test:///default``, libvirt 9.0): it accepts our domain XML
as is, ``type='kvm'`` and the mdev ``<hostdev>`` elements included, and it defines, starts,
destroys and undefines such guests. It does not look for the mdev in sysfs, so "device not
found" on start is only exercised against real QEMU (and by the fake driver). Its
``getVersion()`` is not a QEMU version (it reports 0.0.2), and its undefine does not accept
the NVRAM and checkpoint flags, which our BIOS-booted guests never need anyway.
"""

from __future__ import annotations

import contextlib
import os
import threading
from types import ModuleType
from typing import Any

from vgpucloud.agent.virt.domain import GuestSpec, build_domain_xml, canonical_uuid, read_domain
from vgpucloud.agent.virt.driver import GuestInfo, GuestState, HostInfo, Version
from vgpucloud.agent.virt.errors import (
    DriverUnavailable,
    GuestNameConflict,
    GuestNotFound,
    GuestStartFailed,
    VirtError,
)

_INSTALL_HINT = (
    "install it with: apt-get install libvirt-dev pkg-config && "
    "pip install 'vgpucloud[libvirt]'"
)

# virDomainState numbers -> our names (libvirt's include/libvirt/libvirt-domain.h).
_STATES = {
    0: GuestState.NOSTATE,
    1: GuestState.RUNNING,
    2: GuestState.BLOCKED,
    3: GuestState.PAUSED,
    4: GuestState.SHUTDOWN,
    5: GuestState.SHUTOFF,
    6: GuestState.CRASHED,
    7: GuestState.PMSUSPENDED,
}


def load_libvirt() -> ModuleType:
    """The ``libvirt`` module, or DriverUnavailable saying how to install it."""
    try:
        import libvirt  # type: ignore[import-untyped, unused-ignore]
    except ImportError as exc:
        raise DriverUnavailable(
            f"The libvirt virt driver needs libvirt-python, which is not importable ({exc}); "
            f"{_INSTALL_HINT}. Or set the agent's virt driver to 'fake'."
        ) from None
    # libvirt prints every error to stderr unless a handler is set; ours are raised instead.
    libvirt.registerErrorHandler(lambda _ctx, _err: None, None)
    module: ModuleType = libvirt
    return module


class LibvirtDriver:
    """Guests of the libvirt daemon at ``connection_uri``."""

    def __init__(self, connection_uri: str) -> None:
        self.connection_uri = connection_uri
        self._libvirt = load_libvirt()
        self._lock = threading.Lock()
        self._conn: Any = self._open()

    # --- VirtDriver ------------------------------------------------------------

    def host_info(self) -> HostInfo:
        conn = self._connection()
        return HostInfo(
            hypervisor_type=conn.getType(),
            libvirt_version=Version.from_libvirt(conn.getLibVersion()),
            qemu_version=Version.from_libvirt(conn.getVersion()),
            # The agent runs on the host it manages, so the local kernel is the host's.
            kernel_version=Version.parse(os.uname().release),
        )

    def define(self, spec: GuestSpec) -> None:
        self._check_identity(spec)
        self._call(f"define guest {spec.name} ({spec.uuid})",
                   self._connection().defineXML, build_domain_xml(spec))

    def start(self, guest_uuid: str) -> None:
        domain = self._domain(guest_uuid)
        state = self._state_of(domain)
        if state == GuestState.RUNNING:
            return
        if state == GuestState.PAUSED:
            self._call(f"resume guest {guest_uuid}", domain.resume)
            return
        try:
            domain.create()
        except self._libvirt.libvirtError as exc:
            if self._state_of(domain) == GuestState.RUNNING:
                return  # another task started it between our look and our create
            raise GuestStartFailed(
                f"Cannot start guest {domain.name()} ({guest_uuid}): {exc.get_error_message()}. "
                f"If a mediated device is named, create it (or redefine the guest without it)."
            ) from None

    def stop(self, guest_uuid: str) -> None:
        self._power_off(self._domain(guest_uuid))

    def undefine(self, guest_uuid: str) -> None:
        try:
            domain = self._domain(guest_uuid)
        except GuestNotFound:
            return
        self._power_off(domain)
        flags = (self._libvirt.VIR_DOMAIN_UNDEFINE_MANAGED_SAVE
                 | self._libvirt.VIR_DOMAIN_UNDEFINE_SNAPSHOTS_METADATA)
        try:
            domain.undefineFlags(flags)
        except self._libvirt.libvirtError as exc:
            if exc.get_error_code() != self._libvirt.VIR_ERR_NO_DOMAIN:
                raise self._error(f"undefine guest {domain.UUIDString()}", exc) from None

    def state(self, guest_uuid: str) -> GuestState | None:
        try:
            return self._state_of(self._domain(guest_uuid))
        except GuestNotFound:
            return None

    def list_guests(self) -> list[GuestInfo]:
        guests = []
        for domain in self._call("list guests", self._connection().listAllDomains, 0):
            try:
                summary = read_domain(domain.XMLDesc(0))
                state = _STATES.get(domain.state()[0], GuestState.NOSTATE)
            except self._libvirt.libvirtError as exc:
                if exc.get_error_code() == self._libvirt.VIR_ERR_NO_DOMAIN:
                    continue  # undefined while we were listing
                raise self._error("list guests", exc) from None
            guests.append(GuestInfo(summary.uuid, summary.name, state,
                                    summary.mdev_uuids, summary.ours))
        return sorted(guests, key=lambda g: g.name)

    def get_xml(self, guest_uuid: str) -> str:
        """The live XML of a running guest, the persistent one otherwise (``virsh dumpxml``)."""
        domain = self._domain(guest_uuid)
        return str(self._call(f"read the XML of guest {guest_uuid}", domain.XMLDesc, 0))

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                # A connection that already died has nothing left to release.
                with contextlib.suppress(self._libvirt.libvirtError):
                    self._conn.close()
                self._conn = None

    # --- internals -------------------------------------------------------------

    def _open(self) -> Any:
        try:
            return self._libvirt.open(self.connection_uri)
        except self._libvirt.libvirtError as exc:
            raise DriverUnavailable(
                f"Cannot connect to libvirt at {self.connection_uri!r}: "
                f"{exc.get_error_message()}. Check that libvirtd (or virtqemud) runs and that "
                f"this user may use it, or fix [libvirt] connection_uri."
            ) from None

    def _connection(self) -> Any:
        # libvirtd restarts (package upgrades) kill connections; reopen instead of failing
        # every later task.
        with self._lock:
            if self._conn is None or not self._conn.isAlive():
                self._conn = self._open()
            return self._conn

    def _domain(self, guest_uuid: str) -> Any:
        key = canonical_uuid(guest_uuid, "guest")
        try:
            return self._connection().lookupByUUIDString(key)
        except self._libvirt.libvirtError as exc:
            if exc.get_error_code() == self._libvirt.VIR_ERR_NO_DOMAIN:
                raise GuestNotFound(key) from None
            raise self._error(f"look up guest {key}", exc) from None

    def _state_of(self, domain: Any) -> GuestState:
        code = self._call(f"read the state of guest {domain.UUIDString()}", domain.state)[0]
        return _STATES.get(code, GuestState.NOSTATE)

    def _power_off(self, domain: Any) -> None:
        """Hard power off (``virsh destroy``); a guest that is already off is left alone."""
        if not self._call(f"read the state of guest {domain.UUIDString()}", domain.isActive):
            return
        try:
            domain.destroy()
        except self._libvirt.libvirtError as exc:
            # It may have shut itself down between isActive() and destroy().
            if self._call(f"read the state of guest {domain.UUIDString()}", domain.isActive):
                raise self._error(f"power off guest {domain.UUIDString()}", exc) from None

    def _check_identity(self, spec: GuestSpec) -> None:
        # libvirt refuses these too, but with a message that names neither fix.
        for domain in self._call("list guests", self._connection().listAllDomains, 0):
            other_uuid, other_name = domain.UUIDString(), domain.name()
            if other_uuid == spec.uuid and other_name != spec.name:
                raise GuestNameConflict.renamed(spec.uuid, spec.name, other_name)
            if other_name == spec.name and other_uuid != spec.uuid:
                raise GuestNameConflict.name_taken(spec.name, spec.uuid, other_uuid)

    def _call(self, what: str, func: Any, *args: Any) -> Any:
        try:
            return func(*args)
        except self._libvirt.libvirtError as exc:
            raise self._error(what, exc) from None

    def _error(self, what: str, exc: Any) -> VirtError:
        return VirtError(
            f"libvirt at {self.connection_uri} could not {what}: {exc.get_error_message()} "
            f"(libvirt error code {exc.get_error_code()}); see libvirtd's log for details."
        )
