"""Two ways to run the seed walkthrough's commands: the real ``openstack`` CLI, or the
HTTP API when the CLI is not installed. Both print what they run and return the same
shapes (those of ``openstack … -f json``), so the demo checks one set of expectations.

``CliRunner`` runs e.g. ``openstack resource provider list -f json`` and parses::

    [{"uuid": "5958a366-…", "name": "compute-1", "generation": 7}, …]

``HttpRunner`` sends ``GET /placement/resource_providers`` and returns the same list.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any, Protocol

import httpx

from vgpucloud.errors import VgpucloudError

CLI_TIMEOUT = 120.0
PLACEMENT = {"OpenStack-API-Version": "placement 1.39"}
COMPUTE = {"OpenStack-API-Version": "compute 2.79"}


class WalkthroughError(VgpucloudError):
    code = "demo.command_failed"


class Runner(Protocol):
    def flavor_create(self, name: str, vcpus: int, ram: int, disk: int) -> None: ...
    def flavor_set(self, name: str, prop: str) -> None: ...
    def server_create(self, name: str, flavor: str, image: str, *, count: int = 1) -> None: ...
    def server_list(self) -> list[dict[str, Any]]: ...
    def server_delete(self, names: list[str]) -> None: ...
    def provider_list(self) -> list[dict[str, Any]]: ...
    def inventory_list(self, uuid: str) -> list[dict[str, Any]]: ...
    def allocation_show(self, consumer: str) -> list[dict[str, Any]]: ...
    def trait_create(self, name: str) -> None: ...
    def provider_trait_set(self, uuid: str, traits: list[str]) -> None: ...
    def provider_trait_list(self, uuid: str) -> list[dict[str, Any]]: ...


def print_table(rows: list[dict[str, Any]]) -> None:
    if not rows:
        print("  (nothing)")
        return
    headers = list(rows[0])
    cells = [[str(h) for h in headers], *[[_cell(r.get(h)) for h in headers] for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for index, row in enumerate(cells):
        print("  " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)))
        if index == 0:
            print("  " + "-+-".join("-" * w for w in widths))


def _cell(value: Any) -> str:
    return json.dumps(value, sort_keys=True) if isinstance(value, dict | list) else str(value)


class CliRunner:
    """The real ``openstack`` executable with the cloud's clouds.yaml."""

    def __init__(self, clouds_yaml: Path, cloud: str, executable: str | None = None) -> None:
        found = executable or shutil.which("openstack")
        if not found:
            raise WalkthroughError("the openstack CLI is not installed; pip install "
                                   "python-openstackclient osc-placement, or use --http")
        self.executable = found
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        self.env.update(OS_CLIENT_CONFIG_FILE=str(clouds_yaml), OS_CLOUD=cloud)

    def run(self, *args: str, parse: bool = True) -> Any:
        # Quote property values as the seed does: --property "resources:VGPU=1".
        shown = " ".join(f'"{a}"' if "=" in a and not a.startswith("-") else a for a in args)
        print(f"\n$ openstack {shown}", flush=True)
        command = [self.executable, *args, *(["-f", "json"] if parse else [])]
        result = subprocess.run(command, env=self.env, capture_output=True, text=True,
                                timeout=CLI_TIMEOUT, check=False)
        if result.returncode != 0:
            raise WalkthroughError(f"`openstack {shown}` failed ({result.returncode}): "
                                   f"{result.stderr.strip()}")
        if not parse:
            return None
        data = json.loads(result.stdout or "null")
        if isinstance(data, list):
            print_table(data)
        elif isinstance(data, dict):
            print_table([{"Field": k, "Value": v} for k, v in data.items()])
        return data

    def flavor_create(self, name: str, vcpus: int, ram: int, disk: int) -> None:
        self.run("flavor", "create", "--vcpus", str(vcpus), "--ram", str(ram), "--disk",
                 str(disk), name, parse=False)

    def flavor_set(self, name: str, prop: str) -> None:
        self.run("flavor", "set", name, "--property", prop, parse=False)

    def server_create(self, name: str, flavor: str, image: str, *, count: int = 1) -> None:
        counts = ["--min", str(count), "--max", str(count)] if count > 1 else []
        self.run("server", "create", "--flavor", flavor, "--image", image, *counts, "--wait",
                 name, parse=False)

    def server_list(self) -> list[dict[str, Any]]:
        return list(self.run("server", "list"))

    def server_delete(self, names: list[str]) -> None:
        self.run("server", "delete", "--wait", *names, parse=False)

    def provider_list(self) -> list[dict[str, Any]]:
        return list(self.run("resource", "provider", "list"))

    def inventory_list(self, uuid: str) -> list[dict[str, Any]]:
        return list(self.run("resource", "provider", "inventory", "list", uuid))

    def allocation_show(self, consumer: str) -> list[dict[str, Any]]:
        return list(self.run("resource", "provider", "allocation", "show", consumer))

    def trait_create(self, name: str) -> None:
        self.run("--os-placement-api-version", "1.6", "trait", "create", name, parse=False)

    def provider_trait_set(self, uuid: str, traits: list[str]) -> None:
        flags = [part for trait in traits for part in ("--trait", trait)]
        self.run("--os-placement-api-version", "1.6", "resource", "provider", "trait", "set",
                 *flags, uuid, parse=False)

    def provider_trait_list(self, uuid: str) -> list[dict[str, Any]]:
        return list(self.run("--os-placement-api-version", "1.6", "resource", "provider",
                             "trait", "list", uuid))


class HttpRunner:
    """The same operations over the HTTP APIs, for machines without the CLI."""

    def __init__(self, url: str, token: str = "admin") -> None:
        self.http = httpx.Client(base_url=url, headers={"X-Auth-Token": token}, timeout=60)

    def call(self, method: str, path: str, headers: dict[str, str],
             body: Any = None) -> Any:
        print(f"\n$ {method} {path}" + (f"  {json.dumps(body)}" if body is not None else ""),
              flush=True)
        response = self.http.request(method, path, headers=headers, json=body)
        if response.status_code >= 400:
            raise WalkthroughError(f"{method} {path} failed ({response.status_code}): "
                                   f"{response.text}")
        return response.json() if response.content else None

    def _flavor_id(self, name: str) -> str:
        flavors = self.http.get("/compute/v2.1/flavors", headers=COMPUTE).json()["flavors"]
        return next(f["id"] for f in flavors if f["name"] == name)

    def _server_id(self, name: str) -> str:
        servers = self.http.get("/compute/v2.1/servers", headers=COMPUTE).json()["servers"]
        return next(s["id"] for s in servers if s["name"] == name)

    def flavor_create(self, name: str, vcpus: int, ram: int, disk: int) -> None:
        self.call("POST", "/compute/v2.1/flavors", COMPUTE,
                  {"flavor": {"name": name, "vcpus": vcpus, "ram": ram, "disk": disk}})

    def flavor_set(self, name: str, prop: str) -> None:
        key, _, value = prop.partition("=")
        self.call("POST", f"/compute/v2.1/flavors/{self._flavor_id(name)}/os-extra_specs",
                  COMPUTE, {"extra_specs": {key: value}})

    def server_create(self, name: str, flavor: str, image: str, *, count: int = 1) -> None:
        images = self.http.get("/image/v2/images", params={"name": image}).json()["images"]
        body = {"server": {"name": name, "flavorRef": self._flavor_id(flavor),
                           "imageRef": images[0]["id"], "networks": "none",
                           "min_count": count, "max_count": count}}
        self.call("POST", "/compute/v2.1/servers", COMPUTE, body)
        self._wait(lambda: all(s["Status"] != "BUILD" for s in self.server_list_quiet()))

    def server_list_quiet(self) -> list[dict[str, Any]]:
        servers = self.http.get("/compute/v2.1/servers/detail", headers=COMPUTE).json()
        return [{"ID": s["id"], "Name": s["name"], "Status": s["status"]}
                for s in servers["servers"]]

    def server_list(self) -> list[dict[str, Any]]:
        self.call("GET", "/compute/v2.1/servers/detail", COMPUTE)
        rows = self.server_list_quiet()
        print_table(rows)
        return rows

    def server_delete(self, names: list[str]) -> None:
        ids = [self._server_id(name) for name in names]
        for server in ids:
            self.call("DELETE", f"/compute/v2.1/servers/{server}", COMPUTE)
        self._wait(lambda: not {s["ID"] for s in self.server_list_quiet()} & set(ids))

    def provider_list(self) -> list[dict[str, Any]]:
        body = self.call("GET", "/placement/resource_providers", PLACEMENT)
        rows = [{"uuid": p["uuid"], "name": p["name"], "generation": p["generation"]}
                for p in body["resource_providers"]]
        print_table(rows)
        return rows

    def inventory_list(self, uuid: str) -> list[dict[str, Any]]:
        body = self.call("GET", f"/placement/resource_providers/{uuid}/inventories", PLACEMENT)
        rows = [{"resource_class": rc, **inv} for rc, inv in body["inventories"].items()]
        print_table(rows)
        return rows

    def allocation_show(self, consumer: str) -> list[dict[str, Any]]:
        body = self.call("GET", f"/placement/allocations/{consumer}", PLACEMENT)
        rows = [{"resource_provider": rp, "generation": a["generation"],
                 "resources": a["resources"]} for rp, a in body["allocations"].items()]
        print_table(rows)
        return rows

    def trait_create(self, name: str) -> None:
        self.call("PUT", f"/placement/traits/{name}", PLACEMENT)

    def provider_trait_set(self, uuid: str, traits: list[str]) -> None:
        path = f"/placement/resource_providers/{uuid}/traits"
        generation = self.http.get(path, headers=PLACEMENT).json()[
            "resource_provider_generation"]
        self.call("PUT", path, PLACEMENT,
                  {"resource_provider_generation": generation, "traits": traits})

    def provider_trait_list(self, uuid: str) -> list[dict[str, Any]]:
        body = self.call("GET", f"/placement/resource_providers/{uuid}/traits", PLACEMENT)
        rows = [{"name": t} for t in body["traits"]]
        print_table(rows)
        return rows

    @staticmethod
    def _wait(done: Any, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while not done():
            if time.monotonic() > deadline:
                raise WalkthroughError(f"still not done after {timeout:.0f} s")
            time.sleep(0.1)
