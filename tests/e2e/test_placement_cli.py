"""The operator's Placement workflow from the nova vGPU guide, with the real ``openstack`` CLI.

Follows seeds/nova-vgpu-doc.rst, "Checking allocations and inventories for virtual GPUs" and
"(Optional) Provide custom traits for multiple GPU types": every command an operator types
there runs here unchanged against ``vgpucloud api``, and its printed values are checked.

Two compute nodes keep the tests independent of their order: ``virtlab606`` is registered and
given the seed's instance ``vgpu2`` by module fixtures, and after that no test changes it (the
refusals checked on it must leave it untouched, which those tests verify); ``virtlab607``
takes the writes of the trait and aggregate tests. Every CLI call costs about a second of
Python start-up, so independent calls run side by side (``osc.each``).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.gpuhost import (
    COMPUTE_NODE_INVENTORY,
    PGPU_INVENTORY,
    PLACEMENT_MAX_UNIT_DEFAULT,
    GpuHost,
    Inventory,
    inventory_rows,
    pgpu_provider_name,
    register_gpu_host,
)
from tests.e2e.harness import OpenStackCli

pytestmark = pytest.mark.openstack_cli

PGPU_84 = "0000:84:00.0"
PGPU_85 = "0000:85:00.0"

# The seed's server "vgpu2" and the accounts that own it.
INSTANCE = "5294f726-33d5-472a-bef1-9e19bb41626d"
PROJECT = "6f70656e737461636b20697320636f6f"
USER = "9a5b7c1e2d3f4a6b8c0d1e2f3a4b5c6d"
INSTANCE_ROOT_RESOURCES = {"VCPU": 1, "MEMORY_MB": 512, "DISK_GB": 1}
VGPU_FLAVOR = {**INSTANCE_ROOT_RESOURCES, "VGPU": 1}  # the guide's vgpu_1 flavor

# Generations once vgpu2 is allocated: 0 at creation, +1 for the inventory write,
# +1 on each provider the allocation touched.
GENERATIONS_AFTER_VGPU2 = {"root": 2, PGPU_84: 2, PGPU_85: 1}

AGGREGATE = "f5b2f2c9-6d1e-4c2e-9a43-0c5c8c3a2d11"
OTHER_AGGREGATE = "0e3c8a7b-2b6f-4b8d-8f0a-5d4e3c2b1a09"


def key_values(text: str) -> dict[str, str]:
    """A CLI cell of comma-separated pairs, e.g. ``"VCPU=0/768,DISK_GB=0/49"``, as a dict."""
    return dict(pair.split("=", 1) for pair in text.split(","))


def by_key(rows: list[dict[str, Any]], key: str) -> dict[str, dict[str, Any]]:
    """Index CLI rows by one column, refusing duplicates (the API must not repeat a row)."""
    indexed = {row[key]: row for row in rows}
    assert len(indexed) == len(rows), f"duplicate {key} in {rows}"
    return indexed


def usages(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """``usage show`` rows as {resource_class: usage}."""
    return {row["resource_class"]: row["usage"] for row in rows}


@pytest.fixture(scope="module")
def virtlab606(osc: OpenStackCli) -> GpuHost:
    """The seed's compute node: two pGPUs, the seed's inventories."""
    return register_gpu_host(osc, "virtlab606.example.org", [PGPU_84, PGPU_85])


@pytest.fixture(scope="module")
def vgpu2(osc: OpenStackCli, virtlab606: GpuHost) -> list[dict[str, Any]]:
    """The seed's server vgpu2: CPU, RAM and disk on the compute node, one VGPU on pGPU 84.

    Returns what ``allocation set`` printed.
    """
    return osc(
        "resource", "provider", "allocation", "set", INSTANCE,
        "--allocation", f"rp={virtlab606.root_uuid},VCPU=1,MEMORY_MB=512,DISK_GB=1",
        "--allocation", f"rp={virtlab606.pgpu_uuid(PGPU_84)},VGPU=1",
        "--project-id", PROJECT, "--user-id", USER, "--consumer-type", "INSTANCE",
        version="1.39",
    )  # fmt: skip


@pytest.fixture(scope="module")
def virtlab607(osc: OpenStackCli) -> GpuHost:
    """A second compute node like virtlab606: traits and aggregates are written here."""
    return register_gpu_host(osc, "virtlab607.example.org", [PGPU_84, PGPU_85])


# --- providers -----------------------------------------------------------------------------


def test_compute_node_and_pgpu_children_created(virtlab606: GpuHost) -> None:
    root = virtlab606.root
    assert root["name"] == "virtlab606.example.org"
    assert root["generation"] == 0
    assert root["root_provider_uuid"] == root["uuid"]
    assert root["parent_provider_uuid"] is None
    for address, child in virtlab606.pgpus.items():
        assert child["name"] == pgpu_provider_name("virtlab606.example.org", address)
        assert child["generation"] == 0
        assert child["parent_provider_uuid"] == root["uuid"]
        assert child["root_provider_uuid"] == root["uuid"]
    assert len({root["uuid"], *(c["uuid"] for c in virtlab606.pgpus.values())}) == 3


def test_inventory_set_prints_what_was_written(virtlab606: GpuHost) -> None:
    """``inventory set`` echoes the stored records (``used`` is not part of them)."""

    def written(inventory: Inventory) -> dict[str, Any]:
        rows = inventory_rows(inventory)
        return {rc: {k: v for k, v in row.items() if k != "used"} for rc, row in rows.items()}

    printed = {
        uuid: by_key(rows, "resource_class") for uuid, rows in virtlab606.inventory_set.items()
    }
    assert printed == {
        virtlab606.root_uuid: written(COMPUTE_NODE_INVENTORY),
        virtlab606.pgpu_uuid(PGPU_84): written(PGPU_INVENTORY),
        virtlab606.pgpu_uuid(PGPU_85): written(PGPU_INVENTORY),
    }


def test_provider_list_shows_compute_node_and_pgpus(
    osc: OpenStackCli, virtlab606: GpuHost, vgpu2: list[dict[str, Any]]
) -> None:
    """The guide's first step: the root and one child per pGPU, as in its table."""
    host = "virtlab606.example.org"
    listed = by_key(osc("resource", "provider", "list"), "name")
    mine = {name: row for name, row in listed.items() if name.startswith(host)}
    assert {name: (row["uuid"], row["generation"]) for name, row in mine.items()} == {
        host: (virtlab606.root_uuid, GENERATIONS_AFTER_VGPU2["root"]),
        f"{host}_pci_0000_84_00_0": (
            virtlab606.pgpu_uuid(PGPU_84),
            GENERATIONS_AFTER_VGPU2[PGPU_84],
        ),
        f"{host}_pci_0000_85_00_0": (
            virtlab606.pgpu_uuid(PGPU_85),
            GENERATIONS_AFTER_VGPU2[PGPU_85],
        ),
    }
    assert {row["root_provider_uuid"] for row in mine.values()} == {virtlab606.root_uuid}


def test_pgpu_show_names_parent_and_root_at_1_14(
    osc: OpenStackCli, virtlab606: GpuHost, vgpu2: list[dict[str, Any]]
) -> None:
    shown = osc("resource", "provider", "show", virtlab606.pgpu_uuid(PGPU_85), version="1.14")
    assert shown == {
        "uuid": virtlab606.pgpu_uuid(PGPU_85),
        "name": "virtlab606.example.org_pci_0000_85_00_0",
        "generation": GENERATIONS_AFTER_VGPU2[PGPU_85],
        "root_provider_uuid": virtlab606.root_uuid,
        "parent_provider_uuid": virtlab606.root_uuid,
    }


# --- inventories ---------------------------------------------------------------------------


def test_inventories_match_seed_tables(
    osc: OpenStackCli, virtlab606: GpuHost, vgpu2: list[dict[str, Any]]
) -> None:
    """The guide's second step; ``used`` counts vgpu2."""
    root, pgpu_84, pgpu_85 = osc.each(
        ["resource", "provider", "inventory", "list", virtlab606.root_uuid],
        ["resource", "provider", "inventory", "list", virtlab606.pgpu_uuid(PGPU_84)],
        ["resource", "provider", "inventory", "list", virtlab606.pgpu_uuid(PGPU_85)],
    )
    assert by_key(root, "resource_class") == inventory_rows(
        COMPUTE_NODE_INVENTORY, used=INSTANCE_ROOT_RESOURCES
    )
    assert by_key(pgpu_84, "resource_class") == inventory_rows(PGPU_INVENTORY, used={"VGPU": 1})
    assert by_key(pgpu_85, "resource_class") == inventory_rows(PGPU_INVENTORY)


def test_inventory_show_memory_reserved_and_ratio(
    osc: OpenStackCli, virtlab606: GpuHost, vgpu2: list[dict[str, Any]]
) -> None:
    shown = osc("resource", "provider", "inventory", "show", virtlab606.root_uuid, "MEMORY_MB")
    expected = inventory_rows(COMPUTE_NODE_INVENTORY, used=INSTANCE_ROOT_RESOURCES)["MEMORY_MB"]
    del expected["resource_class"]
    assert shown == expected


def test_retired_host_inventory_and_provider_removed(osc: OpenStackCli) -> None:
    """A host leaves the cloud: its inventory goes class by class, then the provider."""
    uuid = osc("resource", "provider", "create", "retired.example.org")["uuid"]
    written = osc(
        "resource", "provider", "inventory", "set", uuid,
        "--resource", "VCPU=8", "--resource", "DISK_GB=100",
    )  # fmt: skip
    assert by_key(written, "resource_class")["VCPU"]["max_unit"] == PLACEMENT_MAX_UNIT_DEFAULT
    osc.run("resource", "provider", "inventory", "delete", uuid, "--resource-class", "DISK_GB")
    left = osc("resource", "provider", "inventory", "list", uuid)
    assert [(row["resource_class"], row["total"]) for row in left] == [("VCPU", 8)]

    osc.run("resource", "provider", "inventory", "delete", uuid)
    assert osc("resource", "provider", "inventory", "list", uuid) == []
    osc.run("resource", "provider", "delete", uuid)
    gone = osc.fails("resource", "provider", "show", uuid)
    assert "(HTTP 404)" in gone.stderr
    assert uuid in gone.stderr


# --- allocations and usages ----------------------------------------------------------------


def test_instance_allocation_spans_compute_node_and_one_pgpu(
    virtlab606: GpuHost, vgpu2: list[dict[str, Any]]
) -> None:
    """`allocation set` at 1.39 prints one row per provider, with the new generations."""
    owner = {"project_id": PROJECT, "user_id": USER, "consumer_type": "INSTANCE"}
    assert by_key(vgpu2, "resource_provider") == {
        virtlab606.root_uuid: {
            "resource_provider": virtlab606.root_uuid,
            "generation": GENERATIONS_AFTER_VGPU2["root"],
            "resources": INSTANCE_ROOT_RESOURCES,
            **owner,
        },
        virtlab606.pgpu_uuid(PGPU_84): {
            "resource_provider": virtlab606.pgpu_uuid(PGPU_84),
            "generation": GENERATIONS_AFTER_VGPU2[PGPU_84],
            "resources": {"VGPU": 1},
            **owner,
        },
    }


def test_allocation_show_matches_seed_table(
    osc: OpenStackCli, virtlab606: GpuHost, vgpu2: list[dict[str, Any]]
) -> None:
    """The guide's third step: vgpu2's VGPU comes from exactly one pGPU."""
    default, with_type = osc.each(
        ["resource", "provider", "allocation", "show", INSTANCE],
        ["--os-placement-api-version", "1.38", "resource", "provider", "allocation", "show",
         INSTANCE],
    )  # fmt: skip
    expected = {
        virtlab606.root_uuid: INSTANCE_ROOT_RESOURCES,
        virtlab606.pgpu_uuid(PGPU_84): {"VGPU": 1},
    }
    for shown in (default, with_type):
        assert {row["resource_provider"]: row["resources"] for row in shown} == expected
        assert {(row["project_id"], row["user_id"]) for row in shown} == {(PROJECT, USER)}
    # consumer_type exists only from 1.38; the default (negotiated 1.29) must not show it.
    assert all("consumer_type" not in row for row in default)
    assert {row["consumer_type"] for row in with_type} == {"INSTANCE"}


def test_provider_usages_count_the_instance(
    osc: OpenStackCli, virtlab606: GpuHost, vgpu2: list[dict[str, Any]]
) -> None:
    root, pgpu_84, pgpu_85 = osc.each(
        ["resource", "provider", "usage", "show", virtlab606.root_uuid],
        ["resource", "provider", "usage", "show", virtlab606.pgpu_uuid(PGPU_84)],
        ["resource", "provider", "usage", "show", virtlab606.pgpu_uuid(PGPU_85)],
    )
    assert usages(root) == INSTANCE_ROOT_RESOURCES
    assert usages(pgpu_84) == {"VGPU": 1}
    assert usages(pgpu_85) == {"VGPU": 0}


def test_project_usages_sum_the_instance(osc: OpenStackCli, vgpu2: list[dict[str, Any]]) -> None:
    """Flat before 1.38; from 1.38 grouped by consumer type, with a consumer count."""
    flat, by_type = osc.each(
        ["resource", "usage", "show", PROJECT, "--user-id", USER],
        ["--os-placement-api-version", "1.38", "resource", "usage", "show", PROJECT],
    )
    everything = {**INSTANCE_ROOT_RESOURCES, "VGPU": 1}
    assert usages(flat) == everything
    assert usages(by_type) == {"INSTANCE": {"consumer_count": 1, **everything}}


def test_vgpu_request_beyond_pgpu_capacity_refused(
    osc: OpenStackCli, virtlab606: GpuHost, vgpu2: list[dict[str, Any]]
) -> None:
    """pGPU 84 has 16 VGPU and vgpu2 holds 1: 16 more do not fit, and nothing is written."""
    pgpu_84 = virtlab606.pgpu_uuid(PGPU_84)
    greedy = "a6811fc2-cec8-4f1d-baea-e2c6339a9697"
    refused = osc.fails(
        "resource", "provider", "allocation", "set", greedy,
        "--allocation", f"rp={pgpu_84},VGPU=16",
        "--project-id", PROJECT, "--user-id", USER, "--consumer-type", "INSTANCE",
        version="1.39",
    )  # fmt: skip
    assert "(HTTP 409)" in refused.stderr
    assert "VGPU" in refused.stderr
    assert pgpu_84 in refused.stderr
    assert "capacity" in refused.stderr.lower()

    greedy_allocations, pgpu_usage = osc.each(
        ["resource", "provider", "allocation", "show", greedy],
        ["resource", "provider", "usage", "show", pgpu_84],
    )
    assert greedy_allocations == []
    assert usages(pgpu_usage) == {"VGPU": 1}


def test_providers_in_use_cannot_be_deleted(
    osc: OpenStackCli, virtlab606: GpuHost, vgpu2: list[dict[str, Any]]
) -> None:
    """The compute node has pGPU children; pGPU 84 holds vgpu2's vGPU."""
    pgpu_84 = virtlab606.pgpu_uuid(PGPU_84)
    parent, busy = (
        osc.fails("resource", "provider", "delete", virtlab606.root_uuid),
        osc.fails("resource", "provider", "delete", pgpu_84),
    )
    assert "(HTTP 409)" in parent.stderr
    assert virtlab606.root_uuid in parent.stderr
    assert "child" in parent.stderr.lower()
    assert "(HTTP 409)" in busy.stderr
    assert pgpu_84 in busy.stderr
    assert "allocation" in busy.stderr.lower()

    still_there = osc("resource", "provider", "list", "--in-tree", virtlab606.root_uuid)
    assert {row["uuid"]: row["generation"] for row in still_there} == {
        virtlab606.root_uuid: GENERATIONS_AFTER_VGPU2["root"],
        pgpu_84: GENERATIONS_AFTER_VGPU2[PGPU_84],
        virtlab606.pgpu_uuid(PGPU_85): GENERATIONS_AFTER_VGPU2[PGPU_85],
    }


# --- traits and aggregates -----------------------------------------------------------------


def test_custom_trait_narrows_vgpu_candidates_to_one_pgpu(
    osc: OpenStackCli, virtlab607: GpuHost
) -> None:
    """The guide's "Provide custom traits" steps, at the microversion it names (1.6).

    Then what the trait is for: the guide's next step adds ``trait:CUSTOM_NVIDIA_11=required``
    to the vgpu flavor, and Placement must then offer the vGPU from that pGPU only, not from
    its sibling nor from virtlab606's undecorated pGPUs.
    """
    pgpu_85 = virtlab607.pgpu_uuid(PGPU_85)
    osc.run("trait", "create", "CUSTOM_NVIDIA_11", version="1.6")
    custom, set_output = osc.each(
        ["trait", "list", "--name", "startswith:CUSTOM_"],
        ["resource", "provider", "trait", "set", "--trait", "CUSTOM_NVIDIA_11", pgpu_85],
        version="1.6",
    )
    names = [row["name"] for row in custom]
    assert "CUSTOM_NVIDIA_11" in names
    assert all(name.startswith("CUSTOM_") for name in names), names
    assert set_output == [{"name": "CUSTOM_NVIDIA_11"}]

    listed, required, candidates = osc.each(
        ["--os-placement-api-version", "1.6", "resource", "provider", "trait", "list", pgpu_85],
        ["--os-placement-api-version", "1.18",
         "resource", "provider", "list", "--required", "CUSTOM_NVIDIA_11"],
        ["allocation", "candidate", "list",
         *(f"--resource={rc}={amount}" for rc, amount in VGPU_FLAVOR.items()),
         "--required", "CUSTOM_NVIDIA_11"],
    )  # fmt: skip
    assert listed == [{"name": "CUSTOM_NVIDIA_11"}]
    # Inventory write, then trait write: generation 2.
    assert [(row["uuid"], row["generation"]) for row in required] == [(pgpu_85, 2)]
    # One candidate: CPU, RAM and disk from virtlab607's root, the vGPU from pGPU 85.
    assert {row["#"] for row in candidates} == {1}
    assert {
        row["resource provider"]: (
            key_values(row["allocation"]),
            key_values(row["inventory used/capacity"]),
            row["traits"],
        )
        for row in candidates
    } == {
        virtlab607.root_uuid: (
            {"VCPU": "1", "MEMORY_MB": "512", "DISK_GB": "1"},
            # capacity = (total - reserved) * allocation_ratio
            {"VCPU": "0/768", "MEMORY_MB": "0/97395", "DISK_GB": "0/49"},
            "",
        ),
        pgpu_85: ({"VGPU": "1"}, {"VGPU": "0/16"}, "CUSTOM_NVIDIA_11"),
    }


def test_trait_set_with_undefined_trait_refused(osc: OpenStackCli, virtlab607: GpuHost) -> None:
    refused = osc.fails(
        "resource", "provider", "trait", "set", "--trait", "CUSTOM_NEVER_CREATED",
        virtlab607.pgpu_uuid(PGPU_84), version="1.6",
    )  # fmt: skip
    assert "(HTTP 400)" in refused.stderr
    assert "CUSTOM_NEVER_CREATED" in refused.stderr


def test_aggregate_membership_is_generation_checked(osc: OpenStackCli, virtlab607: GpuHost) -> None:
    """From 1.19 aggregate writes carry the provider generation (compare-and-swap).

    virtlab607's providers are at generation 1 (created, then one inventory write).
    """
    root, pgpu_84 = virtlab607.root_uuid, virtlab607.pgpu_uuid(PGPU_84)
    on_root, on_pgpu = osc.each(
        ["resource", "provider", "aggregate", "set", root,
         "--aggregate", AGGREGATE, "--generation", "1"],
        ["resource", "provider", "aggregate", "set", pgpu_84,
         "--aggregate", AGGREGATE, "--generation", "1"],
    )  # fmt: skip
    assert on_root == on_pgpu == [{"uuid": AGGREGATE}]

    stale = osc.fails(
        "resource", "provider", "aggregate", "set", root,
        "--aggregate", OTHER_AGGREGATE, "--generation", "1",
    )  # fmt: skip
    assert "(HTTP 409)" in stale.stderr
    assert "generation" in stale.stderr.lower()

    listed, members = osc.each(
        ["resource", "provider", "aggregate", "list", root],
        ["resource", "provider", "list", "--member-of", AGGREGATE],
    )
    assert listed == [{"uuid": AGGREGATE}]
    assert {row["uuid"] for row in members} == {root, pgpu_84}


# --- resource classes ----------------------------------------------------------------------


def test_custom_resource_class_for_gpu_type(osc: OpenStackCli) -> None:
    osc.run("resource", "class", "create", "CUSTOM_NVIDIA_222")
    names = {row["name"] for row in osc("resource", "class", "list")}
    assert {"CUSTOM_NVIDIA_222", "VGPU", "VCPU", "MEMORY_MB", "DISK_GB"} <= names

    refused = osc.fails("resource", "class", "create", "NVIDIA_222")
    assert "(HTTP 400)" in refused.stderr
    assert "NVIDIA_222" in refused.stderr
