"""What this host should look like in Placement: a pure function of config, host and devices.

For a host configured as in the seed (``enabled_mdev_types = nvidia-35, nvidia-36``,
``[mdev_nvidia-35] device_addresses = 0000:84:00.0,0000:85:00.0``,
``[mdev_nvidia-36] device_addresses = 0000:86:00.0``) the desired tree is::

    virtlab606                         VCPU 48 ×16 · MEMORY_MB 65442 (512 rsvd) ×1.5 · DISK_GB 49
    ├── virtlab606_pci_0000_84_00_0    VGPU 16   CUSTOM_MDEV_NVIDIA_35, CUSTOM_NUMA_NODE_0
    ├── virtlab606_pci_0000_85_00_0    VGPU 16   CUSTOM_MDEV_NVIDIA_35, CUSTOM_NUMA_NODE_0
    └── virtlab606_pci_0000_86_00_0    VGPU 8    CUSTOM_MDEV_NVIDIA_36, CUSTOM_NUMA_NODE_1

A child's total is the mdevs of its configured type that we already own on that parent plus
the type's ``available_instances``, capped by ``max_instances``. Foreign mdevs (not in our
ledger) are not counted: we never hand them to a guest, so they are not capacity.
A variant-driver VF is one vGPU: 1 while it runs the configured type for us, or while its
type is unset, the type is creatable on it and no VF of its GPU runs another type (NVIDIA
runs one type per GPU); a VF whose type somebody else set is foreign and counts 0.
A parent whose configured type has no capacity at all (e.g. NVIDIA still holds mdevs of an
older type on it) gets an empty inventory; the reporter then keeps the provider and fences
it rather than deleting anything.
"""

from __future__ import annotations

import dataclasses
import math
import re
from collections.abc import Collection, Mapping, Sequence

from vgpucloud.agent.config import AgentConfig, ParentAssignment
from vgpucloud.agent.mdev import Mdev, ParentDevice, ParentKind

# Traits the agent owns. Operators add their own (CUSTOM_NVIDIA_11); the reporter only ever
# removes traits it recorded having set itself.
MDEV_TRAIT_PREFIX = "CUSTOM_MDEV_"
NUMA_TRAIT_PREFIX = "CUSTOM_NUMA_NODE_"


@dataclasses.dataclass(frozen=True, slots=True)
class HostResources:
    """The compute node's own capacity (the root provider's inventory, before ratios)."""

    vcpus: int
    memory_mb: int
    disk_gb: int


@dataclasses.dataclass(frozen=True, slots=True)
class ProviderSpec:
    """One provider as the agent wants it: name, inventories (Placement's JSON fields),
    and the traits the agent itself sets."""

    name: str
    inventories: Mapping[str, Mapping[str, int | float]]
    traits: frozenset[str]
    parent_address: str | None = None  # None for the root


@dataclasses.dataclass(frozen=True, slots=True)
class DesiredTree:
    root: ProviderSpec
    children: tuple[ProviderSpec, ...]
    # Child names of every parent device present on the host, configured or not: a provider
    # whose device is still there is never deleted (DESIGN rule 3).
    present: frozenset[str] = frozenset()

    @property
    def providers(self) -> tuple[ProviderSpec, ...]:
        return (self.root, *self.children)

    def custom_resource_classes(self) -> set[str]:
        return {rc for p in self.providers for rc in p.inventories if rc.startswith("CUSTOM_")}

    def custom_traits(self) -> set[str]:
        return {t for p in self.providers for t in p.traits if t.startswith("CUSTOM_")}


def mdev_type_trait(type_id: str) -> str:
    """The trait naming a parent's configured type.

    ``nvidia-35`` -> ``CUSTOM_MDEV_NVIDIA_35``, ``i915-GVTg_V5_4`` -> ``CUSTOM_MDEV_I915_GVTG_V5_4``
    """
    return MDEV_TRAIT_PREFIX + re.sub(r"[^A-Z0-9]+", "_", type_id.upper()).strip("_")


def numa_trait(node: int) -> str:
    return f"{NUMA_TRAIT_PREFIX}{node}"


def child_name(host: str, address: str) -> str:
    """``compute-1`` + ``0000:84:00.0`` -> ``compute-1_pci_0000_84_00_0``, nova's naming."""
    return f"{host}_pci_{re.sub(r'[:.]', '_', address)}"


def root_inventories(config: AgentConfig, host: HostResources) -> dict[str, dict[str, int | float]]:
    """VCPU, MEMORY_MB and DISK_GB with nova's ratios and reservations (the seed's table)."""
    reserved_disk_gb = math.ceil(config.reserved_host_disk_mb / 1024)
    inventories: dict[str, dict[str, int | float]] = {}
    for rc, total, reserved, ratio in (
        ("VCPU", host.vcpus, config.reserved_host_cpus, config.cpu_allocation_ratio),
        ("MEMORY_MB", host.memory_mb, config.reserved_host_memory_mb, config.ram_allocation_ratio),
        ("DISK_GB", host.disk_gb, reserved_disk_gb, config.disk_allocation_ratio),
    ):
        if total > 0:
            inventories[rc] = _inventory(total, min(reserved, total), ratio)
    return inventories


def vgpu_total(
    assignment: ParentAssignment, parent: ParentDevice, owned: Sequence[Mdev],
    *, gpu_types: Collection[str] = (),
) -> int:
    """Existing owned mdevs of the assigned type + its available_instances, capped.

    For a variant-driver VF, ``gpu_types`` are the vGPU types the VFs of its GPU run.
    """
    if parent.kind is ParentKind.NVIDIA_VARIANT:
        total = _variant_vf_total(assignment.type_id, parent, gpu_types)
    else:
        mdev_type = parent.type(assignment.type_id)
        available = mdev_type.available_instances if mdev_type else 0
        total = available + sum(1 for m in owned if m.type_id == assignment.type_id)
    if assignment.max_instances is not None:
        total = min(total, assignment.max_instances)
    return total


def _variant_vf_total(type_id: str, vf: ParentDevice, gpu_types: Collection[str]) -> int:
    if vf.current_type is not None:
        # Ours (foreign VFs never get here): in use or about to be. The driver may still
        # list creatable types on a VF whose type is set; they do not add capacity.
        return 1 if vf.current_type == type_id else 0
    offered = vf.type(type_id)
    creatable = offered is not None and offered.available_instances > 0
    return 1 if creatable and not set(gpu_types) - {type_id} else 0


def desired_tree(
    config: AgentConfig,
    host: HostResources,
    parents: Sequence[ParentDevice],
    mdevs: Sequence[Mdev],
    foreign: Collection[str] = (),
) -> DesiredTree:
    """The tree this host should have in Placement (see the module docstring).

    ``foreign`` holds the UUIDs of mdevs and the addresses of variant-driver VFs that are
    not ours (not in the ledger): they are never capacity.
    """
    gpu_types: dict[str, set[str]] = {}
    for parent in parents:
        if parent.kind is ParentKind.NVIDIA_VARIANT and parent.current_type is not None:
            gpu_types.setdefault(parent.gpu, set()).add(parent.current_type)
    owned_by_parent: dict[str, list[Mdev]] = {}
    for mdev in mdevs:
        if mdev.uuid not in foreign:
            owned_by_parent.setdefault(mdev.parent, []).append(mdev)
    children = []
    for parent in sorted(parents, key=lambda p: p.address):
        assignment = config.assignment_for(parent.address)
        if assignment is None:
            continue
        total = 0 if parent.address in foreign else vgpu_total(
            assignment, parent, owned_by_parent.get(parent.address, []),
            gpu_types=gpu_types.get(parent.gpu, ()))
        traits = {mdev_type_trait(assignment.type_id)}
        if parent.numa_node is not None and parent.numa_node >= 0:
            traits.add(numa_trait(parent.numa_node))
        inventories = {assignment.mdev_class: _inventory(total, 0, 1.0)} if total else {}
        children.append(ProviderSpec(
            name=child_name(config.host, parent.address),
            inventories=inventories,
            traits=frozenset(traits),
            parent_address=parent.address,
        ))
    root = ProviderSpec(config.host, root_inventories(config, host), frozenset())
    present = frozenset(child_name(config.host, p.address) for p in parents)
    return DesiredTree(root=root, children=tuple(children), present=present)


def _inventory(total: int, reserved: int, ratio: float) -> dict[str, int | float]:
    return {
        "total": total,
        "reserved": reserved,
        "min_unit": 1,
        "max_unit": total,
        "step_size": 1,
        "allocation_ratio": ratio,
    }
