"""``/servers/{id}/os-instance-actions``: what was asked of a server and how each step went.

Actions of a deleted server stay readable (Nova allows it), but only within its project.
"""

from __future__ import annotations

from typing import Any

import webob

from vgpucloud.api import faults
from vgpucloud.api.compute.context import ComputeRequest, isotime, json_response
from vgpucloud.api.compute.server_views import host_id
from vgpucloud.compute.models import ActionEvent, Instance, InstanceAction


def _instance(request: ComputeRequest) -> Instance:
    instance = request.store.get_instance(request.params["server_id"])
    if not request.identity.is_admin and instance.project_id != request.identity.project_id:
        raise faults.not_found(f"Instance {instance.uuid} could not be found.")
    return instance


def _action_view(request: ComputeRequest, action: InstanceAction) -> dict[str, Any]:
    view: dict[str, Any] = {
        "action": action.action, "instance_uuid": action.instance_uuid,
        "message": action.message, "project_id": action.project_id,
        "request_id": action.request_id, "start_time": isotime(action.start_time),
        "user_id": action.user_id,
    }
    if request.at_least(58):
        finished = [e.finish_time for e in action.events if e.finish_time is not None]
        view["updated_at"] = isotime(max(finished, default=action.start_time))
    return view


def _event_view(request: ComputeRequest, instance: Instance,
                event: ActionEvent) -> dict[str, Any]:
    view: dict[str, Any] = {"event": event.event, "start_time": isotime(event.start_time),
                            "finish_time": isotime(event.finish_time), "result": event.result}
    if request.identity.is_admin:
        view["traceback"] = event.traceback
    if request.at_least(62):
        view["hostId"] = host_id(instance) if event.host else ""
        if request.identity.is_admin:
            view["host"] = event.host or ""
    if request.at_least(84):
        view["details"] = None
    return view


def list_actions(request: ComputeRequest) -> webob.Response:
    instance = _instance(request)
    return json_response({"instanceActions": [
        _action_view(request, a) for a in request.store.list_actions(instance.uuid)]})


def show_action(request: ComputeRequest) -> webob.Response:
    instance = _instance(request)
    action = request.store.get_action(instance.uuid, request.params["request_id"])
    view = _action_view(request, action)
    view["events"] = [_event_view(request, instance, e) for e in action.events]
    return json_response({"instanceAction": view})
