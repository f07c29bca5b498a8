"""The shared request pipeline, through each service: the catch-all, auth before version."""

from __future__ import annotations

import json
import logging
from typing import Any, cast

import pytest
import webob

from vgpucloud.api.compute.service import ComputeService
from vgpucloud.api.internal.service import InternalService
from vgpucloud.api.pipeline import ApiService
from vgpucloud.api.placement.service import PlacementService
from vgpucloud.api.routing import Route
from vgpucloud.compute.api_ports import ComputeApiStore
from vgpucloud.compute.hosttasks import HostTaskStore
from vgpucloud.conf import Settings
from vgpucloud.placement.ports import PlacementStore

REQUEST_ID = "req-5b0f2f5e-0d4c-4bb4-8a8e-3b7f1c0e9a11"


def _database_gone(*_args: Any) -> webob.Response:
    raise RuntimeError("server closed the connection unexpectedly")


class _TasksWithoutDatabase:
    """A host task store whose database went away mid-request."""

    list_hosts = staticmethod(_database_gone)


BROKEN = (Route("GET", "/things", _database_gone, "things:list"),)


def _placement() -> ApiService:
    return PlacementService(Settings(), cast(PlacementStore, None), BROKEN)


def _compute() -> ApiService:
    return ComputeService(Settings(), cast(ComputeApiStore, None), cast(PlacementStore, None),
                          BROKEN)


def _internal() -> ApiService:
    return InternalService(Settings(), cast(HostTaskStore, _TasksWithoutDatabase()))


def _get(app: ApiService, path: str, **headers: str) -> webob.Response:
    request = webob.Request.blank(path, headers={"X-Auth-Token": "admin", **headers})
    request.environ["openstack.request_id"] = REQUEST_ID
    return request.get_response(app)


def _message(response: webob.Response) -> str:
    body = json.loads(response.body)
    if "errors" in body:
        return str(body["errors"][0]["detail"])
    (fault,) = body.values()
    return str(fault["message"])


@pytest.mark.parametrize(("service", "path", "shape"), [
    (_placement, "/things", "errors"),
    (_compute, "/things", "computeFault"),
    (_internal, "/hosts", "errors"),
], ids=["placement", "compute", "internal"])
def test_a_database_going_away_is_a_500_naming_the_request_id(
    service: Any, path: str, shape: str, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.ERROR):
        response = _get(service(), path)
    assert response.status_int == 500
    assert list(json.loads(response.body)) == [shape]
    assert f"under request id {REQUEST_ID}" in _message(response)
    (record,) = caplog.records
    assert REQUEST_ID in record.getMessage()
    assert record.exc_info is not None and "unexpectedly" in str(record.exc_info[1])


def test_placement_500_keeps_its_code_from_1_23() -> None:
    response = _get(_placement(), "/things", **{"OpenStack-API-Version": "placement 1.23"})
    assert json.loads(response.body)["errors"][0]["code"] == "placement.undefined_code"
    assert response.headers["OpenStack-API-Version"] == "placement 1.23"


def test_no_token_and_a_bad_version_is_401_first_as_in_openstack() -> None:
    request = webob.Request.blank("/things", headers={"OpenStack-API-Version": "compute 9.9"})
    response = request.get_response(_compute())
    assert response.status_int == 401
    assert "unauthorized" in json.loads(response.body)
    assert "OpenStack-API-Version" not in response.headers


def test_admin_with_a_bad_version_gets_the_406_naming_the_range() -> None:
    response = _get(_compute(), "/things", **{"OpenStack-API-Version": "compute 9.9"})
    assert response.status_int == 406
    assert _message(response) == ("Version compute 9.9 is not supported by the API. Minimum is 2.1 "
                                  "and maximum is 2.100.")
