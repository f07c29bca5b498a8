"""The Placement microversions this service speaks, and what each one changed.

Kept as data so ``GET /placement/`` and the negotiation agree, and so a reader can see at a
glance which behaviour belongs to which version.
"""

from __future__ import annotations

from vgpucloud.api.microversion import Version

SERVICE_TYPE = "placement"

CHANGES: dict[int, str] = {
    0: "initial API",
    1: "provider aggregates",
    2: "custom resource classes",
    3: "member_of filter on GET /resource_providers",
    4: "resources filter on GET /resource_providers",
    5: "DELETE all inventories of a provider",
    6: "traits",
    7: "PUT /resource_classes/{name} creates (idempotent) instead of renaming",
    8: "project_id and user_id required in PUT /allocations",
    9: "GET /usages by project and user",
    10: "allocation candidates",
    11: "allocations link on providers",
    12: "dict form of PUT /allocations",
    13: "POST /allocations for several consumers",
    14: "nested providers: parent_provider_uuid, root_provider_uuid, in_tree",
    15: "last-modified and cache-control headers",
    16: "limit on allocation candidates",
    17: "traits in allocation candidates' provider summaries",
    18: "required traits filter on GET /resource_providers",
    19: "aggregates body carries the provider generation",
    20: "POST /resource_providers returns the provider",
    21: "member_of on allocation candidates",
    22: "forbidden traits (!TRAIT)",
    23: "error codes in error responses",
    24: "member_of may repeat",
    25: "granular resource requests",
    26: "reserved may equal total",
    27: "all resources in provider summaries",
    28: "consumer generations",
    29: "nested providers in allocation candidates",
    30: "POST /reshaper",
    31: "in_tree on allocation candidates",
    32: "forbidden aggregates (!member_of)",
    33: "any suffix on request groups",
    34: "mappings in allocation candidates",
    35: "root_required on allocation candidates",
    36: "same_subtree on allocation candidates",
    37: "re-parenting providers",
    38: "consumer types",
    39: "in: syntax for required traits",
}

MIN_VERSION = Version(1, min(CHANGES))
MAX_VERSION = Version(1, max(CHANGES))
