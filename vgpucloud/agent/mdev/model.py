"""The kernel's nouns, as frozen values read from sysfs.

``ParentDevice`` is a device that offers mdev types (a pGPU, an SR-IOV VF, the virtual
``mtty`` device) or, on hosts with NVIDIA's kernel variant driver, a VF that takes a vGPU
type directly. ``MdevType`` is one entry of ``mdev_supported_types``; ``Mdev`` is one device
under ``/sys/bus/mdev/devices``.
"""

from __future__ import annotations

import dataclasses
import enum


class ParentKind(enum.StrEnum):
    PCI = "pci"                        # a whole pGPU offering mdev types (M60, T4, GVT-g)
    SRIOV_VF = "sriov-vf"              # an SR-IOV VF offering mdev types (A40-like)
    VIRTUAL = "virtual"                # a device under /sys/devices/virtual (mtty)
    NVIDIA_VARIANT = "nvidia-variant"  # a VF driven by nvidia's kernel variant driver; no mdev


@dataclasses.dataclass(frozen=True, slots=True)
class MdevType:
    """One mdev type a parent offers, with its description parsed into ``fields``.

    ``fields`` keeps the description's key/value pairs in order: NVIDIA's
    ``num_heads, frl_config, framebuffer, max_resolution, max_instance``; i915's
    ``low_gm_size, high_gm_size, fence, resolution, weight``.
    """

    id: str
    name: str | None
    description: str
    fields: tuple[tuple[str, str], ...]
    available_instances: int
    device_api: str

    def field(self, key: str) -> str | None:
        return dict(self.fields).get(key)

    def _int_field(self, key: str) -> int | None:
        value = self.field(key)
        return int(value) if value is not None and value.isdigit() else None

    @property
    def num_heads(self) -> int | None:
        return self._int_field("num_heads")

    @property
    def frl_config(self) -> int | None:
        return self._int_field("frl_config")

    @property
    def framebuffer_mb(self) -> int | None:
        """``framebuffer=2048M`` -> 2048."""
        value = self.field("framebuffer")
        if value is None:
            return None
        digits = value.rstrip("Mm")
        return int(digits) if digits.isdigit() else None

    @property
    def max_resolution(self) -> str | None:
        return self.field("max_resolution") or self.field("resolution")

    @property
    def max_instance(self) -> int | None:
        return self._int_field("max_instance")


@dataclasses.dataclass(frozen=True, slots=True)
class ParentDevice:
    """A device that offers mdev types (or, for the variant driver, vGPU types)."""

    address: str
    kind: ParentKind
    types: tuple[MdevType, ...]
    vendor_id: str | None = None
    device_id: str | None = None
    numa_node: int | None = None
    driver: str | None = None
    physfn: str | None = None            # the PF of an SR-IOV VF
    virtfns: tuple[str, ...] = ()        # the VFs of an SR-IOV PF, when enabled
    current_type: str | None = None      # variant driver: the vGPU type set on this VF

    def type(self, type_id: str) -> MdevType | None:
        return next((t for t in self.types if t.id == type_id), None)

    @property
    def type_ids(self) -> tuple[str, ...]:
        return tuple(t.id for t in self.types)

    @property
    def gpu(self) -> str:
        """The physical GPU this parent lives on: the PF of a VF, else itself."""
        return self.physfn or self.address


@dataclasses.dataclass(frozen=True, slots=True)
class Mdev:
    """A mediated device that exists in sysfs."""

    uuid: str
    parent: str
    type_id: str
    iommu_group: int | None = None
