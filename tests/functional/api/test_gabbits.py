"""Declarative HTTP tests of the Placement API (gabbi YAML under ``gabbits/``).

Each YAML file runs in-process against ``make_app`` on a fresh, migrated database of every
backend of the ``database_url`` fixture (SQLite always; PostgreSQL and MariaDB when they
answer), as one pytest test per (file, backend): ``-k 'inventory and sqlite'`` picks one.
A failure reports every failing gabbi step with its request and assertion.

The YAML files see fresh UUIDs as ``$ENVIRON['RP1']`` and friends (see ``UUID_NAMES``), so
no two runs share identifiers.
"""

from __future__ import annotations

import unittest
import uuid
from pathlib import Path

import pytest
from gabbi import handlers, suitemaker, utils

from vgpucloud.api.app import make_app
from vgpucloud.conf import Settings
from vgpucloud.placement.ports import PlacementStore

GABBITS_DIR = Path(__file__).with_name("gabbits")
GABBITS = sorted(GABBITS_DIR.glob("*.yaml"))
UUID_NAMES = ("RP1", "RP2", "RP3", "RP4", "CONSUMER1", "CONSUMER2", "CONSUMER3",
              "AGG1", "AGG2", "AGG3")


def run_gabbit(path: Path, app: object) -> unittest.TestResult:
    suite = suitemaker.test_suite_from_dict(
        unittest.TestLoader(), path.stem.replace("-", ""), utils.load_yaml(yaml_file=str(path)),
        str(GABBITS_DIR), str(uuid.uuid4()), None, None, lambda: app, prefix="",
        handlers=[handler() for handler in handlers.RESPONSE_HANDLERS],
        test_loader_name=__name__)
    result = unittest.TestResult()
    suite.run(result)
    return result


def describe(result: unittest.TestResult) -> str:
    lines = []
    for test, trace in result.failures + result.errors:
        lines.append(f"--- {test.id()}\n{trace}")
    return "\n".join(lines)


@pytest.mark.parametrize("gabbit", GABBITS, ids=[p.stem for p in GABBITS])
def test_gabbit(
    gabbit: Path, database_url: str, store: PlacementStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name in UUID_NAMES:
        monkeypatch.setenv(name, str(uuid.uuid4()))
    app = make_app(Settings(database_url=database_url), store)
    result = run_gabbit(gabbit, app)
    assert result.testsRun > 0, f"{gabbit.name} has no tests"
    assert result.wasSuccessful(), describe(result)
