"""Bodies of POST /resource_classes and the pre-1.7 rename PUT."""

from __future__ import annotations

from vgpucloud.api.placement.schemas.common import CUSTOM_PATTERN, NAME_MAX, obj

NAME = {"type": "string", "pattern": CUSTOM_PATTERN, "maxLength": NAME_MAX}

POST_V1_2 = obj({"name": NAME}, ["name"])
PUT_V1_2 = obj({"name": NAME}, ["name"])
