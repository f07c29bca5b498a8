"""Fixtures: ``cloud`` (a ``GpuCloud`` on the test database, closed after the test) and
``make_cloud`` (for a scheduler policy other than the default)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, delete

from tests.functional.conductor.cloud import GpuCloud
from vgpucloud.api.app import Mount, make_app
from vgpucloud.api.internal.service import SUMMARY, InternalService
from vgpucloud.conf import Settings
from vgpucloud.scheduler.settings import SchedulerSettings
from vgpucloud.storage import nova_tables as n
from vgpucloud.storage.compute_tables import hosts, tasks
from vgpucloud.storage.placement_store import SqlPlacementStore
from vgpucloud.storage.tasks import SqlHostTaskStore

# Children first, so foreign keys hold after every statement.
_COMPUTE_DATA = (n.instance_action_events, n.instance_actions, n.instances,
                 n.aggregate_metadata, n.aggregate_hosts, n.aggregates,
                 n.flavor_extra_specs, n.flavors, n.images, tasks, hosts)


@pytest.fixture
def compute_engine(db_engine: Engine) -> Engine:
    with db_engine.begin() as connection:
        for table in _COMPUTE_DATA:
            connection.execute(delete(table))
    return db_engine


@pytest.fixture
def api_app(compute_engine: Engine, store: SqlPlacementStore) -> Any:
    settings = Settings(database_url=str(compute_engine.url))
    internal = Mount("/internal/v1", "internal",
                     InternalService(settings, SqlHostTaskStore(compute_engine)), SUMMARY)
    return make_app(settings, store, extra_mounts=[internal])




@pytest.fixture
def make_cloud(tmp_path: Path, compute_engine: Engine,
               api_app: Any) -> Iterator[Callable[..., GpuCloud]]:
    made: list[GpuCloud] = []

    def make(scheduler: SchedulerSettings | None = None) -> GpuCloud:
        cloud = GpuCloud(tmp_path, compute_engine, api_app, scheduler)
        made.append(cloud)
        return cloud

    yield make
    for cloud in made:
        cloud.close()


@pytest.fixture
def cloud(make_cloud: Callable[..., GpuCloud]) -> GpuCloud:
    return make_cloud()
