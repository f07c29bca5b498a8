"""The real ``mdevctl`` reads a simulated host, bind-mounted over ``/sys`` in a private mount
namespace (mdevctl only ever looks at ``/sys``)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import require_service
from vgpucloud.sim import SimHost

pytestmark = pytest.mark.mdevctl

# $1 = the simulated sys/, the rest = the command; the mount dies with the namespace.
_SCRIPT = 'mount --bind "$1" /sys && shift && exec "$@"'


def _unshare() -> list[str]:
    return ["unshare", "--mount", "--propagation", "private"] + (
        [] if os.geteuid() == 0 else ["--map-root-user"])


def _mdevctl(root: Path, *args: str) -> str:
    if shutil.which("mdevctl") is None or shutil.which("unshare") is None:
        require_service("mdevctl", "mdevctl or unshare is not installed "
                                   "(apt-get install -y mdevctl util-linux)")
    probe = subprocess.run([*_unshare(), "--", "sh", "-c", _SCRIPT, "sh", str(root / "sys"),
                            "true"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        require_service("mdevctl", f"cannot bind-mount over /sys in a private mount namespace: "
                                   f"{probe.stderr.strip()}")
    done = subprocess.run([*_unshare(), "--", "sh", "-c", _SCRIPT, "sh", str(root / "sys"),
                           "mdevctl", *args], capture_output=True, text=True, check=False,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _types(text: str) -> dict[tuple[str, str], tuple[int, str | None]]:
    """``mdevctl types`` -> {(parent, type): (available instances, name)}."""
    found: dict[tuple[str, str], tuple[int, str | None]] = {}
    parent = type_id = ""
    for line in text.splitlines():
        if line and not line.startswith(" "):
            parent = line.strip()
        elif re.match(r"^  \S", line):
            type_id = line.strip()
            found[(parent, type_id)] = (-1, None)
        elif "Available instances:" in line:
            found[(parent, type_id)] = (int(line.split(":")[1]), None)
        elif line.strip().startswith("Name:"):
            count, _ = found[(parent, type_id)]
            found[(parent, type_id)] = (count, line.split(":", 1)[1].strip())
    return found


def test_mdevctl_types_reads_a_simulated_t4_host(tmp_path: Path) -> None:
    host = SimHost.create(tmp_path, "t4", gpus=2)
    host.sysfs().create_mdev("0000:18:00.0", "nvidia-319")
    listed = _types(_mdevctl(tmp_path, "types"))
    expected = {(p.address, t.id): (t.available_instances, t.name)
                for p in host.sysfs().parents() for t in p.types}
    assert listed == expected
    assert listed[("0000:18:00.0", "nvidia-319")] == (3, "GRID T4-4C")
    assert listed[("0000:18:00.0", "nvidia-320")] == (0, "GRID T4-8C")
    assert listed[("0000:19:00.0", "nvidia-320")] == (2, "GRID T4-8C")


def test_mdevctl_list_shows_our_mdevs_on_m60_and_mtty(tmp_path: Path) -> None:
    m60 = SimHost.create(tmp_path / "m60", "m60", gpus=2)
    a = m60.sysfs().create_mdev("0000:84:00.0", "nvidia-35")
    b = m60.sysfs().create_mdev("0000:85:00.0", "nvidia-45")
    output = _mdevctl(m60.root, "list").splitlines()
    listed = sorted(line.split()[:3] for line in output if line.strip())
    assert listed == sorted([[a.uuid, a.parent, a.type_id], [b.uuid, b.parent, b.type_id]])

    mtty = SimHost.create(tmp_path / "mtty", "mtty")
    c = mtty.sysfs().create_mdev("mtty", "mtty-2")
    assert _mdevctl(mtty.root, "list").split()[:3] == [c.uuid, "mtty", "mtty-2"]
    assert _types(_mdevctl(mtty.root, "types"))[("mtty", "mtty-1")] == (22, "Single port serial")
