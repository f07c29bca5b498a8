"""The Placement API as data: method, path, handler, policy, microversion range.

Policies use OpenStack Placement's rule names; by default all of them are admin-only.
"""

from __future__ import annotations

from vgpucloud.api.microversion import Version
from vgpucloud.api.placement.handlers import (
    aggregate,
    allocation,
    allocation_candidates,
    inventory,
    reshaper,
    resource_class,
    resource_provider,
    root,
    trait,
    usage,
)
from vgpucloud.api.routing import Route

V = Version
RP = "/resource_providers/{uuid}"
INV = f"{RP}/inventories"

ROUTES: tuple[Route, ...] = (
    Route("GET", "/", root.home, "", public=True),
    # providers
    Route("GET", "/resource_providers", resource_provider.list_providers,
          "placement:resource_providers:list"),
    Route("POST", "/resource_providers", resource_provider.create_provider,
          "placement:resource_providers:create", json_body=True),
    Route("GET", RP, resource_provider.show_provider, "placement:resource_providers:show"),
    Route("PUT", RP, resource_provider.update_provider, "placement:resource_providers:update",
          json_body=True),
    Route("DELETE", RP, resource_provider.delete_provider,
          "placement:resource_providers:delete"),
    # inventories
    Route("GET", INV, inventory.list_inventories,
          "placement:resource_providers:inventories:list"),
    Route("POST", INV, inventory.create_inventory,
          "placement:resource_providers:inventories:create", json_body=True),
    Route("PUT", INV, inventory.replace_inventories,
          "placement:resource_providers:inventories:update", json_body=True),
    Route("DELETE", INV, inventory.delete_inventories,
          "placement:resource_providers:inventories:delete", min_version=V(1, 5),
          below_status=405),
    Route("GET", f"{INV}/{{resource_class}}", inventory.show_inventory,
          "placement:resource_providers:inventories:show"),
    Route("PUT", f"{INV}/{{resource_class}}", inventory.update_inventory,
          "placement:resource_providers:inventories:update", json_body=True),
    Route("DELETE", f"{INV}/{{resource_class}}", inventory.delete_inventory,
          "placement:resource_providers:inventories:delete"),
    # usages
    Route("GET", f"{RP}/usages", usage.provider_usages, "placement:resource_providers:usages"),
    Route("GET", "/usages", usage.project_usages, "placement:usages", min_version=V(1, 9)),
    # aggregates
    Route("GET", f"{RP}/aggregates", aggregate.list_aggregates,
          "placement:resource_providers:aggregates:list", min_version=V(1, 1)),
    Route("PUT", f"{RP}/aggregates", aggregate.replace_aggregates,
          "placement:resource_providers:aggregates:update", min_version=V(1, 1),
          json_body=True),
    # allocations
    Route("GET", f"{RP}/allocations", allocation.list_provider_allocations,
          "placement:resource_providers:allocations:list"),
    Route("POST", "/allocations", allocation.post_allocations, "placement:allocations:manage",
          min_version=V(1, 13), json_body=True),
    Route("GET", "/allocations/{consumer_uuid}", allocation.show_consumer_allocations,
          "placement:allocations:list"),
    Route("PUT", "/allocations/{consumer_uuid}", allocation.replace_consumer_allocations,
          "placement:allocations:update", json_body=True),
    Route("DELETE", "/allocations/{consumer_uuid}", allocation.delete_consumer_allocations,
          "placement:allocations:delete"),
    Route("GET", "/allocation_candidates",
          allocation_candidates.list_allocation_candidates,
          "placement:allocation_candidates:list", min_version=V(1, 10)),
    Route("POST", "/reshaper", reshaper.reshape, "placement:reshaper:reshape",
          min_version=V(1, 30), json_body=True),
    # resource classes
    Route("GET", "/resource_classes", resource_class.list_classes,
          "placement:resource_classes:list", min_version=V(1, 2)),
    Route("POST", "/resource_classes", resource_class.create_class,
          "placement:resource_classes:create", min_version=V(1, 2), json_body=True),
    Route("GET", "/resource_classes/{name}", resource_class.show_class,
          "placement:resource_classes:show", min_version=V(1, 2)),
    Route("PUT", "/resource_classes/{name}", resource_class.rename_class,
          "placement:resource_classes:update", min_version=V(1, 2), max_version=V(1, 6),
          json_body=True),
    Route("PUT", "/resource_classes/{name}", resource_class.ensure_class,
          "placement:resource_classes:update", min_version=V(1, 7)),
    Route("DELETE", "/resource_classes/{name}", resource_class.delete_class,
          "placement:resource_classes:delete", min_version=V(1, 2)),
    # traits
    Route("GET", "/traits", trait.list_traits, "placement:traits:list", min_version=V(1, 6)),
    Route("GET", "/traits/{name}", trait.show_trait, "placement:traits:show",
          min_version=V(1, 6)),
    Route("PUT", "/traits/{name}", trait.ensure_trait, "placement:traits:update",
          min_version=V(1, 6)),
    Route("DELETE", "/traits/{name}", trait.delete_trait, "placement:traits:delete",
          min_version=V(1, 6)),
    Route("GET", f"{RP}/traits", trait.list_provider_traits,
          "placement:resource_providers:traits:list", min_version=V(1, 6)),
    Route("PUT", f"{RP}/traits", trait.replace_provider_traits,
          "placement:resource_providers:traits:update", min_version=V(1, 6), json_body=True),
    Route("DELETE", f"{RP}/traits", trait.delete_provider_traits,
          "placement:resource_providers:traits:delete", min_version=V(1, 6)),
)
