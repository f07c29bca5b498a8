"""Request ids: every request gets ``req-<uuid4>``, echoed in ``x-openstack-request-id``.

The id is kept under the same environ key as oslo.middleware's RequestId
(``openstack.request_id``) so keystonemiddleware and logs find it where OpenStack puts it.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable
from typing import Any

ENVIRON_KEY = "openstack.request_id"
HEADER = "x-openstack-request-id"

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def ensure_request_id(environ: dict[str, Any]) -> str:
    """The request's id, minting ``req-<uuid4>`` on first use."""
    request_id = environ.get(ENVIRON_KEY)
    if not isinstance(request_id, str):
        request_id = f"req-{uuid.uuid4()}"
        environ[ENVIRON_KEY] = request_id
    return request_id


def with_request_id(app: WSGIApp) -> WSGIApp:
    """Middleware: mint the id before ``app`` runs, add the header to whatever it answers."""

    def middleware(environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        request_id = ensure_request_id(environ)

        def start(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Any:
            headers = [(k, v) for k, v in headers if k.lower() != HEADER]
            headers.append((HEADER, request_id))
            return start_response(status, headers, exc_info)

        return app(environ, start)

    return middleware
