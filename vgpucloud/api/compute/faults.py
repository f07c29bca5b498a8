"""Errors in Nova's shape: one key named after the status, holding code and message::

    {"itemNotFound": {"code": 404, "message": "Flavor vgpu_9 could not be found."}}
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import webob

FAULT_NAMES = {
    400: "badRequest", 401: "unauthorized", 403: "forbidden", 404: "itemNotFound",
    405: "badMethod", 406: "notAcceptable", 409: "conflictingRequest", 413: "overLimit",
    415: "badMediaType", 429: "overLimit", 501: "notImplemented", 503: "serviceUnavailable",
}
DEFAULT_NAME = "computeFault"


def fault_body(status: int, message: str) -> dict[str, dict[str, object]]:
    return {FAULT_NAMES.get(status, DEFAULT_NAME): {"code": status, "message": message}}


def fault_response(status: int, message: str,
                   headers: Mapping[str, str] | None = None) -> webob.Response:
    response = webob.Response(status=status, body=json.dumps(fault_body(status, message)).encode(),
                              content_type="application/json", charset=None)
    for name, value in (headers or {}).items():
        response.headers[name] = value
    return response
