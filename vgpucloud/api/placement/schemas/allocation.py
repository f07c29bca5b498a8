"""Bodies of PUT /allocations/{consumer_uuid}, POST /allocations and POST /reshaper.

The body changed shape over microversions::

    1.0   {"allocations": [{"resource_provider": {"uuid": RP}, "resources": {"VGPU": 1}}]}
    1.8   + "project_id", "user_id" (required)
    1.12  {"allocations": {RP: {"resources": {"VGPU": 1}}}, "project_id", "user_id"}
    1.28  + "consumer_generation" (required; null for a new consumer); allocations may be {}
    1.34  + "mappings" (optional, what allocation candidates return; accepted and ignored)
    1.38  + "consumer_type" (required)
"""

from __future__ import annotations

import copy
from typing import Any

from vgpucloud.api.microversion import Version
from vgpucloud.api.placement.schemas.common import (
    CONSUMER_TYPE,
    GENERATION,
    IDENTIFIER,
    POSITIVE_INT,
    RC_PATTERN,
    UUID,
    UUID_PATTERN,
    obj,
)
from vgpucloud.api.placement.schemas.inventory import INVENTORIES

RESOURCES: dict[str, Any] = {
    "type": "object", "minProperties": 1,
    "patternProperties": {RC_PATTERN: POSITIVE_INT}, "additionalProperties": False}

LIST_FORM: dict[str, Any] = {
    "type": "array", "minItems": 1,
    "items": obj({"resource_provider": obj({"uuid": UUID}, ["uuid"]), "resources": RESOURCES},
                 ["resource_provider", "resources"]),
}


def _dict_form(min_providers: int) -> dict[str, Any]:
    return {
        "type": "object", "minProperties": min_providers,
        # "generation" is what GET returns per provider; accepted for symmetry, ignored.
        "patternProperties": {UUID_PATTERN: obj({"generation": GENERATION,
                                                 "resources": RESOURCES}, ["resources"])},
        "additionalProperties": False,
    }


MAPPINGS: dict[str, Any] = {
    "type": "object",
    "additionalProperties": {"type": "array", "minItems": 1, "items": UUID},
}


def consumer_schema(version: Version, *, deletable: bool) -> dict[str, Any]:
    """What one consumer's allocations look like at ``version`` (1.12+ dict form)."""
    properties: dict[str, Any] = {
        "allocations": _dict_form(0 if deletable else 1),
        "project_id": IDENTIFIER, "user_id": IDENTIFIER,
    }
    required = ["allocations", "project_id", "user_id"]
    if version >= (1, 28):
        properties["consumer_generation"] = {"type": ["integer", "null"]}
        required.append("consumer_generation")
    if version >= (1, 34):
        properties["mappings"] = copy.deepcopy(MAPPINGS)
    if version >= (1, 38):
        properties["consumer_type"] = CONSUMER_TYPE
        required.append("consumer_type")
    return obj(properties, required)


def put_schema(version: Version) -> dict[str, Any]:
    """PUT /allocations/{consumer_uuid} at ``version``."""
    if version < (1, 8):
        return obj({"allocations": LIST_FORM}, ["allocations"])
    if version < (1, 12):
        return obj({"allocations": LIST_FORM, "project_id": IDENTIFIER,
                    "user_id": IDENTIFIER}, ["allocations", "project_id", "user_id"])
    return consumer_schema(version, deletable=version >= (1, 28))


def post_schema(version: Version) -> dict[str, Any]:
    """POST /allocations (1.13+): consumer uuid -> that consumer's allocations."""
    return {"type": "object", "minProperties": 1,
            "patternProperties": {UUID_PATTERN: consumer_schema(version, deletable=True)},
            "additionalProperties": False}


def reshaper_schema(version: Version) -> dict[str, Any]:
    """POST /reshaper (1.30+)."""
    provider_inventories = obj({"resource_provider_generation": GENERATION,
                                "inventories": INVENTORIES},
                               ["resource_provider_generation", "inventories"])
    return obj({
        "inventories": {"type": "object",
                        "patternProperties": {UUID_PATTERN: provider_inventories},
                        "additionalProperties": False},
        "allocations": post_schema(version) | {"minProperties": 0},
    }, ["inventories", "allocations"])
