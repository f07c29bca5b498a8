"""Transactions for the store: one per port method, with database errors translated.

A lost compare-and-swap surfaces as ``ConcurrentUpdate`` no matter how the backend
reported it: an ``UPDATE ... WHERE generation = :expected`` touching no row, a deadlock
(PostgreSQL 40P01, MariaDB 1213), a serialization failure (40001), a lock wait timeout
(MariaDB 1205), SQLite still locked after its busy timeout, or a unique/foreign key
violation caused by a concurrent writer. All are safe to retry with fresh state.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import DBAPIError, IntegrityError, OperationalError

from vgpucloud.errors import ConcurrentUpdate
from vgpucloud.storage.engine import WRITE_OPTION, unavailable

_RETRYABLE_SQLSTATES = {"40001", "40P01"}
_RETRYABLE_MYSQL_CODES = {1205, 1213}
RACE = "the data changed while it was being written; re-read it and retry"


def _retryable(exc: DBAPIError) -> bool:
    original = exc.orig
    if getattr(original, "sqlstate", None) in _RETRYABLE_SQLSTATES:
        return True
    args = getattr(original, "args", ())
    if args and args[0] in _RETRYABLE_MYSQL_CODES:
        return True
    return "database is locked" in str(original)


@contextlib.contextmanager
def transaction(engine: Engine, *, write: bool) -> Iterator[Connection]:
    """A connection inside one transaction, committed when the block ends without error."""
    try:
        with engine.connect() as connection:
            connection.execution_options(**{WRITE_OPTION: write})
            with connection.begin():
                yield connection
    except IntegrityError as exc:
        raise ConcurrentUpdate(f"{RACE} ({_first_line(exc)})") from exc
    except DBAPIError as exc:
        if _retryable(exc):
            raise ConcurrentUpdate(f"{RACE} ({_first_line(exc)})") from exc
        if isinstance(exc, OperationalError) or exc.connection_invalidated:
            raise unavailable(engine, exc) from exc
        raise


def _first_line(exc: DBAPIError) -> str:
    text = str(exc.orig).strip().splitlines()
    return text[0] if text else type(exc.orig).__name__
