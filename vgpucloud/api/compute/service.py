"""The Compute API WSGI application: negotiation, auth, routing, faults.

One request goes through the shared pipeline (``vgpucloud.api.pipeline``), in order (as
in Nova):

1. request id and microversion negotiation from ``OpenStack-API-Version: compute 2.x`` or
   the legacy ``X-OpenStack-Nova-API-Version: 2.x`` (a failure is kept, not raised, so
   authentication still comes first);
2. authentication (``vgpucloud.api.auth``) unless the route is public (version documents);
3. the microversion failure, if any (400 malformed, 406 outside 2.1-2.100);
4. routing (404, 405, or 404 when the route needs a later microversion);
5. the handler, whose ``vgpucloud.errors`` exceptions become Nova faults
   (``{"itemNotFound": {"code": 404, "message": ...}}``).

``ImageService`` (``api.image``) reuses this class without microversions.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import webob

from vgpucloud.api import faults as http_faults
from vgpucloud.api import jsonbody
from vgpucloud.api.auth import Identity, identity_of
from vgpucloud.api.compute import faults
from vgpucloud.api.compute.context import ComputeRequest
from vgpucloud.api.compute.versions import LEGACY_HEADER, MAX_VERSION, MIN_VERSION, SERVICE_TYPE
from vgpucloud.api.microversion import (
    HEADER,
    InvalidVersion,
    UnacceptableVersion,
    Version,
    negotiate,
)
from vgpucloud.api.pipeline import ApiService, Headers
from vgpucloud.api.routing import Route
from vgpucloud.compute.api_ports import ComputeApiStore
from vgpucloud.conf import Settings
from vgpucloud.errors import VgpucloudError
from vgpucloud.placement.ports import PlacementStore

# Who reads a public route (version documents) without a token.
ANONYMOUS = Identity("", "", frozenset())


class ComputeService(ApiService):
    """WSGI app serving ``routes`` from the compute and placement stores."""

    # None: the service has no microversions (the image API); handlers see ``fixed_version``.
    versions: tuple[Version, Version] | None = (MIN_VERSION, MAX_VERSION)
    fixed_version = MIN_VERSION
    title = "Compute"

    def __init__(self, settings: Settings, store: ComputeApiStore, placement: PlacementStore,
                 routes: Sequence[Route]) -> None:
        super().__init__(settings, routes)
        self.store = store
        self.placement = placement
        self.unexpected_error = f"Unexpected API Error in the {self.title} service"

    def negotiate(self, request: webob.Request) -> Version:
        if self.versions is None:
            return self.fixed_version
        header = request.headers.get(HEADER)
        legacy = request.headers.get(LEGACY_HEADER)
        values = [header] if header else ([f"{SERVICE_TYPE} {legacy}"] if legacy else [])
        try:
            return negotiate(values, SERVICE_TYPE, *self.versions)
        except InvalidVersion as exc:
            raise http_faults.bad_request(f"Invalid microversion: {exc}") from exc
        except UnacceptableVersion as exc:
            low, high = self.versions
            raise http_faults.not_acceptable(
                f"Version {header or legacy} is not supported by the API. Minimum is {low} "
                f"and maximum is {high}.") from exc

    def version_headers(self, version: Version | None) -> Headers:
        if self.versions is None:
            return []
        headers = [] if version is None else [(HEADER, f"{SERVICE_TYPE} {version}"),
                                               (LEGACY_HEADER, str(version))]
        return [*headers, ("Vary", f"{HEADER}, {LEGACY_HEADER}")]

    def respond(self, request: webob.Request, version: Version) -> webob.Response:
        path = (request.path_info or "/").rstrip("/") or "/"
        route, params = self.route(request, version, path)
        if route.json_body:
            jsonbody.require_json(request)
        identity = identity_of(request.environ)
        if identity is None:
            if not route.public:
                raise http_faults.unauthorized("The request you have made requires "
                                               "authentication.")
            identity = ANONYMOUS
        return route.handler(ComputeRequest(request, version, params, identity, self.store,
                                            self.placement, self.settings))

    def fault(self, environ: dict[str, Any], exc: VgpucloudError) -> webob.Response:
        return faults.fault_response(http_faults.status_of(exc), exc.message,
                                     getattr(exc, "headers", None))
