"""100 boots fired at once over HTTP at ``vgpucloud up`` with 32 vGPU slots: exactly 32 win.

Two simulated hosts with four Tesla M60 each, all pGPUs on ``nvidia-40`` (M60-2A, four per
pGPU): 2 × 4 × 4 = 32 slots. The check covers every layer: API statuses and faults,
Placement usage, and the mdev ledgers on the hosts.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from tests.e2e.upcloud import UpProcess
from vgpucloud.agent.ledger import Ledger

COMPUTE = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.79"}
PLACEMENT = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.39"}
BOOTS = 100
SLOTS = 32


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[UpProcess]:
    up = UpProcess(tmp_path / "state", "--hosts", "2", "--mdev-type", "nvidia-40",
                   "--conductors", "4")
    yield up
    up.interrupt()


def test_100_parallel_boots_on_32_vgpu_slots(cloud: UpProcess) -> None:
    with httpx.Client(base_url=cloud.url, headers=COMPUTE, timeout=60) as http:
        flavor = http.post("/compute/v2.1/flavors", json={"flavor": {
            "name": "vgpu_1", "vcpus": 1, "ram": 512, "disk": 1}}).json()["flavor"]["id"]
        http.post(f"/compute/v2.1/flavors/{flavor}/os-extra_specs",
                  json={"extra_specs": {"resources:VGPU": "1"}}).raise_for_status()
        image = http.get("/image/v2/images", params={"name": "cirros"}).json()["images"][0]

        def boot(index: int) -> str:
            body = {"server": {"name": f"race-{index}", "flavorRef": flavor,
                               "imageRef": image["id"], "networks": "none"}}
            response = httpx.post(f"{cloud.url}/compute/v2.1/servers", json=body,
                                  headers=COMPUTE, timeout=60)
            response.raise_for_status()
            return str(response.json()["server"]["id"])

        with ThreadPoolExecutor(max_workers=BOOTS) as pool:
            ids = list(pool.map(boot, range(BOOTS)))
        servers = _wait_until_built(http, ids)

    active = [s for s in servers if s["status"] == "ACTIVE"]
    errored = [s for s in servers if s["status"] == "ERROR"]
    assert (len(active), len(errored)) == (SLOTS, BOOTS - SLOTS)
    assert all("No valid host" in s["fault"]["message"] for s in errored)

    providers = httpx.get(f"{cloud.url}/placement/resource_providers", headers=PLACEMENT
                          ).json()["resource_providers"]
    usage = sum(httpx.get(f"{cloud.url}/placement/resource_providers/{p['uuid']}/usages",
                          headers=PLACEMENT).json()["usages"].get("VGPU", 0)
                for p in providers)
    assert usage == SLOTS
    for server in errored:
        allocations = httpx.get(f"{cloud.url}/placement/allocations/{server['id']}",
                                headers=PLACEMENT).json()["allocations"]
        assert allocations == {}

    attached = []
    for state in sorted((cloud.state_dir / "hosts").glob("compute-*/state")):
        ledger = Ledger.in_state_dir(state)
        try:
            attached += [(e.uuid, e.owner) for e in ledger.entries() if e.state == "attached"]
        finally:
            ledger.close()
    assert len(attached) == SLOTS
    assert len({mdev for mdev, _ in attached}) == SLOTS  # no mdev shared
    assert {owner for _, owner in attached} == {s["id"] for s in active}


def _wait_until_built(http: httpx.Client, ids: list[str]) -> list[dict]:
    wanted = set(ids)
    for _ in range(600):
        servers = [s for s in http.get("/compute/v2.1/servers/detail").json()["servers"]
                   if s["id"] in wanted]
        if len(servers) == len(wanted) and all(s["status"] != "BUILD" for s in servers):
            return servers
        time.sleep(0.2)
    pytest.fail("servers still building after 120 s")
