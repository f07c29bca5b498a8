"""Resource providers: trees, names, filters, re-parenting and deletion rules."""

from __future__ import annotations

import uuid

import pytest

from tests.functional.storage.helpers import claim, t4_host
from vgpucloud.errors import (
    BadRequest,
    CannotDeleteParent,
    DuplicateName,
    ProviderInUse,
    ResourceProviderNotFound,
)
from vgpucloud.placement.models import (
    AggregateQuery,
    Inventory,
    ProviderFilter,
    TraitQuery,
)


def test_compute_node_with_two_pgpus_forms_a_tree(store):
    root, (gpu0, gpu1) = t4_host(store, "virtlab606", pgpus=2)
    assert root.parent_provider_uuid is None and root.root_provider_uuid == root.uuid
    assert gpu0.name == "virtlab606_pci_0000_84_00_0"
    assert gpu0.parent_provider_uuid == root.uuid and gpu1.root_provider_uuid == root.uuid
    assert store.get_provider(gpu1.uuid) == gpu1
    tree = store.list_providers(ProviderFilter(in_tree=gpu1.uuid))
    assert [p.uuid for p in tree] == [root.uuid, gpu0.uuid, gpu1.uuid]


def test_new_provider_starts_at_generation_zero_with_given_uuid(store):
    wanted = str(uuid.uuid4())
    provider = store.create_provider("compute1", uuid=wanted)
    assert (provider.uuid, provider.generation) == (wanted, 0)


def test_taken_name_or_uuid_is_refused(store):
    first = store.create_provider("compute1")
    with pytest.raises(DuplicateName, match="name: compute1 already exists"):
        store.create_provider("compute1")
    with pytest.raises(DuplicateName, match=f"uuid: {first.uuid} already exists"):
        store.create_provider("compute2", uuid=first.uuid)


def test_unknown_parent_or_provider_is_not_found(store):
    missing = str(uuid.uuid4())
    with pytest.raises(ResourceProviderNotFound, match=missing):
        store.create_provider("gpu", parent_provider_uuid=missing)
    with pytest.raises(ResourceProviderNotFound):
        store.get_provider(missing)
    assert store.list_providers(ProviderFilter(in_tree=missing)) == []


def test_rename_bumps_generation_and_keeps_names_unique(store):
    a = store.create_provider("a")
    store.create_provider("b")
    renamed = store.update_provider(a.uuid, "a2", None, allow_reparent=False)
    assert (renamed.name, renamed.generation) == ("a2", 1)
    with pytest.raises(DuplicateName):
        store.update_provider(a.uuid, "b", None, allow_reparent=False)


def test_root_may_get_a_parent_before_1_37_but_not_move_or_leave_it(store):
    host1, host2 = store.create_provider("host1"), store.create_provider("host2")
    gpu = store.create_provider("gpu")
    child = store.create_provider("gpu_child", parent_provider_uuid=gpu.uuid)
    moved = store.update_provider(gpu.uuid, "gpu", host1.uuid, allow_reparent=False)
    assert moved.root_provider_uuid == host1.uuid
    assert store.get_provider(child.uuid).root_provider_uuid == host1.uuid
    with pytest.raises(BadRequest, match="re-parenting a provider is not currently allowed"):
        store.update_provider(gpu.uuid, "gpu", host2.uuid, allow_reparent=False)
    with pytest.raises(BadRequest, match="un-parenting a provider is not currently allowed"):
        store.update_provider(gpu.uuid, "gpu", None, allow_reparent=False)


def test_reparenting_since_1_37_moves_the_subtree_and_refuses_loops(store):
    host1, host2 = store.create_provider("host1"), store.create_provider("host2")
    gpu = store.create_provider("gpu", parent_provider_uuid=host1.uuid)
    child = store.create_provider("gpu_child", parent_provider_uuid=gpu.uuid)
    store.update_provider(gpu.uuid, "gpu", host2.uuid, allow_reparent=True)
    assert store.get_provider(child.uuid).root_provider_uuid == host2.uuid
    with pytest.raises(BadRequest, match="creating loop"):
        store.update_provider(gpu.uuid, "gpu", child.uuid, allow_reparent=True)
    with pytest.raises(BadRequest, match="creating loop"):
        store.update_provider(gpu.uuid, "gpu", gpu.uuid, allow_reparent=True)
    root = store.update_provider(gpu.uuid, "gpu", None, allow_reparent=True)
    assert root.root_provider_uuid == gpu.uuid
    assert store.get_provider(child.uuid).root_provider_uuid == gpu.uuid


def test_delete_refuses_parents_and_providers_with_allocations(store):
    root, (gpu,) = t4_host(store, "host1")
    with pytest.raises(CannotDeleteParent, match=root.uuid):
        store.delete_provider(root.uuid)
    store.replace_allocations([claim("vm1", {gpu.uuid: {"VGPU": 1}})])
    with pytest.raises(ProviderInUse, match=gpu.uuid):
        store.delete_provider(gpu.uuid)
    store.delete_allocations("vm1")
    store.set_provider_traits(gpu.uuid, store.get_provider(gpu.uuid).generation,
                              ["HW_GPU_API_VULKAN"])
    store.set_provider_aggregates(gpu.uuid, [str(uuid.uuid4())], None)
    store.delete_provider(gpu.uuid)
    store.delete_provider(root.uuid)
    assert store.list_providers(ProviderFilter()) == []


def test_filter_by_capacity_left_traits_and_aggregates(store):
    _, (gpu_a,) = t4_host(store, "host_a", vgpus=2)
    _, (gpu_b,) = t4_host(store, "host_b", vgpus=4)
    store.replace_allocations([claim("vm1", {gpu_b.uuid: {"VGPU": 2}})])
    agg = str(uuid.uuid4())
    store.ensure_trait("CUSTOM_MDEV_NVIDIA_222")
    store.set_provider_traits(gpu_a.uuid, gpu_a.generation, ["CUSTOM_MDEV_NVIDIA_222"])
    store.set_provider_aggregates(gpu_b.uuid, [agg], None)

    def names(**kwargs):
        return [p.name for p in store.list_providers(ProviderFilter(**kwargs))]

    assert names(resources={"VGPU": 2}) == [gpu_a.name, gpu_b.name]
    assert names(resources={"VGPU": 3}) == []  # gpu_b has 2 of 4 left
    assert names(resources={"VGPU": 1, "VCPU": 1}) == []  # classes on different providers
    assert names(traits=TraitQuery(required=frozenset({"CUSTOM_MDEV_NVIDIA_222"}))) == [gpu_a.name]
    forbidden = names(traits=TraitQuery(forbidden=frozenset({"CUSTOM_MDEV_NVIDIA_222"})))
    assert gpu_a.name not in forbidden and gpu_b.name in forbidden
    assert names(member_of=AggregateQuery(any_of=(frozenset({agg}),))) == [gpu_b.name]
    assert gpu_b.name not in names(member_of=AggregateQuery(forbidden=frozenset({agg})))
    assert names(name="host_a") == ["host_a"]
    with pytest.raises(BadRequest, match="No such trait"):
        names(traits=TraitQuery(required=frozenset({"CUSTOM_NOPE"})))
    with pytest.raises(BadRequest, match="No such resource class CUSTOM_NOPE"):
        names(resources={"CUSTOM_NOPE": 1})


def test_filter_respects_min_max_and_step(store):
    provider = store.create_provider("disk")
    store.set_inventory(provider.uuid, 0, Inventory("DISK_GB", 100, min_unit=10, max_unit=50,
                                                    step_size=10))
    for amount, found in ((10, True), (5, False), (60, False), (15, False), (50, True)):
        result = store.list_providers(ProviderFilter(resources={"DISK_GB": amount}))
        assert bool(result) is found, amount
