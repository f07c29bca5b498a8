"""The fake driver's own promises: files like libvirtd's, restarts, hooks, crash-safe writes.

What every driver must do is in tests/functional/virt/test_driver_contract.py.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from vgpucloud.agent.virt import fake as fake_module
from vgpucloud.agent.virt.domain import GuestMdev, GuestSpec, read_domain
from vgpucloud.agent.virt.driver import GuestState, HostInfo, Version
from vgpucloud.agent.virt.errors import GuestStartFailed, VirtError
from vgpucloud.agent.virt.fake import FakeDriver, atomic_write

GUEST = "6c1a5b3e-6b1f-4f0b-9a51-2f8d5f7e0c11"
OTHER = "0f7cbb0e-3d1e-4b8a-a1f3-5f2e1c9a7d10"
MDEV_A = "c2177883-f1bb-47f0-914d-32a22e3a8804"
MDEV_B = "4b20d080-1b54-4048-85b3-a6a62d165c01"


def spec(guest: str = GUEST, name: str = "instance-0000000a",
         mdevs: tuple[str, ...] = (MDEV_A,)) -> GuestSpec:
    return GuestSpec(uuid=guest, name=name, vcpus=1, memory_mb=1024,
                     disk_path=f"/var/lib/vgpucloud/instances/{guest}/disk",
                     mdevs=tuple(GuestMdev(m, "vfio-pci") for m in mdevs))


class KernelRecorder:
    """Stands in for the simulated kernel: which mdevs exist and which are held."""

    def __init__(self, existing: set[str]) -> None:
        self.existing = existing
        self.held: set[str] = set()
        self.calls: list[tuple[str, tuple[str, ...]]] = []

    def on_start(self, mdevs: tuple[str, ...]) -> None:
        self.calls.append(("start", mdevs))
        self.held |= set(mdevs)

    def on_stop(self, mdevs: tuple[str, ...]) -> None:
        self.calls.append(("stop", mdevs))
        self.held -= set(mdevs)

    def driver(self, state_dir: Path) -> FakeDriver:
        return FakeDriver(state_dir, self.on_start, self.on_stop,
                          mdev_exists=self.existing.__contains__, fsync=False)


def test_files_are_where_libvirtd_keeps_them(tmp_path: Path) -> None:
    driver = FakeDriver(tmp_path)
    driver.define(spec())
    driver.start(GUEST)
    assert read_domain((tmp_path / "qemu" / "instance-0000000a.xml").read_text()).uuid == GUEST
    assert (tmp_path / "run" / "instance-0000000a.xml").exists()
    state = json.loads((tmp_path / "run" / "instance-0000000a.json").read_text())
    assert state == {"uuid": GUEST, "name": "instance-0000000a", "state": "running"}


def test_agent_restart_sees_the_same_guests(tmp_path: Path) -> None:
    first = FakeDriver(tmp_path)
    first.define(spec())
    first.define(spec(OTHER, "instance-0000000b", (MDEV_B,)))
    first.start(GUEST)
    first.close()

    second = FakeDriver(tmp_path)
    assert second.state(GUEST) is GuestState.RUNNING
    assert second.state(OTHER) is GuestState.SHUTOFF
    assert [(g.name, g.mdev_uuids) for g in second.list_guests()] == [
        ("instance-0000000a", (MDEV_A,)), ("instance-0000000b", (MDEV_B,))]
    second.stop(GUEST)
    assert FakeDriver(tmp_path).state(GUEST) is GuestState.SHUTOFF


def test_host_reboot_shuts_every_guest_off_and_keeps_definitions(tmp_path: Path) -> None:
    driver = FakeDriver(tmp_path)
    driver.define(spec())
    driver.start(GUEST)
    driver.host_reboot()
    assert FakeDriver(tmp_path).state(GUEST) is GuestState.SHUTOFF


def test_hooks_report_held_and_released_mdevs(tmp_path: Path) -> None:
    kernel = KernelRecorder({MDEV_A, MDEV_B})
    driver = kernel.driver(tmp_path)
    driver.define(spec(mdevs=(MDEV_A, MDEV_B)))
    driver.start(GUEST)
    driver.start(GUEST)  # already running: QEMU is not started twice
    assert kernel.held == {MDEV_A, MDEV_B}
    driver.stop(GUEST)
    driver.stop(GUEST)
    assert kernel.calls == [("start", (MDEV_A, MDEV_B)), ("stop", (MDEV_A, MDEV_B))]
    assert kernel.held == set()


def test_redefined_running_guest_releases_what_it_held_not_what_it_names(tmp_path: Path) -> None:
    kernel = KernelRecorder({MDEV_A, MDEV_B})
    driver = kernel.driver(tmp_path)
    driver.define(spec(mdevs=(MDEV_A,)))
    driver.start(GUEST)
    driver.define(spec(mdevs=(MDEV_B,)))  # takes effect at the next start, as in libvirt
    assert driver.list_guests()[0].mdev_uuids == (MDEV_A,)
    driver.stop(GUEST)
    assert kernel.calls[-1] == ("stop", (MDEV_A,))
    assert driver.list_guests()[0].mdev_uuids == (MDEV_B,)


def test_undefine_of_running_guest_releases_its_mdevs(tmp_path: Path) -> None:
    kernel = KernelRecorder({MDEV_A})
    driver = kernel.driver(tmp_path)
    driver.define(spec())
    driver.start(GUEST)
    driver.undefine(GUEST)
    assert kernel.held == set()
    assert list((tmp_path / "qemu").iterdir()) == []
    assert list((tmp_path / "run").iterdir()) == []


def test_start_with_missing_mdev_fails_like_qemu_and_holds_nothing(tmp_path: Path) -> None:
    kernel = KernelRecorder({MDEV_A})
    driver = kernel.driver(tmp_path)
    driver.define(spec(mdevs=(MDEV_A, MDEV_B)))
    with pytest.raises(GuestStartFailed, match=f"mediated device '{MDEV_B}' not found"):
        driver.start(GUEST)
    assert driver.state(GUEST) is GuestState.SHUTOFF
    assert kernel.calls == []


def test_second_guest_on_a_held_mdev_is_refused_as_busy(tmp_path: Path) -> None:
    driver = FakeDriver(tmp_path)
    driver.define(spec())
    driver.define(spec(OTHER, "instance-0000000b", (MDEV_A,)))
    driver.start(GUEST)
    with pytest.raises(GuestStartFailed, match=f"'{MDEV_A}' is busy.*instance-0000000a"):
        driver.start(OTHER)
    driver.stop(GUEST)
    driver.start(OTHER)
    assert driver.state(OTHER) is GuestState.RUNNING


def test_kernel_refusing_the_mdev_leaves_the_guest_off(tmp_path: Path) -> None:
    def refuse(mdevs: tuple[str, ...]) -> None:
        raise RuntimeError(f"{mdevs[0]} is held elsewhere")

    stops: list[tuple[str, ...]] = []
    driver = FakeDriver(tmp_path, on_start=refuse, on_stop=stops.append)
    driver.define(spec())
    with pytest.raises(RuntimeError, match="held elsewhere"):
        driver.start(GUEST)
    assert driver.state(GUEST) is GuestState.SHUTOFF
    assert stops == []  # nothing was held, so nothing is released
    assert not (tmp_path / "run" / "instance-0000000a.xml").exists()


def test_failed_state_write_releases_the_mdevs_it_just_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    kernel = KernelRecorder({MDEV_A})
    driver = kernel.driver(tmp_path)
    driver.define(spec())
    real_write = fake_module.atomic_write

    def full_disk_on_state(path: Path, text: str, *, fsync: bool = True) -> None:
        if path.suffix == ".json":
            raise OSError(28, "No space left on device")
        real_write(path, text, fsync=fsync)

    monkeypatch.setattr(fake_module, "atomic_write", full_disk_on_state)
    with pytest.raises(OSError, match="No space left"):
        driver.start(GUEST)
    assert kernel.calls == [("start", (MDEV_A,)), ("stop", (MDEV_A,))]
    assert driver.state(GUEST) is GuestState.SHUTOFF


def test_crash_before_rename_keeps_the_old_definition(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = FakeDriver(tmp_path)
    driver.define(spec(mdevs=(MDEV_A,)))

    def crash(src: str, dst: str) -> None:
        raise KeyboardInterrupt("power cut")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(KeyboardInterrupt):
        driver.define(spec(mdevs=(MDEV_B,)))
    monkeypatch.undo()
    assert [p.name for p in (tmp_path / "qemu").iterdir()] == ["instance-0000000a.xml"]
    assert FakeDriver(tmp_path).list_guests()[0].mdev_uuids == (MDEV_A,)


def test_temp_file_left_by_a_killed_process_is_ignored_and_removed(tmp_path: Path) -> None:
    FakeDriver(tmp_path).define(spec())
    half = tmp_path / "qemu" / ".instance-0000000b.xml.k3j2h1.tmp"
    half.write_text("<domain><name>instance-0000000b</na")
    stale_state = tmp_path / "run" / ".instance-0000000a.json.x9y8.tmp"
    stale_state.write_text('{"state": "runn')
    restarted = FakeDriver(tmp_path)
    assert [g.name for g in restarted.list_guests()] == ["instance-0000000a"]
    assert restarted.state(GUEST) is GuestState.SHUTOFF
    assert not half.exists()
    assert not stale_state.exists()


def test_atomic_write_replaces_whole_content(tmp_path: Path) -> None:
    target = tmp_path / "instance-0000000a.xml"
    target.write_text("old")
    atomic_write(target, "new content")
    assert target.read_text() == "new content"
    assert [p.name for p in tmp_path.iterdir()] == ["instance-0000000a.xml"]


def test_corrupt_definition_names_the_file_and_the_fix(tmp_path: Path) -> None:
    (tmp_path / "qemu").mkdir()
    (tmp_path / "qemu" / "instance-0000000a.xml").write_text("<domain>")
    with pytest.raises(VirtError, match=r"instance-0000000a\.xml cannot be read.*move it away"):
        FakeDriver(tmp_path)


def test_host_info_is_configurable_for_old_simulated_hosts(tmp_path: Path) -> None:
    old = HostInfo("fake", Version(8, 0, 0), Version(6, 2, 0), Version(4, 18, 0))
    assert FakeDriver(tmp_path, host_info=old).host_info().mdev_live_migration_problems()
    assert FakeDriver(tmp_path).host_info().mdev_live_migration_problems() == []


def test_new_guest_reusing_a_name_does_not_inherit_stale_run_files(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir(parents=True)
    (run / "instance-0000000a.json").write_text(
        json.dumps({"uuid": OTHER, "name": "instance-0000000a", "state": "running"}))
    driver = FakeDriver(tmp_path)
    driver.define(spec())
    assert driver.state(GUEST) is GuestState.SHUTOFF
