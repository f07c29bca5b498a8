"""Run gabbi YAML files as pytest tests, in-process against a WSGI app.

A suite module declares its files and the fresh UUIDs its YAML reads::

    GABBITS = gabbits_next_to(__file__)

    @pytest.mark.parametrize("gabbit", GABBITS, ids=[p.stem for p in GABBITS])
    def test_gabbit(gabbit, store, monkeypatch):
        fresh_uuids(monkeypatch, ("RP1", "CONSUMER1"))   # $ENVIRON['RP1'] in the YAML
        assert_gabbit_passes(gabbit, make_app(settings, store))

One YAML file is one pytest test; a failure reports every failing gabbi step with its
request and assertion.
"""

from __future__ import annotations

import unittest
import uuid
from collections.abc import Iterable
from pathlib import Path

import pytest
from gabbi import handlers, suitemaker, utils


def gabbits_next_to(module_file: str) -> list[Path]:
    """The ``*.yaml`` files in the ``gabbits/`` directory beside ``module_file``."""
    return sorted(Path(module_file).with_name("gabbits").glob("*.yaml"))


def fresh_uuids(monkeypatch: pytest.MonkeyPatch, names: Iterable[str]) -> None:
    """A new UUID in each environment variable ``names`` lists, so no two runs share ids."""
    for name in names:
        monkeypatch.setenv(name, str(uuid.uuid4()))


def run_gabbit(path: Path, app: object, *, data_dir: Path | None = None) -> unittest.TestResult:
    """Every step of the gabbi file ``path`` against ``app``; ``data_dir`` holds the files
    the YAML's ``<@file`` data references name (the YAML's own directory by default)."""
    suite = suitemaker.test_suite_from_dict(
        unittest.TestLoader(), path.stem.replace("-", ""), utils.load_yaml(yaml_file=str(path)),
        str(data_dir or path.parent), str(uuid.uuid4()), None, None, lambda: app, prefix="",
        handlers=[handler() for handler in handlers.RESPONSE_HANDLERS],
        test_loader_name=__name__)
    result = unittest.TestResult()
    suite.run(result)
    return result


def describe(result: unittest.TestResult) -> str:
    """Each failing or erroring step with its traceback (gabbi puts the request in it)."""
    return "\n".join(f"--- {test.id()}\n{trace}" for test, trace in
                     result.failures + result.errors)


def assert_gabbit_passes(path: Path, app: object) -> None:
    result = run_gabbit(path, app)
    assert result.testsRun > 0, f"{path.name} has no tests"
    assert result.wasSuccessful(), describe(result)
