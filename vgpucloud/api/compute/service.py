"""The Compute API WSGI application: negotiation, auth, routing, faults.

One request goes through, in order (as in Nova):

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

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import webob

from vgpucloud.api import faults as http_faults
from vgpucloud.api import jsonbody
from vgpucloud.api.auth import Identity, authenticated, identity_of
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
from vgpucloud.api.requestid import ENVIRON_KEY as REQUEST_ID_KEY
from vgpucloud.api.requestid import ensure_request_id
from vgpucloud.api.routing import Route, Router
from vgpucloud.compute.api_ports import ComputeApiStore
from vgpucloud.conf import Settings
from vgpucloud.errors import VgpucloudError
from vgpucloud.placement.ports import PlacementStore

LOG = logging.getLogger(__name__)

VERSION_KEY = "compute.microversion"
PROBLEM_KEY = "compute.microversion_problem"

StartResponse = Callable[..., Any]
# Who reads a public route (version documents) without a token.
ANONYMOUS = Identity("", "", frozenset())


class ComputeService:
    """WSGI app serving ``routes`` from the compute and placement stores."""

    # None: the service has no microversions (the image API); handlers see ``fixed_version``.
    versions: tuple[Version, Version] | None = (MIN_VERSION, MAX_VERSION)
    fixed_version = MIN_VERSION
    title = "Compute"

    def __init__(self, settings: Settings, store: ComputeApiStore, placement: PlacementStore,
                 routes: Sequence[Route]) -> None:
        self.settings = settings
        self.store = store
        self.placement = placement
        self.router = Router(routes)
        self._protected = authenticated(self._serve, settings)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        ensure_request_id(environ)
        request = webob.Request(environ)
        self._negotiate(request)
        start = self._with_version_headers(start_response, environ.get(VERSION_KEY))
        app = self._serve if self._is_public(request) else self._protected
        try:
            return app(environ, start)
        except VgpucloudError as exc:  # raised by the auth layer itself (401)
            return self.fault(exc)(environ, start)

    def _negotiate(self, request: webob.Request) -> None:
        if self.versions is None:
            request.environ[VERSION_KEY] = self.fixed_version
            return
        header = request.headers.get(HEADER)
        legacy = request.headers.get(LEGACY_HEADER)
        values = [header] if header else ([f"{SERVICE_TYPE} {legacy}"] if legacy else [])
        try:
            version = negotiate(values, SERVICE_TYPE, *self.versions)
        except InvalidVersion as exc:
            request.environ[PROBLEM_KEY] = http_faults.bad_request(f"Invalid microversion: {exc}")
        except UnacceptableVersion:
            low, high = self.versions
            request.environ[PROBLEM_KEY] = http_faults.not_acceptable(
                f"Version {header or legacy} is not supported by the API. Minimum is {low} "
                f"and maximum is {high}.")
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
            response = self.fault(exc)
        except Exception:
            LOG.exception("Unexpected error serving %s %s (%s)", request.method,
                          request.path_qs, environ.get(REQUEST_ID_KEY))
            response = faults.fault_response(
                500, f"Unexpected API Error in the {self.title} service; the API log has the "
                f"traceback under request id {environ.get(REQUEST_ID_KEY)}.")
        return response(environ, start_response)

    def _respond(self, request: webob.Request) -> webob.Response:
        problem = request.environ.get(PROBLEM_KEY)
        if problem is not None:
            raise problem
        version: Version = request.environ[VERSION_KEY]
        path = (request.path_info or "/").rstrip("/") or "/"
        route, params = self.router.match(request.method, path, version)
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

    def fault(self, exc: VgpucloudError) -> webob.Response:
        return faults.fault_response(http_faults.status_of(exc), exc.message,
                                     getattr(exc, "headers", None))

    def _with_version_headers(self, start_response: StartResponse,
                              version: Version | None) -> StartResponse:
        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            if self.versions is not None:
                if version is not None:
                    headers.append((HEADER, f"{SERVICE_TYPE} {version}"))
                    headers.append((LEGACY_HEADER, str(version)))
                headers.append(("Vary", f"{HEADER}, {LEGACY_HEADER}"))
            return start_response(status, headers, exc_info)

        return start
