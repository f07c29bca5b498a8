"""Engines for the three supported backends, configured for a threaded API server.

- SQLite (one machine): WAL so readers never block the writer, foreign keys on, a busy
  timeout, and ``BEGIN IMMEDIATE`` for write transactions so two writers queue on the
  lock instead of one failing with ``SQLITE_BUSY`` when it upgrades a stale read snapshot.
  ``synchronous=NORMAL``, SQLite's recommended setting with WAL: a commit does not wait for
  an fsync (the WAL is synced at checkpoints), so a process crash loses nothing and the
  file is never corrupted, while a power cut or OS crash may roll back the last
  transactions committed before it. ``FULL`` would make every claim wait for the disk.
- PostgreSQL through psycopg 3: ``postgresql://`` is accepted and mapped to
  ``postgresql+psycopg://``.
- MariaDB/MySQL through PyMySQL: ``mysql://`` and ``mariadb://`` are mapped to
  ``mysql+pymysql://``, always with ``charset=utf8mb4``; READ COMMITTED, because every
  write is a generation compare-and-swap and REPEATABLE READ only adds gap locks
  (and deadlocks) to concurrent allocation inserts.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import sqlalchemy
from sqlalchemy import event
from sqlalchemy.engine import URL, Engine, make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.pool import StaticPool

from vgpucloud.errors import ConfigError, DatabaseUnavailable

SQLITE_BUSY_TIMEOUT_MS = 30_000

# driver module -> pip extra that installs it
_DRIVERS = {
    "postgresql": ("psycopg", "postgresql", "postgresql+psycopg"),
    "mysql": ("pymysql", "mysql", "mysql+pymysql"),
}
_ALIASES = {"postgres": "postgresql", "mariadb": "mysql"}

# Execution option that makes the SQLite "begin" hook take the write lock up front.
WRITE_OPTION = "vgpucloud_write"


def masked(url: str | URL) -> str:
    """``url`` with its password replaced by ``***``, safe for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unparsable database URL>"


def normalise_url(url: str) -> URL:
    """The SQLAlchemy URL we actually connect with.

    ``postgresql://vgpucloud@db/vgpucloud`` becomes
    ``postgresql+psycopg://vgpucloud@db/vgpucloud``; ``mysql://root@db/vgpucloud`` becomes
    ``mysql+pymysql://root@db/vgpucloud?charset=utf8mb4``.
    """
    try:
        parsed = make_url(url)
    except ArgumentError as exc:
        raise ConfigError([
            f"[database] connection {url!r}: not a database URL ({exc}); use e.g. "
            "sqlite:////var/lib/vgpucloud/vgpucloud.sqlite or "
            "postgresql://user:password@host/dbname"
        ]) from exc
    backend, _, driver = parsed.drivername.partition("+")
    backend = _ALIASES.get(backend, backend)
    if backend == "sqlite":
        return parsed.set(drivername="sqlite+pysqlite" if not driver else parsed.drivername)
    if backend not in _DRIVERS:
        raise ConfigError([
            f"[database] connection {masked(parsed)}: unsupported backend {backend!r}; "
            "use sqlite://, postgresql:// or mysql://"
        ])
    module, extra, default = _DRIVERS[backend]
    drivername = f"{backend}+{driver}" if driver else default
    if drivername == default and importlib.util.find_spec(module) is None:
        raise ConfigError([
            f"[database] connection {masked(parsed)}: the {backend} driver {module!r} is not "
            f"installed; install it with: pip install 'vgpucloud[{extra}]'"
        ])
    parsed = parsed.set(drivername=drivername)
    if backend == "mysql":
        parsed = parsed.update_query_dict({"charset": "utf8mb4"})
    return parsed


def create_engine(url: str, **options: Any) -> Engine:
    """An engine for ``url`` (any accepted spelling, see ``normalise_url``)."""
    target = normalise_url(url)
    backend = target.get_backend_name()
    if backend == "sqlite":
        return _sqlite_engine(target, **options)
    kwargs: dict[str, Any] = {"pool_pre_ping": True, "future": True}
    if backend == "mysql":
        # MariaDB closes idle connections after wait_timeout (8 h by default).
        kwargs.update(isolation_level="READ COMMITTED", pool_recycle=3600)
    kwargs.update(options)
    return sqlalchemy.create_engine(target, **kwargs)


def _sqlite_engine(target: URL, **options: Any) -> Engine:
    memory = target.database in (None, "", ":memory:")
    kwargs: dict[str, Any] = {
        "connect_args": {"check_same_thread": False, "timeout": SQLITE_BUSY_TIMEOUT_MS / 1000},
    }
    if memory:
        # One shared connection, or every pooled connection would see its own empty DB.
        kwargs["poolclass"] = StaticPool
    kwargs.update(options)
    engine = sqlalchemy.create_engine(target, **kwargs)

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection: Any, _record: Any) -> None:
        # We issue BEGIN ourselves (below); pysqlite's implicit transactions would hide it.
        dbapi_connection.isolation_level = None
        cursor = dbapi_connection.cursor()
        if not memory:
            cursor.execute("PRAGMA journal_mode=WAL")
            cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.execute(f"PRAGMA busy_timeout={SQLITE_BUSY_TIMEOUT_MS}")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(connection: sqlalchemy.Connection) -> None:
        write = connection.get_execution_options().get(WRITE_OPTION, False)
        connection.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    return engine


def unavailable(engine: Engine, exc: BaseException) -> DatabaseUnavailable:
    """The error to raise when ``engine``'s server refused us; names the URL and a fix."""
    return DatabaseUnavailable(
        f"database {masked(engine.url)} is unavailable: {_first_line(exc)}; check that the "
        "server is running and reachable and that [database] connection (or "
        "--database-url) names an existing database and valid credentials"
    )


def _first_line(exc: BaseException) -> str:
    original = getattr(exc, "orig", None) or exc
    text = str(original).strip().splitlines()
    return text[0] if text else type(original).__name__
