"""Declarative HTTP tests of the Compute, image and identity APIs (gabbi YAML in ``gabbits/``).

Each YAML file runs in-process against the whole app (Placement, internal, compute, image,
identity mounts) on a fresh database of every backend of ``database_url``, one pytest test
per (file, backend): ``-k 'servers and sqlite'`` picks one. Fresh UUIDs are visible to
the YAML as ``$ENVIRON['RP1']`` and friends.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.functional.gabbi_driver import assert_gabbit_passes, fresh_uuids, gabbits_next_to
from vgpucloud.api.app import internal_mount, make_app
from vgpucloud.api.compute.mount import compute_mounts
from vgpucloud.conf import Settings
from vgpucloud.storage.compute_store import SqlComputeStore
from vgpucloud.storage.placement_store import SqlPlacementStore
from vgpucloud.storage.tasks import SqlHostTaskStore

GABBITS = gabbits_next_to(__file__)
UUID_NAMES = ("RP1", "RP2", "GPU1", "GPU2", "IMAGE1", "HOST1")


@pytest.mark.parametrize("gabbit", GABBITS, ids=[p.stem for p in GABBITS])
def test_gabbit(gabbit: Path, database_url: str, compute_store: SqlComputeStore,
                store: SqlPlacementStore, monkeypatch: pytest.MonkeyPatch) -> None:
    fresh_uuids(monkeypatch, UUID_NAMES)
    settings = Settings(database_url=database_url)
    app = make_app(settings, store, [
        internal_mount(settings, SqlHostTaskStore(compute_store.engine)),
        *compute_mounts(settings, compute_store, store)])
    assert_gabbit_passes(gabbit, app)
