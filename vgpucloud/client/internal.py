"""HTTP client of the internal API (``/internal/v1``), used by agents and the conductor.

Errors come back in Placement's shape; they become ``vgpucloud.errors`` classes carrying
the server's stable code (``internal.task.not_lease_owner`` -> ``Conflict`` with that code),
so callers match on ``exc.code``. Transports are injectable like ``PlacementClient``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from vgpucloud import errors

_ERRORS_BY_STATUS: dict[int, type[errors.VgpucloudError]] = {
    400: errors.BadRequest,
    403: errors.Forbidden,
    404: errors.NotFound,
    409: errors.Conflict,
}


class InternalApiError(errors.VgpucloudError):
    """An internal API response we did not expect (5xx, 401, unparseable)."""

    code = "client.internal"


def error_from_response(response: httpx.Response) -> errors.VgpucloudError:
    """The error for a response like ``{"errors": [{"status": 404, "code":
    "internal.task.not_found", "detail": "task 5b0f... does not exist; ..."}]}``."""
    detail, code = response.text, None
    try:
        first = response.json()["errors"][0]
        detail, code = first.get("detail", detail), first.get("code")
    except (ValueError, KeyError, IndexError, TypeError):
        pass
    where = f"{response.request.method} {response.request.url.path}"
    message = f"internal API refused {where} ({response.status_code}): {str(detail).strip()}"
    cls = _ERRORS_BY_STATUS.get(response.status_code, InternalApiError)
    return cls(message, code=code) if code else cls(message)


class InternalClient:
    """``endpoint`` is the internal API's base, e.g. ``http://api:8780/internal/v1``."""

    def __init__(self, endpoint: str, *, token: str = "admin", timeout: float = 60.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self.endpoint = endpoint.rstrip("/")
        self._http = httpx.Client(
            base_url=self.endpoint, timeout=timeout, transport=transport,
            headers={"X-Auth-Token": token, "Accept": "application/json"})

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, *, json: Any = None,
                timeout: float | None = None) -> Any:
        extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        try:
            response = self._http.request(method, path, json=json, **extra)
        except httpx.HTTPError as exc:
            raise InternalApiError(
                f"cannot reach the internal API at {self.endpoint} ({method} {path}): {exc}; "
                "check that `vgpucloud api` is running and --api points at it") from exc
        if response.status_code not in (200, 201, 204):
            raise error_from_response(response)
        return response.json() if response.content else None

    # --- hosts ------------------------------------------------------------------------

    def register_host(self, name: str, facts: Mapping[str, Any]) -> dict[str, Any]:
        return dict(self.request("PUT", f"/hosts/{name}", json=dict(facts)))

    def heartbeat(self, name: str) -> dict[str, Any]:
        return dict(self.request("POST", f"/hosts/{name}/heartbeat"))

    def list_hosts(self) -> list[dict[str, Any]]:
        return list(self.request("GET", "/hosts")["hosts"])

    # --- tasks ------------------------------------------------------------------------

    def lease_tasks(self, host: str, owner: str, *, lease_seconds: int = 300,
                    wait_seconds: float = 0, max_tasks: int = 1) -> list[dict[str, Any]]:
        body = {"owner": owner, "lease_seconds": lease_seconds, "wait_seconds": wait_seconds,
                "max_tasks": max_tasks}
        # The server holds a long poll open for wait_seconds: allow for it.
        timeout = self._http.timeout.read or 60.0
        reply = self.request("POST", f"/hosts/{host}/tasks/lease", json=body,
                             timeout=timeout + wait_seconds)
        return list(reply["tasks"])

    def enqueue_task(self, host: str, kind: str, payload: Mapping[str, Any],
                     uuid: str | None = None) -> dict[str, Any]:
        body: dict[str, Any] = {"host": host, "kind": kind, "payload": dict(payload)}
        if uuid:
            body["uuid"] = uuid
        return dict(self.request("POST", "/tasks", json=body))

    def get_task(self, uuid: str) -> dict[str, Any]:
        return dict(self.request("GET", f"/tasks/{uuid}"))

    def report_result(self, uuid: str, owner: str, state: str, *,
                      result: Mapping[str, Any] | None = None,
                      fault: str | None = None) -> dict[str, Any]:
        body = {"owner": owner, "state": state,
                "result": None if result is None else dict(result), "fault": fault}
        return dict(self.request("POST", f"/tasks/{uuid}/result", json=body))
