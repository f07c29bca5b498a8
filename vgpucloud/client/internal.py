"""HTTP client of the internal API (``/internal/v1``), used by agents and the conductor.

Errors come back in Placement's shape; they become ``vgpucloud.errors`` classes carrying
the server's stable code (``internal.task.not_lease_owner`` -> ``Conflict`` with that code),
so callers match on ``exc.code``. The plumbing (``client.jsonapi``) is ``PlacementClient``'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from vgpucloud import errors
from vgpucloud.client.jsonapi import ERRORS_BY_STATUS, JsonApi, Refusal


class InternalApiError(errors.VgpucloudError):
    """An internal API response we did not expect (5xx, 401, unparseable)."""

    code = "client.internal"


def error_from_response(response: httpx.Response) -> errors.VgpucloudError:
    """The error for a response like ``{"errors": [{"status": 404, "code":
    "internal.task.not_found", "detail": "task 5b0f... does not exist; ..."}]}``."""
    refusal = Refusal.read(response)
    message = f"internal API refused {refusal.where} ({refusal.status}): {refusal.detail.strip()}"
    return refusal.error(ERRORS_BY_STATUS.get(refusal.status, InternalApiError), message)


class InternalClient:
    """``endpoint`` is the internal API's base, e.g. ``http://api:8780/internal/v1``."""

    def __init__(self, endpoint: str, *, token: str = "admin", timeout: float = 60.0,
                 transport: httpx.BaseTransport | None = None) -> None:
        self._api = JsonApi(
            endpoint, service="the internal API",
            hint="check that `vgpucloud api` is running and --api points at it",
            unreachable=InternalApiError, refused=error_from_response, token=token,
            timeout=timeout, transport=transport)
        self.endpoint = self._api.endpoint

    def close(self) -> None:
        self._api.close()

    def request(self, method: str, path: str, *, json: Any = None,
                timeout: float | None = None) -> Any:
        extra: dict[str, Any] = {} if timeout is None else {"timeout": timeout}
        response = self._api.send(method, path, json=json, **extra)
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
        timeout = self._api.timeout.read or 60.0
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
