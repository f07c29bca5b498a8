"""``/os-aggregates``: host aggregates with metadata and hosts, mirrored into Placement.

As Nova does, adding a host to an aggregate also puts the aggregate's UUID on the host's
root resource provider (and removing takes it off), so a flavor or scheduler asking
Placement for ``member_of=<aggregate uuid>`` finds the host's providers.
"""

from __future__ import annotations

from typing import Any

import webob

from vgpucloud.api import faults
from vgpucloud.api.compute import schemas
from vgpucloud.api.compute.context import ComputeRequest, empty_response, json_response
from vgpucloud.compute.models import Aggregate
from vgpucloud.errors import ConcurrentUpdate
from vgpucloud.placement.models import ProviderFilter

# A provider's aggregates are a compare-and-swap on its generation; an agent reporting at
# the same moment may win once or twice, never forever.
MIRROR_ATTEMPTS = 5


def aggregate_view(request: ComputeRequest, aggregate: Aggregate) -> dict[str, Any]:
    view: dict[str, Any] = {
        "id": aggregate.id, "name": aggregate.name,
        "availability_zone": aggregate.availability_zone, "hosts": list(aggregate.hosts),
        "metadata": dict(aggregate.metadata),
        "created_at": _time(aggregate.created_at), "updated_at": _time(aggregate.updated_at),
        "deleted": False, "deleted_at": None,
    }
    if request.at_least(41):
        view["uuid"] = aggregate.uuid
    return view


def _time(value: Any) -> str | None:
    return None if value is None else value.isoformat()


def _aggregate_id(request: ComputeRequest) -> int:
    text = request.params["aggregate_id"]
    if not text.isdigit():
        raise faults.bad_request(f"Aggregate id {text!r} must be an integer (openstack "
                                 "aggregate list shows the ids)")
    return int(text)


def list_aggregates(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-aggregates:index")
    return json_response({"aggregates": [aggregate_view(request, a)
                                         for a in request.store.list_aggregates()]})


def create_aggregate(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-aggregates:create")
    body = request.body(schemas.AGGREGATE_CREATE)["aggregate"]
    aggregate = request.store.create_aggregate(body["name"].strip(),
                                               body.get("availability_zone"))
    view = aggregate_view(request, aggregate)
    del view["hosts"], view["metadata"]  # Nova's create answer has neither
    return json_response({"aggregate": view})


def show_aggregate(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-aggregates:show")
    aggregate = request.store.get_aggregate(_aggregate_id(request))
    return json_response({"aggregate": aggregate_view(request, aggregate)})


def update_aggregate(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-aggregates:update")
    body = request.body(schemas.AGGREGATE_UPDATE)["aggregate"]
    aggregate = request.store.update_aggregate(_aggregate_id(request), body.get("name"),
                                               body.get("availability_zone"))
    return json_response({"aggregate": aggregate_view(request, aggregate)})


def delete_aggregate(request: ComputeRequest) -> webob.Response:
    request.require_admin("os_compute_api:os-aggregates:delete")
    request.store.delete_aggregate(_aggregate_id(request))
    return empty_response(200)


def aggregate_action(request: ComputeRequest) -> webob.Response:
    body = request.body(schemas.AGGREGATE_ACTION)
    (action, argument), = body.items()
    request.require_admin(f"os_compute_api:os-aggregates:{action}")
    aggregate_id = _aggregate_id(request)
    if action == "set_metadata":
        aggregate = request.store.set_aggregate_metadata(aggregate_id, argument["metadata"])
    elif action == "add_host":
        root = _root_provider(request, argument["host"])
        aggregate = request.store.add_aggregate_host(aggregate_id, argument["host"])
        if root is not None:
            _mirror(request, root, aggregate.uuid, add=True)
    else:
        root = _root_provider(request, argument["host"])
        aggregate = request.store.remove_aggregate_host(aggregate_id, argument["host"])
        if root is not None:
            _mirror(request, root, aggregate.uuid, add=False)
    return json_response({"aggregate": aggregate_view(request, aggregate)})


def _root_provider(request: ComputeRequest, host: str) -> str | None:
    """The host's root provider: the one its agent registered, else the Placement root
    named after it (a compute node provider is named after its host, as in Nova).
    404 when neither knows the host, as Nova answers for an unknown compute host."""
    for known in request.store.list_compute_hosts():
        if known.name == host:
            return known.root_provider_uuid or _provider_named(request, host)
    found = _provider_named(request, host)
    if found is None:
        raise faults.not_found(f"Compute host {host} could not be found: no agent registered "
                               "it and no resource provider has that name")
    return found


def _provider_named(request: ComputeRequest, host: str) -> str | None:
    providers = request.placement.list_providers(ProviderFilter(name=host))
    return providers[0].root_provider_uuid if providers else None


def _mirror(request: ComputeRequest, provider_uuid: str, aggregate_uuid: str, *,
            add: bool) -> None:
    for attempt in range(MIRROR_ATTEMPTS):
        generation, current = request.placement.get_provider_aggregates(provider_uuid)
        wanted = sorted(set(current) | {aggregate_uuid}) if add else sorted(
            set(current) - {aggregate_uuid})
        if wanted == sorted(current):
            return
        try:
            request.placement.set_provider_aggregates(provider_uuid, wanted, generation)
            return
        except ConcurrentUpdate:
            if attempt == MIRROR_ATTEMPTS - 1:
                raise
