"""What only the libvirt driver does, against libvirt's test driver (``test:///default``)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from types import ModuleType

import pytest

from tests.conftest import require_service
from vgpucloud.agent.virt.domain import GuestMdev, GuestSpec, read_domain
from vgpucloud.agent.virt.driver import GuestState
from vgpucloud.agent.virt.errors import DriverUnavailable
from vgpucloud.agent.virt.libvirt_driver import LibvirtDriver  # imports libvirt lazily

URI = "test:///default"

pytestmark = pytest.mark.libvirt


@pytest.fixture
def libvirt() -> ModuleType:
    try:
        import libvirt as module  # type: ignore[import-untyped, unused-ignore]
    except ImportError:
        require_service("libvirt-python", "apt-get install libvirt-dev pkg-config && "
                                          "pip install libvirt-python")
    loaded: ModuleType = module
    return loaded


@pytest.fixture
def driver(libvirt: ModuleType) -> Iterator[LibvirtDriver]:
    built = LibvirtDriver(URI)
    yield built
    built.close()


def one_vgpu_guest() -> GuestSpec:
    guest = str(uuid.uuid4())
    return GuestSpec(uuid=guest, name=f"instance-{guest[:8]}", vcpus=1, memory_mb=512,
                     disk_path=f"/var/lib/vgpucloud/instances/{guest}/disk",
                     mdevs=(GuestMdev(str(uuid.uuid4()), "vfio-pci"),))


def test_guest_defined_by_someone_else_is_listed_as_foreign(driver: LibvirtDriver) -> None:
    foreign = [g for g in driver.list_guests() if g.name == "test"]  # the test driver's own
    assert len(foreign) == 1
    assert foreign[0].ours is False


def test_paused_guest_is_resumed_by_start(driver: LibvirtDriver, libvirt: ModuleType) -> None:
    spec = one_vgpu_guest()
    driver.define(spec)
    try:
        driver.start(spec.uuid)
        operator = libvirt.open(URI)  # someone runs `virsh suspend` on the host
        operator.lookupByUUIDString(spec.uuid).suspend()
        assert driver.state(spec.uuid) is GuestState.PAUSED
        driver.start(spec.uuid)
        assert driver.state(spec.uuid) is GuestState.RUNNING
        operator.close()
    finally:
        driver.undefine(spec.uuid)


def test_test_hypervisor_reports_itself(driver: LibvirtDriver) -> None:
    info = driver.host_info()
    assert info.hypervisor_type == "TEST"
    # Not a QEMU: the test driver's "hypervisor version" is 2, so migration checks fail.
    assert any("QEMU" in p for p in info.mdev_live_migration_problems())


def test_unreachable_libvirt_names_the_uri_and_the_fix(libvirt: ModuleType) -> None:
    with pytest.raises(DriverUnavailable) as caught:
        LibvirtDriver("test:///nonexistent/node.xml")
    assert "'test:///nonexistent/node.xml'" in caught.value.message
    assert "[libvirt] connection_uri" in caught.value.message


def test_variant_vf_guest_keeps_its_pci_hostdev_in_libvirt(driver: LibvirtDriver) -> None:
    guest = str(uuid.uuid4())
    spec = GuestSpec(uuid=guest, name=f"instance-{guest[:8]}", vcpus=1, memory_mb=512,
                     disk_path=f"/var/lib/vgpucloud/instances/{guest}/disk",
                     pci_devices=("0000:41:00.4",))
    driver.define(spec)
    try:
        summary = read_domain(driver.get_xml(guest))
        assert summary.pci_addresses == ("0000:41:00.4",)
        assert summary.mdev_uuids == ()
    finally:
        driver.undefine(guest)
