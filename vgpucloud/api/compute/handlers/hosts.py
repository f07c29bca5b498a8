"""``/os-hypervisors`` and ``/os-services``: the registered compute hosts.

A host is "up" while its agent's heartbeat is younger than Nova's default
``service_down_time`` (60 s). Hypervisor views add ``vgpu_usage``: for each pGPU child
provider of the host's root provider, its VGPU (or CUSTOM_* mdev class) inventory total and
usage, read from Placement, so an operator sees vGPU capacity where Nova shows none.
"""

from __future__ import annotations

import datetime
from typing import Any

import webob

from vgpucloud.api import faults
from vgpucloud.api.compute.context import ComputeRequest, isotime, json_response
from vgpucloud.compute.api_ports import ComputeHost, InstanceQuery
from vgpucloud.compute.models import VmState
from vgpucloud.errors import NotFound
from vgpucloud.placement.models import ProviderFilter

SERVICE_DOWN_SECONDS = 60
ROOT_CLASSES = ("VCPU", "MEMORY_MB", "DISK_GB")
VGPU_CLASS = "VGPU"


def is_up(host: ComputeHost) -> bool:
    if host.last_heartbeat is None:
        return False
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None)
    return (now - host.last_heartbeat).total_seconds() <= SERVICE_DOWN_SECONDS


def hypervisor_version(text: str | None) -> int | None:
    """libvirt's ``"8.0.0"`` -> ``8000000``, the integer Nova reports."""
    if not text:
        return None
    parts = [int(p) for p in text.split(".")[:3] if p.isdigit()]
    parts += [0] * (3 - len(parts))
    return parts[0] * 1_000_000 + parts[1] * 1_000 + parts[2]


def _summary(request: ComputeRequest, host: ComputeHost) -> dict[str, Any]:
    return {"id": host.uuid if request.at_least(53) else host.id,
            "hypervisor_hostname": host.name, "state": "up" if is_up(host) else "down",
            "status": "enabled" if host.enabled else "disabled"}


def _detail(request: ComputeRequest, host: ComputeHost) -> dict[str, Any]:
    view = _summary(request, host)
    view.update({
        "hypervisor_type": host.hypervisor_type or "QEMU",
        "hypervisor_version": hypervisor_version(host.hypervisor_version),
        "host_ip": None,
        "service": {"host": host.name, "id": host.uuid if request.at_least(53) else host.id,
                    "disabled_reason": None},
        "vgpu_usage": _vgpu_usage(request, host),
    })
    if request.at_least(88):
        view["uptime"] = None
    else:
        view.update(_legacy_resources(request, host))
    return view


def _vgpu_usage(request: ComputeRequest, host: ComputeHost) -> list[dict[str, Any]]:
    if not host.root_provider_uuid:
        return []
    usage = []
    try:
        tree = request.placement.list_providers(ProviderFilter(in_tree=host.root_provider_uuid))
    except NotFound:
        return []
    for provider in tree:
        if provider.uuid == host.root_provider_uuid:
            continue
        _, inventories = request.placement.get_inventories(provider.uuid)
        _, used = request.placement.get_provider_usages(provider.uuid)
        for resource_class, inventory in sorted(inventories.items()):
            if resource_class == VGPU_CLASS or resource_class.startswith("CUSTOM_"):
                usage.append({"resource_provider": provider.name,
                              "resource_provider_uuid": provider.uuid,
                              "resource_class": resource_class,
                              "total": inventory.total - inventory.reserved,
                              "used": used.get(resource_class, 0)})
    return usage


def _legacy_resources(request: ComputeRequest, host: ComputeHost) -> dict[str, Any]:
    """The pre-2.88 resource fields, from the root provider's Placement inventory."""
    totals = {rc: 0 for rc in ROOT_CLASSES}
    used = dict(totals)
    if host.root_provider_uuid:
        try:
            _, inventories = request.placement.get_inventories(host.root_provider_uuid)
            _, usages = request.placement.get_provider_usages(host.root_provider_uuid)
        except NotFound:
            inventories, usages = {}, {}
        for rc in ROOT_CLASSES:
            if rc in inventories:
                totals[rc] = inventories[rc].total - inventories[rc].reserved
                used[rc] = usages.get(rc, 0)
    running = len(request.store.list_instances(InstanceQuery(
        host=host.name, vm_states=frozenset({VmState.ACTIVE.value}))))
    return {"vcpus": totals["VCPU"], "memory_mb": totals["MEMORY_MB"],
            "local_gb": totals["DISK_GB"], "vcpus_used": used["VCPU"],
            "memory_mb_used": used["MEMORY_MB"], "local_gb_used": used["DISK_GB"],
            "free_ram_mb": totals["MEMORY_MB"] - used["MEMORY_MB"],
            "free_disk_gb": totals["DISK_GB"] - used["DISK_GB"], "current_workload": 0,
            "running_vms": running, "disk_available_least": totals["DISK_GB"] - used["DISK_GB"],
            "cpu_info": "{}"}


def _matching(request: ComputeRequest) -> list[ComputeHost]:
    hosts = list(request.store.list_compute_hosts())
    pattern = request.http.GET.get("hypervisor_hostname_pattern")
    if pattern is not None:
        hosts = [h for h in hosts if pattern in h.name]
    return hosts


def list_hypervisors(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-hypervisors:list")
    return json_response({"hypervisors": [_summary(request, h) for h in _matching(request)]})


def list_hypervisors_detail(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-hypervisors:list-detail")
    return json_response({"hypervisors": [_detail(request, h) for h in _matching(request)]})


def show_hypervisor(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-hypervisors:show")
    wanted = request.params["hypervisor_id"]
    for host in request.store.list_compute_hosts():
        if wanted in (host.uuid, str(host.id)):
            return json_response({"hypervisor": _detail(request, host)})
    raise faults.not_found(f"Hypervisor with ID {wanted} could not be found.")


def list_services(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-services:list")
    query = request.http.GET
    services = []
    for host in request.store.list_compute_hosts():
        if query.get("host") not in (None, host.name):
            continue
        if query.get("binary") not in (None, "nova-compute"):
            continue
        services.append({
            "id": host.uuid if request.at_least(53) else host.id, "binary": "nova-compute",
            "host": host.name, "zone": "nova",
            "status": "enabled" if host.enabled else "disabled",
            "state": "up" if is_up(host) else "down",
            "updated_at": isotime(host.last_heartbeat or host.updated_at),
            "disabled_reason": None, "forced_down": False})
    return json_response({"services": services})
