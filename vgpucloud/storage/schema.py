"""Create or upgrade the schema and sync the standard catalogues: what ``vgpucloud db sync`` does.

Idempotent: running it on an up-to-date database changes nothing and says so. Standard
resource classes come from ``os_resource_classes.STANDARDS`` (id = position in that list),
standard traits from ``os_traits.get_traits()``; new releases of those libraries only add
names, which the next sync inserts.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator, Sequence
from pathlib import Path

import os_resource_classes
import os_traits
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, insert, select
from sqlalchemy.exc import OperationalError

from vgpucloud.storage import tables as t
from vgpucloud.storage.engine import create_engine, unavailable

MIGRATIONS_DIR = Path(__file__).with_name("migrations")


@dataclasses.dataclass(frozen=True, slots=True)
class SyncReport:
    """What one sync did, for the operator."""

    revision_before: str | None
    revision_after: str
    resource_classes_added: Sequence[str]
    traits_added: Sequence[str]
    standard_resource_classes: int
    standard_traits: int

    def lines(self) -> list[str]:
        if self.revision_before == self.revision_after:
            schema = f"schema: already at revision {self.revision_after}"
        else:
            schema = (f"schema: upgraded from {self.revision_before or 'empty database'} "
                      f"to revision {self.revision_after}")
        return [
            schema,
            f"resource classes: {len(self.resource_classes_added)} added, "
            f"{self.standard_resource_classes} standard in total",
            f"traits: {len(self.traits_added)} added, {self.standard_traits} standard in total",
        ]


def alembic_config(connection: Connection | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS_DIR))
    if connection is not None:
        config.attributes["connection"] = connection
    return config


def head_revision() -> str:
    head = ScriptDirectory.from_config(alembic_config()).get_current_head()
    if head is None:
        raise RuntimeError(f"no migrations found under {MIGRATIONS_DIR}; reinstall vgpucloud")
    return head


def current_revision(url_or_engine: str | Engine) -> str | None:
    """The revision the database is at, or None for a database never synced."""
    with _engine(url_or_engine) as engine:
        try:
            with engine.connect() as connection:
                return MigrationContext.configure(connection).get_current_revision()
        except OperationalError as exc:
            raise unavailable(engine, exc) from exc


def sync(url_or_engine: str | Engine) -> SyncReport:
    """Upgrade the schema to the newest revision and insert missing standard names."""
    with _engine(url_or_engine) as engine:
        before = current_revision(engine)
        try:
            with engine.begin() as connection:
                command.upgrade(alembic_config(connection), "head")
            with engine.begin() as connection:
                classes = _sync_resource_classes(connection)
                traits = _sync_traits(connection)
        except OperationalError as exc:
            raise unavailable(engine, exc) from exc
    return SyncReport(
        revision_before=before,
        revision_after=head_revision(),
        resource_classes_added=classes,
        traits_added=traits,
        standard_resource_classes=len(os_resource_classes.STANDARDS),
        standard_traits=len(standard_traits()),
    )


def standard_traits() -> list[str]:
    return sorted(set(os_traits.get_traits()))


def _sync_resource_classes(connection: Connection) -> list[str]:
    rows = connection.execute(select(t.resource_classes.c.id, t.resource_classes.c.name))
    existing = {name: rc_id for rc_id, name in rows}
    missing = []
    for rc_id, name in enumerate(os_resource_classes.STANDARDS):
        if name in existing:
            if existing[name] != rc_id:
                raise RuntimeError(
                    f"resource class {name} has id {existing[name]} in the database but "
                    f"{rc_id} in os-resource-classes; the database was not created by "
                    "vgpucloud db sync, or os-resource-classes reordered its list"
                )
            continue
        missing.append({"id": rc_id, "name": name})
    if missing:
        connection.execute(insert(t.resource_classes), missing)
    return [row["name"] for row in missing]


def _sync_traits(connection: Connection) -> list[str]:
    existing = set(connection.scalars(select(t.traits.c.name)))
    missing = [name for name in standard_traits() if name not in existing]
    if missing:
        connection.execute(insert(t.traits), [{"name": name} for name in missing])
    return missing


@contextlib.contextmanager
def _engine(url_or_engine: str | Engine) -> Iterator[Engine]:
    """The given engine, or one made for the URL and disposed of afterwards."""
    if not isinstance(url_or_engine, str):
        yield url_or_engine
        return
    engine = create_engine(url_or_engine)
    try:
        yield engine
    finally:
        engine.dispose()
