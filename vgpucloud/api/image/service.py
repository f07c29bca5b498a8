"""The image API as a WSGI app: ``/image`` (versions) and ``/image/v2`` (records).

It reuses the Compute service machinery (auth, routing, faults) without microversions.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import webob

from vgpucloud.api.compute import faults
from vgpucloud.api.compute.context import json_response
from vgpucloud.api.compute.service import ComputeService
from vgpucloud.api.image import handlers
from vgpucloud.api.microversion import Version
from vgpucloud.api.routing import Route
from vgpucloud.compute.api_ports import ComputeApiStore
from vgpucloud.conf import Settings
from vgpucloud.placement.ports import PlacementStore

ROUTES: tuple[Route, ...] = (
    Route("GET", "/images", handlers.list_images, "get_images"),
    Route("POST", "/images", handlers.create_image, "add_image", json_body=True),
    Route("GET", "/images/{image_id}", handlers.show_image, "get_image"),
    Route("DELETE", "/images/{image_id}", handlers.delete_image, "delete_image"),
)


class ImageService(ComputeService):
    versions = None
    fixed_version = Version(2, 0)
    title = "Image"

    def __init__(self, settings: Settings, store: ComputeApiStore,
                 placement: PlacementStore) -> None:
        super().__init__(settings, store, placement, ROUTES)


def versions_app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
    """``GET /image/``: Glance's version list, pointing every 2.x at ``/image/v2/``."""
    request = webob.Request(environ)
    base = f"{request.host_url}{request.script_name}"
    if (request.path_info or "/") in ("/", "", "/versions"):
        versions = [{"id": f"v2.{minor}", "status": "CURRENT" if minor == 9 else "SUPPORTED",
                     "links": [{"rel": "self", "href": f"{base}/v2/"}]}
                    for minor in range(9, -1, -1)]
        response = json_response({"versions": versions})
    else:
        response = faults.fault_response(404, f"No image API at {request.path_info}; it is "
                                         f"at {base}/v2")
    return response(environ, start_response)
