"""How a server looks on the wire at each microversion (Nova's view builder, our fields).

Addresses are always empty: there is no network service; ``networks: none|auto`` is all a
request may ask for.
"""

from __future__ import annotations

import hashlib
from typing import Any

from vgpucloud.api.compute.context import ComputeRequest, isotime, links
from vgpucloud.compute.models import Instance, VmState

# libvirt power states as Nova reports them: 0 NOSTATE, 1 RUNNING.
POWER_STATE = {VmState.ACTIVE: 1}


def host_id(instance: Instance) -> str:
    """Nova's opaque ``hostId``: the same for a project's servers on one host, otherwise
    unrelated, so users can tell co-location without learning host names."""
    if not instance.host:
        return ""
    return hashlib.sha224((instance.project_id + instance.host).encode()).hexdigest()


def server_summary(request: ComputeRequest, instance: Instance) -> dict[str, Any]:
    return {"id": instance.uuid, "name": instance.name,
            "links": links(request, "servers", instance.uuid)}


def server_detail(request: ComputeRequest, instance: Instance) -> dict[str, Any]:
    view = server_summary(request, instance)
    view.update({
        "status": instance.status, "tenant_id": instance.project_id,
        "user_id": instance.user_id, "metadata": dict(instance.metadata),
        "hostId": host_id(instance), "image": _image(request, instance),
        "flavor": _flavor(request, instance), "created": isotime(instance.created_at),
        "updated": isotime(instance.updated_at or instance.created_at), "addresses": {},
        "accessIPv4": "", "accessIPv6": "", "OS-DCF:diskConfig": "MANUAL",
        "OS-EXT-AZ:availability_zone": "nova" if instance.host else "",
        "config_drive": "", "key_name": None,
        "OS-SRV-USG:launched_at": _usage_time(instance.launched_at),
        "OS-SRV-USG:terminated_at": _usage_time(instance.terminated_at),
        "OS-EXT-STS:task_state": instance.task_state and instance.task_state.value,
        "OS-EXT-STS:vm_state": instance.vm_state.value,
        "OS-EXT-STS:power_state": POWER_STATE.get(instance.vm_state, 0),
        "os-extended-volumes:volumes_attached": [],
        "security_groups": [{"name": "default"}],
    })
    if instance.status in ("BUILD", "ACTIVE"):
        view["progress"] = 100 if instance.status == "ACTIVE" else 0
    if request.identity.is_admin:
        view.update(_admin_fields(request, instance))
    if instance.fault is not None and instance.status == "ERROR":
        view["fault"] = _fault(request, instance)
    view.update(_versioned_fields(request))
    return view


def _admin_fields(request: ComputeRequest, instance: Instance) -> dict[str, Any]:
    fields: dict[str, Any] = {
        "OS-EXT-SRV-ATTR:host": instance.host,
        "OS-EXT-SRV-ATTR:hypervisor_hostname": instance.node,
        "OS-EXT-SRV-ATTR:instance_name": f"instance-{instance.uuid[:8]}",
    }
    if request.at_least(3):
        fields.update({
            "OS-EXT-SRV-ATTR:reservation_id": instance.reservation_id,
            "OS-EXT-SRV-ATTR:launch_index": instance.launch_index,
            "OS-EXT-SRV-ATTR:hostname": instance.name, "OS-EXT-SRV-ATTR:kernel_id": "",
            "OS-EXT-SRV-ATTR:ramdisk_id": "", "OS-EXT-SRV-ATTR:root_device_name": None,
            "OS-EXT-SRV-ATTR:user_data": None,
        })
    if request.at_least(16):
        fields["host_status"] = "UP" if instance.host else ""
    return fields


def _versioned_fields(request: ComputeRequest) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    for minor, name, value in ((9, "locked", False), (19, "description", None),
                               (26, "tags", []), (63, "trusted_image_certificates", None),
                               (71, "server_groups", []), (73, "locked_reason", None),
                               (96, "pinned_availability_zone", None)):
        if request.at_least(minor):
            fields[name] = value
    return fields


def _image(request: ComputeRequest, instance: Instance) -> dict[str, Any]:
    return {"id": instance.image_ref, "links": [
        {"rel": "bookmark", "href": request.base_url(f"/images/{instance.image_ref}")}]}


def _flavor(request: ComputeRequest, instance: Instance) -> dict[str, Any]:
    flavor = instance.flavor
    if not request.at_least(47):
        return {"id": flavor.id, "links": [
            {"rel": "bookmark", "href": request.base_url(f"/flavors/{flavor.id}")}]}
    return {"vcpus": flavor.vcpus, "ram": flavor.ram, "disk": flavor.disk,
            "ephemeral": flavor.ephemeral, "swap": flavor.swap,
            "original_name": flavor.name, "extra_specs": dict(flavor.extra_specs)}


def _fault(request: ComputeRequest, instance: Instance) -> dict[str, Any]:
    fault = instance.fault
    assert fault is not None
    view: dict[str, Any] = {"code": fault.code, "message": fault.message,
                            "created": isotime(fault.created)}
    # Nova hides a 500's details (a traceback) from non-admins.
    if fault.details and (request.identity.is_admin or fault.code != 500):
        view["details"] = fault.details
    return view


def _usage_time(value: Any) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%S.000000")
