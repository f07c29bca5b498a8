"""Bodies of POST /resource_providers and PUT /resource_providers/{uuid}."""

from __future__ import annotations

from typing import Any

from vgpucloud.api.placement.schemas.common import NULLABLE_UUID, UUID, obj

NAME: dict[str, Any] = {"type": "string", "minLength": 1, "maxLength": 200}

POST_V1_0 = obj({"name": NAME, "uuid": UUID}, ["name"])
POST_V1_14 = obj({"name": NAME, "uuid": UUID, "parent_provider_uuid": NULLABLE_UUID}, ["name"])
PUT_V1_0 = obj({"name": NAME}, ["name"])
PUT_V1_14 = obj({"name": NAME, "parent_provider_uuid": NULLABLE_UUID}, ["name"])
