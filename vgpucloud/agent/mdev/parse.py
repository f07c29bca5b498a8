"""Parsers for the text files drivers put in sysfs.

Each one takes the file's content and returns plain values; none touches the filesystem.
"""

from __future__ import annotations

import re

_NVIDIA_PAIR_RE = re.compile(r"\s*([a-z_]+)\s*=\s*([^,]*?)\s*(?:,|$)")
_I915_LINE_RE = re.compile(r"^\s*([a-z_]+)\s*:\s*(.*?)\s*$")
_CREATABLE_LINE_RE = re.compile(r"^\s*(\d+)\s*:\s*(.+?)\s*$")


def parse_description(text: str) -> tuple[tuple[str, str], ...]:
    """Key/value pairs of an mdev type's ``description``, in file order.

    NVIDIA writes one comma-separated line::

        num_heads=4, frl_config=45, framebuffer=1024M, max_resolution=5120x2880, max_instance=16

    i915 (GVT-g) writes one ``key: value`` per line::

        low_gm_size: 128MB
        high_gm_size: 512MB
        fence: 4
        resolution: 1920x1200
        weight: 4

    Anything else yields no pairs (the raw text is still kept by the caller).
    """
    text = text.strip()
    if not text:
        return ()
    if "=" in text.splitlines()[0]:
        return tuple((m.group(1), m.group(2)) for m in _NVIDIA_PAIR_RE.finditer(text)
                     if m.group(1))
    pairs = [_I915_LINE_RE.match(line) for line in text.splitlines()]
    return tuple((m.group(1), m.group(2)) for m in pairs if m)


def parse_creatable_vgpu_types(text: str) -> tuple[tuple[int, str], ...]:
    """``(id, name)`` pairs of a variant-driver VF's ``nvidia/creatable_vgpu_types``::

        ID    : vGPU Name
        557   : NVIDIA A40-1Q
        558   : NVIDIA A40-2Q

    The header line and blank lines are skipped.
    """
    pairs = (_CREATABLE_LINE_RE.match(line) for line in text.splitlines())
    return tuple((int(m.group(1)), m.group(2)) for m in pairs if m)


def parse_current_vgpu_type(text: str) -> int | None:
    """A variant-driver VF's ``nvidia/current_vgpu_type``: ``0`` (none) or ``557``."""
    value = text.strip()
    if not value.isdigit() or int(value) == 0:
        return None
    return int(value)


def variant_type_id(number: int) -> str:
    """The variant driver numbers types (``557``); mdev names them ``nvidia-557``."""
    return f"nvidia-{number}"


def variant_type_number(type_id: str) -> int | None:
    """``nvidia-557`` -> 557; anything else -> None."""
    prefix, _, number = type_id.partition("-")
    return int(number) if prefix == "nvidia" and number.isdigit() else None


def parse_int(text: str, default: int | None = None) -> int | None:
    """A sysfs integer attribute such as ``available_instances`` (``16\\n``) or
    ``numa_node`` (``-1\\n`` means no NUMA affinity, returned as ``default``)."""
    value = text.strip()
    try:
        number = int(value, 0)
    except ValueError:
        return default
    return default if number < 0 else number
