"""Allocations and consumers: capacity, units, consumer generations, reshaping, usages."""

from __future__ import annotations

import uuid

import pytest

from tests.functional.storage.helpers import PROJECT, USER, claim, t4_host
from vgpucloud.errors import BadRequest, ConcurrentUpdate, Conflict, InventoryInUse, NotFound
from vgpucloud.placement.models import Allocation, Consumer, Inventory


def _vm() -> str:
    return str(uuid.uuid4())


def test_sixteen_vgpus_fit_a_t4_and_the_seventeenth_is_refused(store):
    _, (gpu,) = t4_host(store, "host1")
    vms = [_vm() for _ in range(17)]
    for vm in vms[:16]:
        store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 1}})])
    message = (
        f"Unable to allocate inventory: Unable to create allocation for 'VGPU' on resource "
        f"provider '{gpu.uuid}'. The requested amount would exceed the capacity"
    )
    with pytest.raises(Conflict) as raised:
        store.replace_allocations([claim(vms[16], {gpu.uuid: {"VGPU": 1}})])
    assert raised.value.message.startswith(message)
    assert "asked for 1, 16 of 16 already in use" in raised.value.message
    assert store.get_consumer(vms[16]) is None
    assert store.get_provider_usages(gpu.uuid)[1] == {"VGPU": 16}
    assert store.get_provider(gpu.uuid).generation == 1 + 16


def test_one_request_for_many_consumers_is_checked_as_a_whole(store):
    _, (gpu,) = t4_host(store, "host1", vgpus=4)
    with pytest.raises(Conflict, match="asked for 6, 0 of 4"):
        store.replace_allocations([claim(_vm(), {gpu.uuid: {"VGPU": 3}}),
                                   claim(_vm(), {gpu.uuid: {"VGPU": 3}})])
    assert store.get_provider_allocations(gpu.uuid)[1] == []


def test_consumer_moving_within_its_own_usage_is_not_double_counted(store):
    _, (gpu,) = t4_host(store, "host1", vgpus=4)
    vm = _vm()
    store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 4}})])
    store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 4}}, expected_generation=1)])
    assert store.get_consumer(vm).generation == 2


def test_overcommitted_cpu_and_reserved_memory(store):
    root, _ = t4_host(store, "host1")
    store.replace_allocations([claim(_vm(), {root.uuid: {"VCPU": 48 * 16}})])
    with pytest.raises(Conflict, match="'VCPU'"):
        store.replace_allocations([claim(_vm(), {root.uuid: {"VCPU": 1}})])
    memory = int((65442 - 512) * 1.5)
    with pytest.raises(Conflict, match="'MEMORY_MB'"):
        store.replace_allocations([claim(_vm(), {root.uuid: {"MEMORY_MB": memory + 1}})])


def test_missing_inventory_unit_rules_and_unknown_things(store):
    root, (gpu,) = t4_host(store, "host1")
    with pytest.raises(Conflict, match=f"Inventory for 'VGPU' on resource provider "
                                       f"'{root.uuid}' invalid"):
        store.replace_allocations([claim(_vm(), {root.uuid: {"VGPU": 1}})])
    with pytest.raises(Conflict, match="violate inventory constraints: 17 is above max_unit"):
        store.replace_allocations([claim(_vm(), {gpu.uuid: {"VGPU": 17}})])
    missing = str(uuid.uuid4())
    with pytest.raises(BadRequest, match=f"resource provider '{missing}' that does not exist"):
        store.replace_allocations([claim(_vm(), {missing: {"VGPU": 1}})])
    with pytest.raises(BadRequest, match="No such resource class CUSTOM_NOPE"):
        store.replace_allocations([claim(_vm(), {gpu.uuid: {"CUSTOM_NOPE": 1}})])


def test_boot_records_consumer_and_allocations_across_the_tree(store):
    root, (gpu,) = t4_host(store, "host1")
    vm = _vm()
    store.replace_allocations([claim(vm, {root.uuid: {"VCPU": 2, "MEMORY_MB": 2048},
                                          gpu.uuid: {"VGPU": 1}},
                                     expected_generation=None, consumer_type="INSTANCE")])
    assert store.get_consumer(vm) == Consumer(vm, PROJECT, USER, 1, "INSTANCE")
    assert sorted(store.get_consumer_allocations(vm), key=lambda a: a.resource_class) == [
        Allocation(vm, root.uuid, "MEMORY_MB", 2048), Allocation(vm, root.uuid, "VCPU", 2),
        Allocation(vm, gpu.uuid, "VGPU", 1)]
    assert store.get_provider_allocations(gpu.uuid) == (2, [Allocation(vm, gpu.uuid, "VGPU", 1)])
    assert store.get_provider_usages(root.uuid)[1] == {"DISK_GB": 0, "MEMORY_MB": 2048,
                                                       "VCPU": 2}


def test_consumer_generation_conflicts_use_placements_words(store):
    _, (gpu,) = t4_host(store, "host1")
    vm = _vm()
    with pytest.raises(ConcurrentUpdate, match="expected null but got 3"):
        store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 1}}, expected_generation=3)])
    store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 1}}, expected_generation=None)])
    with pytest.raises(ConcurrentUpdate, match="expected 1 but got null"):
        store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 2}}, expected_generation=None)])
    with pytest.raises(ConcurrentUpdate, match="expected 1 but got 0"):
        store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 2}}, expected_generation=0)])
    store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 2}}, expected_generation=1)])
    assert store.get_consumer_allocations(vm) == [Allocation(vm, gpu.uuid, "VGPU", 2)]


def test_emptied_consumer_is_deleted_and_second_delete_is_not_found(store):
    _, (gpu,) = t4_host(store, "host1")
    vm1, vm2 = _vm(), _vm()
    store.replace_allocations([claim(vm1, {gpu.uuid: {"VGPU": 1}}),
                               claim(vm2, {gpu.uuid: {"VGPU": 1}})])
    store.replace_allocations([claim(vm1, {}, expected_generation=1)])
    assert store.get_consumer(vm1) is None
    generation = store.get_provider(gpu.uuid).generation
    store.delete_allocations(vm2)
    assert store.get_provider(gpu.uuid).generation == generation + 1
    assert store.get_consumer(vm2) is None
    with pytest.raises(NotFound, match=f"No allocations for consumer '{vm2}'"):
        store.delete_allocations(vm2)


def test_same_consumer_twice_in_one_request_is_refused(store):
    _, (gpu,) = t4_host(store, "host1")
    vm = _vm()
    with pytest.raises(BadRequest, match="more than once"):
        store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 1}}),
                                   claim(vm, {gpu.uuid: {"VGPU": 1}})])


def test_migration_moves_vgpu_between_hosts_in_one_post(store):
    _, (src,) = t4_host(store, "src", vgpus=1)
    _, (dst,) = t4_host(store, "dst", vgpus=1)
    vm, migration = _vm(), _vm()
    store.replace_allocations([claim(vm, {src.uuid: {"VGPU": 1}}, consumer_type="INSTANCE")])
    # Nova's move: the migration record takes the source, the instance the destination.
    store.replace_allocations([
        claim(migration, {src.uuid: {"VGPU": 1}}, expected_generation=None,
              consumer_type="MIGRATION"),
        claim(vm, {dst.uuid: {"VGPU": 1}}, expected_generation=1),
    ])
    assert store.get_consumer_allocations(migration) == [
        Allocation(migration, src.uuid, "VGPU", 1)]
    assert store.get_consumer_allocations(vm) == [Allocation(vm, dst.uuid, "VGPU", 1)]
    usages = store.get_usages(PROJECT)
    assert usages["INSTANCE"] == {"VGPU": 1, "consumer_count": 1}
    assert usages["MIGRATION"] == {"VGPU": 1, "consumer_count": 1}
    assert usages["all"] == {"VGPU": 2, "consumer_count": 2}
    assert store.get_usages(PROJECT, consumer_type="all") == {
        "all": {"VGPU": 2, "consumer_count": 2}}
    assert store.get_usages(PROJECT, consumer_type="MIGRATION") == {
        "MIGRATION": {"VGPU": 1, "consumer_count": 1}}
    assert store.get_usages(PROJECT, user_id="someone-else") == {"all": {"consumer_count": 0}}
    assert store.get_usages("other-project") == {"all": {"consumer_count": 0}}


def test_untyped_consumers_are_grouped_as_unknown(store):
    _, (gpu,) = t4_host(store, "host1")
    store.replace_allocations([claim(_vm(), {gpu.uuid: {"VGPU": 2}})])
    assert store.get_usages(PROJECT, consumer_type="unknown") == {
        "unknown": {"VGPU": 2, "consumer_count": 1}}


def test_reshape_moves_root_vgpus_to_pgpu_children(store):
    """Upgrade to nested providers: VGPU 32 on the root becomes 16 + 16 on two pGPUs."""
    root = store.create_provider("host1")
    store.set_inventory(root.uuid, 0, Inventory("VGPU", 32))
    vms = [_vm() for _ in range(20)]
    store.replace_allocations([claim(vm, {root.uuid: {"VGPU": 1}}) for vm in vms])
    gpu0 = store.create_provider("host1_pci_0000_84_00_0", parent_provider_uuid=root.uuid)
    gpu1 = store.create_provider("host1_pci_0000_85_00_0", parent_provider_uuid=root.uuid)
    generation = store.get_provider(root.uuid).generation
    store.reshape(
        {root.uuid: (generation, {}),
         gpu0.uuid: (0, {"VGPU": Inventory("VGPU", 16)}),
         gpu1.uuid: (0, {"VGPU": Inventory("VGPU", 16)})},
        [claim(vm, {(gpu0 if i < 16 else gpu1).uuid: {"VGPU": 1}}, expected_generation=1)
         for i, vm in enumerate(vms)],
    )
    assert store.get_inventories(root.uuid)[1] == {}
    assert store.get_provider_usages(gpu0.uuid)[1] == {"VGPU": 16}
    assert store.get_provider_usages(gpu1.uuid)[1] == {"VGPU": 4}


def test_reshape_checks_the_final_state_and_writes_nothing_on_failure(store):
    root = store.create_provider("host1")
    store.set_inventory(root.uuid, 0, Inventory("VGPU", 32))
    vms = [_vm() for _ in range(20)]
    store.replace_allocations([claim(vm, {root.uuid: {"VGPU": 1}}) for vm in vms])
    gpu0 = store.create_provider("host1_pci_0000_84_00_0", parent_provider_uuid=root.uuid)
    generation = store.get_provider(root.uuid).generation
    before = store.get_inventories(root.uuid)
    # Moves the inventory but forgets four consumers still allocated on the root.
    with pytest.raises(InventoryInUse, match=root.uuid):
        store.reshape(
            {root.uuid: (generation, {}), gpu0.uuid: (0, {"VGPU": Inventory("VGPU", 16)})},
            [claim(vm, {gpu0.uuid: {"VGPU": 1}}, expected_generation=1) for vm in vms[:16]],
        )
    # Moves too many onto the child.
    with pytest.raises(Conflict, match="exceed the capacity"):
        store.reshape(
            {root.uuid: (generation, {}), gpu0.uuid: (0, {"VGPU": Inventory("VGPU", 16)})},
            [claim(vm, {gpu0.uuid: {"VGPU": 1}}, expected_generation=1) for vm in vms],
        )
    assert store.get_inventories(root.uuid) == before
    assert store.get_inventories(gpu0.uuid) == (0, {})
    assert store.get_provider_usages(root.uuid)[1] == {"VGPU": 20}
