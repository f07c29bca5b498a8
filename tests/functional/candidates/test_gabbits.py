"""Declarative HTTP tests of GET /allocation_candidates (gabbi YAML under ``gabbits/``).

Same driver as ``tests/functional/api``: each YAML file runs in-process against
``make_app`` on a fresh database of every backend of the ``database_url`` fixture. The
topologies are named after the situation (a host with four pGPUs of two types, NUMA nodes
with GPUs under them, a disk shared through an aggregate); providers and aggregates get
fresh UUIDs as ``$ENVIRON['CN1']`` and friends.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from tests.functional.api.test_gabbits import describe, run_gabbit
from vgpucloud.api.app import make_app
from vgpucloud.conf import Settings
from vgpucloud.placement.ports import PlacementStore

GABBITS = sorted(Path(__file__).with_name("gabbits").glob("*.yaml"))
UUID_NAMES = ("CN1", "CN2", "GPU0", "GPU1", "GPU2", "GPU3", "NUMA0", "NUMA1", "NFS",
              "AGG1", "AGG2")


@pytest.mark.parametrize("gabbit", GABBITS, ids=[p.stem for p in GABBITS])
def test_candidates_gabbit(
    gabbit: Path, database_url: str, store: PlacementStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in UUID_NAMES:
        monkeypatch.setenv(name, str(uuid.uuid4()))
    result = run_gabbit(gabbit, make_app(Settings(database_url=database_url), store))
    assert result.testsRun > 0, f"{gabbit.name} has no tests"
    assert result.wasSuccessful(), describe(result)
