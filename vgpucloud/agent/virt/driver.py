"""The guest driver protocol the agent programs against, and the values it returns.

Two drivers implement it: ``FakeDriver`` (pure Python, guests as files under the host's
state dir) and ``LibvirtDriver`` (libvirt-python). Every mutating call is idempotent so a
host task delivered twice, or replayed after a crash, converges to the same state:

- ``define(spec)`` creates or replaces the persistent definition of ``spec.uuid``;
- ``start(uuid)`` leaves the guest running (a running guest is left alone);
- ``stop(uuid)`` is a hard power off (a stopped guest is left alone);
- ``undefine(uuid)`` powers the guest off if needed and forgets it (absent is fine).
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Iterable
from typing import NamedTuple, Protocol

from vgpucloud.agent.virt.domain import GuestSpec


class GuestState(enum.StrEnum):
    """libvirt's ``virDomainState`` values, by name."""

    NOSTATE = "nostate"
    RUNNING = "running"
    BLOCKED = "blocked"
    PAUSED = "paused"
    SHUTDOWN = "shutdown"  # being shut down
    SHUTOFF = "shutoff"
    CRASHED = "crashed"
    PMSUSPENDED = "pmsuspended"

    @property
    def is_active(self) -> bool:
        """True while a QEMU process exists, i.e. while the guest holds its mdevs."""
        return self not in (GuestState.SHUTOFF, GuestState.CRASHED, GuestState.NOSTATE)


class Version(NamedTuple):
    major: int
    minor: int
    micro: int = 0

    @classmethod
    def from_libvirt(cls, number: int) -> Version:
        """Decode libvirt's ``major * 1_000_000 + minor * 1_000 + micro``: 8006000 -> 8.6.0."""
        return cls(number // 1_000_000, number // 1_000 % 1_000, number % 1_000)

    @classmethod
    def parse(cls, text: str) -> Version:
        """The leading ``X.Y[.Z]`` of a version string: ``'6.8.0-45-generic'`` -> 6.8.0."""
        match = re.match(r"\s*(\d+)\.(\d+)(?:\.(\d+))?", text)
        if match is None:
            raise ValueError(f"{text!r} does not start with a version number like '6.8.0'")
        return cls(int(match[1]), int(match[2]), int(match[3] or 0))

    def __str__(self) -> str:
        return f"{self.major}.{self.minor}.{self.micro}"


# Minimums for live-migrating a guest that holds mdevs (nova's vGPU doc, 2024.1 onwards).
MDEV_LIVE_MIGRATION_MINIMUMS = {
    "libvirt": Version(8, 6, 0),
    "QEMU": Version(8, 1, 0),
    "Linux kernel": Version(5, 18, 0),
}


@dataclasses.dataclass(frozen=True, slots=True)
class HostInfo:
    """What the hypervisor says about itself: enough to judge mdev live migration."""

    hypervisor_type: str
    libvirt_version: Version
    qemu_version: Version
    kernel_version: Version

    def mdev_live_migration_problems(self) -> list[str]:
        """Why this host cannot live-migrate guests with mdevs; empty when it can."""
        have = {
            "libvirt": self.libvirt_version,
            "QEMU": self.qemu_version,
            "Linux kernel": self.kernel_version,
        }
        return [
            f"{what} {have[what]} is older than {minimum}, the minimum for live-migrating "
            f"guests with mdevs; upgrade {what} on this host"
            for what, minimum in MDEV_LIVE_MIGRATION_MINIMUMS.items()
            if have[what] < minimum
        ]


@dataclasses.dataclass(frozen=True, slots=True)
class GuestInfo:
    """One guest as the hypervisor reports it. ``mdev_uuids`` come from the live XML
    while the guest runs (what it holds), from the persistent XML otherwise."""

    uuid: str
    name: str
    state: GuestState
    mdev_uuids: tuple[str, ...]
    ours: bool = True  # defined by vgpucloud (carries our metadata marker)


class VirtDriver(Protocol):
    """The agent's only way to guests. Errors are ``VirtError`` subclasses."""

    def host_info(self) -> HostInfo: ...

    def define(self, spec: GuestSpec) -> None: ...

    def start(self, guest_uuid: str) -> None: ...

    def stop(self, guest_uuid: str) -> None: ...

    def undefine(self, guest_uuid: str) -> None: ...

    def state(self, guest_uuid: str) -> GuestState | None: ...

    def list_guests(self) -> list[GuestInfo]: ...

    def get_xml(self, guest_uuid: str) -> str: ...

    def close(self) -> None: ...


def mdev_holders(guests: Iterable[GuestInfo]) -> dict[str, GuestInfo]:
    """Which guest references each mdev UUID: ``{mdev_uuid: guest}``.

    The orphan-mdev check after a type change or host reboot is then a set difference:
    ``set(os.listdir('/sys/bus/mdev/devices')) - mdev_holders(driver.list_guests()).keys()``.
    A running guest wins over a stopped one that names the same mdev, since it is the
    one the kernel sees holding the device.
    """
    holders: dict[str, GuestInfo] = {}
    for guest in guests:
        for mdev_uuid in guest.mdev_uuids:
            current = holders.get(mdev_uuid)
            if current is None or (guest.state.is_active and not current.state.is_active):
                holders[mdev_uuid] = guest
    return holders
