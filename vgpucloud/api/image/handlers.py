"""``/image/v2/images``: create, list (``name=``, ``id=in:a,b``), show, delete.

Records only: there is no upload (``/file``), so an image is ``active`` from creation, like
the seeded ``cirros-0.3.5-x86_64-uec`` that ``openstack server create --image`` resolves.
Any user may create a private image of its project; public ones are the admin's.
"""

from __future__ import annotations

import uuid
from typing import Any

import webob

from vgpucloud.api import faults
from vgpucloud.api.compute.context import ComputeRequest, empty_response, json_response
from vgpucloud.compute.models import Image
from vgpucloud.errors import NotFound

IMAGE_CREATE = {
    "type": "object", "additionalProperties": {"type": ["string", "integer", "boolean", "null"]},
    "properties": {
        "id": {"type": "string", "format": "uuid"},
        "name": {"type": ["string", "null"], "maxLength": 255},
        "disk_format": {"enum": [None, "ami", "ari", "aki", "vhd", "vhdx", "vmdk", "raw",
                                 "qcow2", "vdi", "iso", "ploop"]},
        "container_format": {"enum": [None, "ami", "ari", "aki", "bare", "ovf", "ova",
                                      "docker", "compressed"]},
        "visibility": {"enum": ["public", "private", "shared", "community"]},
        "min_disk": {"type": "integer", "minimum": 0},
        "min_ram": {"type": "integer", "minimum": 0},
        "tags": {"type": "array", "items": {"type": "string"}},
        "protected": {"type": "boolean"},
    },
}
_CORE = ("id", "name", "disk_format", "container_format", "visibility", "min_disk",
         "min_ram", "tags", "protected")


def image_view(image: Image) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": image.id, "name": image.name, "status": image.status,
        "disk_format": image.disk_format, "container_format": image.container_format,
        "visibility": image.visibility, "size": image.size, "virtual_size": None,
        "min_disk": image.min_disk, "min_ram": image.min_ram, "owner": image.owner,
        "protected": False, "os_hidden": False, "checksum": None, "os_hash_algo": None,
        "os_hash_value": None, "tags": [],
        "created_at": _time(image.created_at), "updated_at": _time(image.updated_at),
        "self": f"/v2/images/{image.id}", "file": f"/v2/images/{image.id}/file",
        "schema": "/v2/schemas/image",
    }
    view.update(image.properties)
    return view


def _time(value: Any) -> str | None:
    return None if value is None else value.strftime("%Y-%m-%dT%H:%M:%SZ")


def _visible(request: ComputeRequest, image: Image) -> bool:
    return (image.visibility in ("public", "community") or request.identity.is_admin
            or image.owner == request.identity.project_id)


def list_images(request: ComputeRequest) -> webob.Response:
    query = request.http.GET
    names = query.getall("name") or None
    ids = None
    if "id" in query:
        text = query["id"]
        ids = text[3:].split(",") if text.startswith("in:") else [text]
    found = [i for i in request.store.list_images(names=names, ids=ids) if _visible(request, i)]
    for key in ("visibility", "status", "disk_format", "container_format"):
        if key in query:
            found = [i for i in found if getattr(i, key) == query[key]]
    return json_response({"images": [image_view(i) for i in found],
                          "first": "/v2/images", "schema": "/v2/schemas/images"})


def _image(request: ComputeRequest) -> Image:
    image_id = request.params["image_id"]
    try:
        image = request.store.get_image(image_id)
    except NotFound:
        image = None
    if image is None or not _visible(request, image):
        raise faults.not_found(f"No image found with ID {image_id}")
    return image


def show_image(request: ComputeRequest) -> webob.Response:
    return json_response(image_view(_image(request)))


def create_image(request: ComputeRequest) -> webob.Response:
    body = request.body(IMAGE_CREATE)
    visibility = body.get("visibility", "shared")
    if visibility == "public" and not request.identity.is_admin:
        raise faults.forbidden("Only admins may create public images; create it with "
                               "visibility private or shared")
    properties = {k: v for k, v in body.items() if k not in _CORE}
    image = Image(
        id=body.get("id") or str(uuid.uuid4()), name=body.get("name") or "",
        disk_format=body.get("disk_format"), container_format=body.get("container_format"),
        min_disk=body.get("min_disk", 0), min_ram=body.get("min_ram", 0),
        visibility=visibility, owner=request.identity.project_id, properties=properties)
    created = request.store.create_image(image)
    return json_response(image_view(created), 201,
                         location=request.url(f"/images/{created.id}"))


def delete_image(request: ComputeRequest) -> webob.Response:
    image = _image(request)
    if not request.identity.is_admin and image.owner != request.identity.project_id:
        raise faults.forbidden(f"You are not permitted to delete image {image.id}; it "
                               "belongs to another project")
    request.store.delete_image(image.id)
    return empty_response(204)
