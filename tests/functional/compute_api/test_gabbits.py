"""Declarative HTTP tests of the Compute, image and identity APIs (gabbi YAML in ``gabbits/``).

Each YAML file runs in-process against the whole app (Placement, internal, compute, image,
identity mounts) on a fresh database of every backend of ``database_url``, one pytest test
per (file, backend): ``-k 'servers and sqlite'`` picks one. Fresh UUIDs are visible to
the YAML as ``$ENVIRON['RP1']`` and friends.
"""

from __future__ import annotations

import unittest
import uuid
from pathlib import Path

import pytest
from gabbi import handlers, suitemaker, utils

from vgpucloud.api.app import internal_mount, make_app
from vgpucloud.api.compute.mount import compute_mounts
from vgpucloud.conf import Settings
from vgpucloud.storage.compute_store import SqlComputeStore
from vgpucloud.storage.placement_store import SqlPlacementStore
from vgpucloud.storage.tasks import SqlHostTaskStore

GABBITS_DIR = Path(__file__).with_name("gabbits")
GABBITS = sorted(GABBITS_DIR.glob("*.yaml"))
UUID_NAMES = ("RP1", "RP2", "GPU1", "GPU2", "IMAGE1", "HOST1")


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
    return "\n".join(f"--- {test.id()}\n{trace}" for test, trace in
                     result.failures + result.errors)


@pytest.mark.parametrize("gabbit", GABBITS, ids=[p.stem for p in GABBITS])
def test_gabbit(gabbit: Path, database_url: str, compute_store: SqlComputeStore,
                store: SqlPlacementStore, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in UUID_NAMES:
        monkeypatch.setenv(name, str(uuid.uuid4()))
    settings = Settings(database_url=database_url)
    app = make_app(settings, store, [
        internal_mount(settings, SqlHostTaskStore(compute_store.engine)),
        *compute_mounts(settings, compute_store, store)])
    result = run_gabbit(gabbit, app)
    assert result.testsRun > 0, f"{gabbit.name} has no tests"
    assert result.wasSuccessful(), describe(result)
