"""The cached allocation-candidates read model never serves a stale answer.

Each scenario asks the same question twice through one long-lived API (its read model warm),
changes the database in between - through the same store, or through a second store standing
for another API process - and checks that the second answer is byte for byte what a brand-new
API (cold read model) says, and that the change is visible in it. Runs on SQLite, PostgreSQL
and MariaDB.
"""

from __future__ import annotations

import json
import threading
import uuid
from typing import Any

import webob
from sqlalchemy import Engine

from vgpucloud.api.app import make_app
from vgpucloud.conf import Settings
from vgpucloud.placement.models import ConsumerAllocationRequest, Inventory
from vgpucloud.storage.placement_store import SqlPlacementStore

HEADERS = {"x-auth-token": "admin", "accept": "application/json",
           "openstack-api-version": "placement 1.39"}
ONE_VGPU = ("resources=VCPU:1,MEMORY_MB:512&resources1=VGPU:1&required1=CUSTOM_NVIDIA_11"
            "&group_policy=isolate")
TWO_VGPUS = "resources=VCPU:1&resources1=VGPU:1&resources2=VGPU:1&group_policy=isolate"


class Api:
    """An in-process Placement API on ``store``, as one API process would serve it."""

    def __init__(self, database_url: str, store: SqlPlacementStore) -> None:
        self.app = make_app(Settings(database_url=database_url), store)

    def candidates(self, query: str, version: str = "1.39") -> tuple[int, bytes]:
        request = webob.Request.blank(
            f"/placement/allocation_candidates?{query}",
            headers={**HEADERS, "openstack-api-version": f"placement {version}"})
        response = request.get_response(self.app)
        return response.status_code, response.body


def two_t4_hosts(store: SqlPlacementStore) -> dict[str, str]:
    """cn1 and cn2 (VCPU 8, MEMORY_MB 4096), each with two pGPUs (VGPU 4), the first of
    each CUSTOM_NVIDIA_11; returns name -> uuid."""
    store.ensure_trait("CUSTOM_NVIDIA_11")
    uuids: dict[str, str] = {}
    for host in ("cn1", "cn2"):
        root = store.create_provider(host, str(uuid.uuid4())).uuid
        uuids[host] = root
        store.set_inventories(root, 0, {"VCPU": Inventory("VCPU", 8),
                                        "MEMORY_MB": Inventory("MEMORY_MB", 4096)})
        for index in range(2):
            name = f"{host}_pci_0000_8{4 + index}_00_0"
            gpu = store.create_provider(name, str(uuid.uuid4()), root).uuid
            uuids[name] = gpu
            generation, _ = store.set_inventories(gpu, 0, {"VGPU": Inventory("VGPU", 4)})
            if index == 0:
                store.set_provider_traits(gpu, generation, ["CUSTOM_NVIDIA_11"])
    return uuids


def assert_fresh(database_url: str, engine: Engine, warm: Api, query: str) -> dict[str, Any]:
    """The warm API answers exactly like a cold one; returns the answer."""
    status, body = warm.candidates(query)
    cold_status, cold_body = Api(database_url, SqlPlacementStore(engine)).candidates(query)
    assert (status, body) == (cold_status, cold_body)
    assert status == 200, body
    result: dict[str, Any] = json.loads(body)
    return result


def gpus_offered(answer: dict[str, Any]) -> set[str]:
    return {rp for request in answer["allocation_requests"]
            for suffix, rps in request["mappings"].items() if suffix for rp in rps}


def claim(store: SqlPlacementStore, resources: dict[str, dict[str, int]]) -> None:
    store.replace_allocations([ConsumerAllocationRequest(
        consumer_uuid=str(uuid.uuid4()), resources=resources, project_id="p", user_id="u",
        expected_generation=None, consumer_type="INSTANCE")])


def test_claim_between_two_identical_queries_is_seen(
        database_url: str, db_engine: Engine, store: SqlPlacementStore) -> None:
    hosts = two_t4_hosts(store)
    api = Api(database_url, store)
    before = assert_fresh(database_url, db_engine, api, ONE_VGPU)
    full = hosts["cn1_pci_0000_84_00_0"]
    assert full in gpus_offered(before)
    claim(store, {hosts["cn1"]: {"VCPU": 1}, full: {"VGPU": 4}})
    after = assert_fresh(database_url, db_engine, api, ONE_VGPU)
    assert gpus_offered(after) == {hosts["cn2_pci_0000_84_00_0"]}
    assert after["provider_summaries"][hosts["cn2"]]["resources"]["VCPU"]["used"] == 0


def test_another_api_process_writing_is_seen(
        database_url: str, db_engine: Engine, store: SqlPlacementStore) -> None:
    hosts = two_t4_hosts(store)
    api = Api(database_url, store)
    assert_fresh(database_url, db_engine, api, TWO_VGPUS)
    other_process = SqlPlacementStore(db_engine)  # its own read model, same database
    gpu = hosts["cn2_pci_0000_85_00_0"]
    generation, _ = other_process.get_inventories(gpu)
    other_process.set_inventories(gpu, generation, {"VGPU": Inventory("VGPU", 4, reserved=4)})
    after = assert_fresh(database_url, db_engine, api, TWO_VGPUS)
    assert gpu not in gpus_offered(after)
    assert {request_host(after, r) for r in after["allocation_requests"]} == {hosts["cn1"]}


def request_host(answer: dict[str, Any], request: dict[str, Any]) -> str:
    (root,) = {answer["provider_summaries"][rp]["root_provider_uuid"]
               for rp in request["allocations"]}
    return root


def test_trait_and_aggregate_changes_are_seen(
        database_url: str, db_engine: Engine, store: SqlPlacementStore) -> None:
    hosts = two_t4_hosts(store)
    api = Api(database_url, store)
    gpu = hosts["cn2_pci_0000_85_00_0"]
    assert gpu not in gpus_offered(assert_fresh(database_url, db_engine, api, ONE_VGPU))
    generation, _ = store.get_provider_traits(gpu)
    store.set_provider_traits(gpu, generation, ["CUSTOM_NVIDIA_11"])
    assert gpu in gpus_offered(assert_fresh(database_url, db_engine, api, ONE_VGPU))
    aggregate = str(uuid.uuid4())
    in_aggregate = f"{ONE_VGPU}&member_of={aggregate}"
    assert_fresh(database_url, db_engine, api, in_aggregate)
    store.set_provider_aggregates(hosts["cn2"], [aggregate], None)
    answer = assert_fresh(database_url, db_engine, api, in_aggregate)
    assert {request_host(answer, r) for r in answer["allocation_requests"]} == {hosts["cn2"]}


def test_deleted_and_recreated_providers_are_seen(
        database_url: str, db_engine: Engine, store: SqlPlacementStore) -> None:
    # The newest provider is deleted and created again with the same uuid and the same
    # writes: on SQLite it even gets the same id back, at the same generation.
    hosts = two_t4_hosts(store)
    api = Api(database_url, store)
    gpu = hosts["cn2_pci_0000_85_00_0"]
    assert gpu in gpus_offered(assert_fresh(database_url, db_engine, api, TWO_VGPUS))
    store.delete_provider(gpu)
    store.create_provider("cn2_pci_0000_85_00_0", gpu, hosts["cn2"])
    store.set_inventories(gpu, 0, {"VGPU": Inventory("VGPU", 2)})
    answer = assert_fresh(database_url, db_engine, api, TWO_VGPUS)
    assert answer["provider_summaries"][gpu]["resources"]["VGPU"]["capacity"] == 2
    store.delete_provider(gpu)
    assert gpu not in gpus_offered(assert_fresh(database_url, db_engine, api, TWO_VGPUS))


def test_reparented_subtree_moves_in_the_answer(
        database_url: str, db_engine: Engine, store: SqlPlacementStore) -> None:
    hosts = two_t4_hosts(store)
    numa = store.create_provider("cn1_numa0", str(uuid.uuid4()), hosts["cn1"]).uuid
    gpu = hosts["cn1_pci_0000_85_00_0"]
    store.update_provider(gpu, "cn1_pci_0000_85_00_0", numa, allow_reparent=True)
    api = Api(database_url, store)
    answer = assert_fresh(database_url, db_engine, api, TWO_VGPUS)
    assert answer["provider_summaries"][gpu]["root_provider_uuid"] == hosts["cn1"]
    # Move the NUMA node (and the pGPU under it, whose own row is not bumped) to cn2.
    store.update_provider(numa, "cn1_numa0", hosts["cn2"], allow_reparent=True)
    answer = assert_fresh(database_url, db_engine, api, TWO_VGPUS)
    assert answer["provider_summaries"][gpu]["root_provider_uuid"] == hosts["cn2"]
    assert answer["provider_summaries"][gpu]["parent_provider_uuid"] == numa


def test_renamed_resource_class_is_seen(
        database_url: str, db_engine: Engine, store: SqlPlacementStore) -> None:
    hosts = two_t4_hosts(store)
    store.create_resource_class("CUSTOM_NVIDIA_A16")
    gpu = hosts["cn1_pci_0000_85_00_0"]
    generation, _ = store.get_inventories(gpu)
    store.set_inventories(gpu, generation, {"CUSTOM_NVIDIA_A16": Inventory("CUSTOM_NVIDIA_A16",
                                                                           2)})
    api = Api(database_url, store)
    assert_fresh(database_url, db_engine, api, "resources=CUSTOM_NVIDIA_A16:1")
    store.rename_resource_class("CUSTOM_NVIDIA_A16", "CUSTOM_NVIDIA_A16_2Q")
    assert api.candidates("resources=CUSTOM_NVIDIA_A16:1")[0] == 400
    answer = assert_fresh(database_url, db_engine, api, "resources=CUSTOM_NVIDIA_A16_2Q:1")
    assert answer["provider_summaries"][gpu]["resources"] == {
        "CUSTOM_NVIDIA_A16_2Q": {"capacity": 2, "used": 0}}


def test_unchanged_cloud_is_not_reloaded_and_one_claim_reloads_one_tree(
        database_url: str, db_engine: Engine, store: SqlPlacementStore) -> None:
    hosts = two_t4_hosts(store)
    api = Api(database_url, store)
    api.candidates(ONE_VGPU)
    loaded = store.candidate_model.reloads
    assert loaded == 2  # both trees, once
    api.candidates(TWO_VGPUS)
    api.candidates(ONE_VGPU, version="1.20")
    assert store.candidate_model.reloads == loaded
    claim(store, {hosts["cn2_pci_0000_84_00_0"]: {"VGPU": 1}})
    assert_fresh(database_url, db_engine, api, ONE_VGPU)
    assert store.candidate_model.reloads == loaded + 1


def test_concurrent_readers_and_a_writer_end_on_the_fresh_answer(
        database_url: str, db_engine: Engine, store: SqlPlacementStore) -> None:
    hosts = two_t4_hosts(store)
    api = Api(database_url, store)
    failures: list[str] = []

    def read() -> None:
        for _ in range(10):
            status, body = api.candidates(TWO_VGPUS)
            if status != 200 or not json.loads(body)["allocation_requests"]:
                failures.append(f"{status} {body[:200]!r}")

    readers = [threading.Thread(target=read) for _ in range(4)]
    for reader in readers:
        reader.start()
    for index in range(3):
        claim(store, {hosts["cn1_pci_0000_84_00_0"]: {"VGPU": 1},
                      hosts[f"cn{1 + index % 2}"]: {"VCPU": 1}})
    for reader in readers:
        reader.join()
    assert failures == []
    answer = assert_fresh(database_url, db_engine, api, TWO_VGPUS)
    summary = answer["provider_summaries"][hosts["cn1_pci_0000_84_00_0"]]
    assert summary["resources"]["VGPU"]["used"] == 3
