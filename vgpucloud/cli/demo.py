"""``vgpucloud demo``: the seed walkthrough (nova-vgpu-doc.rst), replayed on a fresh cloud.

It starts an all-in-one cloud in a temporary directory (or ``--state-dir``), then runs the
seed's commands with the real ``openstack`` CLI (or the HTTP API with ``--http`` or when the
CLI is missing), printing each command and its output, and checks what the seed says should
be true. Exit code 0 only if every expectation held.

The cloud: ``compute-1`` is the seed's host, four Tesla M60 pGPUs with
``nvidia-35`` on 0000:84:00.0 and 0000:85:00.0 and ``nvidia-36`` on 0000:86:00.0;
``compute-2`` and ``compute-3`` each carry the kernel's ``mtty`` sample device limited to 4
instances — the seed's "two children RPs with 4 vGPU inventories each" for the multi-create
case (bug 1874664). mtty, as in Nova's own functional test of that bug, because NVIDIA gives
one guest at most one vGPU per physical GPU, so a 4-VGPU flavor cannot run on an M60.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from vgpucloud.cli import allinone
from vgpucloud.cli.walkthrough import CliRunner, HttpRunner, Runner, WalkthroughError

IMAGE = "cirros-0.3.5-x86_64-uec"
SEED_DEVICES = """[devices]
enabled_mdev_types = nvidia-35, nvidia-36

[mdev_nvidia-35]
device_addresses = 0000:84:00.0,0000:85:00.0

[mdev_nvidia-36]
device_addresses = 0000:86:00.0
"""
MTTY_DEVICES = """[devices]
enabled_mdev_types = mtty-1

[mdev_mtty-1]
max_instances = 4
"""
DEMO_HOSTS = [
    allinone.HostSpec("compute-1", "m60", gpus=4, devices_conf=SEED_DEVICES),
    allinone.HostSpec("compute-2", "mtty", devices_conf=MTTY_DEVICES),
    allinone.HostSpec("compute-3", "mtty", devices_conf=MTTY_DEVICES),
]


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo", help="replay the seed vGPU walkthrough on a fresh all-in-one cloud",
        description="Start a fresh cloud and replay the Nova vGPU guide's commands, checking "
                    "every expectation; exit 0 only if all held.")
    parser.add_argument("--state-dir", type=Path, default=None,
                        help="keep the cloud's state here for inspection (default: a temp dir)")
    parser.add_argument("--http", action="store_true",
                        help="use the HTTP API even when the openstack CLI is installed")
    parser.set_defaults(func=run)


class Checks:
    def __init__(self) -> None:
        self.failed: list[str] = []
        self.held = 0

    def expect(self, ok: bool, what: str) -> bool:
        print(f"  {'✓' if ok else '✗'} {what}", flush=True)
        if ok:
            self.held += 1
        else:
            self.failed.append(what)
        return ok


def run(args: argparse.Namespace) -> int:
    with _state_dir(args.state_dir) as state_dir:
        cloud = allinone.AllInOne(state_dir=state_dir, hosts=DEMO_HOSTS, port=0,
                                  report_interval=1.0)
        with cloud.running(lambda step, total, what, detail: print(
                f"[{step}/{total}] {what:<10} {detail}", flush=True)):
            runner = _runner(cloud, force_http=args.http)
            checks = Checks()
            try:
                Walkthrough(cloud, runner, checks).play()
            except WalkthroughError as exc:
                checks.expect(False, f"every command succeeds ({exc.message})")
    print(f"\nvgpucloud demo: {checks.held} expectations held, {len(checks.failed)} failed")
    for failure in checks.failed:
        print(f"  ✗ {failure}")
    if args.state_dir:
        print(f"state kept in {state_dir}")
    return 1 if checks.failed else 0


@contextmanager
def _state_dir(given: Path | None) -> Iterator[Path]:
    if given is not None:
        given = given.expanduser().resolve()
        if given.exists() and any(given.iterdir()):
            raise WalkthroughError(f"--state-dir {given} is not empty; the demo needs a fresh "
                                   "cloud: pass a new directory")
        yield given
        return
    with tempfile.TemporaryDirectory(prefix="vgpucloud-demo-") as tmp:
        yield Path(tmp)


def _runner(cloud: allinone.AllInOne, *, force_http: bool) -> Runner:
    if not force_http:
        try:
            runner = CliRunner(cloud.clouds_yaml, allinone.CLOUD_NAME)
            print("\nusing the openstack CLI (outputs parsed from -f json, shown as tables)")
            return runner
        except WalkthroughError as exc:
            print(f"\n{exc.message}; using the HTTP API instead")
    return HttpRunner(cloud.url)


def chapter(title: str) -> None:
    print(f"\n=== {title} ===", flush=True)


class Walkthrough:
    def __init__(self, cloud: allinone.AllInOne, runner: Runner, checks: Checks) -> None:
        self.cloud = cloud
        self.run = runner
        self.checks = checks
        self.providers: dict[str, str] = {}  # name -> uuid

    def play(self) -> None:
        self.enable_types()
        self.flavor_and_servers()
        self.allocations_and_inventories()
        self.custom_traits()
        self.multi_create()
        self.boot_latency()
        self.clean_up()

    def enable_types(self) -> None:
        chapter("Enable GPU types (Compute): compute-1's nova.conf")
        print(self.cloud.computes[0].nova_conf.read_text())

    def flavor_and_servers(self) -> None:
        chapter("Configure a flavor (Controller) and create instances")
        self.run.flavor_create("vgpu_1", vcpus=1, ram=512, disk=1)
        self.run.flavor_set("vgpu_1", "resources:VGPU=1")
        for name in ("vgpu1", "vgpu2"):
            self.run.server_create(name, "vgpu_1", IMAGE)
        servers = {s["Name"]: s for s in self.run.server_list()}
        for name in ("vgpu1", "vgpu2"):
            self.checks.expect(servers.get(name, {}).get("Status") == "ACTIVE",
                               f"server {name} is ACTIVE")

    def allocations_and_inventories(self) -> None:
        chapter("Checking allocations and inventories for virtual GPUs")
        self.providers = {p["name"]: p["uuid"] for p in self.run.provider_list()}
        seed_children = {f"compute-1_pci_0000_{bus}_00_0" for bus in ("84", "85", "86")}
        self.checks.expect(seed_children <= set(self.providers) and
                           "compute-1_pci_0000_87_00_0" not in self.providers,
                           "compute-1 has one child provider per configured pGPU (84, 85, 86)")
        root = {i["resource_class"]: i for i in self.run.inventory_list(
            self.providers["compute-1"])}
        self.checks.expect(
            root.get("VCPU", {}).get("allocation_ratio") == 16.0
            and root.get("MEMORY_MB", {}).get("reserved") == 512
            and root.get("MEMORY_MB", {}).get("allocation_ratio") == 1.5
            and root.get("DISK_GB", {}).get("total") == 49,
            "the root carries VCPU ×16.0, MEMORY_MB (512 reserved) ×1.5 and DISK_GB 49")
        child = {i["resource_class"]: i for i in self.run.inventory_list(
            self.providers["compute-1_pci_0000_85_00_0"])}
        self.checks.expect(child.get("VGPU", {}).get("total") == 16,
                           "pGPU 0000:85:00.0 carries VGPU 16")
        for server in self.run.server_list():
            self._expect_vgpu_on_a_child(server["ID"], server["Name"], amount=1)

    def _expect_vgpu_on_a_child(self, consumer: str, name: str, amount: int) -> str | None:
        allocations = self.run.allocation_show(consumer)
        by_uuid = {uuid: name for name, uuid in self.providers.items()}
        vgpu = [a for a in allocations if a["resources"].get("VGPU")]
        rest = [a for a in allocations if "VCPU" in a["resources"]]
        ok = (len(vgpu) == 1 and vgpu[0]["resources"]["VGPU"] == amount and len(rest) == 1
              and "_pci_" in by_uuid.get(vgpu[0]["resource_provider"], "")
              and "_pci_" not in by_uuid.get(rest[0]["resource_provider"], "_pci_"))
        self.checks.expect(ok, f"{name}: VGPU {amount} on a pGPU child, VCPU/MEMORY_MB/DISK_GB "
                               "on the root")
        return by_uuid.get(vgpu[0]["resource_provider"]) if vgpu else None

    def custom_traits(self) -> None:
        chapter("(Optional) Provide custom traits for multiple GPU types")
        target = self.providers["compute-1_pci_0000_85_00_0"]
        self.run.trait_create("CUSTOM_NVIDIA_11")
        self.run.provider_trait_set(target, ["CUSTOM_NVIDIA_11"])
        time.sleep(2.5)  # a couple of agent reports (every second in the demo)
        traits = {t["name"] for t in self.run.provider_trait_list(target)}
        self.checks.expect({"CUSTOM_NVIDIA_11", "CUSTOM_MDEV_NVIDIA_35"} <= traits,
                           "the operator's CUSTOM_NVIDIA_11 survives the agent's reports, "
                           "which restore CUSTOM_MDEV_NVIDIA_35")
        self.run.flavor_set("vgpu_1", "trait:CUSTOM_NVIDIA_11=required")
        self.run.server_create("vgpu3", "vgpu_1", IMAGE)
        server = next(s for s in self.run.server_list() if s["Name"] == "vgpu3")
        landed = self._expect_vgpu_on_a_child(server["ID"], "vgpu3", amount=1)
        self.checks.expect(landed == "compute-1_pci_0000_85_00_0",
                           "vgpu3 landed on the pGPU decorated with CUSTOM_NVIDIA_11")

    def multi_create(self) -> None:
        chapter("Multi-create across pGPUs (bug 1874664: 2 × 4 VGPU on two 4-VGPU pGPUs)")
        self.run.flavor_create("vgpu_4", vcpus=1, ram=512, disk=1)
        self.run.flavor_set("vgpu_4", "resources:VGPU=4")
        self.run.flavor_set("vgpu_4", "trait:CUSTOM_MDEV_MTTY_1=required")
        self.run.server_create("multi", "vgpu_4", IMAGE, count=2)
        servers = [s for s in self.run.server_list() if s["Name"].startswith("multi")]
        self.checks.expect(len(servers) == 2 and all(s["Status"] == "ACTIVE" for s in servers),
                           "both servers of --min 2 --max 2 are ACTIVE")
        places = {self._expect_vgpu_on_a_child(s["ID"], s["Name"], amount=4) for s in servers}
        self.checks.expect(len(places) == 2 and None not in places,
                           "they hold their 4 VGPU on two different pGPUs")

    def boot_latency(self) -> None:
        chapter("Boot latency (POST /servers to ACTIVE, measured over HTTP)")
        seconds = measure_boot(self.cloud.url, flavor="vgpu_1", image=IMAGE)
        print(f"  one vGPU server went from POST to ACTIVE in {seconds:.2f} s")

    def clean_up(self) -> None:
        chapter("Delete the servers: allocations and mdevs are released")
        servers = self.run.server_list()
        self.run.server_delete([s["Name"] for s in servers])
        leftovers = [s for s in servers if self.run.allocation_show(s["ID"])]
        self.checks.expect(not leftovers, "no deleted server keeps an allocation")
        self.checks.expect(not self.run.server_list(), "no server is left")


def measure_boot(url: str, *, flavor: str, image: str) -> float:
    """Seconds from ``POST /servers`` to ACTIVE for one server, polling every 10 ms."""
    headers = {"X-Auth-Token": "admin", "OpenStack-API-Version": "compute 2.79"}
    with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
        flavors = http.get("/compute/v2.1/flavors").json()["flavors"]
        flavor_id = next(f["id"] for f in flavors if f["name"] == flavor)
        image_id = http.get("/image/v2/images", params={"name": image}).json()["images"][0]["id"]
        body = {"server": {"name": "latency", "flavorRef": flavor_id, "imageRef": image_id,
                           "networks": "none"}}
        started = time.monotonic()
        server = http.post("/compute/v2.1/servers", json=body).json()["server"]["id"]
        while time.monotonic() - started < 60:
            status = http.get(f"/compute/v2.1/servers/{server}").json()["server"]["status"]
            if status != "BUILD":
                break
            time.sleep(0.01)
        seconds = time.monotonic() - started
        if status != "ACTIVE":
            raise WalkthroughError(f"the latency server ended {status}, not ACTIVE")
        return seconds
