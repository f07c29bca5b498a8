"""``/servers``: create (the heart: validate, write, hand to a conductor), list, show, delete.

``POST /servers`` writes every instance of the request (``min_count``..``max_count``), a
``create`` action each and ONE conductor ``build`` task in one transaction, then answers
202 with the server in BUILD. Scheduling, claiming and spawning are the conductor's.
"""

from __future__ import annotations

import secrets
import string
import uuid
from typing import Any

import webob

from vgpucloud.api import faults
from vgpucloud.api.compute import schemas
from vgpucloud.api.compute.context import ComputeRequest, empty_response, json_response, links
from vgpucloud.api.compute.server_views import server_detail, server_summary
from vgpucloud.compute.api_ports import InstanceQuery, ServerRequest
from vgpucloud.compute.models import STATUS_BY_VM_STATE, Flavor, Instance, VmState
from vgpucloud.errors import NotFound

VM_STATES_BY_STATUS = {status: state.value for state, status in STATUS_BY_VM_STATE.items()}
MAX_COUNT = 1000
_TRUE = ("true", "t", "1", "yes", "y", "on")


def create_server(request: ComputeRequest) -> webob.Response:
    body = request.body(schemas.SERVER_CREATE)["server"]
    if request.at_least(37) and "networks" not in body:
        raise faults.bad_request("Invalid input for field/attribute server: 'networks' is a "
                                 "required property from microversion 2.37; send "
                                 "\"networks\": \"auto\" or \"none\"")
    _refuse_network_list(body.get("networks"))
    flavor = _flavor(request, str(body["flavorRef"]))
    image_ref = _image_ref(request, body)
    min_count, max_count = _counts(body)
    name = body["name"]
    names = (name,) if max_count == 1 else tuple(f"{name}-{n}" for n in range(1, max_count + 1))
    server_request = ServerRequest(
        request_id=request.request_id, reservation_id=_reservation_id(),
        project_id=request.identity.project_id, user_id=request.identity.user_id,
        flavor=flavor, image_ref=image_ref, names=names,
        uuids=tuple(str(uuid.uuid4()) for _ in names), min_count=min_count,
        metadata=body.get("metadata", {}))
    created = request.store.create_instances(server_request)
    if str(body.get("return_reservation_id", "")).lower() in _TRUE:
        return json_response({"reservation_id": server_request.reservation_id}, 202)
    first = created[0]
    server = {"id": first.uuid, "links": links(request, "servers", first.uuid),
              "OS-DCF:diskConfig": "MANUAL", "security_groups": [{"name": "default"}],
              "adminPass": _password()}
    return json_response({"server": server}, 202,
                         location=request.url(f"/servers/{first.uuid}"))


def _refuse_network_list(networks: Any) -> None:
    if isinstance(networks, list):
        raise faults.bad_request(
            "This cloud has no networking service, so servers cannot be attached to "
            "networks or ports; send \"networks\": \"none\" (openstack server create "
            "--nic none) or \"auto\"")


def _flavor(request: ComputeRequest, flavor_id: str) -> Flavor:
    try:
        return request.store.get_flavor(flavor_id)
    except NotFound:
        raise faults.bad_request(f"Flavor {flavor_id} could not be found; openstack flavor "
                                 "list shows the flavors") from None


def _image_ref(request: ComputeRequest, body: dict[str, Any]) -> str:
    """``imageRef``, or the image of the boot device in ``block_device_mapping_v2``."""
    image_id = body.get("imageRef") or ""
    for mapping in body.get("block_device_mapping_v2", []):
        if mapping.get("destination_type") == "volume":
            raise faults.bad_request(
                "block_device_mapping_v2 asks for a volume, but this cloud has no block "
                "storage service; boot from the image onto local disk "
                "(destination_type local, or omit --boot-from-volume)")
        if mapping.get("source_type") != "image" or str(mapping.get("boot_index")) != "0":
            raise faults.bad_request(
                "block_device_mapping_v2 supports one boot device from an image "
                "(source_type image, boot_index 0); other mappings need a block storage "
                "service this cloud does not have")
        image_id = image_id or str(mapping.get("uuid") or "")
    if not image_id:
        raise faults.bad_request("Invalid input: send imageRef, or a block_device_mapping_v2 "
                                 "entry with source_type image and boot_index 0")
    try:
        image = request.store.get_image(image_id)
    except NotFound:
        raise faults.bad_request(f"Image {image_id} could not be found.") from None
    if image.status != "active":
        raise faults.bad_request(f"Image {image_id} is not active (it is {image.status}).")
    return image.id


def _counts(body: dict[str, Any]) -> tuple[int, int]:
    min_count = int(body.get("min_count", 1))
    max_count = int(body.get("max_count", min_count))
    if min_count < 1 or max_count < 1:
        raise faults.bad_request("min_count and max_count must be at least 1")
    if min_count > max_count:
        raise faults.bad_request(f"min_count ({min_count}) must be <= max_count "
                                 f"({max_count})")
    if max_count > MAX_COUNT:
        raise faults.bad_request(f"max_count ({max_count}) is more than {MAX_COUNT} servers "
                                 "in one request; split it")
    return min_count, max_count


def _reservation_id() -> str:
    alphabet = string.ascii_lowercase + string.digits
    return "r-" + "".join(secrets.choice(alphabet) for _ in range(8))


def _password() -> str:
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(12))


def list_servers(request: ComputeRequest) -> webob.Response:
    return json_response({"servers": [server_summary(request, i) for i in _listed(request)]})


def list_servers_detail(request: ComputeRequest) -> webob.Response:
    return json_response({"servers": [server_detail(request, i) for i in _listed(request)]})


def _listed(request: ComputeRequest) -> list[Instance]:
    query = request.http.GET
    return list(request.store.list_instances(InstanceQuery(
        project_id=_project_scope(request), name=query.get("name"),
        reservation_id=query.get("reservation_id"), vm_states=_vm_states(query),
        host=query.get("host") if request.identity.is_admin else None,
        include_deleted=request.identity.is_admin and
        query.get("deleted", "").lower() in _TRUE,
        limit=_limit(query.get("limit")), marker=query.get("marker"))))


def _project_scope(request: ComputeRequest) -> str | None:
    """Members see their project; admins too, unless ``all_tenants`` (or a ``project_id``
    filter with it) widens the view, as in Nova."""
    query = request.http.GET
    all_tenants = "all_tenants" in query and query.get("all_tenants", "").lower() not in (
        "false", "f", "0", "no", "off")
    if all_tenants and not request.identity.is_admin:
        raise faults.forbidden("Policy doesn't allow os_compute_api:servers:index:"
                               "get_all_tenants to be performed; only admins list every "
                               "project's servers")
    if not request.identity.is_admin:
        return request.identity.project_id
    if "project_id" in query or "tenant_id" in query:
        return str(query.get("project_id") or query.get("tenant_id"))
    return None if all_tenants else request.identity.project_id


def _vm_states(query: Any) -> frozenset[str] | None:
    statuses = query.getall("status")
    if not statuses:
        return None
    unknown = [s for s in statuses if s.upper() not in VM_STATES_BY_STATUS]
    if unknown:
        raise faults.bad_request(f"Invalid status value {unknown[0]}; use one of "
                                 f"{', '.join(VM_STATES_BY_STATUS)}")
    return frozenset(VM_STATES_BY_STATUS[s.upper()] for s in statuses)


def _limit(text: str | None) -> int | None:
    if text is None:
        return None
    if not text.isdigit():
        raise faults.bad_request(f"limit {text!r} must be a non-negative integer")
    return int(text)


def visible_instance(request: ComputeRequest, uuid_: str) -> Instance:
    """The instance, or 404 when it is deleted or belongs to another project."""
    instance = request.store.get_instance(uuid_)
    hidden = instance.vm_state is VmState.DELETED or (
        not request.identity.is_admin and instance.project_id != request.identity.project_id)
    if hidden:
        raise faults.not_found(f"Instance {uuid_} could not be found.")
    return instance


def show_server(request: ComputeRequest) -> webob.Response:
    instance = visible_instance(request, request.params["server_id"])
    return json_response({"server": server_detail(request, instance)})


def delete_server(request: ComputeRequest) -> webob.Response:
    instance = visible_instance(request, request.params["server_id"])
    request.store.request_delete(instance.uuid, request.request_id,
                                 request.identity.project_id, request.identity.user_id)
    return empty_response(204)
