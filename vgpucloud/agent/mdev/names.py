"""Validation of every name we put into a sysfs path.

A path under the sysfs root is only ever built from names that passed these checks, so a
bad config value or a hostile API string can never walk out of ``/sys`` (DESIGN rule 9).
Examples of valid names: PCI address ``0000:84:00.0``, virtual parent ``mtty``,
mdev type ``nvidia-35`` / ``i915-GVTg_V5_4`` / ``mtty-2``, UUID
``3b3c5f0e-8a0e-4f5a-9c47-2f0c1a6f8f21``.
"""

from __future__ import annotations

import re

from vgpucloud.errors import InvalidDeviceName

PCI_ADDRESS_RE = re.compile(r"^[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]$")
# Virtual mdev parents (the kernel's mtty sample) are named after their driver.
VIRTUAL_PARENT_RE = re.compile(r"^[a-z][a-z0-9_-]{0,63}$")
MDEV_TYPE_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$")
UUID_RE = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")


def is_pci_address(value: str) -> bool:
    return bool(PCI_ADDRESS_RE.match(value))


def normalize_pci_address(value: str) -> str:
    """``0000:E7:00.0`` -> ``0000:e7:00.0``: the kernel names devices in lower case."""
    return value.strip().lower()


def check_parent_name(value: str) -> str:
    """The name of an mdev parent: a PCI address or a virtual device name like ``mtty``."""
    if PCI_ADDRESS_RE.match(value) or VIRTUAL_PARENT_RE.match(value):
        return value
    raise InvalidDeviceName(
        f"parent device {value!r} is not a PCI address (DDDD:BB:SS.F, e.g. 0000:84:00.0) "
        "nor a virtual device name; use the name listed under /sys/class/mdev_bus"
    )


def check_pci_address(value: str) -> str:
    if PCI_ADDRESS_RE.match(value):
        return value
    raise InvalidDeviceName(
        f"{value!r} is not a PCI address; write it as DDDD:BB:SS.F in lower case, "
        "e.g. 0000:84:00.0"
    )


def check_type_id(value: str) -> str:
    if MDEV_TYPE_RE.match(value):
        return value
    raise InvalidDeviceName(
        f"mdev type {value!r} is not a valid type id; use a name listed under "
        "/sys/class/mdev_bus/<parent>/mdev_supported_types, e.g. nvidia-35"
    )


def check_uuid(value: str) -> str:
    if UUID_RE.match(value):
        return value
    raise InvalidDeviceName(
        f"mdev uuid {value!r} is not a canonical UUID; write it as 8-4-4-4-12 lower-case "
        "hex digits, e.g. 3b3c5f0e-8a0e-4f5a-9c47-2f0c1a6f8f21"
    )
