"""Building blocks shared by the Placement schemas."""

from __future__ import annotations

from typing import Any

from vgpucloud.placement.models import MAX_FLOAT, MAX_INT

UUID_PATTERN = (
    r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")
RC_PATTERN = r"^[A-Z0-9_]+$"
CUSTOM_PATTERN = r"^CUSTOM_[A-Z0-9_]+$"
NAME_MAX = 255

UUID: dict[str, Any] = {"type": "string", "format": "uuid"}
NULLABLE_UUID: dict[str, Any] = {"anyOf": [UUID, {"type": "null"}]}
GENERATION: dict[str, Any] = {"type": "integer"}
POSITIVE_INT: dict[str, Any] = {"type": "integer", "minimum": 1, "maximum": MAX_INT}
NON_NEGATIVE_INT: dict[str, Any] = {"type": "integer", "minimum": 0, "maximum": MAX_INT}
RATIO: dict[str, Any] = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_FLOAT}
IDENTIFIER: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": NAME_MAX}
CONSUMER_TYPE: dict[str, Any] = {
    "type": "string", "pattern": RC_PATTERN, "minLength": 1, "maxLength": NAME_MAX}


def obj(
    properties: dict[str, Any], required: list[str] | None = None, **extra: Any
) -> dict[str, Any]:
    """A closed JSON object schema (``additionalProperties: false``)."""
    return {"type": "object", "properties": properties, "required": required or [],
            "additionalProperties": False, **extra}
