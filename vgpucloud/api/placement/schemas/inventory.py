"""Bodies of the inventory endpoints. Range checks that involve two fields (reserved vs
total, min_unit vs max_unit) live in the handler, which names both values."""

from __future__ import annotations

import copy
from typing import Any

from vgpucloud.api.placement.schemas.common import (
    GENERATION,
    NON_NEGATIVE_INT,
    POSITIVE_INT,
    RATIO,
    RC_PATTERN,
    obj,
)

RECORD_FIELDS: dict[str, Any] = {
    "total": POSITIVE_INT,
    "reserved": NON_NEGATIVE_INT,
    "min_unit": POSITIVE_INT,
    "max_unit": POSITIVE_INT,
    "step_size": POSITIVE_INT,
    "allocation_ratio": RATIO,
}

# One record inside PUT .../inventories (the generation is at the top level there).
RECORD = obj(copy.deepcopy(RECORD_FIELDS), ["total"])

# PUT /resource_providers/{uuid}/inventories/{resource_class}
PUT_ONE = obj({**copy.deepcopy(RECORD_FIELDS), "resource_provider_generation": GENERATION},
              ["total", "resource_provider_generation"])

# POST /resource_providers/{uuid}/inventories
POST_ONE = obj({**copy.deepcopy(RECORD_FIELDS), "resource_provider_generation": GENERATION,
                "resource_class": {"type": "string", "pattern": RC_PATTERN}},
               ["total", "resource_provider_generation", "resource_class"])

INVENTORIES: dict[str, Any] = {
    "type": "object", "patternProperties": {RC_PATTERN: RECORD}, "additionalProperties": False}

# PUT /resource_providers/{uuid}/inventories
PUT_ALL = obj({"resource_provider_generation": GENERATION, "inventories": INVENTORIES},
              ["resource_provider_generation", "inventories"])
