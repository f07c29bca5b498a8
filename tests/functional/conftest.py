"""Shared database fixtures for functional tests: a fresh, migrated, empty database per test.

Fixtures (use them by naming them as test arguments):

``database_url``
    Parametrized over the three backends with ids ``sqlite``, ``postgresql`` and ``mysql``,
    so every test using it runs three times (select one with ``-k sqlite``). Yields the
    SQLAlchemy URL (a ``str``) of a database that ``vgpucloud db sync`` has migrated, holding
    the standard resource classes and traits and nothing else. Hand it to anything that takes
    a URL (``vgpucloud.storage.engine.create_engine``, the API app factory, the CLI's
    ``--database-url``).

    - sqlite: a copy of a once-per-session migrated template file in ``tmp_path``.
    - postgresql / mysql: one uniquely named database per test session on the server of
      ``tests.conftest.db_url_for`` (so parallel sessions never share data), migrated once;
      user data (providers, consumers, custom classes and traits, ...) is deleted before
      each test. The database is dropped at the end of the session.
    - When the server is unreachable the test calls ``require_service`` (a skip locally, a
      failure in CI).

``db_engine``
    A ``sqlalchemy.Engine`` on ``database_url`` (session-cached per URL; do not dispose it).

``store``
    A ``vgpucloud.storage.placement_store.SqlPlacementStore`` on ``db_engine``: the
    ``vgpucloud.placement.ports.PlacementStore`` the API wires its Placement handlers to.

Example::

    def test_t4_host_reports_vgpu(store):
        root = store.create_provider("compute1")
        store.set_inventory(root.uuid, 0, Inventory("VGPU", total=16))
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine, delete, insert, select, text, update
from sqlalchemy.engine import make_url

from tests.conftest import db_url_for, require_service
from vgpucloud.storage import compute_tables, nova_tables, schema
from vgpucloud.storage import tables as t
from vgpucloud.storage.engine import create_engine, masked
from vgpucloud.storage.nova_tables import COMPUTE_USER_TABLES
from vgpucloud.storage.placement_store import SqlPlacementStore

BACKENDS = ("sqlite", "postgresql", "mysql")

# Children before parents, so foreign keys hold after every statement.
_USER_DATA = (
    t.allocations, t.consumers, t.consumer_types, t.projects, t.users,
    t.resource_provider_traits, t.resource_provider_aggregates, t.placement_aggregates,
    t.inventories,
)


class _ServerDatabases:
    """One migrated database per server backend for this session, created on first use."""

    def __init__(self, tmp_dir: Path) -> None:
        self.tmp_dir = tmp_dir
        self.urls: dict[str, str] = {}
        self.failures: dict[str, str] = {}
        self.engines: dict[str, Engine] = {}
        # The image rows the migrations seed (the guide's cirros images), per database URL,
        # put back before every test in case an earlier one deleted them.
        self.seeded_images: dict[str, list[dict[str, object]]] = {}
        self._created: list[tuple[str, str]] = []  # (server url, database name)

    def url(self, backend: str) -> str:
        if backend not in self.urls and backend not in self.failures:
            try:
                self.urls[backend] = self._create(backend)
            except Exception as exc:
                self.failures[backend] = f"{type(exc).__name__}: {exc}"
        if backend in self.failures:
            require_service(backend, self.failures[backend])
        return self.urls[backend]

    def engine(self, url: str) -> Engine:
        if url not in self.engines:
            self.engines[url] = create_engine(url)
        return self.engines[url]

    def _create(self, backend: str) -> str:
        if backend == "sqlite":
            template = self.tmp_dir / "template.sqlite"
            url = f"sqlite:///{template}"
            schema.sync(url)
            return url
        server_url = db_url_for(backend)
        name = f"vgpucloud_test_{os.getpid()}_{secrets.token_hex(3)}"
        create = f"CREATE DATABASE {name}"
        if backend == "mysql":
            create += " CHARACTER SET utf8mb4"
        admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as connection:
                connection.execute(text(create))
        finally:
            admin.dispose()
        self._created.append((server_url, name))
        url = make_url(server_url).set(database=name).render_as_string(hide_password=False)
        schema.sync(url)
        with self.engine(url).connect() as connection:
            rows = connection.execute(select(nova_tables.images)).mappings()
            self.seeded_images[url] = [dict(row) for row in rows]
        return url

    def drop_all(self) -> None:
        for engine in self.engines.values():
            engine.dispose()
        for server_url, name in self._created:
            admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
            try:
                with admin.connect() as connection:
                    connection.execute(text(f"DROP DATABASE IF EXISTS {name}"))
            except Exception as exc:  # leave it; the next run uses a new name anyway
                print(f"could not drop test database {name} on {masked(server_url)}: {exc}")
            finally:
                admin.dispose()


def delete_user_data(engine: Engine, seeded_images: list[dict[str, object]]) -> None:
    """Empty every table except the standard catalogues; images go back to the seeded ones."""
    with engine.begin() as connection:
        for table in (*COMPUTE_USER_TABLES, compute_tables.tasks, compute_tables.hosts,
                      nova_tables.images):
            connection.execute(delete(table))
        if seeded_images:
            connection.execute(insert(nova_tables.images), seeded_images)
        for table in _USER_DATA:
            connection.execute(delete(table))
        # MariaDB checks self-referencing foreign keys row by row: unlink the forest first.
        connection.execute(
            update(t.resource_providers).values(parent_provider_id=None, root_provider_id=None)
        )
        connection.execute(delete(t.resource_providers))
        connection.execute(
            delete(t.resource_classes).where(
                t.resource_classes.c.id >= t.FIRST_CUSTOM_RESOURCE_CLASS_ID
            )
        )
        connection.execute(delete(t.traits).where(t.traits.c.name.like("CUSTOM\\_%", escape="\\")))


@pytest.fixture(scope="session")
def _server_databases(tmp_path_factory: pytest.TempPathFactory) -> Iterator[_ServerDatabases]:
    databases = _ServerDatabases(tmp_path_factory.mktemp("databases"))
    yield databases
    databases.drop_all()


@pytest.fixture(params=BACKENDS, ids=BACKENDS)
def database_url(
    request: pytest.FixtureRequest, _server_databases: _ServerDatabases, tmp_path: Path
) -> str:
    backend: str = request.param
    url = _server_databases.url(backend)
    if backend == "sqlite":
        template = Path(make_url(url).database or "")
        copy = tmp_path / "vgpucloud.sqlite"
        shutil.copyfile(template, copy)
        return f"sqlite:///{copy}"
    delete_user_data(_server_databases.engine(url), _server_databases.seeded_images[url])
    return url


@pytest.fixture
def db_engine(database_url: str, _server_databases: _ServerDatabases) -> Iterator[Engine]:
    if database_url.startswith("sqlite"):
        engine = create_engine(database_url)
        yield engine
        engine.dispose()
    else:
        yield _server_databases.engine(database_url)


@pytest.fixture
def store(db_engine: Engine) -> SqlPlacementStore:
    return SqlPlacementStore(db_engine)
