"""Declarative HTTP tests of the Placement API (gabbi YAML under ``gabbits/``).

Each YAML file runs in-process against ``make_app`` on a fresh, migrated database of every
backend of the ``database_url`` fixture (SQLite always; PostgreSQL and MariaDB when they
answer), as one pytest test per (file, backend): ``-k 'inventory and sqlite'`` picks one.
A failure reports every failing gabbi step with its request and assertion.

The YAML files see fresh UUIDs as ``$ENVIRON['RP1']`` and friends (see ``UUID_NAMES``), so
no two runs share identifiers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

# describe and run_gabbit are re-exported for tests/functional/candidates.
from tests.functional.gabbi_driver import (
    assert_gabbit_passes,
    describe,
    fresh_uuids,
    gabbits_next_to,
    run_gabbit,
)
from vgpucloud.api.app import make_app
from vgpucloud.conf import Settings
from vgpucloud.placement.ports import PlacementStore

__all__ = ["describe", "run_gabbit"]

GABBITS = gabbits_next_to(__file__)
UUID_NAMES = ("RP1", "RP2", "RP3", "RP4", "CONSUMER1", "CONSUMER2", "CONSUMER3",
              "AGG1", "AGG2", "AGG3")


@pytest.mark.parametrize("gabbit", GABBITS, ids=[p.stem for p in GABBITS])
def test_gabbit(
    gabbit: Path, database_url: str, store: PlacementStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    fresh_uuids(monkeypatch, UUID_NAMES)
    assert_gabbit_passes(gabbit, make_app(Settings(database_url=database_url), store))
