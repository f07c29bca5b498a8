"""Inventories: replace, set, delete, generations and the in-use rules."""

from __future__ import annotations

import pytest

from tests.functional.storage.helpers import claim, t4_host
from vgpucloud.errors import BadRequest, ConcurrentUpdate, InventoryInUse, NotFound
from vgpucloud.placement.models import Inventory


def test_t4_pgpu_inventory_round_trips_with_defaults(store):
    root, (gpu,) = t4_host(store, "host1")
    generation, inventories = store.get_inventories(gpu.uuid)
    assert generation == 1
    assert inventories == {"VGPU": Inventory("VGPU", 16, max_unit=16)}
    _, root_inventories = store.get_inventories(root.uuid)
    assert root_inventories["MEMORY_MB"].allocation_ratio == 1.5
    assert root_inventories["MEMORY_MB"].capacity == int((65442 - 512) * 1.5)


def test_every_inventory_write_bumps_generation_and_stale_ones_fail(store):
    provider = store.create_provider("host1")
    assert store.set_inventory(provider.uuid, 0, Inventory("VCPU", 8)) == 1
    with pytest.raises(ConcurrentUpdate, match="resource provider generation conflict"):
        store.set_inventory(provider.uuid, 0, Inventory("VCPU", 16))
    generation, inventories = store.set_inventories(
        provider.uuid, 1, {"VCPU": Inventory("VCPU", 16), "DISK_GB": Inventory("DISK_GB", 10)}
    )
    assert generation == 2 and set(inventories) == {"VCPU", "DISK_GB"}
    assert store.delete_inventory(provider.uuid, 2, "DISK_GB") == 3
    assert store.delete_all_inventories(provider.uuid) == 4
    assert store.get_inventories(provider.uuid) == (4, {})


def test_unknown_class_and_contradictory_fields_are_bad_requests(store):
    provider = store.create_provider("host1")
    with pytest.raises(BadRequest, match=r"Unknown resource class .*CUSTOM_NOPE"):
        store.set_inventories(provider.uuid, 0, {"CUSTOM_NOPE": Inventory("CUSTOM_NOPE", 1)})
    with pytest.raises(BadRequest, match="reserved value 5 is greater than total 4"):
        store.set_inventory(provider.uuid, 0, Inventory("VCPU", 4, reserved=5))
    with pytest.raises(BadRequest, match="min_unit 4 is greater than max_unit 2"):
        store.set_inventory(provider.uuid, 0, Inventory("VCPU", 4, min_unit=4, max_unit=2))
    assert store.get_inventories(provider.uuid) == (0, {})


def test_shrinking_or_removing_used_inventory_is_in_use(store):
    _, (gpu,) = t4_host(store, "host1")
    store.replace_allocations([claim(f"vm{i}", {gpu.uuid: {"VGPU": 1}}) for i in range(8)])
    generation = store.get_provider(gpu.uuid).generation
    with pytest.raises(InventoryInUse, match=r"8 allocated .* capacity 4"):
        store.set_inventory(gpu.uuid, generation, Inventory("VGPU", 4))
    with pytest.raises(InventoryInUse, match="'VGPU' on resource provider"):
        store.set_inventories(gpu.uuid, generation, {})
    with pytest.raises(InventoryInUse):
        store.delete_inventory(gpu.uuid, generation, "VGPU")
    with pytest.raises(InventoryInUse):
        store.delete_all_inventories(gpu.uuid)
    # Shrinking to exactly the usage is fine.
    assert store.set_inventory(gpu.uuid, generation, Inventory("VGPU", 8)) == generation + 1


def test_deleting_absent_class_is_not_found(store):
    provider = store.create_provider("host1")
    with pytest.raises(NotFound, match="No inventory of class VGPU"):
        store.delete_inventory(provider.uuid, 0, "VGPU")
