"""GPU profiles: what a simulated GPU offers and which rule its driver enforces.

Sources: Tesla T4 types and descriptions are exactly those printed in the Mirantis MOSK vGPU
blog (``seeds/mirantis-mosk-vgpu-blog.txt``); the M60-like types ``nvidia-35``..``nvidia-45``
are the type ids of the Nova vGPU documentation, with a Tesla M60 (8 GiB per GPU) profile
ladder; GVT-g types and descriptions follow the i915 driver (``low_gm_size`` ... ``weight``
lines, no ``name`` file, a shared aperture pool so types mix); ``mtty`` is the kernel's
sample driver (a virtual parent with a pool of 24 serial ports). The A40-like profile is an
SR-IOV GPU: each VF is a parent with at most one instance, and the one-type-per-GPU rule
spans all its VFs; ``a40-variant`` is the same GPU under NVIDIA's kernel variant driver.
"""

from __future__ import annotations

import dataclasses
import enum

from vgpucloud.errors import ConfigError


class Rule(enum.StrEnum):
    ONE_TYPE = "one-type"  # NVIDIA time-sliced vGPU: one type per GPU while any mdev exists
    POOL = "pool"          # types draw from shared resources and mix (GVT-g, mtty)


class Layout(enum.StrEnum):
    PCI = "pci"            # the GPU itself is the mdev parent
    SRIOV = "sriov"        # VFs (after sriov_numvfs) are mdev parents, one instance each
    VARIANT = "variant"    # VFs take a vGPU type through nvidia/current_vgpu_type; no mdev bus
    VIRTUAL = "virtual"    # /sys/devices/virtual/<driver>/<driver>


@dataclasses.dataclass(frozen=True, slots=True)
class TypeSpec:
    id: str
    name: str | None
    description: str
    max_instances: int
    device_api: str = "vfio-pci"
    cost: tuple[tuple[str, int], ...] = ()  # pool units one instance consumes (POOL rule)


@dataclasses.dataclass(frozen=True, slots=True)
class GpuProfile:
    key: str
    model: str
    vendor_id: str
    device_id: str
    pci_class: str
    driver: str
    layout: Layout
    rule: Rule
    types: tuple[TypeSpec, ...]
    buses: tuple[int, ...] = ()             # PCI bus numbers of the GPUs, in order
    pool: tuple[tuple[str, int], ...] = ()  # POOL rule capacity per GPU
    total_vfs: int = 0
    max_gpus: int = 64

    def type(self, type_id: str) -> TypeSpec | None:
        return next((t for t in self.types if t.id == type_id), None)


def _nvidia(type_id: int, name: str, heads: int, frl: int, fb_mb: int, res: str,
            count: int) -> TypeSpec:
    description = (f"num_heads={heads}, frl_config={frl}, framebuffer={fb_mb}M, "
                   f"max_resolution={res}, max_instance={count}")
    return TypeSpec(f"nvidia-{type_id}", name, description, count)


M60 = GpuProfile(
    key="m60", model="Tesla M60", vendor_id="0x10de", device_id="0x13f2",
    pci_class="0x030000", driver="nvidia", layout=Layout.PCI, rule=Rule.ONE_TYPE,
    buses=(0x84, 0x85, 0x86, 0x87),
    types=(
        _nvidia(35, "GRID M60-0B", 2, 45, 512, "2560x1600", 16),
        _nvidia(36, "GRID M60-0Q", 2, 60, 512, "2560x1600", 16),
        _nvidia(37, "GRID M60-1A", 1, 60, 1024, "1280x1024", 8),
        _nvidia(38, "GRID M60-1B", 4, 45, 1024, "5120x2880", 8),
        _nvidia(39, "GRID M60-1Q", 4, 60, 1024, "5120x2880", 8),
        _nvidia(40, "GRID M60-2A", 1, 60, 2048, "1280x1024", 4),
        _nvidia(41, "GRID M60-2B", 4, 45, 2048, "5120x2880", 4),
        _nvidia(42, "GRID M60-2Q", 4, 60, 2048, "7680x4320", 4),
        _nvidia(43, "GRID M60-4A", 1, 60, 4096, "1280x1024", 2),
        _nvidia(44, "GRID M60-4Q", 4, 60, 4096, "7680x4320", 2),
        _nvidia(45, "GRID M60-8Q", 4, 60, 8192, "7680x4320", 1),
    ),
)

T4 = GpuProfile(
    key="t4", model="Tesla T4", vendor_id="0x10de", device_id="0x1eb8",
    pci_class="0x030200", driver="nvidia", layout=Layout.PCI, rule=Rule.ONE_TYPE,
    buses=(0x18, 0x19, 0x35, 0x36, 0xE7, 0xE8, 0xF4, 0xF5),  # the blog's g4dn.metal
    types=(
        _nvidia(222, "GRID T4-1B", 4, 45, 1024, "5120x2880", 16),
        _nvidia(223, "GRID T4-2B", 4, 45, 2048, "5120x2880", 8),
        _nvidia(224, "GRID T4-2B4", 4, 45, 2048, "5120x2880", 8),
        _nvidia(225, "GRID T4-1A", 1, 60, 1024, "1280x1024", 16),
        _nvidia(226, "GRID T4-2A", 1, 60, 2048, "1280x1024", 8),
        _nvidia(227, "GRID T4-4A", 1, 60, 4096, "1280x1024", 4),
        _nvidia(228, "GRID T4-8A", 1, 60, 8192, "1280x1024", 2),
        _nvidia(229, "GRID T4-16A", 1, 60, 16384, "1280x1024", 1),
        _nvidia(230, "GRID T4-1Q", 4, 60, 1024, "5120x2880", 16),
        _nvidia(231, "GRID T4-2Q", 4, 60, 2048, "7680x4320", 8),
        _nvidia(232, "GRID T4-4Q", 4, 60, 4096, "7680x4320", 4),
        _nvidia(233, "GRID T4-8Q", 4, 60, 8192, "7680x4320", 2),
        _nvidia(234, "GRID T4-16Q", 4, 60, 16384, "7680x4320", 1),
        _nvidia(252, "GRID T4-1B4", 4, 45, 1024, "5120x2880", 16),
        _nvidia(319, "GRID T4-4C", 1, 60, 4096, "4096x2160", 4),
        _nvidia(320, "GRID T4-8C", 1, 60, 8192, "4096x2160", 2),
        _nvidia(321, "GRID T4-16C", 1, 60, 16384, "4096x2160", 1),
    ),
)


def _gvtg(share: str, low_mb: int, high_mb: int, resolution: str, weight: int) -> TypeSpec:
    description = (f"low_gm_size: {low_mb}MB\nhigh_gm_size: {high_mb}MB\nfence: 4\n"
                   f"resolution: {resolution}\nweight: {weight}\n")
    return TypeSpec(f"i915-GVTg_V5_{share}", None, description, 0,
                    cost=(("low_gm_mb", low_mb), ("high_gm_mb", high_mb)))


GVTG = GpuProfile(
    key="gvtg", model="Intel UHD Graphics 630 (GVT-g)", vendor_id="0x8086",
    device_id="0x3e92", pci_class="0x030000", driver="i915", layout=Layout.PCI,
    rule=Rule.POOL, buses=(0x00,), max_gpus=1,
    pool=(("low_gm_mb", 512), ("high_gm_mb", 3072)),
    types=(
        _gvtg("1", 512, 2048, "1920x1200", 16),
        _gvtg("2", 256, 1024, "1920x1200", 8),
        _gvtg("4", 128, 512, "1920x1200", 4),
        _gvtg("8", 64, 384, "1024x768", 2),
    ),
)

MTTY = GpuProfile(
    key="mtty", model="mtty sample driver", vendor_id="", device_id="", pci_class="",
    driver="mtty", layout=Layout.VIRTUAL, rule=Rule.POOL, max_gpus=1,
    pool=(("ports", 24),),
    types=(
        TypeSpec("mtty-1", "Single port serial", "", 0, cost=(("ports", 1),)),
        TypeSpec("mtty-2", "Dual port serial", "", 0, cost=(("ports", 2),)),
    ),
)

_A40_TYPES = (
    _nvidia(557, "NVIDIA A40-1Q", 4, 60, 1024, "5120x2880", 32),
    _nvidia(558, "NVIDIA A40-2Q", 4, 60, 2048, "7680x4320", 24),
    _nvidia(559, "NVIDIA A40-3Q", 4, 60, 3072, "7680x4320", 16),
    _nvidia(560, "NVIDIA A40-4Q", 4, 60, 4096, "7680x4320", 12),
    _nvidia(561, "NVIDIA A40-6Q", 4, 60, 6144, "7680x4320", 8),
    _nvidia(562, "NVIDIA A40-8Q", 4, 60, 8192, "7680x4320", 6),
    _nvidia(563, "NVIDIA A40-12Q", 4, 60, 12288, "7680x4320", 4),
    _nvidia(564, "NVIDIA A40-16Q", 4, 60, 16384, "7680x4320", 3),
    _nvidia(565, "NVIDIA A40-24Q", 4, 60, 24576, "7680x4320", 2),
    _nvidia(566, "NVIDIA A40-48Q", 4, 60, 49152, "7680x4320", 1),
)

A40 = GpuProfile(
    key="a40", model="NVIDIA A40 (SR-IOV)", vendor_id="0x10de", device_id="0x2235",
    pci_class="0x030200", driver="nvidia", layout=Layout.SRIOV, rule=Rule.ONE_TYPE,
    buses=(0x41, 0x61, 0xA1, 0xC1), total_vfs=32, types=_A40_TYPES,
)

A40_VARIANT = dataclasses.replace(
    A40, key="a40-variant", model="NVIDIA A40 (kernel variant driver)",
    layout=Layout.VARIANT,
)

PROFILES: dict[str, GpuProfile] = {
    p.key: p for p in (M60, T4, GVTG, A40, A40_VARIANT, MTTY)
}


def profile(key: str) -> GpuProfile:
    try:
        return PROFILES[key]
    except KeyError:
        known = ", ".join(PROFILES)
        raise ConfigError([f"--profile {key}: no such GPU profile; pick one of: {known}"]) from None
