"""Resource classes and traits: standard ones synced and read-only, custom ones managed."""

from __future__ import annotations

import os_resource_classes
import os_traits
import pytest

from tests.functional.storage.helpers import t4_host
from vgpucloud.errors import BadRequest, Conflict, DuplicateName, NotFound
from vgpucloud.placement.models import Inventory, ResourceClass


def test_standard_catalogues_are_present(store):
    classes = store.list_resource_classes()
    assert [c.name for c in classes] == list(os_resource_classes.STANDARDS)
    assert all(c.standard for c in classes)
    assert set(store.list_traits()) == set(os_traits.get_traits())


def test_custom_resource_class_lifecycle(store):
    assert store.create_resource_class("CUSTOM_NVIDIA_11") == ResourceClass(
        "CUSTOM_NVIDIA_11", standard=False)
    with pytest.raises(DuplicateName):
        store.create_resource_class("CUSTOM_NVIDIA_11")
    assert store.ensure_resource_class("CUSTOM_NVIDIA_11") is False
    assert store.ensure_resource_class("CUSTOM_NVIDIA_12") is True
    assert store.list_resource_classes()[-2:] == [
        ResourceClass("CUSTOM_NVIDIA_11", False), ResourceClass("CUSTOM_NVIDIA_12", False)]
    store.rename_resource_class("CUSTOM_NVIDIA_12", "CUSTOM_NVIDIA_13")
    with pytest.raises(NotFound):
        store.get_resource_class("CUSTOM_NVIDIA_12")
    store.delete_resource_class("CUSTOM_NVIDIA_13")
    with pytest.raises(NotFound, match="No such resource class CUSTOM_NVIDIA_13"):
        store.delete_resource_class("CUSTOM_NVIDIA_13")


@pytest.mark.parametrize("name", ["VGPU2", "CUSTOM_", "CUSTOM_lower", "CUSTOM_A-B"])
def test_bad_custom_names_are_refused(store, name):
    with pytest.raises(BadRequest, match="CUSTOM_"):
        store.create_resource_class(name)
    with pytest.raises(BadRequest):
        store.ensure_trait(name)


def test_standard_names_cannot_be_deleted_or_renamed(store):
    with pytest.raises(BadRequest, match="Cannot delete standard resource class VGPU"):
        store.delete_resource_class("VGPU")
    with pytest.raises(BadRequest, match="Cannot update standard"):
        store.rename_resource_class("VGPU", "CUSTOM_VGPU")
    with pytest.raises(BadRequest, match="Cannot delete standard trait COMPUTE_NODE"):
        store.delete_trait("COMPUTE_NODE")


def test_class_with_inventory_and_trait_on_provider_are_in_use(store):
    _, (gpu,) = t4_host(store, "host1")
    store.ensure_resource_class("CUSTOM_MDEV_A")
    generation = store.set_inventory(gpu.uuid, gpu.generation, Inventory("CUSTOM_MDEV_A", 2))
    with pytest.raises(Conflict, match="in use"):
        store.delete_resource_class("CUSTOM_MDEV_A")
    assert store.ensure_trait("CUSTOM_MDEV_NVIDIA_35") is True
    assert store.ensure_trait("CUSTOM_MDEV_NVIDIA_35") is False
    store.set_provider_traits(gpu.uuid, generation, ["CUSTOM_MDEV_NVIDIA_35", "COMPUTE_NODE"])
    with pytest.raises(Conflict, match="in use"):
        store.delete_trait("CUSTOM_MDEV_NVIDIA_35")


def test_trait_listing_filters(store):
    _, (gpu,) = t4_host(store, "host1")
    for name in ("CUSTOM_MDEV_NVIDIA_35", "CUSTOM_MDEV_NVIDIA_36", "CUSTOM_NVIDIA_11"):
        store.ensure_trait(name)
    store.set_provider_traits(gpu.uuid, gpu.generation, ["CUSTOM_MDEV_NVIDIA_35"])
    assert store.list_traits(name_startswith="CUSTOM_MDEV") == [
        "CUSTOM_MDEV_NVIDIA_35", "CUSTOM_MDEV_NVIDIA_36"]
    assert store.list_traits(name_in=["CUSTOM_NVIDIA_11", "CUSTOM_GONE"]) == ["CUSTOM_NVIDIA_11"]
    assert store.list_traits(associated=True) == ["CUSTOM_MDEV_NVIDIA_35"]
    assert "CUSTOM_MDEV_NVIDIA_35" not in store.list_traits(associated=False)
    assert store.trait_exists("CUSTOM_NVIDIA_11") and not store.trait_exists("CUSTOM_GONE")
    # '_' is not a LIKE wildcard here.
    assert store.list_traits(name_startswith="CUSTOM_MDEV_NVIDIA_3_") == []


def test_provider_traits_and_aggregates_replace_and_bump(store):
    provider = store.create_provider("host1")
    with pytest.raises(BadRequest, match="No such trait"):
        store.set_provider_traits(provider.uuid, 0, ["CUSTOM_GONE"])
    assert store.set_provider_traits(provider.uuid, 0, ["COMPUTE_NODE", "HW_CPU_X86_AVX"]) == 1
    assert store.set_provider_traits(provider.uuid, 1, ["COMPUTE_NODE"]) == 2
    assert store.get_provider_traits(provider.uuid) == (2, ["COMPUTE_NODE"])
    assert store.delete_provider_traits(provider.uuid) == 3
    aggs = sorted(["9f0c8b2e-3f7c-4f5e-9a55-0d1d2f2b1a10", "0a1b2c3d-0000-4000-8000-000000000001"])
    assert store.set_provider_aggregates(provider.uuid, aggs, 3) == 4
    assert store.get_provider_aggregates(provider.uuid) == (4, aggs)
    assert store.set_provider_aggregates(provider.uuid, aggs[:1], None) == 5
    assert store.get_provider_aggregates(provider.uuid) == (5, aggs[:1])
