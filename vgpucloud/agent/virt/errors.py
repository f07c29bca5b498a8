"""Errors of the guest layer (``vgpucloud.agent.virt``).

They live here rather than in ``vgpucloud.errors`` because only the agent raises them;
they still descend from :class:`~vgpucloud.errors.VgpucloudError` so the agent's task
runner reports them with a stable code like every other error::

    VgpucloudError
    └── VirtError                  host.virt                   the hypervisor refused, or we did
        ├── DriverUnavailable      host.virt.unavailable       libvirt-python missing, libvirtd down
        ├── InvalidGuestSpec       host.virt.invalid_spec      a GuestSpec field is malformed
        ├── InvalidDomainXml       host.virt.invalid_xml       a domain XML document cannot be read
        ├── GuestNotFound          host.virt.guest_not_found   no guest with that UUID is defined
        ├── GuestNameConflict      host.virt.name_conflict     name and UUID disagree with a guest
        └── GuestStartFailed       host.virt.start_failed      the guest could not be started
"""

from __future__ import annotations

from vgpucloud.errors import VgpucloudError


class VirtError(VgpucloudError):
    """A guest operation that the hypervisor refused, or that we refused before asking it."""

    code = "host.virt"


class DriverUnavailable(VirtError):
    code = "host.virt.unavailable"


class InvalidGuestSpec(VirtError):
    code = "host.virt.invalid_spec"


class InvalidDomainXml(VirtError):
    code = "host.virt.invalid_xml"


class GuestNotFound(VirtError):
    code = "host.virt.guest_not_found"

    def __init__(self, guest_uuid: str) -> None:
        super().__init__(
            f"No guest with UUID {guest_uuid} is defined on this host; define it first "
            f"(a rebuild or a host task replay does this), or check the instance's host."
        )
        self.guest_uuid = guest_uuid


class GuestNameConflict(VirtError):
    """libvirt's pairing rule: a UUID keeps its name, and a name belongs to one UUID."""

    code = "host.virt.name_conflict"

    @classmethod
    def name_taken(cls, name: str, guest_uuid: str, owner_uuid: str) -> GuestNameConflict:
        return cls(
            f"Cannot define guest {guest_uuid}: the name {name!r} is already used by guest "
            f"{owner_uuid}; pick another name or undefine {owner_uuid} first."
        )

    @classmethod
    def renamed(cls, guest_uuid: str, name: str, known_name: str) -> GuestNameConflict:
        return cls(
            f"Cannot define guest {guest_uuid} as {name!r}: it is already defined as "
            f"{known_name!r}; undefine it first to rename it."
        )


class GuestStartFailed(VirtError):
    code = "host.virt.start_failed"
