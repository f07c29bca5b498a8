"""HTTP client for the Placement API — ours or OpenStack's, they speak the same wire protocol.

The agent, the scheduler and the CLI reach Placement only through this class, so they also
work against a real OpenStack Placement. It owns three concerns:

- microversions: every request carries ``OpenStack-API-Version: placement <v>``;
- errors: Placement's ``{"errors": [{"code": ...}]}`` bodies become the matching
  ``vgpucloud.errors`` class (``placement.concurrent_update`` -> ``ConcurrentUpdate``);
- retries: ``retry_on_conflict`` re-runs a read-modify-write step with fresh state when a
  generation compare-and-swap loses a race (DESIGN rule 5: retried, never ignored).

The HTTP plumbing (session, unreachable and refused errors) is ``client.jsonapi``'s; transports
are injectable there.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import httpx

from vgpucloud import errors
from vgpucloud.client.jsonapi import ERRORS_BY_STATUS, OK, JsonApi, Refusal

DEFAULT_MICROVERSION = "1.39"
T = TypeVar("T")

_ERRORS_BY_CODE: dict[str, type[errors.VgpucloudError]] = {
    cls.code: cls
    for cls in (
        errors.ConcurrentUpdate,
        errors.DuplicateName,
        errors.InventoryInUse,
        errors.ProviderInUse,
        errors.CannotDeleteParent,
        errors.ResourceProviderNotFound,
        errors.QueryDuplicateKey,
        errors.QueryBadValue,
        errors.QueryMissingValue,
    )
}


class PlacementError(errors.VgpucloudError):
    """A Placement response we did not expect (5xx, 401, 406, unparseable)."""

    code = "client.placement"


def error_from_response(response: httpx.Response) -> errors.VgpucloudError:
    """The vgpucloud error for a Placement error response (the body is read by
    ``Refusal.read``): by the stable code when we know it, else by the status."""
    refusal = Refusal.read(response)
    message = f"Placement refused {refusal.where} ({refusal.status}): {refusal.detail}"
    cls = _ERRORS_BY_CODE.get(refusal.code or "") or ERRORS_BY_STATUS.get(refusal.status)
    if cls is None:
        return PlacementError(message)
    return refusal.error(cls, message)


def retry_on_conflict(step: Callable[[], T], attempts: int = 5, backoff: float = 0.05) -> T:
    """Run ``step`` (which must re-read what it writes) until it does not lose a generation race."""
    for attempt in range(1, attempts + 1):
        try:
            return step()
        except errors.ConcurrentUpdate:
            if attempt == attempts:
                raise
            time.sleep(backoff * attempt)
    raise AssertionError("unreachable")


class PlacementClient:
    def __init__(
        self,
        endpoint: str,
        *,
        token: str = "admin",
        microversion: str = DEFAULT_MICROVERSION,
        timeout: float = 30.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self._api = JsonApi(
            endpoint, service="Placement",
            hint="check that the API is running and the endpoint is right",
            unreachable=PlacementError, refused=error_from_response, token=token,
            timeout=timeout, transport=transport)
        self.endpoint = self._api.endpoint
        self.microversion = microversion

    def close(self) -> None:
        self._api.close()

    # --- plumbing --------------------------------------------------------------

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        microversion: str | None = None,
        ok: tuple[int, ...] = OK,
    ) -> httpx.Response:
        headers = {"OpenStack-API-Version": f"placement {microversion or self.microversion}"}
        return self._api.send(method, path, ok=ok, json=json, params=params, headers=headers)

    def _get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params or None).json()

    # --- resource providers -----------------------------------------------------

    def list_providers(self, **filters: str) -> list[dict[str, Any]]:
        providers: list[dict[str, Any]] = self._get("/resource_providers", **filters)[
            "resource_providers"
        ]
        return providers

    def get_provider(self, uuid: str) -> dict[str, Any] | None:
        response = self.request("GET", f"/resource_providers/{uuid}", ok=(200, 404))
        return None if response.status_code == 404 else dict(response.json())

    def create_provider(
        self, name: str, uuid: str | None = None, parent_provider_uuid: str | None = None
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"name": name}
        if uuid:
            body["uuid"] = uuid
        if parent_provider_uuid:
            body["parent_provider_uuid"] = parent_provider_uuid
        return dict(self.request("POST", "/resource_providers", json=body).json())

    def delete_provider(self, uuid: str) -> None:
        self.request("DELETE", f"/resource_providers/{uuid}")

    # --- inventories ---------------------------------------------------------------

    def get_inventories(self, uuid: str) -> dict[str, Any]:
        return dict(self._get(f"/resource_providers/{uuid}/inventories"))

    def put_inventories(
        self, uuid: str, generation: int, inventories: Mapping[str, Mapping[str, Any]]
    ) -> dict[str, Any]:
        body = {"resource_provider_generation": generation, "inventories": inventories}
        return dict(
            self.request("PUT", f"/resource_providers/{uuid}/inventories", json=body).json()
        )

    # --- traits --------------------------------------------------------------------

    def ensure_trait(self, name: str) -> None:
        self.request("PUT", f"/traits/{name}")

    def get_provider_traits(self, uuid: str) -> dict[str, Any]:
        return dict(self._get(f"/resource_providers/{uuid}/traits"))

    def put_provider_traits(self, uuid: str, generation: int, traits: list[str]) -> dict[str, Any]:
        body = {"resource_provider_generation": generation, "traits": sorted(traits)}
        return dict(self.request("PUT", f"/resource_providers/{uuid}/traits", json=body).json())

    def ensure_resource_class(self, name: str) -> None:
        self.request("PUT", f"/resource_classes/{name}")

    # --- aggregates ----------------------------------------------------------------

    def get_provider_aggregates(self, uuid: str) -> dict[str, Any]:
        return dict(self._get(f"/resource_providers/{uuid}/aggregates"))

    def put_provider_aggregates(
        self, uuid: str, generation: int, aggregates: list[str]
    ) -> dict[str, Any]:
        body = {"resource_provider_generation": generation, "aggregates": aggregates}
        return dict(
            self.request("PUT", f"/resource_providers/{uuid}/aggregates", json=body).json()
        )

    # --- allocations -----------------------------------------------------------------

    def get_allocations(self, consumer_uuid: str) -> dict[str, Any]:
        return dict(self._get(f"/allocations/{consumer_uuid}"))

    def put_allocations(self, consumer_uuid: str, body: Mapping[str, Any]) -> None:
        self.request("PUT", f"/allocations/{consumer_uuid}", json=body)

    def delete_allocations(self, consumer_uuid: str) -> bool:
        """False when the consumer had none (already gone: deleting is idempotent for us)."""
        response = self.request("DELETE", f"/allocations/{consumer_uuid}", ok=(204, 404))
        return response.status_code == 204

    def get_provider_allocations(self, uuid: str) -> dict[str, Any]:
        return dict(self._get(f"/resource_providers/{uuid}/allocations"))

    def get_provider_usages(self, uuid: str) -> dict[str, Any]:
        return dict(self._get(f"/resource_providers/{uuid}/usages"))

    def allocation_candidates(self, params: Mapping[str, str]) -> dict[str, Any]:
        return dict(self._get("/allocation_candidates", **params))

    def reshape(self, body: Mapping[str, Any]) -> None:
        self.request("POST", "/reshaper", json=body)
