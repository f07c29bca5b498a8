"""The Placement WSGI application: negotiation, auth, routing, checks, faults.

One request goes through, in order:

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

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import webob

from vgpucloud.api import faults, jsonbody
from vgpucloud.api.auth import authenticated, identity_of
from vgpucloud.api.microversion import (
    HEADER,
    InvalidVersion,
    UnacceptableVersion,
    Version,
    negotiate,
)
from vgpucloud.api.placement.context import PlacementRequest
from vgpucloud.api.placement.routes import ROUTES
from vgpucloud.api.placement.versions import MAX_VERSION, MIN_VERSION, SERVICE_TYPE
from vgpucloud.api.requestid import ENVIRON_KEY as REQUEST_ID_KEY
from vgpucloud.api.requestid import ensure_request_id
from vgpucloud.api.routing import Route, Router
from vgpucloud.conf import Settings
from vgpucloud.errors import VgpucloudError
from vgpucloud.placement.ports import PlacementStore

LOG = logging.getLogger(__name__)

VERSION_KEY = "placement.microversion"
PROBLEM_KEY = "placement.microversion_problem"
# Error codes in fault bodies arrived with microversion 1.23.
CODES_SINCE = Version(1, 23)

StartResponse = Callable[..., Any]


class PlacementService:
    """WSGI app serving the Placement API from ``store``."""

    def __init__(
        self, settings: Settings, store: PlacementStore, routes: Sequence[Route] = ROUTES
    ) -> None:
        self.settings = settings
        self.store = store
        self.router = Router(routes)
        self._protected = authenticated(self._serve, settings)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        ensure_request_id(environ)
        request = webob.Request(environ)
        self._negotiate(request)
        start = _with_version_headers(start_response, environ.get(VERSION_KEY))
        app = self._serve if self._is_public(request) else self._protected
        try:
            return app(environ, start)
        except VgpucloudError as exc:  # raised by the auth layer itself (401)
            return fault_response(environ, exc)(environ, start)

    def _negotiate(self, request: webob.Request) -> None:
        try:
            # WSGI servers join repeated headers with commas into one value.
            header = request.headers.get(HEADER)
            version = negotiate([header] if header else [], SERVICE_TYPE,
                                MIN_VERSION, MAX_VERSION)
        except InvalidVersion as exc:
            request.environ[PROBLEM_KEY] = faults.bad_request(f"Invalid microversion: {exc}")
        except UnacceptableVersion as exc:
            request.environ[PROBLEM_KEY] = faults.not_acceptable(f"Invalid microversion: {exc}")
        else:
            request.environ[VERSION_KEY] = version

    def _is_public(self, request: webob.Request) -> bool:
        try:
            routes, _ = self.router.resolve(request.method, request.path_info or "/")
        except VgpucloudError:
            return False
        return all(route.public for route in routes)

    def _serve(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        request = webob.Request(environ)
        try:
            response = self._respond(request)
        except VgpucloudError as exc:
            response = fault_response(environ, exc)
        except Exception:
            LOG.exception("Unexpected error serving %s %s (%s)", request.method,
                          request.path_qs, environ.get(REQUEST_ID_KEY))
            response = fault_response(environ, faults.HTTPFault(
                500, "Unexpected error in the Placement service; the API log has the "
                f"traceback under request id {environ.get(REQUEST_ID_KEY)}."))
        return response(environ, start_response)

    def _respond(self, request: webob.Request) -> webob.Response:
        problem = request.environ.get(PROBLEM_KEY)
        if problem is not None:
            raise problem
        version: Version = request.environ[VERSION_KEY]
        route, params = self.router.match(request.method, request.path_info or "/", version)
        if not route.public:
            self._authorize(request, route)
        if request.method == "GET" and not request.accept.acceptable_offers(
                [jsonbody.JSON_TYPE]):
            raise faults.not_acceptable("Only application/json is provided")
        if route.json_body:
            jsonbody.require_json(request)
        return route.handler(PlacementRequest(request, version, params, self.store,
                                              self.settings))

    def _authorize(self, request: webob.Request, route: Route) -> None:
        identity = identity_of(request.environ)
        if identity is None or not identity.is_admin:
            raise faults.forbidden(
                f"Policy does not allow {route.policy} to be performed; the Placement API "
                "is for cloud admins (noauth2: X-Auth-Token: admin; keystone: role admin).")


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


def _with_version_headers(start_response: StartResponse, version: Version | None) -> StartResponse:
    def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
        if version is not None:
            headers.append((HEADER, f"{SERVICE_TYPE} {version}"))
        headers.append(("Vary", HEADER.lower()))
        return start_response(status, headers, exc_info)

    return start
