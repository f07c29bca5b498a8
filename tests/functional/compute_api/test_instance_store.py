"""The conductor's ``InstanceStore`` and the API's instance writes, on every backend."""

from __future__ import annotations

import uuid

import pytest
from sqlalchemy import select

from vgpucloud.compute.api_ports import InstanceQuery, ServerRequest
from vgpucloud.compute.models import (
    CONDUCTOR_QUEUE,
    BuildRequest,
    DeleteRequest,
    Fault,
    Flavor,
    TaskState,
    VmState,
)
from vgpucloud.errors import Conflict, NotFound
from vgpucloud.storage import tasks as task_rows
from vgpucloud.storage.compute_tables import tasks

VGPU_FLAVOR = Flavor("vgpu_1", "vgpu_1", vcpus=1, ram=512, disk=1,
                     extra_specs={"resources:VGPU": "1"})
CIRROS = "fc3c5f9e-e08f-44f7-990b-fdfc5427bbee"


def server_request(count: int = 1, name: str = "vgpu2", project: str = "demo",
                   min_count: int = 1) -> ServerRequest:
    names = (name,) if count == 1 else tuple(f"{name}-{n}" for n in range(1, count + 1))
    return ServerRequest(
        request_id=f"req-{uuid.uuid4()}", reservation_id="r-abc123", project_id=project,
        user_id="alice", flavor=VGPU_FLAVOR, image_ref=CIRROS, names=names,
        uuids=tuple(str(uuid.uuid4()) for _ in names), min_count=min_count)


def conductor_tasks(db_engine):
    with db_engine.connect() as connection:
        return list(connection.execute(select(tasks).where(tasks.c.host == CONDUCTOR_QUEUE)
                                       .order_by(tasks.c.id)))


def test_multi_create_writes_instances_actions_and_one_build_task(compute_store, db_engine):
    request = server_request(count=3, min_count=2)
    created = compute_store.create_instances(request)
    assert [i.name for i in created] == ["vgpu2-1", "vgpu2-2", "vgpu2-3"]
    assert [i.launch_index for i in created] == [0, 1, 2]
    assert {(i.vm_state, i.task_state, i.status) for i in created} == {
        (VmState.BUILDING, TaskState.SCHEDULING, "BUILD")}
    assert created[0].flavor == VGPU_FLAVOR
    (row,) = conductor_tasks(db_engine)
    assert row.kind == "build"
    build = BuildRequest.from_payload(task_rows.get_task(db_engine, row.uuid).payload)
    assert build == BuildRequest(request.request_id, request.uuids, 2)
    for instance in created:
        (action,) = compute_store.list_actions(instance.uuid)
        assert (action.action, action.request_id, action.project_id) == (
            "create", request.request_id, "demo")


def test_build_reaches_active_with_events(compute_store):
    request = server_request()
    (instance,) = compute_store.create_instances(request)
    compute_store.start_event(request.request_id, instance.uuid,
                              "conductor_schedule_and_build_instances")
    compute_store.start_event(request.request_id, instance.uuid,
                              "conductor_schedule_and_build_instances")  # a retried step
    compute_store.update_instance(instance.uuid, expected_task_state=TaskState.SCHEDULING,
                                  task_state=TaskState.SPAWNING, host="virtlab606",
                                  node="virtlab606")
    compute_store.finish_event(request.request_id, instance.uuid,
                               "conductor_schedule_and_build_instances", "Success")
    active = compute_store.update_instance(instance.uuid,
                                           expected_task_state=TaskState.SPAWNING,
                                           vm_state=VmState.ACTIVE, task_state=None)
    assert (active.status, active.task_state, active.host) == ("ACTIVE", None, "virtlab606")
    assert active.launched_at is not None and active.terminated_at is None
    action = compute_store.get_action(instance.uuid, request.request_id)
    assert action.message is None
    (event,) = action.events
    assert (event.event, event.result) == ("conductor_schedule_and_build_instances", "Success")
    assert event.finish_time is not None


def test_delete_started_during_build_wins_the_compare_and_swap(compute_store, db_engine):
    (instance,) = compute_store.create_instances(server_request())
    deleting = compute_store.request_delete(instance.uuid, "req-delete-1", "demo", "alice")
    assert deleting.task_state is TaskState.DELETING
    with pytest.raises(Conflict, match="task_state deleting, not spawning"):
        compute_store.update_instance(instance.uuid, expected_task_state=TaskState.SPAWNING,
                                      vm_state=VmState.ACTIVE, task_state=None)
    assert compute_store.get_instance(instance.uuid).vm_state is VmState.BUILDING
    # a repeated DELETE queues nothing more
    compute_store.request_delete(instance.uuid, "req-delete-2", "demo", "alice")
    kinds = [row.kind for row in conductor_tasks(db_engine)]
    assert kinds == ["build", "delete"]
    payload = task_rows.get_task(db_engine, conductor_tasks(db_engine)[1].uuid).payload
    assert DeleteRequest.from_payload(payload) == DeleteRequest("req-delete-1", instance.uuid)
    deleted = compute_store.update_instance(instance.uuid,
                                            expected_task_state=TaskState.DELETING,
                                            vm_state=VmState.DELETED, task_state=None)
    assert deleted.terminated_at is not None and deleted.status == "DELETED"
    assert compute_store.get_instance(instance.uuid).vm_state is VmState.DELETED
    assert compute_store.list_instances(InstanceQuery(project_id="demo")) == []


def test_no_valid_host_leaves_an_error_with_fault(compute_store):
    request = server_request()
    (instance,) = compute_store.create_instances(request)
    fault = Fault(500, "No valid host was found. There are not enough hosts available.")
    failed = compute_store.update_instance(instance.uuid, vm_state=VmState.ERROR,
                                           task_state=None, fault=fault)
    assert failed.status == "ERROR"
    assert failed.fault is not None and failed.fault.message == fault.message
    assert failed.fault.created is not None
    compute_store.finish_event(request.request_id, instance.uuid,
                               "conductor_schedule_and_build_instances", "Error",
                               "NoValidHost: ...")
    action = compute_store.get_action(instance.uuid, request.request_id)
    assert action.message == "Error"
    assert action.events[0].traceback == "NoValidHost: ..."


def test_unknown_instance_and_action_are_not_found(compute_store):
    with pytest.raises(NotFound, match="Instance 0000 could not be found"):
        compute_store.get_instance("0000")
    with pytest.raises(NotFound):
        compute_store.update_instance("0000", vm_state=VmState.ERROR)
    (instance,) = compute_store.create_instances(server_request())
    with pytest.raises(NotFound, match="req-nope"):
        compute_store.start_event("req-nope", instance.uuid, "compute__do_build")


def test_list_filters_by_project_name_regex_and_pages(compute_store):
    mine = compute_store.create_instances(server_request(count=3, name="web"))
    compute_store.create_instances(server_request(name="db", project="other"))
    assert {i.name for i in compute_store.list_instances(InstanceQuery())} == {
        "web-1", "web-2", "web-3", "db"}
    assert {i.name for i in compute_store.list_instances(
        InstanceQuery(project_id="demo", name="^web-[12]$"))} == {"web-1", "web-2"}
    assert compute_store.list_instances(InstanceQuery(project_id="demo", name="db")) == []
    by_reservation = compute_store.list_instances(InstanceQuery(reservation_id="r-abc123"))
    assert len(by_reservation) == 4
    first = compute_store.list_instances(InstanceQuery(project_id="demo", limit=2))
    rest = compute_store.list_instances(InstanceQuery(project_id="demo",
                                                      marker=first[-1].uuid))
    assert {i.uuid for i in first + rest} == {i.uuid for i in mine}


def test_aggregates_of_host(compute_store):
    gpu = compute_store.create_aggregate("gpu-t4", "az1")
    compute_store.create_aggregate("empty", None)
    compute_store.add_aggregate_host(gpu.id, "virtlab606")
    compute_store.set_aggregate_metadata(gpu.id, {"gpu": "t4"})
    (found,) = compute_store.aggregates_of_host("virtlab606")
    assert (found.uuid, found.hosts, found.availability_zone) == (
        gpu.uuid, ("virtlab606",), "az1")
    assert found.metadata == {"availability_zone": "az1", "gpu": "t4"}
    assert compute_store.aggregates_of_host("virtlab607") == []
