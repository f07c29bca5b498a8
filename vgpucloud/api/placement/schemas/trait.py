"""Body of PUT /resource_providers/{uuid}/traits."""

from __future__ import annotations

from vgpucloud.api.placement.schemas.common import GENERATION, NAME_MAX, RC_PATTERN, obj

PUT_PROVIDER_TRAITS = obj({
    "traits": {"type": "array", "uniqueItems": True,
               "items": {"type": "string", "pattern": RC_PATTERN, "maxLength": NAME_MAX}},
    "resource_provider_generation": GENERATION,
}, ["traits", "resource_provider_generation"])
