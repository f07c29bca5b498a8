"""``vgpucloud sim`` and ``vgpucloud host`` on simulated hosts, against golden outputs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from vgpucloud.agent.ledger import Ledger, materialize
from vgpucloud.cli.main import main
from vgpucloud.sim import SimHost

T4_TYPES_GOLDEN = """\
PARENT        KIND  TYPE        NAME         AVAIL  MAX  FRAMEBUFFER  HEADS  RESOLUTION  FRL
0000:18:00.0  pci   nvidia-222  GRID T4-1B   16     16   1024M        4      5120x2880   45
0000:18:00.0  pci   nvidia-223  GRID T4-2B   8      8    2048M        4      5120x2880   45
0000:18:00.0  pci   nvidia-224  GRID T4-2B4  8      8    2048M        4      5120x2880   45
0000:18:00.0  pci   nvidia-225  GRID T4-1A   16     16   1024M        1      1280x1024   60
0000:18:00.0  pci   nvidia-226  GRID T4-2A   8      8    2048M        1      1280x1024   60
0000:18:00.0  pci   nvidia-227  GRID T4-4A   4      4    4096M        1      1280x1024   60
0000:18:00.0  pci   nvidia-228  GRID T4-8A   2      2    8192M        1      1280x1024   60
0000:18:00.0  pci   nvidia-229  GRID T4-16A  1      1    16384M       1      1280x1024   60
0000:18:00.0  pci   nvidia-230  GRID T4-1Q   16     16   1024M        4      5120x2880   60
0000:18:00.0  pci   nvidia-231  GRID T4-2Q   8      8    2048M        4      7680x4320   60
0000:18:00.0  pci   nvidia-232  GRID T4-4Q   4      4    4096M        4      7680x4320   60
0000:18:00.0  pci   nvidia-233  GRID T4-8Q   2      2    8192M        4      7680x4320   60
0000:18:00.0  pci   nvidia-234  GRID T4-16Q  1      1    16384M       4      7680x4320   60
0000:18:00.0  pci   nvidia-252  GRID T4-1B4  16     16   1024M        4      5120x2880   45
0000:18:00.0  pci   nvidia-319  GRID T4-4C   4      4    4096M        1      4096x2160   60
0000:18:00.0  pci   nvidia-320  GRID T4-8C   2      2    8192M        1      4096x2160   60
0000:18:00.0  pci   nvidia-321  GRID T4-16C  1      1    16384M       1      4096x2160   60
"""

GVTG_TYPES_GOLDEN = """\
PARENT        KIND  TYPE            NAME  AVAIL  MAX  FRAMEBUFFER  HEADS  RESOLUTION  FRL
0000:00:02.0  pci   i915-GVTg_V5_1  -     1      -    -            -      1920x1200   -
0000:00:02.0  pci   i915-GVTg_V5_2  -     2      -    -            -      1920x1200   -
0000:00:02.0  pci   i915-GVTg_V5_4  -     4      -    -            -      1920x1200   -
0000:00:02.0  pci   i915-GVTg_V5_8  -     8      -    -            -      1024x768    -
"""

A = "aaaaaaaa-0000-4000-8000-000000000001"
B = "bbbbbbbb-0000-4000-8000-000000000002"
F = "ffffffff-0000-4000-8000-000000000003"


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_sim_create_then_host_types_on_one_t4(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "sim", "create", "--profile", "t4", "--gpus", "1",
                        "--root", str(tmp_path))
    assert code == 0 and "1 GPU(s), 1 parent device(s)" in out
    assert _run(capsys, "host", "types", "--sysfs-root", str(tmp_path)) == (
        0, T4_TYPES_GOLDEN, "")


def test_host_types_on_gvtg_has_no_names(tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    SimHost.create(tmp_path, "gvtg")
    assert _run(capsys, "host", "types", "--sysfs-root", str(tmp_path)) == (
        0, GVTG_TYPES_GOLDEN, "")


def test_host_types_json_keeps_every_description_field(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    SimHost.create(tmp_path, "gvtg")
    code, out, _ = _run(capsys, "host", "types", "--sysfs-root", str(tmp_path), "--format",
                        "json")
    (igpu,) = json.loads(out)
    assert (code, igpu["address"], igpu["kind"], igpu["driver"]) == (
        0, "0000:00:02.0", "pci", "i915")
    assert igpu["types"][2]["fields"] == {"low_gm_size": "128MB", "high_gm_size": "512MB",
                                          "fence": "4", "resolution": "1920x1200",
                                          "weight": "4"}


def test_host_mdevs_with_ledger_shows_owners_foreign_and_missing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = SimHost.create(tmp_path / "host", "m60", gpus=3)
    sysfs = host.sysfs()
    ledger = Ledger(tmp_path / "ledger.sqlite")
    entries = ledger.reserve("instance-1", "0000:84:00.0", "nvidia-35", count=2)
    materialize(ledger, sysfs, entries[0])
    ledger.attach(entries[0].uuid, "instance-1")
    sysfs.create_mdev("0000:85:00.0", "nvidia-36", F)
    ledger.close()
    code, out, _ = _run(capsys, "host", "mdevs", "--sysfs-root", str(host.root),
                        "--ledger", str(tmp_path / "ledger.sqlite"))
    first, second = entries[0].uuid, entries[1].uuid
    expected = f"""\
        PARENT        MDEV                                  TYPE       NAME         STATE               OWNER
        0000:84:00.0  {first}  nvidia-35  GRID M60-0B  attached            instance-1
        0000:84:00.0  {second}  nvidia-35  GRID M60-0B  missing (reserved)  instance-1
        0000:85:00.0  {F}  nvidia-36  GRID M60-0Q  foreign             -
        0000:86:00.0  -                                     -          -            -                   -
    """  # noqa: E501
    assert (code, out) == (0, textwrap.dedent(expected))


def test_host_mdevs_without_ledger(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = SimHost.create(tmp_path, "mtty")
    host.sysfs().create_mdev("mtty", "mtty-2", A)
    host.sysfs().create_mdev("mtty", "mtty-1", B)
    code, out, _ = _run(capsys, "host", "mdevs", "--sysfs-root", str(tmp_path))
    assert (code, out) == (0, textwrap.dedent(f"""\
        PARENT  MDEV                                  TYPE    NAME                STATE    OWNER
        mtty    {A}  mtty-2  Dual port serial    present  -
        mtty    {B}  mtty-1  Single port serial  present  -
        """))


def test_check_config_summary_for_the_nova_doc_example(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = SimHost.create(tmp_path / "host", "m60", gpus=4)
    conf = tmp_path / "nova.conf"
    conf.write_text("[DEFAULT]\nhost = virtlab606\n[devices]\n"
                    "enabled_mdev_types = nvidia-35, nvidia-36\n"
                    "[mdev_nvidia-35]\ndevice_addresses = 0000:84:00.0,0000:85:00.0\n"
                    "mdev_class = CUSTOM_M60_0B\n"
                    "[mdev_nvidia-36]\ndevice_addresses = 0000:86:00.0\nmax_instances = 8\n")
    code, out, _ = _run(capsys, "host", "check-config", "--config-file", str(conf),
                        "--sysfs-root", str(host.root))
    assert (code, out) == (0, textwrap.dedent("""\
        host virtlab606: 3 of 4 parent device(s) configured
        PARENT        TYPE       MDEV_CLASS     MAX_INSTANCES
        0000:84:00.0  nvidia-35  CUSTOM_M60_0B  -
        0000:85:00.0  nvidia-35  CUSTOM_M60_0B  -
        0000:86:00.0  nvidia-36  VGPU           8
        0000:87:00.0  (unused)   -              -
        """))


def test_check_config_exits_1_with_one_line_per_problem(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    host = SimHost.create(tmp_path / "host", "t4", gpus=2)
    conf = tmp_path / "nova.conf"
    conf.write_text("[devices]\nenabled_mdev_types = nvidia-319, nvidia-35\n"
                    "[mdev_nvidia-319]\ndevice_addresses = 0000:18:00.0\n"
                    "[mdev_nvidia-35]\ndevice_addresses = 0000:18:00.0,0000:19:00.0\n")
    code, out, err = _run(capsys, "host", "check-config", "--config-file", str(conf),
                          "--sysfs-root", str(host.root))
    assert (code, out) == (1, "")
    problems = [line for line in err.splitlines() if line.startswith("  - ")]
    assert len(problems) == 3
    assert "both list 0000:18:00.0" in problems[0]
    assert "0000:18:00.0 does not offer nvidia-35" in problems[1]
    assert "0000:19:00.0 does not offer nvidia-35" in problems[2]


def test_sim_reboot_and_sriov_enable_commands(tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "sim", "create", "--profile", "a40", "--gpus", "1", "--no-vfs",
                "--root", str(tmp_path))[0] == 0
    assert SimHost(tmp_path).sysfs().parents() == ()
    code, out, _ = _run(capsys, "sim", "sriov-enable", "--root", str(tmp_path))
    assert (code, out) == (0, "VFs enabled on: 0000:41:00.0\n")
    mdev = SimHost(tmp_path).sysfs().create_mdev("0000:41:00.4", "nvidia-566")
    assert _run(capsys, "sim", "hold", "--root", str(tmp_path), mdev.uuid, "vm-1")[0] == 0
    assert SimHost(tmp_path).kernel.holder(mdev.uuid) == "vm-1"
    assert _run(capsys, "sim", "reboot", "--root", str(tmp_path))[0] == 0
    assert SimHost(tmp_path).sysfs().parents() == ()
