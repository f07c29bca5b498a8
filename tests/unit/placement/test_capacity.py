"""Placement's capacity rules, without a database."""

from __future__ import annotations

import pytest

from vgpucloud.errors import BadRequest, ConcurrentUpdate, Conflict, InventoryInUse
from vgpucloud.placement import capacity
from vgpucloud.placement.catalogue import check_custom_name, check_not_standard, is_custom
from vgpucloud.placement.consumers import check_consumer_generation
from vgpucloud.placement.models import GenerationCheck, Inventory

GPU = "0b8f4ac4-6e44-4e4a-9b6f-5d8c4f0f8a84"
T4 = Inventory("VGPU", 16, max_unit=16)


def test_t4_takes_sixteen_then_refuses_with_placement_wording():
    capacity.check_allocation(GPU, "VGPU", T4, [1], used_by_others=15)
    with pytest.raises(Conflict) as raised:
        capacity.check_allocation(GPU, "VGPU", T4, [1], used_by_others=16)
    assert raised.value.message == (
        "Unable to allocate inventory: Unable to create allocation for 'VGPU' on resource "
        f"provider '{GPU}'. The requested amount would exceed the capacity: asked for 1, "
        "16 of 16 already in use."
    )


def test_amounts_of_several_consumers_add_up():
    with pytest.raises(Conflict, match="asked for 10, 8 of 16"):
        capacity.check_allocation(GPU, "VGPU", T4, [5, 5], used_by_others=8)


def test_missing_inventory_is_invalid():
    with pytest.raises(Conflict, match=f"Inventory for 'VGPU' on resource provider '{GPU}' "
                                       "invalid."):
        capacity.check_allocation(GPU, "VGPU", None, [1], used_by_others=0)


@pytest.mark.parametrize(("amount", "reason"), [
    (1, "1 is below min_unit 2"), (12, "12 is above max_unit 8"),
    (3, "3 is not a multiple of step_size 2"),
])
def test_unit_rules(amount, reason):
    disk = Inventory("DISK_GB", 100, min_unit=2, max_unit=8, step_size=2)
    with pytest.raises(Conflict, match=f"violate inventory constraints: {reason}"):
        capacity.check_allocation(GPU, "DISK_GB", disk, [amount], used_by_others=0)


def test_allocation_ratio_and_reserved_shape_capacity():
    memory = Inventory("MEMORY_MB", 65442, reserved=512, allocation_ratio=1.5)
    assert memory.capacity == 97395
    capacity.check_usage_fits(GPU, memory, 97395, fencing_allowed=False)
    with pytest.raises(InventoryInUse, match="97396 allocated but the new inventory has "
                                             "capacity 97395"):
        capacity.check_usage_fits(GPU, memory, 97396, fencing_allowed=False)


def test_fencing_a_used_pgpu_with_reserved_equal_total_is_allowed():
    """An agent fences a pGPU whose type can no longer be created: reserved = total stops new
    claims and leaves the guests' 3 VGPUs where they are."""
    fenced = Inventory("VGPU", 16, reserved=16, max_unit=16)
    capacity.check_usage_fits(GPU, fenced, 3)


def test_shrinking_total_below_usage_is_in_use_even_when_fencing():
    with pytest.raises(InventoryInUse, match="3 allocated but the new inventory has capacity 2"):
        capacity.check_usage_fits(GPU, Inventory("VGPU", 2), 3)


def test_removal_of_used_inventory_is_in_use():
    capacity.check_removal(GPU, "VGPU", 0)
    with pytest.raises(InventoryInUse, match=r"'VGPU' on resource provider .* in use: 3"):
        capacity.check_removal(GPU, "VGPU", 3)


@pytest.mark.parametrize(("inventory", "problem"), [
    (Inventory("VGPU", 4, reserved=5), "reserved value 5 is greater than total 4"),
    (Inventory("VGPU", 4, min_unit=3, max_unit=2), "min_unit 3 is greater than max_unit 2"),
    (Inventory("VGPU", 4, step_size=0), "at least 1"),
    (Inventory("VGPU", 4, allocation_ratio=0.0), "allocation_ratio 0.0"),
    (Inventory("VGPU", -1), "must not be negative"),
])
def test_contradictory_inventories(inventory, problem):
    with pytest.raises(BadRequest, match=problem):
        capacity.check_inventory(GPU, inventory)


def test_reserved_equal_to_total_is_allowed():
    capacity.check_inventory(GPU, Inventory("VGPU", 4, reserved=4))


@pytest.mark.parametrize("name", ["CUSTOM_MDEV_NVIDIA_35", "CUSTOM_X1"])
def test_custom_names_accepted(name):
    check_custom_name("trait", name)
    assert is_custom(name)


@pytest.mark.parametrize("name", ["VGPU", "CUSTOM_", "CUSTOM_a", "CUSTOM_A B", "custom_a"])
def test_other_names_refused(name):
    with pytest.raises(BadRequest, match=f"trait '{name}' is not a valid custom name"):
        check_custom_name("trait", name)


def test_standard_names_are_read_only():
    check_not_standard("trait", "CUSTOM_A", "delete")
    with pytest.raises(BadRequest, match=r"Cannot delete standard trait COMPUTE_NODE\."):
        check_not_standard("trait", "COMPUTE_NODE", "delete")


@pytest.mark.parametrize(("expected", "current", "words"), [
    (None, 2, "expected 2 but got null"),
    (1, None, "expected null but got 1"),
    (1, 2, "expected 2 but got 1"),
])
def test_consumer_generation_conflicts(expected, current, words):
    with pytest.raises(ConcurrentUpdate, match=f"consumer generation conflict - {words}"):
        check_consumer_generation("vm1", expected, current)


@pytest.mark.parametrize(("expected", "current"), [
    (None, None), (2, 2), (GenerationCheck.SKIP, 7), (GenerationCheck.SKIP, None)])
def test_consumer_generation_matches(expected, current):
    check_consumer_generation("vm1", expected, current)
