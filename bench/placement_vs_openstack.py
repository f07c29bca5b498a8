"""Allocation candidates and claims: vgpucloud against the real OpenStack Placement.

Installs nothing. The peer we measure against is installed separately, ideally in its own
virtualenv so its pinned libraries never touch ours::

    python -m venv /opt/placement && /opt/placement/bin/pip install openstack-placement waitress
    python bench/placement_vs_openstack.py --placement-python /opt/placement/bin/python \\
        --hosts 100 --gpus 4                 # quick
    python bench/placement_vs_openstack.py --placement-python /opt/placement/bin/python \\
        --hosts 1000 --gpus 8 --json out.json

What it does:

1. Starts both services as subprocesses on SQLite, each behind **the same WSGI server**
   (waitress, same thread count): OpenStack Placement's ``placement.wsgi.init_application()``
   with a generated ``placement.conf`` (``[api] auth_strategy = noauth2``) after
   ``placement-manage db sync``; ours with ``vgpucloud api --sync``.
2. Builds the same synthetic vGPU cloud in both, through the HTTP API only, host by host,
   alternating between the services: N compute roots (VCPU 48, MEMORY_MB 65442,
   DISK_GB 1000, in one of four aggregates) with G pGPU children
   ``<host>_pci_0000_XX_00_0`` (VGPU 16); the first pGPU of each host is
   ``CUSTOM_NVIDIA_11``, the second ``CUSTOM_NVIDIA_12``. Identical uuids in both.
3. Times each query alternately (theirs, ours, theirs, ...) ``--reps`` times and reports
   median and p95 in milliseconds; for every query without ``limit`` it also checks that
   both return the same set of allocation requests (allocations + mappings, order-free)
   and reports a mismatch as a failure (exit status 1).
4. Times ``PUT /allocations/{consumer}`` claims of real candidates and the setup requests.

Prints one table (query, theirs, ours, ratio); ``--json FILE`` writes the same rows as
``{"query", "theirs_ms", "ours_ms", "ratio", "identical"}``.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx

THREADS = 8
VERSION = "placement 1.39"
HEADERS = {"x-auth-token": "admin", "openstack-api-version": VERSION,
           "accept": "application/json"}
THEIR_SERVER = """
import sys, waitress
from placement import wsgi
app = wsgi.init_application()
waitress.serve(app, host="127.0.0.1", port=int(sys.argv[1]), threads=int(sys.argv[2]),
               _quiet=True)
"""
# ``vgpucloud api`` itself, registered alone so a half-finished unrelated subcommand in a
# working tree cannot stop the benchmark.
OUR_SERVER = """
import argparse, sys
from vgpucloud.cli import api
parser = argparse.ArgumentParser(prog="vgpucloud")
api.register(parser.add_subparsers())
args = parser.parse_args(sys.argv[1:])
sys.exit(args.func(args))
"""
PLACEMENT_CONF = """[DEFAULT]
debug = False
[api]
auth_strategy = noauth2
[placement_database]
connection = sqlite:///{db}
"""
BASE_Q = "resources=VCPU:1,MEMORY_MB:512,DISK_GB:1"


def queries(gpus: int) -> list[tuple[str, str]]:
    one = f"{BASE_Q}&resources1=VGPU:1&group_policy=isolate"
    two = f"{BASE_Q}&resources1=VGPU:1&resources2=VGPU:1&group_policy=isolate"
    found = [
        ("1 VGPU isolate, limit 1000", one + "&limit=1000"),
        ("1 VGPU isolate", one),
        ("1 VGPU required1=CUSTOM_NVIDIA_11, limit 1000",
         one + "&required1=CUSTOM_NVIDIA_11&limit=1000"),
        ("1 VGPU required1=CUSTOM_NVIDIA_11", one + "&required1=CUSTOM_NVIDIA_11"),
        ("2 VGPU groups isolate, limit 1000", two + "&limit=1000"),
        ("2 VGPU groups isolate", two),
    ]
    if gpus >= 4:
        four = "".join(f"&resources{i}=VGPU:1" for i in range(1, 5))
        found.append((f"4 VGPU groups isolate (G={gpus}), limit 1000",
                      f"{BASE_Q}{four}&group_policy=isolate&limit=1000"))
    return found


# --- the two services -----------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def theirs(placement_python: str, workdir: Path) -> Iterator[str]:
    conf_dir = workdir / "placement"
    conf_dir.mkdir()
    (conf_dir / "placement.conf").write_text(
        PLACEMENT_CONF.format(db=conf_dir / "placement.sqlite"))
    manage = Path(placement_python).with_name("placement-manage")
    subprocess.run([str(manage), "--config-file", str(conf_dir / "placement.conf"),
                    "db", "sync"], check=True, capture_output=True)
    port = free_port()
    env = {**os.environ, "OS_PLACEMENT_CONFIG_DIR": str(conf_dir)}
    with _serving([placement_python, "-c", THEIR_SERVER, str(port), str(THREADS)], env,
                  workdir / "theirs.log") as _:
        yield wait_ready(f"http://127.0.0.1:{port}")


@contextlib.contextmanager
def ours(workdir: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-c", OUR_SERVER, "api", "--sync",
               "--database-url", f"sqlite:///{workdir / 'ours.sqlite'}",
               "--bind", f"127.0.0.1:{port}", "--threads", str(THREADS)]
    with _serving(command, dict(os.environ), workdir / "ours.log") as _:
        yield wait_ready(f"http://127.0.0.1:{port}") + "/placement"


@contextlib.contextmanager
def _serving(command: list[str], env: dict[str, str], log: Path) -> Iterator[None]:
    with log.open("w") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)
        try:
            yield
        finally:
            process.terminate()
            try:
                process.wait(10)
            except subprocess.TimeoutExpired:
                process.kill()


def wait_ready(url: str, timeout: float = 60.0) -> str:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        with contextlib.suppress(httpx.TransportError):
            if httpx.get(url + "/", timeout=2).status_code < 500:
                return url
        time.sleep(0.2)
    raise SystemExit(f"{url} did not answer within {timeout:.0f}s; see the logs in the "
                     "work directory (--keep shows where)")


# --- building the cloud ---------------------------------------------------------------------


class Timed:
    """One service: an HTTP client that remembers how long each kind of request took."""

    def __init__(self, name: str, base: str) -> None:
        self.name = name
        self.client = httpx.Client(base_url=base, headers=HEADERS, timeout=None)
        self.setup: list[float] = []

    def call(self, method: str, path: str, body: Any = None, expect: int = 200) -> Any:
        started = time.perf_counter()
        response = self.client.request(method, path, json=body)
        elapsed = (time.perf_counter() - started) * 1000
        if response.status_code not in (expect, 200, 201, 204):
            raise SystemExit(f"{self.name}: {method} {path} -> {response.status_code} "
                             f"{response.text[:300]}")
        self.last_ms = elapsed
        return response.json() if response.content else None

    def setup_call(self, method: str, path: str, body: Any = None) -> Any:
        result = self.call(method, path, body)
        self.setup.append(self.last_ms)
        return result


def host_requests(index: int, gpus: int, aggregates: list[str]) -> list[tuple[str, str, Any]]:
    host = f"cn{index:05d}"
    root = str(uuid.uuid5(uuid.NAMESPACE_DNS, host))
    steps: list[tuple[str, str, Any]] = [
        ("POST", "/resource_providers", {"name": host, "uuid": root}),
        ("PUT", f"/resource_providers/{root}/inventories", {
            "resource_provider_generation": 0, "inventories": {
                "VCPU": {"total": 48}, "MEMORY_MB": {"total": 65442},
                "DISK_GB": {"total": 1000}}}),
        ("PUT", f"/resource_providers/{root}/aggregates", {
            "resource_provider_generation": 1, "aggregates": [aggregates[index % 4]]}),
    ]
    for gpu in range(gpus):
        name = f"{host}_pci_0000_{0x84 + gpu:02x}_00_0"
        child = str(uuid.uuid5(uuid.NAMESPACE_DNS, name))
        steps += [
            ("POST", "/resource_providers", {"name": name, "uuid": child,
                                             "parent_provider_uuid": root}),
            ("PUT", f"/resource_providers/{child}/inventories", {
                "resource_provider_generation": 0,
                "inventories": {"VGPU": {"total": 16, "max_unit": 16}}}),
        ]
        if gpu < 2:
            steps.append(("PUT", f"/resource_providers/{child}/traits", {
                "resource_provider_generation": 1, "traits": [f"CUSTOM_NVIDIA_1{gpu + 1}"]}))
    return steps


def build_cloud(services: list[Timed], hosts: int, gpus: int) -> None:
    aggregates = [str(uuid.uuid5(uuid.NAMESPACE_DNS, f"agg{i}")) for i in range(4)]
    for service in services:
        for trait in ("CUSTOM_NVIDIA_11", "CUSTOM_NVIDIA_12"):
            service.call("PUT", f"/traits/{trait}", expect=201)
    started = time.monotonic()
    for index in range(hosts):
        steps = host_requests(index, gpus, aggregates)
        for service in services:
            for method, path, body in steps:
                service.setup_call(method, path, body)
        if (index + 1) % max(1, hosts // 10) == 0 or index + 1 == hosts:
            print(f"  built {index + 1}/{hosts} hosts in both "
                  f"({time.monotonic() - started:.0f} s)", flush=True)


# --- measuring ------------------------------------------------------------------------------


def normalised(body: dict[str, Any]) -> set[Any]:
    found = set()
    for request in body["allocation_requests"]:
        allocations = frozenset((rp, rc, amount)
                                for rp, item in request["allocations"].items()
                                for rc, amount in item["resources"].items())
        mappings = frozenset((suffix, frozenset(rps))
                             for suffix, rps in request.get("mappings", {}).items())
        found.add((allocations, mappings))
    return found


def measure(pair: list[Timed], action: Callable[[Timed, int], Any], reps: int
            ) -> tuple[list[list[float]], list[Any]]:
    times: list[list[float]] = [[], []]
    first: list[Any] = [None, None]
    for rep in range(reps):
        for side, service in enumerate(pair):
            result = action(service, rep)
            times[side].append(service.last_ms)
            if rep == 0:
                first[side] = result
    return times, first


def stats(samples: list[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return statistics.median(ordered), p95


def row(query: str, times: list[list[float]], identical: bool | None) -> dict[str, Any]:
    (their_median, their_p95), (our_median, our_p95) = stats(times[0]), stats(times[1])
    return {"query": query, "theirs_ms": round(their_median, 2), "ours_ms": round(our_median, 2),
            "theirs_p95_ms": round(their_p95, 2), "ours_p95_ms": round(our_p95, 2),
            "ratio": round(their_median / our_median, 1) if our_median else None,
            "identical": identical, "samples": len(times[0])}


def run_queries(pair: list[Timed], gpus: int, reps: int) -> list[dict[str, Any]]:
    rows = []
    for label, query in queries(gpus):
        print(f"  {label} ...", flush=True)
        heavy = label.startswith("4 VGPU")

        def ask(service: Timed, _rep: int, query: str = query) -> Any:
            return service.call("GET", f"/allocation_candidates?{query}")

        times, first = measure(pair, ask, 1 if heavy else reps)
        identical = None
        if "limit" not in query:
            theirs_set, ours_set = normalised(first[0]), normalised(first[1])
            identical = theirs_set == ours_set
            if not identical:
                print(f"    MISMATCH: theirs {len(theirs_set)} candidates, ours {len(ours_set)};"
                      f" only theirs {len(theirs_set - ours_set)}, only ours "
                      f"{len(ours_set - theirs_set)}", flush=True)
        else:
            counts = [len(body["allocation_requests"]) for body in first]
            print(f"    candidates returned: theirs {counts[0]}, ours {counts[1]}", flush=True)
        rows.append(row(label, times, identical))
    return rows


def run_claims(pair: list[Timed], reps: int) -> dict[str, Any]:
    body = pair[1].call("GET", f"/allocation_candidates?{BASE_Q}&resources1=VGPU:1"
                               f"&limit={reps}")

    def claim(service: Timed, rep: int) -> Any:
        consumer = str(uuid.uuid5(uuid.NAMESPACE_DNS, f"consumer{rep}"))
        request = body["allocation_requests"][rep % len(body["allocation_requests"])]
        return service.call("PUT", f"/allocations/{consumer}", {
            "allocations": request["allocations"], "consumer_generation": None,
            "project_id": "bench", "user_id": "bench", "consumer_type": "INSTANCE"},
            expect=204)

    times, _ = measure(pair, claim, reps)
    return row("PUT /allocations/{consumer} (claim)", times, None)


def print_table(rows: list[dict[str, Any]]) -> None:
    width = max(len(r["query"]) for r in rows)
    print(f"\n{'query':<{width}}  {'theirs ms (p95)':>20}  {'ours ms (p95)':>18}  {'ratio':>6}"
          "  same")
    for r in rows:
        same = {None: "-", True: "yes", False: "NO"}[r["identical"]]
        print(f"{r['query']:<{width}}  {r['theirs_ms']:>9.1f} ({r['theirs_p95_ms']:>8.1f})  "
              f"{r['ours_ms']:>8.1f} ({r['ours_p95_ms']:>7.1f})  {r['ratio']:>5}x  {same}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=100)
    parser.add_argument("--gpus", type=int, default=4)
    parser.add_argument("--reps", type=int, default=7, help="repetitions per query")
    parser.add_argument("--placement-python", default=os.environ.get(
        "PLACEMENT_PYTHON", sys.executable),
        help="python of the environment where openstack-placement and waitress are "
        "installed (default $PLACEMENT_PYTHON or this python)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--keep", action="store_true", help="keep the work directory")
    args = parser.parse_args(argv)
    workdir = Path(tempfile.mkdtemp(prefix="vgpucloud-bench-"))
    print(f"work directory {workdir}; {args.hosts} hosts x {args.gpus} pGPUs", flush=True)
    with theirs(args.placement_python, workdir) as their_url, ours(workdir) as our_url:
        pair = [Timed("openstack-placement", their_url), Timed("vgpucloud", our_url)]
        print("building the cloud in both (interleaved)", flush=True)
        build_cloud(pair, args.hosts, args.gpus)
        print("timing queries (interleaved)", flush=True)
        rows = run_queries(pair, args.gpus, args.reps)
        rows.append(run_claims(pair, max(args.reps * 3, 20)))
        rows.append(row("setup requests (per request)", [pair[0].setup, pair[1].setup], None))
    print_table(rows)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    if not args.keep:
        import shutil
        shutil.rmtree(workdir, ignore_errors=True)
    return 1 if any(r["identical"] is False for r in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
