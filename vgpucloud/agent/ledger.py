"""The mdev ledger: the durable truth about every mdev the agent uses (DESIGN rules 1 and 2).

One SQLite file in the agent's state dir (``<state_path>/mdev-ledger.sqlite``), WAL mode,
``synchronous=FULL``, every operation one transaction. A row is written *before* the mdev is
created or attached, in the same transaction as the pick: ``reserve`` opens with
``BEGIN IMMEDIATE``, so two processes (or two threads) can never pick the same free mdev.

Row states::

    reserved      picked for an instance; ``pending_create`` while the mdev does not exist yet
    attached      in the instance's domain
    free          ours, existing, owned by nobody: the next reserve of that type reuses it
    migrating-in  claimed on this host for an incoming live migration

Crash between ``reserve`` and the sysfs ``create``: the row stays ``reserved`` with
``pending_create``; the redelivered task calls ``reserve`` again, gets the same UUID back and
``materialize`` creates it (or adopts it if the create did happen). Host reboot: every mdev
vanishes; ``plan_recovery`` lists owned rows to recreate with their UUIDs (the domain XML
names them), free rows to forget, and foreign mdevs to report but never touch.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import os
import sqlite3
import threading
import uuid as uuidlib
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from vgpucloud.agent.mdev import Mdev, Sysfs
from vgpucloud.errors import MdevClaimConflict, MdevExists, MdevNotFound

LEDGER_FILE = "mdev-ledger.sqlite"
STATES = ("reserved", "attached", "free", "migrating-in")
OWNED_STATES = ("reserved", "attached", "migrating-in")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS mdevs (
    uuid            TEXT PRIMARY KEY,
    parent          TEXT NOT NULL,
    type_id         TEXT NOT NULL,
    state           TEXT NOT NULL
                    CHECK (state IN ('reserved', 'attached', 'free', 'migrating-in')),
    owner           TEXT,
    provider        TEXT,
    created_by_us   INTEGER NOT NULL,
    pending_create  INTEGER NOT NULL DEFAULT 0,
    created_at      TEXT NOT NULL,
    updated_at      TEXT NOT NULL,
    CHECK ((state = 'free') = (owner IS NULL))
);
CREATE INDEX IF NOT EXISTS mdevs_pick ON mdevs (parent, type_id, state);
CREATE INDEX IF NOT EXISTS mdevs_owner ON mdevs (owner);
"""
_COLUMNS = ("uuid, parent, type_id, state, owner, provider, created_by_us, pending_create, "
            "created_at, updated_at")


@dataclasses.dataclass(frozen=True, slots=True)
class LedgerEntry:
    uuid: str
    parent: str
    type_id: str
    state: str
    owner: str | None
    provider: str | None
    created_by_us: bool
    pending_create: bool
    created_at: str
    updated_at: str


@dataclasses.dataclass(frozen=True, slots=True)
class Recovery:
    """What to do after a restart or a host reboot, from the ledger and what sysfs shows."""

    recreate: tuple[LedgerEntry, ...]  # owned rows whose mdev is missing: create same UUID
    forget: tuple[LedgerEntry, ...]    # free rows whose mdev is missing: drop the row
    foreign: tuple[Mdev, ...]          # mdevs nobody recorded: report, never remove


def _now() -> str:
    return datetime.datetime.now(datetime.UTC).isoformat(timespec="microseconds")


class Ledger:
    """The ledger file at ``path`` (created on first use)."""

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # isolation_level=None: we issue BEGIN ourselves, so each operation is exactly one
        # transaction and reserve can take the write lock up front.
        self._conn = sqlite3.connect(self.path, isolation_level=None, timeout=30.0,
                                     check_same_thread=False)
        self._lock = threading.Lock()
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        with self._lock:
            self._conn.executescript(_SCHEMA)

    @classmethod
    def in_state_dir(cls, state_path: str | os.PathLike[str]) -> Ledger:
        return cls(Path(state_path) / LEDGER_FILE)

    def close(self) -> None:
        self._conn.close()

    # --- operations ------------------------------------------------------------

    def reserve(self, owner: str, parent: str, type_id: str, *, provider: str | None = None,
                count: int = 1, state: str = "reserved") -> list[LedgerEntry]:
        """``count`` mdevs of ``type_id`` on ``parent`` for ``owner``: the ones it already
        holds there, then free ones, then new rows recording the intent to create."""
        if state not in ("reserved", "migrating-in"):
            raise ValueError(f"reserve into state {state!r}; use reserved or migrating-in")
        now = _now()
        with self._transaction() as db:
            held = self._select(db, "owner = ? AND parent = ? AND type_id = ? ORDER BY "
                                "created_at, uuid", (owner, parent, type_id))
            missing = count - len(held)
            free = self._select(db, "state = 'free' AND parent = ? AND type_id = ? AND "
                                "pending_create = 0 ORDER BY updated_at, uuid LIMIT ?",
                                (parent, type_id, max(missing, 0)))
            for entry in free:
                db.execute("UPDATE mdevs SET state = ?, owner = ?, provider = ?, updated_at = ?"
                           " WHERE uuid = ?", (state, owner, provider, now, entry.uuid))
            for _ in range(max(missing - len(free), 0)):
                db.execute(f"INSERT INTO mdevs ({_COLUMNS}) VALUES (?,?,?,?,?,?,1,1,?,?)",
                           (str(uuidlib.uuid4()), parent, type_id, state, owner, provider,
                            now, now))
            return self._select(db, "owner = ? AND parent = ? AND type_id = ? ORDER BY "
                                "created_at, uuid", (owner, parent, type_id))

    def mark_created(self, uuid: str) -> LedgerEntry:
        """The mdev of a pending reservation now exists in sysfs."""
        with self._transaction() as db:
            self._require(db, uuid)
            db.execute("UPDATE mdevs SET pending_create = 0, updated_at = ? WHERE uuid = ?",
                       (_now(), uuid))
            return self._require(db, uuid)

    def attach(self, uuid: str, owner: str) -> LedgerEntry:
        """The mdev is in ``owner``'s domain. Idempotent for the same owner."""
        with self._transaction() as db:
            entry = self._require(db, uuid)
            if entry.owner != owner:
                raise MdevClaimConflict(
                    f"mdev {uuid} is {entry.state} for {entry.owner or 'nobody'}, not for "
                    f"{owner}; reserve an mdev for {owner} first"
                )
            if entry.pending_create:
                raise MdevNotFound(f"mdev {uuid} is reserved for {owner} but was never "
                                   "created; materialize it before attaching")
            db.execute("UPDATE mdevs SET state = 'attached', updated_at = ? WHERE uuid = ?",
                       (_now(), uuid))
            return self._require(db, uuid)

    def release(self, owner: str) -> list[LedgerEntry]:
        """Everything ``owner`` holds becomes free; never-created reservations vanish."""
        with self._transaction() as db:
            held = self._select(db, "owner = ?", (owner,))
            db.execute("DELETE FROM mdevs WHERE owner = ? AND pending_create = 1", (owner,))
            db.execute("UPDATE mdevs SET state = 'free', owner = NULL, provider = NULL, "
                       "updated_at = ? WHERE owner = ?", (_now(), owner))
            return [e for e in held if not e.pending_create]

    def forget(self, uuid: str) -> None:
        """Drop the row (after we removed the mdev, or after it vanished)."""
        with self._transaction() as db:
            db.execute("DELETE FROM mdevs WHERE uuid = ?", (uuid,))

    def forget_if_free(self, uuid: str) -> bool:
        """Drop a free row in one compare-and-swap, before its mdev is removed: an agent
        that reserves it at the same moment either wins (and this returns False) or finds
        it gone. True when this call dropped it."""
        with self._transaction() as db:
            cursor = db.execute("DELETE FROM mdevs WHERE uuid = ? AND state = 'free'", (uuid,))
            return cursor.rowcount == 1

    # --- queries ---------------------------------------------------------------

    def get(self, uuid: str) -> LedgerEntry | None:
        with self._transaction() as db:
            found = self._select(db, "uuid = ?", (uuid,))
        return found[0] if found else None

    def entries(self) -> list[LedgerEntry]:
        with self._transaction() as db:
            return self._select(db, "1 = 1 ORDER BY parent, type_id, uuid", ())

    def free(self, parent: str | None = None, type_id: str | None = None) -> list[LedgerEntry]:
        where, params = ["state = 'free'"], []
        for column, value in (("parent", parent), ("type_id", type_id)):
            if value is not None:
                where.append(f"{column} = ?")
                params.append(value)
        with self._transaction() as db:
            return self._select(db, " AND ".join(where) + " ORDER BY parent, type_id, uuid",
                                tuple(params))

    def by_owner(self, owner: str) -> list[LedgerEntry]:
        with self._transaction() as db:
            return self._select(db, "owner = ? ORDER BY parent, uuid", (owner,))

    def foreign(self, present: Iterable[Mdev],
                entries: Sequence[LedgerEntry] | None = None) -> list[Mdev]:
        """mdevs in sysfs that the ledger does not know: someone else's; never remove them.
        ``entries``: rows the caller already read, to spare a second read."""
        known = {e.uuid for e in (self.entries() if entries is None else entries)}
        return [m for m in present if m.uuid not in known]

    def missing(self, present: Iterable[Mdev],
                entries: Sequence[LedgerEntry] | None = None) -> list[LedgerEntry]:
        """Rows whose mdev is not in sysfs (pending creates, and everything after a reboot)."""
        there = {m.uuid for m in present}
        return [e for e in (self.entries() if entries is None else entries)
                if e.uuid not in there]

    def plan_recovery(self, present: Sequence[Mdev]) -> Recovery:
        entries = self.entries()
        gone = self.missing(present, entries)
        return Recovery(
            recreate=tuple(e for e in gone if e.state in OWNED_STATES),
            forget=tuple(e for e in gone if e.state == "free"),
            foreign=tuple(self.foreign(present, entries)),
        )

    # --- internals -------------------------------------------------------------

    @contextlib.contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    @staticmethod
    def _select(db: sqlite3.Connection, where: str, params: tuple[object, ...]
                ) -> list[LedgerEntry]:
        rows = db.execute(f"SELECT {_COLUMNS} FROM mdevs WHERE {where}", params).fetchall()
        return [
            LedgerEntry(uuid=r[0], parent=r[1], type_id=r[2], state=r[3], owner=r[4],
                        provider=r[5], created_by_us=bool(r[6]), pending_create=bool(r[7]),
                        created_at=r[8], updated_at=r[9])
            for r in rows
        ]

    def _require(self, db: sqlite3.Connection, uuid: str) -> LedgerEntry:
        found = self._select(db, "uuid = ?", (uuid,))
        if not found:
            raise MdevNotFound(f"mdev {uuid} is not in the ledger {self.path}; reserve it "
                               "first (foreign mdevs are never used)")
        return found[0]


def materialize(ledger: Ledger, sysfs: Sysfs, entry: LedgerEntry) -> Mdev:
    """Make the mdev of a ledger row exist in sysfs, with the row's UUID. Idempotent: after a
    crash between ``create`` and ``mark_created`` the existing mdev is adopted, not doubled."""
    try:
        mdev = sysfs.mdev(entry.uuid)
    except MdevNotFound:
        mdev = sysfs.create_mdev(entry.parent, entry.type_id, entry.uuid)
    if (mdev.parent, mdev.type_id) != (entry.parent, entry.type_id):
        raise MdevExists(
            f"mdev {entry.uuid} exists as {mdev.type_id} on {mdev.parent}, but the ledger "
            f"records {entry.type_id} on {entry.parent}; remove the stray mdev by hand"
        )
    if entry.pending_create:
        ledger.mark_created(entry.uuid)
    return mdev
