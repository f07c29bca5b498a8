"""The request pipeline every API service shares (Placement, Compute, image, internal).

One request goes through, in order:

1. a request id (``req-<uuid>``) and the service's microversion negotiation; a negotiation
   failure is kept in the environ, not raised, because authentication comes first, as in
   OpenStack;
2. authentication (``vgpucloud.api.auth``) unless every route at the path is public
   (version documents);
3. the kept negotiation failure, if any (400 / 406);
4. the service's ``respond``: routing, policy, body checks, the handler;
5. the catch-all: ``vgpucloud.errors`` exceptions become the service's fault body (Placement's
   ``{"errors": [...]}`` or Nova's ``{"itemNotFound": {...}}``), anything else is logged
   with the request id and answered as a 500 naming it.

A service subclasses ``ApiService`` and supplies what differs: ``respond`` and ``fault``,
and, when it has microversions, ``negotiate`` and ``version_headers``.
"""

from __future__ import annotations

import abc
import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import webob

from vgpucloud.api import faults
from vgpucloud.api.auth import Identity, authenticated, identity_of
from vgpucloud.api.microversion import Version
from vgpucloud.api.requestid import ENVIRON_KEY as REQUEST_ID_KEY
from vgpucloud.api.requestid import ensure_request_id
from vgpucloud.api.routing import FIRST_VERSION, Route, Router
from vgpucloud.conf import Settings
from vgpucloud.errors import VgpucloudError

VERSION_KEY = "vgpucloud.microversion"
PROBLEM_KEY = "vgpucloud.microversion_problem"
ROUTES_KEY = "vgpucloud.routes"  # the path's routes and parameters, resolved once

StartResponse = Callable[..., Any]
Headers = list[tuple[str, str]]


class ApiService(abc.ABC):
    """A WSGI app serving ``routes``; see the module docstring for the pipeline."""

    # What a 500 says before "; the API log has the traceback under request id req-...".
    unexpected_error = "Unexpected error"

    def __init__(self, settings: Settings, routes: Sequence[Route]) -> None:
        self.settings = settings
        self.router = Router(routes)
        self._protected = authenticated(self._serve, settings)
        # Unexpected errors are logged under the concrete service's module.
        self._log = logging.getLogger(type(self).__module__)

    def __call__(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        ensure_request_id(environ)
        request = webob.Request(environ)
        try:
            environ[VERSION_KEY] = self.negotiate(request)
        except faults.HTTPFault as problem:
            environ[PROBLEM_KEY] = problem
        start = self._with_headers(start_response, self.version_headers(environ.get(VERSION_KEY)))
        app = self._serve if self._is_public(request) else self._protected
        try:
            body: Iterable[bytes] = app(environ, start)
        except VgpucloudError as exc:  # raised by the auth layer itself (401)
            body = self.fault(environ, exc)(environ, start)
        return body

    # --- what a service supplies -------------------------------------------------------

    def negotiate(self, request: webob.Request) -> Version:
        """The microversion to serve; raise an ``HTTPFault`` (400/406) to refuse it.

        The default is for a service without microversions: its routes match at 1.0.
        """
        return FIRST_VERSION

    def version_headers(self, version: Version | None) -> Headers:
        """Headers every response carries for ``version`` (None: negotiation failed)."""
        return []

    @abc.abstractmethod
    def respond(self, request: webob.Request, version: Version) -> webob.Response:
        """Route, check and run the handler; raise ``vgpucloud.errors`` to answer a fault."""

    @abc.abstractmethod
    def fault(self, environ: dict[str, Any], exc: VgpucloudError) -> webob.Response:
        """The service's error document for ``exc``."""

    # --- the pipeline ------------------------------------------------------------------

    def _is_public(self, request: webob.Request) -> bool:
        """Resolve the path once per request (kept in environ for ``route``); a path that
        resolves to nothing is not public, and its 404/405 comes after authentication."""
        try:
            resolved = self.router.resolve(request.method, request.path_info or "/")
        except VgpucloudError:
            return False
        request.environ[ROUTES_KEY] = resolved
        return all(route.public for route in resolved[0])

    def route(self, request: webob.Request, version: Version,
              path: str | None = None) -> tuple[Route, dict[str, str]]:
        """The route serving this request at ``version``, from the resolution the pipeline
        already made (``path`` only when a service matches a rewritten path)."""
        original = request.path_info or "/"
        path = path or original
        resolved = request.environ.get(ROUTES_KEY) if path == original else None
        if resolved is None:
            return self.router.match(request.method, path, version)
        return self.router.select(*resolved, request.method, path, version)

    def _serve(self, environ: dict[str, Any], start_response: StartResponse) -> Iterable[bytes]:
        request = webob.Request(environ)
        try:
            problem = environ.get(PROBLEM_KEY)
            if problem is not None:
                raise problem
            response = self.respond(request, environ[VERSION_KEY])
        except VgpucloudError as exc:
            response = self.fault(environ, exc)
        except Exception:
            request_id = environ.get(REQUEST_ID_KEY)
            self._log.exception("Unexpected error serving %s %s (%s)", request.method,
                                request.path_qs, request_id)
            response = self.fault(environ, faults.HTTPFault(
                500, f"{self.unexpected_error}; the API log has the traceback under request "
                f"id {request_id}."))
        body: Iterable[bytes] = response(environ, start_response)
        return body

    @staticmethod
    def _with_headers(start_response: StartResponse, extra: Headers) -> StartResponse:
        def start(status: str, headers: Headers, exc_info: Any = None) -> Any:
            headers.extend(extra)
            return start_response(status, headers, exc_info)

        return start


def require_admin(environ: dict[str, Any], route: Route, audience: str) -> Identity:
    """The caller, when an admin; else a 403 naming the policy and who ``audience`` is."""
    identity = identity_of(environ)
    if identity is None or not identity.is_admin:
        raise faults.forbidden(
            f"Policy does not allow {route.policy} to be performed; {audience}.")
    return identity
