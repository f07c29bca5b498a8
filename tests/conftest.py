"""Test-wide helpers: which external services exist, and what to do when one is missing.

Tests that need PostgreSQL, MariaDB, libvirt, mdevctl or the ``openstack`` CLI call
``require_service(what, why)`` when the thing is absent: a skip on a developer's laptop,
a failure in CI, where ``.ci/run`` sets ``VGPUCLOUD_REQUIRE_SERVICES=1``.

Database URLs come from ``VGPUCLOUD_TEST_DB_URLS`` (comma-separated SQLAlchemy URLs);
when unset, the local defaults this project's CI machine provides are probed.
"""

from __future__ import annotations

import os

import pytest

DEFAULT_TEST_DB_URLS = {
    "postgresql": "postgresql+psycopg://postgres@127.0.0.1:5432/test",
    "mysql": "mysql+pymysql://root@127.0.0.1:3306/test",
}


def services_required() -> bool:
    return os.environ.get("VGPUCLOUD_REQUIRE_SERVICES", "") not in ("", "0", "false", "no")


def require_service(what: str, why: str) -> None:
    """Skip (or, in CI, fail) the calling test because ``what`` is unavailable."""
    message = f"{what} unavailable: {why}"
    if services_required():
        pytest.fail(f"{message} (VGPUCLOUD_REQUIRE_SERVICES=1 makes this a failure)")
    pytest.skip(message)


def db_url_for(backend: str) -> str:
    """The configured URL for ``backend`` ('postgresql' or 'mysql')."""
    for url in filter(None, os.environ.get("VGPUCLOUD_TEST_DB_URLS", "").split(",")):
        if url.strip().startswith(backend):
            return url.strip()
    return DEFAULT_TEST_DB_URLS[backend]


