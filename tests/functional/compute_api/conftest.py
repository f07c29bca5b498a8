"""Fixtures for the Compute API tests.

``compute_store``
    ``vgpucloud.storage.compute_store.SqlComputeStore`` on ``db_engine`` (the shared
    ``database_url`` fixture already starts every test with no compute user data; the
    seeded cirros images stay).
"""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from vgpucloud.storage.compute_store import SqlComputeStore


@pytest.fixture
def compute_store(db_engine: Engine) -> SqlComputeStore:
    return SqlComputeStore(db_engine)
