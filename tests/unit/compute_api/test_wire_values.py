"""Pure wire-format helpers of the Compute API: fault shapes, versions, host ids."""

from __future__ import annotations

from vgpucloud.api.compute.faults import fault_body
from vgpucloud.api.compute.handlers.hosts import hypervisor_version
from vgpucloud.api.compute.server_views import host_id
from vgpucloud.api.compute.versions import v21_document
from vgpucloud.compute.models import Flavor, Instance, VmState

FLAVOR = Flavor("vgpu_1", "vgpu_1", vcpus=1, ram=512, disk=1)


def instance(project: str, host: str | None) -> Instance:
    return Instance("5294f726-33d5-472a-bef1-9e19bb41626d", "vgpu2", project, "alice", FLAVOR,
                    "fc3c5f9e-e08f-44f7-990b-fdfc5427bbee", VmState.ACTIVE, host=host)


def test_fault_names_follow_nova():
    assert fault_body(404, "Flavor x could not be found.") == {
        "itemNotFound": {"code": 404, "message": "Flavor x could not be found."}}
    assert list(fault_body(409, "m")) == ["conflictingRequest"]
    assert list(fault_body(500, "m")) == ["computeFault"]


def test_libvirt_versions_become_novas_integers():
    assert hypervisor_version("8.0.0") == 8_000_000
    assert hypervisor_version("10.2") == 10_002_000
    assert hypervisor_version(None) is None


def test_host_id_hides_the_host_but_shows_co_location():
    on_606 = host_id(instance("demo", "virtlab606"))
    assert on_606 and "virtlab606" not in on_606
    assert on_606 == host_id(instance("demo", "virtlab606"))
    assert on_606 != host_id(instance("other", "virtlab606"))
    assert host_id(instance("demo", None)) == ""


def test_v21_document_announces_the_range():
    document = v21_document("http://h/compute/v2.1/")
    assert (document["min_version"], document["version"]) == ("2.1", "2.100")
