"""``vgpucloud demo`` replays the guide and exits 0 only if every expectation held."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from tests.conftest import require_service


def _demo(*flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "vgpucloud.cli.main", "demo", *flags],
                          capture_output=True, text=True, timeout=300, check=False)


def test_demo_over_http_holds_every_expectation() -> None:
    result = _demo("--http")
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "expectations held, 0 failed" in result.stdout
    assert "$ GET /placement/resource_providers" in result.stdout


@pytest.mark.openstack_cli
def test_demo_with_the_openstack_cli_holds_every_expectation() -> None:
    if shutil.which("openstack") is None:
        require_service("openstack CLI", "pip install python-openstackclient osc-placement")
    result = _demo()
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert '$ openstack flavor set vgpu_1 --property "resources:VGPU=1"' in result.stdout
    assert "both servers of --min 2 --max 2 are ACTIVE" in result.stdout
