"""The HTTP plumbing the clients share: a pooled session per endpoint, and errors.

``JsonApi`` sends a request and turns what goes wrong into ``vgpucloud.errors``: a
transport failure becomes the client's own error class naming the service, the endpoint
and what to check; a status the caller did not expect goes to the client's converter,
which reads the body with ``Refusal.read``. Both our services (and OpenStack Placement)
answer errors in Placement's shape.

Transports are injectable: ``httpx.WSGITransport(app=...)`` runs a whole cloud in one
process for tests; the default is a pooled HTTP connection.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

import httpx

from vgpucloud import errors

OK = (200, 201, 204)
# The generic class of a refusal whose code the client has no class for.
ERRORS_BY_STATUS: dict[int, type[errors.VgpucloudError]] = {
    400: errors.BadRequest,
    403: errors.Forbidden,
    404: errors.NotFound,
    409: errors.Conflict,
}


@dataclasses.dataclass(frozen=True, slots=True)
class Refusal:
    """What an error response says; ``where`` is the request (``PUT /placement/traits/X``)."""

    where: str
    status: int
    detail: str
    code: str | None

    @classmethod
    def read(cls, response: httpx.Response) -> Refusal:
        """Reads the first error of a body like::

            {"errors": [{"status": 409, "title": "Conflict",
                         "code": "placement.concurrent_update",
                         "detail": "resource provider generation conflict",
                         "request_id": "req-..."}]}

        falling back to the raw text (and no code) when the body is not that shape.
        """
        detail, code = response.text, None
        try:
            first = response.json()["errors"][0]
            detail, code = first.get("detail", detail), first.get("code")
        except (ValueError, KeyError, IndexError, TypeError):
            pass
        where = f"{response.request.method} {response.request.url.path}"
        return cls(where, response.status_code, str(detail), code)

    def error(self, cls: type[errors.VgpucloudError], message: str) -> errors.VgpucloudError:
        """``cls`` carrying the server's stable code, when it sent one."""
        return cls(message, code=self.code) if self.code else cls(message)


class JsonApi:
    """A JSON HTTP API at ``endpoint`` (``http://api:8780/placement``), called by ``service``
    (``"Placement"``) in messages; ``hint`` says what to check when it cannot be reached."""

    def __init__(
        self, endpoint: str, *, service: str, hint: str,
        unreachable: type[errors.VgpucloudError],
        refused: Callable[[httpx.Response], errors.VgpucloudError],
        token: str, timeout: float, transport: httpx.BaseTransport | None,
    ) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._service, self._hint = service, hint
        self._unreachable, self._refused = unreachable, refused
        self._http = httpx.Client(
            base_url=self.endpoint, timeout=timeout, transport=transport,
            headers={"X-Auth-Token": token, "Accept": "application/json"})

    @property
    def timeout(self) -> httpx.Timeout:
        return self._http.timeout

    def close(self) -> None:
        self._http.close()

    def send(self, method: str, path: str, *, ok: tuple[int, ...] = OK,
             **options: Any) -> httpx.Response:
        """The response to ``method path``; ``options`` go to ``httpx.Client.request``."""
        try:
            response = self._http.request(method, path, **options)
        except httpx.HTTPError as exc:
            raise self._unreachable(
                f"cannot reach {self._service} at {self.endpoint} ({method} {path}): {exc}; "
                f"{self._hint}") from exc
        if response.status_code not in ok:
            raise self._refused(response)
        return response
