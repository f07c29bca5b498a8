"""The Placement WSGI application: negotiation, auth, routing, checks, faults.

One request goes through the shared pipeline (``vgpucloud.api.pipeline``), in order:

1. request id (``req-<uuid>``) and microversion negotiation (failure remembered, not raised:
   authentication comes first, as in OpenStack);
2. authentication (``vgpucloud.api.auth``) unless the route is public (the version document);
3. the microversion failure, if any (400 / 406 with ``min_version``/``max_version``);
4. routing (404, 405 + ``Allow``, or the route's status when it needs a later microversion);
5. policy (Placement is admin-only), ``Accept`` (406) and ``Content-Type`` (415) checks;
6. the handler, whose ``vgpucloud.errors`` exceptions become Placement faults.

Every response carries ``OpenStack-API-Version`` (when negotiated) and ``Vary``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import webob

from vgpucloud.api import faults, jsonbody
from vgpucloud.api.microversion import (
    HEADER,
    InvalidVersion,
    UnacceptableVersion,
    Version,
    negotiate,
)
from vgpucloud.api.pipeline import VERSION_KEY, ApiService, Headers, require_admin
from vgpucloud.api.placement.context import PlacementRequest
from vgpucloud.api.placement.routes import ROUTES
from vgpucloud.api.placement.versions import MAX_VERSION, MIN_VERSION, SERVICE_TYPE
from vgpucloud.api.requestid import ENVIRON_KEY as REQUEST_ID_KEY
from vgpucloud.api.routing import Route
from vgpucloud.conf import Settings
from vgpucloud.errors import VgpucloudError
from vgpucloud.placement.ports import PlacementStore

# Error codes in fault bodies arrived with microversion 1.23.
CODES_SINCE = Version(1, 23)
ADMINS_ONLY = ("the Placement API is for cloud admins (noauth2: X-Auth-Token: admin; "
               "keystone: role admin)")


class PlacementService(ApiService):
    """WSGI app serving the Placement API from ``store``."""

    unexpected_error = "Unexpected error in the Placement service"

    def __init__(
        self, settings: Settings, store: PlacementStore, routes: Sequence[Route] = ROUTES
    ) -> None:
        super().__init__(settings, routes)
        self.store = store

    def negotiate(self, request: webob.Request) -> Version:
        try:
            # WSGI servers join repeated headers with commas into one value.
            header = request.headers.get(HEADER)
            return negotiate([header] if header else [], SERVICE_TYPE, MIN_VERSION, MAX_VERSION)
        except InvalidVersion as exc:
            raise faults.bad_request(f"Invalid microversion: {exc}") from exc
        except UnacceptableVersion as exc:
            raise faults.not_acceptable(f"Invalid microversion: {exc}") from exc

    def version_headers(self, version: Version | None) -> Headers:
        headers = [] if version is None else [(HEADER, f"{SERVICE_TYPE} {version}")]
        return [*headers, ("Vary", HEADER.lower())]

    def respond(self, request: webob.Request, version: Version) -> webob.Response:
        route, params = self.route(request, version)
        if not route.public:
            require_admin(request.environ, route, ADMINS_ONLY)
        if request.method == "GET" and not request.accept.acceptable_offers(
                [jsonbody.JSON_TYPE]):
            raise faults.not_acceptable("Only application/json is provided")
        if route.json_body:
            jsonbody.require_json(request)
        return route.handler(PlacementRequest(request, version, params, self.store,
                                              self.settings))

    def fault(self, environ: dict[str, Any], exc: VgpucloudError) -> webob.Response:
        return fault_response(environ, exc)


def fault_response(environ: dict[str, Any], exc: VgpucloudError) -> webob.Response:
    """Placement's error document for ``exc``, with ``code`` from 1.23 on."""
    status = faults.status_of(exc)
    version = environ.get(VERSION_KEY)
    code = exc.code if version is not None and version >= CODES_SINCE else None
    extra = {}
    if status == 406 and version is None:
        # Clients (osc-placement) read these to fall back to a version we serve.
        extra = {"max_version": str(MAX_VERSION), "min_version": str(MIN_VERSION)}
    return faults.error_response(
        status, exc.message, code=code, request_id=environ.get(REQUEST_ID_KEY),
        headers=getattr(exc, "headers", None), extra=extra)
