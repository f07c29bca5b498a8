"""``/flavors`` and ``/flavors/{id}/os-extra_specs``.

Flavor writes are admin-only, as in Nova; extra specs are checked by
``compute.extra_specs.validate_extra_specs`` before they are stored, so a typo such as
``resources:VGPU=one`` is a 400 at ``openstack flavor set`` time, not a NoValidHost later.
"""

from __future__ import annotations

import uuid
from typing import Any

import webob

from vgpucloud.api import faults
from vgpucloud.api.compute import schemas
from vgpucloud.api.compute.context import ComputeRequest, empty_response, json_response, links
from vgpucloud.compute.extra_specs import validate_extra_specs
from vgpucloud.compute.models import Flavor


def flavor_view(request: ComputeRequest, flavor: Flavor, *, detail: bool) -> dict[str, Any]:
    view: dict[str, Any] = {"id": flavor.id, "name": flavor.name,
                            "links": links(request, "flavors", flavor.id)}
    if request.at_least(55):
        view["description"] = flavor.description
    if not detail:
        return view
    view.update({
        "ram": flavor.ram, "disk": flavor.disk, "vcpus": flavor.vcpus,
        "OS-FLV-EXT-DATA:ephemeral": flavor.ephemeral, "OS-FLV-DISABLED:disabled": False,
        # Before 2.75 Nova shows "no swap" as an empty string.
        "swap": flavor.swap if flavor.swap or request.at_least(75) else "",
        "rxtx_factor": flavor.rxtx_factor, "os-flavor-access:is_public": flavor.is_public,
    })
    if request.at_least(61):
        view["extra_specs"] = dict(flavor.extra_specs)
    return view


def _is_public_filter(request: ComputeRequest) -> bool | None:
    """``?is_public=None`` (any case) lists public and private flavors, for admins; users
    always see public flavors only (no flavor access lists here)."""
    text = request.http.GET.get("is_public")
    if not request.identity.is_admin:
        return True
    if text is None:
        return True
    lowered = text.strip().lower()
    if lowered == "none":
        return None
    if lowered in ("true", "t", "1", "yes", "y", "on"):
        return True
    if lowered in ("false", "f", "0", "no", "n", "off"):
        return False
    raise faults.bad_request(f"Invalid is_public filter [{text}]; use true, false or None")


def _int_query(request: ComputeRequest, name: str) -> int:
    text = request.http.GET.get(name, "0")
    try:
        return int(text)
    except ValueError:
        raise faults.bad_request(f"Invalid {name} filter [{text}]; it must be an integer") \
            from None


def _listed(request: ComputeRequest) -> list[Flavor]:
    found = list(request.store.list_flavors(
        _is_public_filter(request), min_ram=_int_query(request, "minRam"),
        min_disk=_int_query(request, "minDisk")))
    marker = request.http.GET.get("marker")
    if marker is not None:
        ids = [f.id for f in found]
        if marker not in ids:
            raise faults.bad_request(f"marker [{marker}] not found")
        found = found[ids.index(marker) + 1:]
    limit = request.http.GET.get("limit")
    if limit is not None:
        found = found[:_int_query(request, "limit")]
    return found


def list_flavors(request: ComputeRequest) -> webob.Response:
    return json_response({"flavors": [flavor_view(request, f, detail=False)
                                      for f in _listed(request)]})


def list_flavors_detail(request: ComputeRequest) -> webob.Response:
    return json_response({"flavors": [flavor_view(request, f, detail=True)
                                      for f in _listed(request)]})


def show_flavor(request: ComputeRequest) -> webob.Response:
    flavor = request.store.get_flavor(request.params["flavor_id"])
    return json_response({"flavor": flavor_view(request, flavor, detail=True)})


def create_flavor(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-flavor-manage:create")
    body = request.body(schemas.flavor_create(request.version))["flavor"]
    flavor_id = body.get("id")
    flavor = Flavor(
        id=str(uuid.uuid4()) if flavor_id is None else str(flavor_id).strip(),
        name=body["name"].strip(), vcpus=int(body["vcpus"]), ram=int(body["ram"]),
        disk=int(body["disk"]), ephemeral=int(body.get("OS-FLV-EXT-DATA:ephemeral", 0)),
        swap=int(body.get("swap", 0) or 0), rxtx_factor=float(body.get("rxtx_factor", 1.0)),
        is_public=body.get("os-flavor-access:is_public", True),
        description=body.get("description"))
    created = request.store.create_flavor(flavor)
    return json_response({"flavor": flavor_view(request, created, detail=True)})


def update_flavor(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-flavor-manage:update")
    body = request.body(schemas.FLAVOR_UPDATE)["flavor"]
    flavor = request.store.update_flavor_description(request.params["flavor_id"],
                                                     body["description"])
    return json_response({"flavor": flavor_view(request, flavor, detail=True)})


def delete_flavor(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-flavor-manage:delete")
    request.store.delete_flavor(request.params["flavor_id"])
    return empty_response(202)


def list_extra_specs(request: ComputeRequest) -> webob.Response:
    flavor = request.store.get_flavor(request.params["flavor_id"])
    return json_response({"extra_specs": dict(flavor.extra_specs)})


def create_extra_specs(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-flavor-extra-specs:create")
    specs = request.body(schemas.EXTRA_SPECS)["extra_specs"]
    specs = {key: str(value) for key, value in specs.items()}
    validate_extra_specs(specs)
    request.store.set_extra_specs(request.params["flavor_id"], specs)
    return json_response({"extra_specs": specs})


def show_extra_spec(request: ComputeRequest) -> webob.Response:
    key = request.params["key"]
    flavor = request.store.get_flavor(request.params["flavor_id"])
    if key not in flavor.extra_specs:
        raise faults.not_found(f"Flavor {flavor.id} has no extra specs with key {key}.")
    return json_response({key: flavor.extra_specs[key]})


def update_extra_spec(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-flavor-extra-specs:update")
    key = request.params["key"]
    body = request.body(schemas.EXTRA_SPECS_ITEM)
    if list(body) != [key]:
        raise faults.bad_request(f"Request body and URI mismatch: the URI names {key}, the "
                                 f"body {', '.join(body)}; send {{\"{key}\": \"value\"}}")
    spec = {key: str(body[key])}
    validate_extra_specs(spec)
    request.store.set_extra_specs(request.params["flavor_id"], spec)
    return json_response(spec)


def delete_extra_spec(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-flavor-extra-specs:delete")
    request.store.delete_extra_spec(request.params["flavor_id"], request.params["key"])
    return empty_response(200)
