"""What every guest driver promises, run against the fake driver and libvirt's test driver.

``test:///default`` is libvirt's in-process test hypervisor: one shared state per process
with a pre-defined guest called ``test``, so every test here uses fresh UUIDs and names
and undefines what it defined.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.conftest import require_service
from vgpucloud.agent.virt import make_driver
from vgpucloud.agent.virt.domain import GuestMdev, GuestSpec, mdev_uuids_in
from vgpucloud.agent.virt.driver import GuestState, HostInfo, Version, VirtDriver, mdev_holders
from vgpucloud.agent.virt.errors import GuestNameConflict, GuestNotFound

SpecFactory = Callable[..., GuestSpec]


@pytest.fixture(params=["fake", pytest.param("libvirt", marks=pytest.mark.libvirt)])
def driver(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[VirtDriver]:
    if request.param == "libvirt":
        try:
            import libvirt  # type: ignore[import-untyped, unused-ignore]  # noqa: F401
        except ImportError:
            require_service("libvirt-python", "apt-get install libvirt-dev pkg-config && "
                                              "pip install libvirt-python")
    built = make_driver(request.param, tmp_path, "test:///default")
    yield built
    built.close()


@pytest.fixture
def new_spec(driver: VirtDriver) -> Iterator[SpecFactory]:
    made: list[str] = []

    def factory(mdev_count: int = 1, *, guest: str | None = None,
                name: str | None = None, mdevs: tuple[str, ...] | None = None) -> GuestSpec:
        guest = guest or str(uuid.uuid4())
        chosen = mdevs if mdevs is not None else tuple(
            str(uuid.uuid4()) for _ in range(mdev_count))
        made.append(guest)
        return GuestSpec(uuid=guest, name=name or f"instance-{guest[:8]}", vcpus=1,
                         memory_mb=512, disk_path=f"/var/lib/vgpucloud/instances/{guest}/disk",
                         mdevs=tuple(GuestMdev(m, "vfio-pci") for m in chosen))

    yield factory
    for guest in made:
        driver.undefine(guest)


def ours(driver: VirtDriver) -> dict[str, tuple[GuestState, tuple[str, ...]]]:
    return {g.uuid: (g.state, g.mdev_uuids) for g in driver.list_guests() if g.ours}


def test_defined_guest_is_listed_shut_off_with_its_mdevs(
    driver: VirtDriver, new_spec: SpecFactory
) -> None:
    spec = new_spec(2)
    driver.define(spec)
    assert driver.state(spec.uuid) is GuestState.SHUTOFF
    assert ours(driver)[spec.uuid] == (GuestState.SHUTOFF, spec.mdev_uuids)


def test_redefining_the_same_uuid_replaces_the_xml(
    driver: VirtDriver, new_spec: SpecFactory
) -> None:
    first = new_spec(1)
    driver.define(first)
    driver.define(first)
    replacement = new_spec(guest=first.uuid, name=first.name, mdev_count=2)
    driver.define(replacement)
    assert mdev_uuids_in(driver.get_xml(first.uuid)) == list(replacement.mdev_uuids)
    assert list(ours(driver)).count(first.uuid) == 1


def test_start_and_stop_are_idempotent(driver: VirtDriver, new_spec: SpecFactory) -> None:
    spec = new_spec(1)
    driver.define(spec)
    driver.start(spec.uuid)
    driver.start(spec.uuid)
    assert driver.state(spec.uuid) is GuestState.RUNNING
    driver.stop(spec.uuid)
    driver.stop(spec.uuid)
    assert driver.state(spec.uuid) is GuestState.SHUTOFF
    driver.start(spec.uuid)
    assert driver.state(spec.uuid) is GuestState.RUNNING


def test_running_guest_xml_names_its_mdevs(driver: VirtDriver, new_spec: SpecFactory) -> None:
    spec = new_spec(2)
    driver.define(spec)
    driver.start(spec.uuid)
    assert mdev_uuids_in(driver.get_xml(spec.uuid)) == list(spec.mdev_uuids)


def test_redefinition_while_running_applies_at_next_start(
    driver: VirtDriver, new_spec: SpecFactory
) -> None:
    spec = new_spec(1)
    driver.define(spec)
    driver.start(spec.uuid)
    swapped = new_spec(guest=spec.uuid, name=spec.name, mdev_count=1)
    driver.define(swapped)
    assert ours(driver)[spec.uuid] == (GuestState.RUNNING, spec.mdev_uuids)
    driver.stop(spec.uuid)
    assert ours(driver)[spec.uuid] == (GuestState.SHUTOFF, swapped.mdev_uuids)


def test_undefine_powers_off_and_forgets_and_tolerates_absence(
    driver: VirtDriver, new_spec: SpecFactory
) -> None:
    spec = new_spec(1)
    driver.define(spec)
    driver.start(spec.uuid)
    driver.undefine(spec.uuid)
    driver.undefine(spec.uuid)
    assert driver.state(spec.uuid) is None
    assert spec.uuid not in ours(driver)


def test_unknown_guest(driver: VirtDriver) -> None:
    missing = str(uuid.uuid4())
    assert driver.state(missing) is None
    driver.undefine(missing)
    for operation in (driver.start, driver.stop, driver.get_xml):
        with pytest.raises(GuestNotFound) as caught:
            operation(missing)
        assert missing in caught.value.message


def test_name_and_uuid_stay_paired(driver: VirtDriver, new_spec: SpecFactory) -> None:
    spec = new_spec(0)
    driver.define(spec)
    usurper = new_spec(0, name=spec.name)
    with pytest.raises(GuestNameConflict) as taken:
        driver.define(usurper)
    assert f"{spec.name!r} is already used by guest {spec.uuid}" in taken.value.message
    with pytest.raises(GuestNameConflict) as renamed:
        driver.define(new_spec(0, guest=spec.uuid, name=f"{spec.name}-renamed"))
    assert f"already defined as {spec.name!r}" in renamed.value.message
    assert driver.state(usurper.uuid) is None


def test_mdev_holders_find_which_guest_holds_which_mdev(
    driver: VirtDriver, new_spec: SpecFactory
) -> None:
    shared = str(uuid.uuid4())
    old, new = new_spec(mdevs=(shared,)), new_spec(mdevs=(shared,))
    driver.define(old)
    driver.define(new)
    driver.start(new.uuid)
    assert mdev_holders(driver.list_guests())[shared].uuid == new.uuid


def test_host_info_reports_versions(driver: VirtDriver) -> None:
    info = driver.host_info()
    assert isinstance(info, HostInfo)
    assert info.hypervisor_type in ("fake", "TEST")
    assert info.libvirt_version >= Version(1, 0, 0)
    assert info.kernel_version >= Version(2, 6, 0)
