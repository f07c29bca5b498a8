"""A compute node with physical GPUs, registered in Placement through the ``openstack`` CLI.

The shapes come from the nova vGPU guide (seeds/nova-vgpu-doc.rst, "Checking allocations and
inventories for virtual GPUs"): a root provider per compute node carrying VCPU, MEMORY_MB and
DISK_GB, and one child per pGPU named ``<host>_pci_0000_84_00_0`` carrying 16 VGPU.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tests.e2e.harness import OpenStackCli

Inventory = Mapping[str, Mapping[str, float | int]]

# What the seed's `inventory list` tables show; max_unit is given because Placement's
# default is 2147483647, and nova reports max_unit = total.
COMPUTE_NODE_INVENTORY: Inventory = {
    "VCPU": {"total": 48, "max_unit": 48, "allocation_ratio": 16.0},
    "MEMORY_MB": {"total": 65442, "max_unit": 65442, "reserved": 512, "allocation_ratio": 1.5},
    "DISK_GB": {"total": 49, "max_unit": 49},
}
PGPU_INVENTORY: Inventory = {"VGPU": {"total": 16, "max_unit": 16}}

INVENTORY_DEFAULTS = {"allocation_ratio": 1.0, "min_unit": 1, "reserved": 0, "step_size": 1}
PLACEMENT_MAX_UNIT_DEFAULT = 2147483647


def pgpu_provider_name(host: str, pci_address: str) -> str:
    """The libvirt nodedev name nova gives a pGPU provider.

    >>> pgpu_provider_name("virtlab606", "0000:84:00.0")
    'virtlab606_pci_0000_84_00_0'
    """
    return f"{host}_pci_" + pci_address.replace(":", "_").replace(".", "_")


def resource_args(inventory: Inventory) -> list[str]:
    """``--resource`` options for ``inventory set``.

    >>> resource_args({"VGPU": {"total": 16, "max_unit": 16}})
    ['--resource', 'VGPU:total=16', '--resource', 'VGPU:max_unit=16']
    """
    args: list[str] = []
    for resource_class, fields in inventory.items():
        for name, value in fields.items():
            args += ["--resource", f"{resource_class}:{name}={value}"]
    return args


def inventory_rows(inventory: Inventory, used: Mapping[str, int] | None = None) -> dict[str, Any]:
    """The rows ``inventory list -f json`` must print, keyed by resource class."""
    rows: dict[str, Any] = {}
    for resource_class, fields in inventory.items():
        row = {"resource_class": resource_class, **INVENTORY_DEFAULTS, **fields}
        row.setdefault("max_unit", PLACEMENT_MAX_UNIT_DEFAULT)
        row["used"] = (used or {}).get(resource_class, 0)
        rows[resource_class] = row
    return rows


@dataclass(frozen=True)
class GpuHost:
    """UUIDs (and the CLI's create output) of one compute node and its pGPU providers."""

    name: str
    root: dict[str, Any]
    pgpus: dict[str, dict[str, Any]]  # PCI address -> `resource provider create` output
    inventory_set: dict[str, list[dict[str, Any]]]  # provider uuid -> `inventory set` output

    @property
    def root_uuid(self) -> str:
        return str(self.root["uuid"])

    def pgpu_uuid(self, pci_address: str) -> str:
        return str(self.pgpus[pci_address]["uuid"])


def register_gpu_host(osc: OpenStackCli, host: str, pci_addresses: list[str]) -> GpuHost:
    """Create the root and one child per pGPU, then give each the seed's inventory."""
    root = osc("resource", "provider", "create", host)
    children = osc.each(
        *(
            ["resource", "provider", "create", "--parent-provider", root["uuid"],
             pgpu_provider_name(host, address)]
            for address in pci_addresses
        )
    )  # fmt: skip
    pgpus = dict(zip(pci_addresses, children, strict=True))
    targets = [(root["uuid"], COMPUTE_NODE_INVENTORY)]
    targets += [(child["uuid"], PGPU_INVENTORY) for child in children]
    printed = osc.each(
        *(
            ["resource", "provider", "inventory", "set", uuid, *resource_args(inventory)]
            for uuid, inventory in targets
        )
    )
    by_provider = {uuid: rows for (uuid, _), rows in zip(targets, printed, strict=True)}
    return GpuHost(host, root, pgpus, by_provider)
