"""The clients' shared HTTP plumbing: refusals become vgpucloud errors, outages name the fix."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from vgpucloud import errors
from vgpucloud.client.internal import InternalApiError, InternalClient
from vgpucloud.client.placement import PlacementClient, PlacementError

Handler = Callable[[httpx.Request], httpx.Response]


def _answer(status: int, body: object) -> Handler:
    def handler(request: httpx.Request) -> httpx.Response:
        if isinstance(body, str):
            return httpx.Response(status, text=body)
        return httpx.Response(status, json=body)

    return handler


def _placement(handler: Handler) -> PlacementClient:
    return PlacementClient("http://api:8780/placement/", transport=httpx.MockTransport(handler))


def _internal(handler: Handler) -> InternalClient:
    return InternalClient("http://api:8780/internal/v1", transport=httpx.MockTransport(handler))


def _errors(status: int, code: str, detail: str) -> dict[str, object]:
    return {"errors": [{"status": status, "title": "x", "code": code, "detail": detail,
                        "request_id": "req-1"}]}


def test_lost_generation_race_is_concurrent_update_with_the_servers_code() -> None:
    client = _placement(_answer(409, _errors(
        409, "placement.concurrent_update", "resource provider generation conflict  ")))
    with pytest.raises(errors.ConcurrentUpdate) as caught:
        client.request("PUT", "/resource_providers/rp1/inventories", json={})
    assert caught.value.code == "placement.concurrent_update"
    assert caught.value.message == (
        "Placement refused PUT /placement/resource_providers/rp1/inventories (409): "
        "resource provider generation conflict  ")


def test_task_finished_by_another_agent_is_a_conflict_carrying_the_code() -> None:
    client = _internal(_answer(409, _errors(
        409, "internal.task.not_lease_owner", "\n task t1 is leased by host-b  ")))
    with pytest.raises(errors.Conflict) as caught:
        client.report_result("t1", "host-a", "done")
    assert caught.value.code == "internal.task.not_lease_owner"
    assert caught.value.message == ("internal API refused POST /internal/v1/tasks/t1/result "
                                    "(409): task t1 is leased by host-b")


@pytest.mark.parametrize(("client", "expected"), [
    (_placement, PlacementError), (_internal, InternalApiError)], ids=["placement", "internal"])
def test_a_proxy_error_page_keeps_its_text(client: Callable[[Handler], object],
                                           expected: type[errors.VgpucloudError]) -> None:
    api = client(_answer(502, "<html>Bad Gateway</html>"))
    with pytest.raises(expected) as caught:
        api.request("GET", "/hosts")  # type: ignore[attr-defined]
    assert "(502): <html>Bad Gateway</html>" in caught.value.message
    assert caught.value.code == expected.code


def _refuse_connection(request: httpx.Request) -> httpx.Response:
    raise httpx.ConnectError("Connection refused", request=request)


def test_placement_down_names_the_endpoint_and_what_to_check() -> None:
    with pytest.raises(PlacementError) as caught:
        _placement(_refuse_connection).list_providers()
    assert caught.value.message == (
        "cannot reach Placement at http://api:8780/placement (GET /resource_providers): "
        "Connection refused; check that the API is running and the endpoint is right")


def test_internal_api_down_names_the_endpoint_and_the_flag() -> None:
    with pytest.raises(InternalApiError) as caught:
        _internal(_refuse_connection).heartbeat("host-a")
    assert caught.value.message.startswith(
        "cannot reach the internal API at http://api:8780/internal/v1 "
        "(POST /hosts/host-a/heartbeat): Connection refused; check that `vgpucloud api`")


def test_placement_requests_carry_the_microversion() -> None:
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, json={"resource_providers": []})

    assert _placement(handler).list_providers() == []
    assert seen[0].headers["OpenStack-API-Version"] == "placement 1.39"
    assert seen[0].headers["X-Auth-Token"] == "admin"
