"""The Compute API subset as data: method, path, handler, policy, microversion range.

Paths are relative to ``/compute/v2.1``. Policies use Nova's rule names; per-handler checks
make writes to flavors, aggregates and the host views admin-only, while servers are
scoped to the caller's project.
"""

from __future__ import annotations

from vgpucloud.api.compute.handlers import actions, aggregates, flavors, hosts, root, servers
from vgpucloud.api.microversion import Version
from vgpucloud.api.routing import Route

V = Version
FLAVOR = "/flavors/{flavor_id}"
SPECS = f"{FLAVOR}/os-extra_specs"
AGG = "/os-aggregates/{aggregate_id}"
SERVER = "/servers/{server_id}"


ROUTES: tuple[Route, ...] = (
    Route("GET", "/", root.v21_home, "", public=True),
    # flavors
    Route("GET", "/flavors", flavors.list_flavors, "os_compute_api:flavors:index"),
    Route("GET", "/flavors/detail", flavors.list_flavors_detail,
           "os_compute_api:flavors:detail"),
    Route("POST", "/flavors", flavors.create_flavor, "os_compute_api:os-flavor-manage:create",
           json_body=True),
    Route("GET", FLAVOR, flavors.show_flavor, "os_compute_api:flavors:show"),
    Route("PUT", FLAVOR, flavors.update_flavor, "os_compute_api:os-flavor-manage:update",
          min_version=V(2, 55), json_body=True),
    Route("DELETE", FLAVOR, flavors.delete_flavor, "os_compute_api:os-flavor-manage:delete"),
    Route("GET", SPECS, flavors.list_extra_specs, "os_compute_api:os-flavor-extra-specs:index"),
    Route("POST", SPECS, flavors.create_extra_specs,
           "os_compute_api:os-flavor-extra-specs:create", json_body=True),
    Route("GET", f"{SPECS}/{{key}}", flavors.show_extra_spec,
           "os_compute_api:os-flavor-extra-specs:show"),
    Route("PUT", f"{SPECS}/{{key}}", flavors.update_extra_spec,
           "os_compute_api:os-flavor-extra-specs:update", json_body=True),
    Route("DELETE", f"{SPECS}/{{key}}", flavors.delete_extra_spec,
           "os_compute_api:os-flavor-extra-specs:delete"),
    # servers
    Route("GET", "/servers", servers.list_servers, "os_compute_api:servers:index"),
    Route("GET", "/servers/detail", servers.list_servers_detail,
           "os_compute_api:servers:detail"),
    Route("POST", "/servers", servers.create_server, "os_compute_api:servers:create",
           json_body=True),
    Route("GET", SERVER, servers.show_server, "os_compute_api:servers:show"),
    Route("DELETE", SERVER, servers.delete_server, "os_compute_api:servers:delete"),
    Route("GET", f"{SERVER}/os-instance-actions", actions.list_actions,
           "os_compute_api:os-instance-actions:list"),
    Route("GET", f"{SERVER}/os-instance-actions/{{request_id}}", actions.show_action,
           "os_compute_api:os-instance-actions:show"),
    # host aggregates
    Route("GET", "/os-aggregates", aggregates.list_aggregates,
           "os_compute_api:os-aggregates:index"),
    Route("POST", "/os-aggregates", aggregates.create_aggregate,
           "os_compute_api:os-aggregates:create", json_body=True),
    Route("GET", AGG, aggregates.show_aggregate, "os_compute_api:os-aggregates:show"),
    Route("PUT", AGG, aggregates.update_aggregate, "os_compute_api:os-aggregates:update",
           json_body=True),
    Route("DELETE", AGG, aggregates.delete_aggregate, "os_compute_api:os-aggregates:delete"),
    Route("POST", f"{AGG}/action", aggregates.aggregate_action,
           "os_compute_api:os-aggregates:action", json_body=True),
    # hosts
    Route("GET", "/os-hypervisors", hosts.list_hypervisors,
           "os_compute_api:os-hypervisors:list"),
    Route("GET", "/os-hypervisors/detail", hosts.list_hypervisors_detail,
           "os_compute_api:os-hypervisors:list-detail"),
    Route("GET", "/os-hypervisors/{hypervisor_id}", hosts.show_hypervisor,
           "os_compute_api:os-hypervisors:show"),
    Route("GET", "/os-services", hosts.list_services, "os_compute_api:os-services:list"),
)
