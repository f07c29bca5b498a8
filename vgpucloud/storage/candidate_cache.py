"""The allocation-candidates read model: the whole cloud as one in-memory ``Snapshot``, checked
against the database on every request and patched only where the database changed.

One request, inside its read transaction::

    SELECT id, generation, created_at, root_provider_id FROM resource_providers  (fingerprint)
    SELECT id, name FROM resource_classes ORDER BY id                       (the catalogue)
        │
        ├─ both equal to what the snapshot was built from ──► reuse the snapshot as it is
        ├─ some providers differ (new, gone, bumped) ───────► reload the trees they were in
        │                                                     and the trees they are in now
        └─ the class catalogue differs (rename) ────────────► reload everything

Why comparing generations is exact: every write that changes what the engine reads about a
provider - its inventories, the allocations against it, its traits, its aggregates, its
parent - compares-and-swaps that provider's generation in the same transaction
(``storage.lookups.bump_generation``). A re-parent also changes the root of every provider
of the moved subtree, which the fingerprint carries, so both the old and the new tree are
reloaded. ``created_at`` tells a provider deleted and re-created under a reused id (SQLite
reuses the largest rowid) from the one we loaded. Trait and aggregate names never change
once created, and a resource class rename shows in the catalogue.

Several API processes may write to one database: each validates its own model against the
database, so no cross-process invalidation is needed. Within a process, the published
``(fingerprint, snapshot)`` pair is immutable and replaced atomically under a lock, so the
threads of one server share it safely. Under READ COMMITTED (PostgreSQL, MariaDB) a tree
loaded after the fingerprint may already show a later write; it is then recorded with the
older generation, so the next request sees the difference and reloads it - the model can
be newer than its fingerprint, never older.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from sqlalchemy import Connection

from vgpucloud.placement.candidates.snapshot import ProviderNode, Snapshot

# (provider id, generation, created_at, root id) rows, in id order, as the driver returns them.
Fingerprint = list[tuple[Any, ...]]
Catalogue = list[tuple[Any, ...]]
TreeLoader = Callable[[Connection, set[int]], list[ProviderNode]]

_FINGERPRINT = ("SELECT id, generation, created_at, root_provider_id FROM resource_providers "
                "ORDER BY id")
_CATALOGUE = "SELECT id, name FROM resource_classes ORDER BY id"


class _State(NamedTuple):
    fingerprint: Fingerprint
    catalogue: Catalogue
    snapshot: Snapshot


_EMPTY = _State([], [], Snapshot((), cloud_has_nested=False))


class CandidateReadModel:
    """One per store (per process and database); ``snapshot(connection, load_trees)`` is the
    whole cloud as of the caller's transaction (or slightly newer, see the module doc)."""

    def __init__(self) -> None:
        self._state = _EMPTY
        self._lock = threading.Lock()
        self.reloads = 0  # trees reloaded since creation: lets tests see the cache work

    def snapshot(self, connection: Connection, load_trees: TreeLoader
                 ) -> tuple[Snapshot, dict[str, int]]:
        """The current snapshot and the resource class ids by name."""
        fingerprint, catalogue = _read_versions(connection)
        state = self._state
        if fingerprint != state.fingerprint or catalogue != state.catalogue:
            with self._lock:
                state = self._refresh(connection, load_trees, fingerprint, catalogue)
        return state.snapshot, {name: rc_id for rc_id, name in catalogue}

    def _refresh(self, connection: Connection, load_trees: TreeLoader,
                 fingerprint: Fingerprint, catalogue: Catalogue) -> _State:
        old = self._state
        if fingerprint == old.fingerprint and catalogue == old.catalogue:
            return old  # another thread refreshed to exactly our view meanwhile
        if catalogue != old.catalogue:
            old = _EMPTY
        stale = _stale_roots(old, fingerprint)
        kept = [node for node in old.snapshot.providers.values() if node.root_id not in stale]
        fresh = load_trees(connection, stale) if stale else []
        self.reloads += len(stale)
        nodes = _without_duplicates(kept, fresh)
        snapshot = Snapshot(nodes, cloud_has_nested=any(n.parent_id is not None
                                                        for n in nodes))
        self._state = _State(fingerprint, catalogue, snapshot)
        return self._state


def _read_versions(connection: Connection) -> tuple[Fingerprint, Catalogue]:
    # The raw driver cursor: thousands of rows, compared as plain tuples, no ORM rows.
    cursor = connection.connection.dbapi_connection.cursor()  # type: ignore[union-attr]
    try:
        cursor.execute(_FINGERPRINT)
        fingerprint = list(cursor.fetchall())
        cursor.execute(_CATALOGUE)
        catalogue = list(cursor.fetchall())
    finally:
        cursor.close()
    return fingerprint, catalogue


def _stale_roots(old: _State, fingerprint: Fingerprint) -> set[int]:
    """Roots of every tree a changed provider was in (per the snapshot) or is in now."""
    before = {row[0]: row for row in old.fingerprint}
    snapshot = old.snapshot
    stale: set[int] = set()
    for row in fingerprint:
        pid, root = row[0], row[3]
        if before.pop(pid, None) != row:
            stale.add(root if root is not None else pid)
            node = snapshot.providers.get(pid)
            if node is not None:
                stale.add(node.root_id)
    for pid in before:  # deleted since
        node = snapshot.providers.get(pid)
        if node is not None:
            stale.add(node.root_id)
    # A provider created after the old fingerprint was read, loaded with its tree anyway
    # (READ COMMITTED), and deleted since appears in neither fingerprint: its tree too.
    known = {row[0] for row in fingerprint}
    stale |= {node.root_id for node in snapshot.providers.values() if node.id not in known}
    return stale


def _without_duplicates(kept: Iterable[ProviderNode], fresh: Iterable[ProviderNode]
                        ) -> list[ProviderNode]:
    """Freshly loaded nodes win over kept ones (a provider that moved in between)."""
    nodes = {node.id: node for node in kept}
    nodes.update((node.id, node) for node in fresh)
    return list(nodes.values())
