"""JSON schemas of Compute API request bodies (strict, as Nova's: unknown keys are a 400).

Example accepted by ``flavor_create``::

    {"flavor": {"name": "vgpu_1", "ram": 512, "vcpus": 1, "disk": 1, "id": null}}
"""

from __future__ import annotations

from typing import Any

from vgpucloud.api.microversion import Version

NAME = {"type": "string", "minLength": 1, "maxLength": 255,
        "pattern": r"^(?! )[^\x00-\x1f]*(?<! )$"}
# Nova accepts integers or their decimal text for flavor sizes.
NON_NEGATIVE = {"oneOf": [{"type": "integer", "minimum": 0},
                          {"type": "string", "pattern": r"^[0-9]+$"}]}
POSITIVE = {"oneOf": [{"type": "integer", "minimum": 1},
                      {"type": "string", "pattern": r"^0*[1-9][0-9]*$"}]}
FLAVOR_ID = {"oneOf": [{"type": "string", "minLength": 1, "maxLength": 255,
                        "pattern": r"^(?! )[a-zA-Z0-9. _-]+(?<! )$"},
                       {"type": "integer"}, {"type": "null"}]}
DESCRIPTION = {"type": ["string", "null"], "maxLength": 65535}
METADATA = {"type": "object", "maxProperties": 128,
            "patternProperties": {r"^[^\x00-\x1f]{1,255}$": {"type": "string",
                                                             "maxLength": 255}},
            "additionalProperties": False}


def flavor_create(version: Version) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "name": NAME, "id": FLAVOR_ID, "ram": POSITIVE, "vcpus": POSITIVE,
        "disk": NON_NEGATIVE, "OS-FLV-EXT-DATA:ephemeral": NON_NEGATIVE,
        "swap": {"oneOf": [NON_NEGATIVE, {"type": "string", "maxLength": 0}]},
        "rxtx_factor": {"type": ["number", "string"]},
        "os-flavor-access:is_public": {"type": "boolean"},
    }
    if version >= (2, 55):
        properties["description"] = DESCRIPTION
    return _wrapped("flavor", properties, ["name", "ram", "vcpus", "disk"])


FLAVOR_UPDATE = {
    "type": "object", "required": ["flavor"], "additionalProperties": False,
    "properties": {"flavor": {"type": "object", "required": ["description"],
                              "additionalProperties": False,
                              "properties": {"description": DESCRIPTION}}},
}

_SPEC_KEY = r"^[a-zA-Z0-9-_:. /]{1,255}$"
_SPEC_VALUE = {"type": ["string", "number", "boolean"], "maxLength": 255}
EXTRA_SPECS = {
    "type": "object", "required": ["extra_specs"], "additionalProperties": False,
    "properties": {"extra_specs": {"type": "object",
                                   "patternProperties": {_SPEC_KEY: _SPEC_VALUE},
                                   "additionalProperties": False}},
}
EXTRA_SPECS_ITEM = {"type": "object", "minProperties": 1, "maxProperties": 1,
                    "patternProperties": {_SPEC_KEY: _SPEC_VALUE},
                    "additionalProperties": False}

_BDM = {"type": "object", "additionalProperties": True, "properties": {
    "boot_index": {"type": ["integer", "string", "null"]},
    "uuid": {"type": "string"},
    "source_type": {"enum": ["image", "volume", "snapshot", "blank"]},
    "destination_type": {"enum": ["local", "volume"]},
    "volume_size": {"type": ["integer", "string", "null"]},
    "delete_on_termination": {"type": ["boolean", "string"]},
}}
_NETWORKS = {"oneOf": [{"enum": ["auto", "none"]},
                       {"type": "array", "items": {"type": "object"}}]}
_COUNT = {"type": ["integer", "string"], "pattern": r"^[0-9]+$", "minimum": 1}

SERVER_CREATE = {
    "type": "object", "required": ["server"],
    "properties": {
        "server": {
            "type": "object", "required": ["name", "flavorRef"],
            "properties": {
                "name": NAME, "flavorRef": {"type": ["string", "integer"], "minLength": 1},
                "imageRef": {"type": "string"}, "networks": _NETWORKS,
                "min_count": _COUNT, "max_count": _COUNT,
                "return_reservation_id": {"type": ["boolean", "string"]},
                "block_device_mapping_v2": {"type": "array", "items": _BDM},
                "metadata": METADATA, "description": DESCRIPTION,
                "availability_zone": {"type": "string"},
                "key_name": {"type": ["string", "null"]},
                "security_groups": {"type": "array"},
                "config_drive": {"type": ["boolean", "string"]},
                "user_data": {"type": "string"}, "adminPass": {"type": "string"},
                "OS-DCF:diskConfig": {"enum": ["AUTO", "MANUAL"]},
                "hostname": {"type": "string"}, "tags": {"type": "array"},
            },
            "additionalProperties": False,
        },
        "os:scheduler_hints": {"type": "object"},
        "OS-SCH-HNT:scheduler_hints": {"type": "object"},
    },
    "additionalProperties": False,
}

AZ = {"type": ["string", "null"], "minLength": 1, "maxLength": 255}
AGGREGATE_CREATE = {
    "type": "object", "required": ["aggregate"], "additionalProperties": False,
    "properties": {"aggregate": {"type": "object", "required": ["name"],
                                 "additionalProperties": False,
                                 "properties": {"name": NAME, "availability_zone": AZ}}},
}
AGGREGATE_UPDATE = {
    "type": "object", "required": ["aggregate"], "additionalProperties": False,
    "properties": {"aggregate": {"type": "object", "minProperties": 1,
                                 "additionalProperties": False,
                                 "properties": {"name": NAME, "availability_zone": AZ}}},
}
_HOST = {"type": "object", "required": ["host"], "additionalProperties": False,
         "properties": {"host": {"type": "string", "minLength": 1, "maxLength": 255}}}
AGGREGATE_ACTION = {
    "type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": False,
    "properties": {
        "add_host": _HOST, "remove_host": _HOST,
        "set_metadata": {"type": "object", "required": ["metadata"],
                         "additionalProperties": False,
                         "properties": {"metadata": {
                             "type": "object",
                             "patternProperties": {r"^[^\x00-\x1f]{1,255}$": {
                                 "type": ["string", "null"], "maxLength": 255}},
                             "additionalProperties": False}}},
    },
}


def _wrapped(key: str, properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "required": [key], "additionalProperties": False,
            "properties": {key: {"type": "object", "required": required,
                                 "properties": properties, "additionalProperties": False}}}
