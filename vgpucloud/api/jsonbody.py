"""JSON request bodies: media type, parsing and jsonschema validation.

OpenStack's rules, which clients rely on: a body-carrying request whose
``Content-Type`` is not ``application/json`` is a 415; a body that is not JSON is a 400
"Malformed JSON"; one that breaks the schema is a 400 "JSON does not validate". Schemas are
strict (``additionalProperties: false``) so typos fail instead of being ignored.
"""

from __future__ import annotations

import functools
import json
import re
from typing import Any

import jsonschema
import webob

from vgpucloud.api import faults

JSON_TYPE = "application/json"

# Placement accepts UUIDs with or without dashes, in any case (oslo's is_uuid_like).
_UUID = re.compile(
    r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$")

FORMAT_CHECKER = jsonschema.FormatChecker(formats=())


@FORMAT_CHECKER.checks("uuid")
def is_uuid_like(value: object) -> bool:
    """``"0b9b2a38-7a0d-4f4f-8f7e-3a1e6e6e1b2c"`` (dashes optional)."""
    return not isinstance(value, str) or bool(_UUID.match(value))


def require_json(request: webob.Request) -> None:
    if request.content_type != JSON_TYPE:
        raise faults.unsupported_media_type(request.content_type or None, JSON_TYPE)


def parse(request: webob.Request, schema: dict[str, Any]) -> Any:
    """The request's JSON body, validated against ``schema``.

    ``{"name": "cn1", "uuid": "0b9b2a38-7a0d-4f4f-8f7e-3a1e6e6e1b2c"}`` passes the
    provider-create schema; ``{"name": "cn1", "extra": 1}`` does not.
    """
    try:
        data = json.loads(request.body or b"")
    except ValueError as exc:
        raise faults.bad_request(f"Malformed JSON: {exc}") from exc
    validate(data, schema)
    return data


def validate(data: Any, schema: dict[str, Any]) -> None:
    # What jsonschema.validate does, minus re-checking the schema against its metaschema
    # on every request (most of a claim's time): validators are built once per schema.
    validator = _validator(json.dumps(schema, sort_keys=True))
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path)
        place = f" at '{where}'" if where else ""
        raise faults.bad_request(f"JSON does not validate: {error.message}{place}")


@functools.lru_cache(maxsize=1024)
def _validator(schema_text: str) -> Any:
    """A checked validator for one schema (keyed by its canonical text: handlers build
    version-dependent schemas per request, equal in content)."""
    schema = json.loads(schema_text)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=FORMAT_CHECKER)
