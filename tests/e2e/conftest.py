"""Session fixtures for e2e tests: one real ``vgpucloud api`` and the ``openstack`` CLI.

The server runs once per session (each CLI call already costs a second of Python start-up)
on a free loopback port, with a SQLite database in a temporary directory, after a real
``vgpucloud db sync``. Tests get ``osc``: ``osc("resource", "provider", "list")`` runs
``openstack resource provider list -f json`` against it and returns the parsed JSON.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator

import pytest

from tests.conftest import require_service
from tests.e2e.harness import OpenStackCli, PlacementServer, write_clouds_yaml


@pytest.fixture(scope="session")
def openstack_executable() -> str:
    executable = shutil.which("openstack")
    if executable is None:
        require_service("openstack CLI", "no `openstack` on PATH; pip install '.[test]'")
    if importlib.util.find_spec("osc_placement") is None:
        require_service(
            "openstack CLI", "the osc-placement plugin is not installed; pip install osc-placement"
        )
    assert executable is not None
    return executable


@pytest.fixture(scope="session")
def placement_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlacementServer]:
    server = PlacementServer(workdir=tmp_path_factory.mktemp("vgpucloud-api"))
    problem = None
    try:
        server.sync_database()
        server.start()
    except RuntimeError as exc:
        problem = str(exc)
    if problem is not None:  # failing outside `except` keeps the report free of a chained copy
        pytest.fail(problem, pytrace=False)
    yield server
    server.stop()


@pytest.fixture(scope="session")
def osc(openstack_executable: str, placement_server: PlacementServer) -> OpenStackCli:
    # openstack_executable comes first so a missing CLI skips before a server starts.
    clouds_yaml = write_clouds_yaml(
        placement_server.workdir / "clouds.yaml", placement_server.endpoint
    )
    return OpenStackCli(openstack_executable, clouds_yaml, placement_server)
