"""The internal API WSGI app (``/internal/v1``): what agents call, admin token only.

Routes::

    GET  /hosts                         registered hosts
    PUT  /hosts/{name}                  register or refresh a host's facts
    POST /hosts/{name}/heartbeat        the agent is alive
    POST /hosts/{name}/tasks/lease      lease 0..n tasks (long-poll up to wait_seconds)
    POST /tasks                         enqueue a task (conductor, tests)
    GET  /tasks/{uuid}                  one task
    POST /tasks/{uuid}/result           done/failed, by the lease owner only

It runs on the shared pipeline (``vgpucloud.api.pipeline``: request ids, ``vgpucloud.api.auth``,
the ``Router``) and answers the ``{"errors": [...]}`` fault shape, always with stable codes.
"""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any

import webob

from vgpucloud.api import faults, jsonbody
from vgpucloud.api.internal import schemas
from vgpucloud.api.internal.views import host_view, task_view
from vgpucloud.api.microversion import Version
from vgpucloud.api.pipeline import ApiService, require_admin
from vgpucloud.api.requestid import ENVIRON_KEY as REQUEST_ID_KEY
from vgpucloud.api.routing import Route
from vgpucloud.compute.hosttasks import TASK_EVENTS, HostFacts, HostTaskStore
from vgpucloud.conf import Settings
from vgpucloud.errors import VgpucloudError

POLL_INTERVAL = 0.25
SUMMARY = {"version": "v1", "status": "CURRENT"}


@dataclasses.dataclass(frozen=True, slots=True)
class InternalRequest:
    http: webob.Request
    params: dict[str, str]
    store: HostTaskStore

    def body(self, schema: dict[str, Any]) -> Any:
        return jsonbody.parse(self.http, schema)


def _json(body: Any, status: int = 200) -> webob.Response:
    return webob.Response(status=status, body=json.dumps(body).encode(),
                          content_type="application/json", charset=None)


# --- handlers ------------------------------------------------------------------------


def list_hosts(request: InternalRequest) -> webob.Response:
    return _json({"hosts": [host_view(h) for h in request.store.list_hosts()]})


def register_host(request: InternalRequest) -> webob.Response:
    data = request.body(schemas.register_host)
    host = request.store.register_host(request.params["name"], HostFacts(**data))
    return _json(host_view(host))


def heartbeat(request: InternalRequest) -> webob.Response:
    return _json(host_view(request.store.heartbeat(request.params["name"])))


def lease_tasks(request: InternalRequest) -> webob.Response:
    data = request.body(schemas.lease)
    deadline = time.monotonic() + float(data.get("wait_seconds", 0))
    while True:
        mark = TASK_EVENTS.mark()
        leased = request.store.lease(request.params["name"], data["owner"],
                                     data["lease_seconds"], data.get("max_tasks", 1))
        if leased or time.monotonic() >= deadline:
            return _json({"tasks": [task_view(t) for t in leased]})
        TASK_EVENTS.wait(mark, min(POLL_INTERVAL, deadline - time.monotonic()))


def enqueue_task(request: InternalRequest) -> webob.Response:
    data = request.body(schemas.enqueue)
    task, created = request.store.enqueue(data["host"], data["kind"], data["payload"],
                                          data.get("uuid"))
    response = _json(task_view(task), 201 if created else 200)
    response.headers["Location"] = f"{request.http.script_name}/tasks/{task.uuid}"
    return response


def show_task(request: InternalRequest) -> webob.Response:
    return _json(task_view(request.store.get_task(request.params["uuid"])))


def report_result(request: InternalRequest) -> webob.Response:
    data = request.body(schemas.result)
    task = request.store.finish(request.params["uuid"], data["owner"], data["state"],
                                data.get("result"), data.get("fault"))
    return _json(task_view(task))


ROUTES = (
    Route("GET", "/hosts", list_hosts, "internal:hosts:list"),
    Route("PUT", "/hosts/{name}", register_host, "internal:hosts:register", json_body=True),
    Route("POST", "/hosts/{name}/heartbeat", heartbeat, "internal:hosts:heartbeat"),
    Route("POST", "/hosts/{name}/tasks/lease", lease_tasks, "internal:tasks:lease",
          json_body=True),
    Route("POST", "/tasks", enqueue_task, "internal:tasks:create", json_body=True),
    Route("GET", "/tasks/{uuid}", show_task, "internal:tasks:show"),
    Route("POST", "/tasks/{uuid}/result", report_result, "internal:tasks:result",
          json_body=True),
)


# --- the app -------------------------------------------------------------------------

AGENTS_ONLY = ("the internal API is for agents and services with the admin role "
               "(noauth2: X-Auth-Token: admin)")


class InternalService(ApiService):
    """WSGI app of the internal API over ``store``; no microversions, no public routes."""

    unexpected_error = "Unexpected error in the internal API"

    def __init__(self, settings: Settings, store: HostTaskStore) -> None:
        super().__init__(settings, ROUTES)
        self.store = store

    def respond(self, request: webob.Request, version: Version) -> webob.Response:
        route, params = self.route(request, version)
        require_admin(request.environ, route, AGENTS_ONLY)
        if route.json_body:
            jsonbody.require_json(request)
        return route.handler(InternalRequest(request, params, self.store))

    def fault(self, environ: dict[str, Any], exc: VgpucloudError) -> webob.Response:
        """The Placement error shape, always with the stable ``code``."""
        return faults.error_response(
            faults.status_of(exc), exc.message, code=exc.code,
            request_id=environ.get(REQUEST_ID_KEY), headers=getattr(exc, "headers", None))
