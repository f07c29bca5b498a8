"""The Compute microversions served, and Nova's version documents.

Clients (openstacksdk, novaclient) read ``version``/``min_version`` of the v2.1 document to
pick a microversion: each resource then asks for the highest it knows up to ours
(flavors 2.61, servers 2.100, aggregates 2.81, hypervisors 2.88, services 2.69,
instance actions 2.84 with openstacksdk 4.x).
"""

from __future__ import annotations

from typing import Any

from vgpucloud.api.microversion import Version

SERVICE_TYPE = "compute"
LEGACY_HEADER = "X-OpenStack-Nova-API-Version"
MIN_VERSION = Version(2, 1)
MAX_VERSION = Version(2, 100)
UPDATED = "2013-07-23T11:33:21Z"
MEDIA_TYPES = [{"base": "application/json",
                "type": "application/vnd.openstack.compute+json;version=2.1"}]


def v21_document(href: str) -> dict[str, Any]:
    """The ``version`` entry of ``GET /compute/v2.1/``; ``href`` ends with ``/v2.1/``."""
    return {"id": "v2.1", "status": "CURRENT", "version": str(MAX_VERSION),
            "min_version": str(MIN_VERSION), "updated": UPDATED,
            "links": [{"rel": "self", "href": href},
                      {"rel": "describedby", "type": "text/html",
                       "href": "https://docs.openstack.org/"}],
            "media-types": MEDIA_TYPES}


def versions_document(base: str) -> dict[str, Any]:
    """``GET /compute/``: every version, with links under ``base`` (``…/compute``)."""
    return {"versions": [{**v21_document(f"{base}/v2.1/"), "media-types": MEDIA_TYPES}]}
