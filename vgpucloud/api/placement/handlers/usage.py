"""/resource_providers/{uuid}/usages and /usages (1.9+; per consumer type from 1.38)."""

from __future__ import annotations

import webob

from vgpucloud.api.placement import params
from vgpucloud.api.placement.context import PlacementRequest, json_response
from vgpucloud.errors import QueryMissingValue


def provider_usages(request: PlacementRequest) -> webob.Response:
    generation, usages = request.store.get_provider_usages(request.params["uuid"])
    return json_response(
        request, {"usages": usages, "resource_provider_generation": generation})


def project_usages(request: PlacementRequest) -> webob.Response:
    """``?project_id=P[&user_id=U][&consumer_type=INSTANCE|all|unknown]`` (the last from 1.38)."""
    pairs = request.query()
    allowed = ["project_id", "user_id"] + (["consumer_type"] if request.at_least(38) else [])
    params.reject_unknown(pairs, allowed)
    project_id = params.single_value(pairs, "project_id")
    if not project_id:
        raise QueryMissingValue(
            "Invalid query string parameters: 'project_id' is a required property; "
            "send ?project_id=<project>.")
    consumer_type = params.single_value(pairs, "consumer_type")
    by_type = request.store.get_usages(
        project_id, params.single_value(pairs, "user_id"), consumer_type)
    if request.at_least(38):
        # Without a filter Placement lists each type; "all" appears only when asked for.
        wanted = {consumer_type} if consumer_type else set(by_type) - {"all"}
        return json_response(
            request, {"usages": {k: v for k, v in by_type.items() if k in wanted}})
    overall = dict(by_type.get("all", {}))
    overall.pop("consumer_count", None)
    return json_response(request, {"usages": overall})
