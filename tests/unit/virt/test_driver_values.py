"""Values of the driver protocol: versions, live-migration readiness, mdev holders."""

from __future__ import annotations

import pytest

from vgpucloud.agent.virt.driver import GuestInfo, GuestState, HostInfo, Version, mdev_holders

MDEV = "c2177883-f1bb-47f0-914d-32a22e3a8804"


@pytest.mark.parametrize(
    ("number", "expected"),
    [(8006000, Version(8, 6, 0)), (10000000, Version(10, 0, 0)), (9000002, Version(9, 0, 2)),
     (2, Version(0, 0, 2))],
)
def test_libvirt_encoded_versions(number: int, expected: Version) -> None:
    assert Version.from_libvirt(number) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [("6.8.0-45-generic", Version(6, 8, 0)), ("5.18", Version(5, 18, 0)),
     ("4.18.0-553.el8_10.x86_64", Version(4, 18, 0))],
)
def test_kernel_release_strings(text: str, expected: Version) -> None:
    assert Version.parse(text) == expected


def test_unversioned_text_is_refused() -> None:
    with pytest.raises(ValueError, match="'generic'"):
        Version.parse("generic")


def test_ubuntu_2404_host_can_live_migrate_mdevs() -> None:
    host = HostInfo("QEMU", Version(10, 0, 0), Version(8, 2, 2), Version(6, 8, 0))
    assert host.mdev_live_migration_problems() == []


def test_rhel8_host_is_told_what_to_upgrade() -> None:
    host = HostInfo("QEMU", Version(8, 0, 0), Version(6, 2, 0), Version(4, 18, 0))
    problems = host.mdev_live_migration_problems()
    assert problems == [
        "libvirt 8.0.0 is older than 8.6.0, the minimum for live-migrating guests with mdevs; "
        "upgrade libvirt on this host",
        "QEMU 6.2.0 is older than 8.1.0, the minimum for live-migrating guests with mdevs; "
        "upgrade QEMU on this host",
        "Linux kernel 4.18.0 is older than 5.18.0, the minimum for live-migrating guests with "
        "mdevs; upgrade Linux kernel on this host",
    ]


def test_exact_minimums_are_enough() -> None:
    host = HostInfo("QEMU", Version(8, 6, 0), Version(8, 1, 0), Version(5, 18, 0))
    assert host.mdev_live_migration_problems() == []


def test_running_guest_is_the_holder_over_a_stopped_one_naming_the_same_mdev() -> None:
    stopped = GuestInfo("a" * 8 + "-0000-0000-0000-000000000001", "old", GuestState.SHUTOFF,
                        (MDEV,))
    running = GuestInfo("a" * 8 + "-0000-0000-0000-000000000002", "new", GuestState.RUNNING,
                        (MDEV,))
    assert mdev_holders([stopped, running])[MDEV] is running
    assert mdev_holders([running, stopped])[MDEV] is running


def test_orphan_mdevs_are_a_set_difference() -> None:
    guest = GuestInfo("00000000-0000-0000-0000-000000000001", "instance-00000001",
                      GuestState.PAUSED, (MDEV,))
    in_sysfs = {MDEV, "4b20d080-1b54-4048-85b3-a6a62d165c01"}
    assert in_sysfs - mdev_holders([guest]).keys() == {"4b20d080-1b54-4048-85b3-a6a62d165c01"}


@pytest.mark.parametrize(
    ("state", "active"),
    [(GuestState.RUNNING, True), (GuestState.PAUSED, True), (GuestState.PMSUSPENDED, True),
     (GuestState.SHUTOFF, False), (GuestState.CRASHED, False)],
)
def test_which_states_hold_mdevs(state: GuestState, active: bool) -> None:
    assert state.is_active is active
