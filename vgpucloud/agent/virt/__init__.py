"""The agent's guest layer: a small driver protocol, pure domain XML, two drivers.

``make_driver('fake', state_dir, uri)`` keeps guests as files under ``state_dir``
(the embedded cloud and the scale runs); ``make_driver('libvirt', state_dir, uri)``
talks to libvirt at ``uri`` (``[libvirt] connection_uri``, e.g. ``qemu:///system``).
"""

from __future__ import annotations

import os

from vgpucloud.agent.virt.domain import (
    GuestMdev,
    GuestSpec,
    build_domain_xml,
    mdev_uuids_in,
    read_domain,
)
from vgpucloud.agent.virt.driver import (
    GuestInfo,
    GuestState,
    HostInfo,
    Version,
    VirtDriver,
    mdev_holders,
)
from vgpucloud.agent.virt.errors import (
    DriverUnavailable,
    GuestNameConflict,
    GuestNotFound,
    GuestStartFailed,
    InvalidDomainXml,
    InvalidGuestSpec,
    VirtError,
)
from vgpucloud.agent.virt.fake import FakeDriver, MdevCheck, MdevHook
from vgpucloud.errors import ConfigError

DRIVER_KINDS = ("fake", "libvirt")

__all__ = [
    "DRIVER_KINDS",
    "DriverUnavailable",
    "FakeDriver",
    "GuestInfo",
    "GuestMdev",
    "GuestNameConflict",
    "GuestNotFound",
    "GuestSpec",
    "GuestStartFailed",
    "GuestState",
    "HostInfo",
    "InvalidDomainXml",
    "InvalidGuestSpec",
    "Version",
    "VirtDriver",
    "VirtError",
    "build_domain_xml",
    "make_driver",
    "mdev_holders",
    "mdev_uuids_in",
    "read_domain",
]


def make_driver(
    kind: str,
    state_dir: str | os.PathLike[str],
    connection_uri: str,
    *,
    on_start: MdevHook | None = None,
    on_stop: MdevHook | None = None,
    mdev_exists: MdevCheck | None = None,
) -> VirtDriver:
    """The guest driver named ``kind``.

    The mdev hooks only reach the fake driver: under libvirt, QEMU itself opens and
    releases the mdevs and the real kernel enforces what the hooks tell the simulated one.
    """
    if kind == "fake":
        return FakeDriver(state_dir, on_start, on_stop, mdev_exists=mdev_exists)
    if kind == "libvirt":
        from vgpucloud.agent.virt.libvirt_driver import LibvirtDriver

        return LibvirtDriver(connection_uri)
    raise ConfigError([
        f"virt driver {kind!r} is unknown; use one of {', '.join(DRIVER_KINDS)} "
        f"('libvirt' on a real compute host, 'fake' for simulated hosts)"
    ])
