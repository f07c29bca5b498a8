"""Builders for storage scenarios: a vGPU compute host as Placement sees it."""

from __future__ import annotations

from vgpucloud.placement.models import ConsumerAllocationRequest, Inventory, ResourceProvider
from vgpucloud.storage.placement_store import SqlPlacementStore

PROJECT, USER = "demo-project", "demo-user"


def t4_host(
    store: SqlPlacementStore, host: str, pgpus: int = 1, vgpus: int = 16
) -> tuple[ResourceProvider, list[ResourceProvider]]:
    """A compute node root with CPU/RAM/disk and ``pgpus`` Tesla T4 children of VGPU."""
    root = store.create_provider(host)
    store.set_inventories(root.uuid, 0, {
        "VCPU": Inventory("VCPU", 48, allocation_ratio=16.0),
        "MEMORY_MB": Inventory("MEMORY_MB", 65442, reserved=512, allocation_ratio=1.5),
        "DISK_GB": Inventory("DISK_GB", 49),
    })
    children = []
    for index in range(pgpus):
        child = store.create_provider(
            f"{host}_pci_0000_{0x84 + index:02x}_00_0", parent_provider_uuid=root.uuid
        )
        store.set_inventory(child.uuid, 0, Inventory("VGPU", vgpus, max_unit=vgpus))
        children.append(store.get_provider(child.uuid))
    return store.get_provider(root.uuid), children


def claim(
    consumer: str, resources: dict[str, dict[str, int]], **kwargs: object
) -> ConsumerAllocationRequest:
    return ConsumerAllocationRequest(consumer, resources, PROJECT, USER, **kwargs)  # type: ignore[arg-type]
