"""Bodies of PUT /resource_providers/{uuid}/aggregates: a bare list before 1.19."""

from __future__ import annotations

from typing import Any

from vgpucloud.api.placement.schemas.common import GENERATION, UUID, obj

AGGREGATE_LIST: dict[str, Any] = {"type": "array", "uniqueItems": True, "items": UUID}

PUT_V1_1 = AGGREGATE_LIST
PUT_V1_19 = obj({"aggregates": AGGREGATE_LIST, "resource_provider_generation": GENERATION},
                ["aggregates", "resource_provider_generation"])
