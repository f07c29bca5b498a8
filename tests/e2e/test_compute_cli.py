"""The operator's Compute workflow from the nova vGPU guide, with the real ``openstack`` CLI.

Runs against the session's ``vgpucloud api`` (tests/e2e/conftest.py) with a clouds.yaml
that points the compute, image and identity services at their mounts, as a Keystone
catalog would. Servers stay in BUILD here (no conductor or agent runs): the point is that
every command below is accepted and answered exactly as an operator expects from Nova.
The compute host ``virtlab608`` registers through the internal API, the way an agent does.
"""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path

import pytest

from tests.e2e.harness import ADMIN_TOKEN, CLOUD_NAME, OpenStackCli, PlacementServer

pytestmark = pytest.mark.openstack_cli

HOST = "virtlab608"
GPU_PROVIDER = f"{HOST}_pci_0000_84_00_0"
SEED_IMAGE = "cirros-0.3.5-x86_64-uec"


def write_compute_clouds_yaml(path: Path, server: PlacementServer) -> Path:
    base = server.endpoint.rsplit("/placement", 1)[0]
    clouds = {"clouds": {CLOUD_NAME: {
        "auth_type": "admin_token",
        "auth": {"endpoint": server.endpoint, "token": ADMIN_TOKEN},
        "compute_endpoint_override": f"{base}/compute/v2.1",
        "image_endpoint_override": f"{base}/image",
        "identity_endpoint_override": f"{base}/identity",
    }}}
    path.write_text(json.dumps(clouds, indent=2))
    return path


def register_host(server: PlacementServer, name: str, root_provider_uuid: str) -> None:
    """What an agent does on start: ``PUT /internal/v1/hosts/<name>`` with its facts."""
    base = server.endpoint.rsplit("/placement", 1)[0]
    body = json.dumps({"hypervisor_type": "QEMU", "libvirt_version": "8.0.0",
                       "root_provider_uuid": root_provider_uuid}).encode()
    request = urllib.request.Request(
        f"{base}/internal/v1/hosts/{name}", data=body, method="PUT",
        headers={"X-Auth-Token": ADMIN_TOKEN, "Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert response.status in (200, 201)


@pytest.fixture(scope="module")
def nova(openstack_executable: str, placement_server: PlacementServer) -> OpenStackCli:
    clouds = write_compute_clouds_yaml(placement_server.workdir / "compute-clouds.yaml",
                                       placement_server)
    return OpenStackCli(openstack_executable, clouds, placement_server)


@pytest.fixture(scope="module")
def gpu_host(nova: OpenStackCli, placement_server: PlacementServer) -> str:
    """virtlab608: a root provider with a T4 pGPU child of 16 VGPU, registered as a host."""
    root = nova("resource", "provider", "create", HOST)
    gpu = nova("resource", "provider", "create", GPU_PROVIDER, "--parent-provider",
               root["uuid"], version="1.14")
    nova.run("resource", "provider", "inventory", "set", gpu["uuid"], "--resource",
             "VGPU=16")
    register_host(placement_server, HOST, root["uuid"])
    return str(root["uuid"])


def test_vgpu_flavor_lifecycle(nova: OpenStackCli) -> None:
    created = nova("flavor", "create", "--ram", "512", "--vcpus", "1", "--disk", "1",
                   "vgpu_e2e")
    assert (created["ram"], created["vcpus"], created["disk"]) == (512, 1, 1)
    nova.run("flavor", "set", "vgpu_e2e", "--property", "resources:VGPU=1")
    shown, listed = nova.each(("flavor", "show", "vgpu_e2e"), ("flavor", "list", "--all"))
    assert shown["properties"] == {"resources:VGPU": "1"}
    assert "vgpu_e2e" in {row["Name"] for row in listed}
    refused = nova.fails("flavor", "set", "vgpu_e2e", "--property", "resources:VGPU=one")
    assert "resources:VGPU" in refused.stderr
    nova.run("flavor", "delete", "vgpu_e2e")
    assert "vgpu_e2e" not in {row["Name"] for row in nova("flavor", "list", "--all")}


def test_seeded_images_are_listed_and_shown(nova: OpenStackCli) -> None:
    listed, shown = nova.each(("image", "list"), ("image", "show", SEED_IMAGE))
    assert {SEED_IMAGE, "cirros"} <= {row["Name"] for row in listed}
    assert (shown["name"], shown["status"]) == (SEED_IMAGE, "active")


def test_aggregate_with_host_and_property(nova: OpenStackCli, gpu_host: str) -> None:
    created = nova("aggregate", "create", "--zone", "az-gpu", "gpu-t4")
    assert created["availability_zone"] == "az-gpu"
    nova.run("aggregate", "set", "--property", "gpu=t4", "gpu-t4")
    nova("aggregate", "add", "host", "gpu-t4", HOST)
    shown = nova("aggregate", "show", "gpu-t4")
    assert shown["hosts"] == [HOST]
    # OSC shows the zone on its own row, not among the properties
    assert (shown["properties"], shown["availability_zone"]) == ({"gpu": "t4"}, "az-gpu")
    # mirrored into Placement: the host's root provider is in the aggregate of that uuid
    aggregates = nova("resource", "provider", "aggregate", "list", gpu_host, version="1.19")
    assert [row["uuid"] for row in aggregates] == [shown["uuid"]]


def test_hypervisor_and_compute_service(nova: OpenStackCli, gpu_host: str) -> None:
    hypervisors, services = nova.each(("hypervisor", "list"), ("compute", "service", "list"))
    assert HOST in {row["Hypervisor Hostname"] for row in hypervisors}
    assert {(row["Binary"], row["Host"], row["State"]) for row in services} >= {
        ("nova-compute", HOST, "up")}
    shown = nova("hypervisor", "show", HOST)
    assert (shown["hypervisor_hostname"], shown["state"], shown["status"]) == (
        HOST, "up", "enabled"), sorted(shown)


def test_guide_server_create_is_accepted_then_deleted(nova: OpenStackCli) -> None:
    nova("flavor", "create", "--ram", "512", "--vcpus", "1", "--disk", "1", "vgpu_1")
    nova.run("flavor", "set", "vgpu_1", "--property", "resources:VGPU=1")
    created = nova("server", "create", "--flavor", "vgpu_1", "--image", SEED_IMAGE,
                   "test-vgpu")
    assert created["status"] == "BUILD"
    listed, shown = nova.each(("server", "list"), ("server", "show", "test-vgpu"))
    assert [(r["Name"], r["Status"], r["Image"], r["Flavor"]) for r in listed] == [
        ("test-vgpu", "BUILD", SEED_IMAGE, "vgpu_1")]
    assert shown["OS-EXT-STS:task_state"] == "scheduling"
    events = nova("server", "event", "list", "test-vgpu")
    assert [e["Action"] for e in events] == ["create"]
    nova.run("server", "delete", "test-vgpu")
    deleting = nova("server", "show", "test-vgpu")
    assert deleting["OS-EXT-STS:task_state"] == "deleting"
