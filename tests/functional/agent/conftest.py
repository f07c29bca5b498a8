"""A whole cloud in one process for agent tests: the API (Placement + internal) over a real
database, and clients that reach it through ``httpx.WSGITransport``.

Fixtures: ``api_app`` (the WSGI app), ``placement`` (PlacementClient), ``internal``
(InternalClient). The compute tables are emptied before each test, since server databases
are shared by a whole session.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, delete

from tests.conftest import require_service
from tests.functional.agent.cloud import M60_TWO_TYPES, Cloud
from vgpucloud.api.app import internal_mount, make_app
from vgpucloud.client.internal import InternalClient
from vgpucloud.client.placement import PlacementClient
from vgpucloud.conf import Settings
from vgpucloud.sim import SimHost
from vgpucloud.storage.compute_tables import hosts, tasks
from vgpucloud.storage.placement_store import SqlPlacementStore
from vgpucloud.storage.tasks import SqlHostTaskStore


@pytest.fixture
def compute_engine(db_engine: Engine) -> Engine:
    with db_engine.begin() as connection:
        connection.execute(delete(tasks))
        connection.execute(delete(hosts))
    return db_engine


@pytest.fixture
def api_app(compute_engine: Engine, store: SqlPlacementStore) -> Any:
    settings = Settings(database_url=str(compute_engine.url))
    return make_app(settings, store, [internal_mount(settings, SqlHostTaskStore(compute_engine))])


@pytest.fixture
def placement(api_app: Any) -> Iterator[PlacementClient]:
    client = PlacementClient("http://cloud/placement",
                             transport=httpx.WSGITransport(app=api_app))
    yield client
    client.close()


@pytest.fixture
def internal(api_app: Any) -> Iterator[InternalClient]:
    client = InternalClient("http://cloud/internal/v1",
                            transport=httpx.WSGITransport(app=api_app))
    yield client
    client.close()


@pytest.fixture(params=["fake", pytest.param("libvirt", marks=pytest.mark.libvirt)])
def virt(request: pytest.FixtureRequest) -> str:
    if request.param == "libvirt":
        try:
            import libvirt  # type: ignore[import-untyped, unused-ignore]  # noqa: F401
        except ImportError:
            require_service("libvirt-python", "pip install libvirt-python")
    return str(request.param)


@pytest.fixture
def m60(tmp_path: Path, virt: str, placement: PlacementClient,
        internal: InternalClient) -> Iterator[Cloud]:
    """The seed host: four M60 pGPUs, 84/85 on nvidia-35, 86 on nvidia-36, 87 unconfigured."""
    host = SimHost.create(tmp_path / "root", "m60", gpus=4)
    cloud = Cloud(tmp_path, host, M60_TWO_TYPES, virt, placement, internal)
    yield cloud
    for agent in cloud.agents:
        agent.close()
