"""Errors as OpenStack APIs render them, and the HTTP-only error classes.

The Placement shape (the Compute API reuses it for its internal services)::

    {"errors": [{"status": 409, "title": "Conflict",
                 "detail": "There was a conflict when trying to complete your request.\\n\\n"
                           " resource provider generation conflict  ",
                 "code": "placement.concurrent_update",
                 "request_id": "req-6bd2b7b4-7a8c-4d2b-9a51-6f4a2d1c3e9f"}]}

``detail`` keeps webob's "explanation, blank line, message" layout because that is what
OpenStack Placement sends and what humans and scripts already read. ``code`` is present
from Placement microversion 1.23 on, as in OpenStack.

Domain errors (``vgpucloud.errors``) carry their status and code; the classes below are for
conditions only HTTP knows about (unknown route, wrong method, media type, auth).
"""

from __future__ import annotations

import http
import json
from collections.abc import Mapping
from typing import Any

import webob
import webob.exc

from vgpucloud.errors import VgpucloudError

UNDEFINED_CODE = "placement.undefined_code"


class HTTPFault(VgpucloudError):
    """An error that exists only at the HTTP layer; ``status`` picks the response status."""

    code = UNDEFINED_CODE

    def __init__(
        self, status: int, message: str, *, code: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.http_status = status
        self.headers = dict(headers or {})


def not_found(message: str) -> HTTPFault:
    return HTTPFault(404, message)


def method_not_allowed(method: str, path: str, allowed: list[str]) -> HTTPFault:
    return HTTPFault(
        405, f"The method {method} is not supported for {path}; use one of "
        f"{', '.join(allowed)}.", headers={"Allow": ", ".join(allowed)})


def unauthorized(message: str) -> HTTPFault:
    return HTTPFault(401, message)


def forbidden(message: str) -> HTTPFault:
    return HTTPFault(403, message)


def unsupported_media_type(got: str | None, want: str) -> HTTPFault:
    return HTTPFault(415, f"The media type {got} is not supported, use {want}")


def not_acceptable(message: str) -> HTTPFault:
    return HTTPFault(406, message)


def bad_request(message: str) -> HTTPFault:
    return HTTPFault(400, message)


def explained_detail(status: int, message: str) -> str:
    """Webob's layout of an error detail: the status's explanation, then the message."""
    exc_class = webob.exc.status_map.get(status)
    explanation = getattr(exc_class, "explanation", "") if exc_class else ""
    return f"{explanation}\n\n {message}  " if explanation else message


def error_document(
    status: int, message: str, *, code: str | None, request_id: str | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The ``{"errors": [...]}`` body; ``code`` None leaves the key out (pre-1.23)."""
    error: dict[str, Any] = {
        "status": status,
        "title": http.HTTPStatus(status).phrase,
        "detail": explained_detail(status, message),
    }
    if code is not None:
        error["code"] = code
    if request_id:
        error["request_id"] = request_id
    error.update(extra or {})
    return {"errors": [error]}


def error_response(
    status: int, message: str, *, code: str | None, request_id: str | None,
    headers: Mapping[str, str] | None = None, extra: Mapping[str, Any] | None = None,
) -> webob.Response:
    body = error_document(status, message, code=code, request_id=request_id, extra=extra)
    response = webob.Response(
        status=status, body=json.dumps(body).encode(), content_type="application/json",
        charset=None)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response


def status_of(exc: VgpucloudError) -> int:
    """HTTP status of a domain error; anything without a client-error status is a 500."""
    status = int(getattr(exc, "http_status", 500))
    return status if 400 <= status < 600 else 500
