"""Rules for resource class and trait names (pure).

Standard names come from os-resource-classes / os-traits and are read-only; operators and
agents add their own, which must look like ``CUSTOM_MDEV_NVIDIA_35``.
"""

from __future__ import annotations

import re

from vgpucloud.errors import BadRequest

CUSTOM_PREFIX = "CUSTOM_"
CUSTOM_NAME = re.compile(r"^CUSTOM_[A-Z0-9_]+$")


def is_custom(name: str) -> bool:
    return name.startswith(CUSTOM_PREFIX)


def check_custom_name(kind: str, name: str) -> None:
    """Refuse a name an operator may not create, e.g. ``VGPU`` or ``CUSTOM_lower``.

    ``kind`` is "resource class" or "trait", and appears in the message.
    """
    if not CUSTOM_NAME.fullmatch(name):
        raise BadRequest(
            f"{kind} {name!r} is not a valid custom name: it must start with "
            f"'{CUSTOM_PREFIX}' followed by upper-case letters, digits and underscores "
            f"(e.g. CUSTOM_MDEV_NVIDIA_35); standard names cannot be created"
        )


def check_not_standard(kind: str, name: str, action: str) -> None:
    """Refuse changing a standard name (``action`` is "delete" or "update")."""
    if not is_custom(name):
        raise BadRequest(f"Cannot {action} standard {kind} {name}.")
