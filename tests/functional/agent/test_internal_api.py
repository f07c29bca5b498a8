"""The internal API over real databases: hosts, heartbeats, leases, results."""

from __future__ import annotations

import threading
import uuid as uuidlib

import httpx
import pytest
from sqlalchemy import Engine, update

from vgpucloud import errors
from vgpucloud.client.internal import InternalClient
from vgpucloud.storage import tasks as task_rows
from vgpucloud.storage.compute_tables import tasks


def test_agent_registers_then_heartbeats_and_is_listed(internal: InternalClient) -> None:
    first = internal.register_host("compute-1", {"libvirt_version": "10.0.0",
                                                 "qemu_version": "8.2.2",
                                                 "kernel_version": "6.8.0"})
    again = internal.register_host("compute-1", {"libvirt_version": "10.1.0"})
    assert again["uuid"] == first["uuid"]
    assert again["libvirt_version"] == "10.1.0"
    assert internal.heartbeat("compute-1")["last_heartbeat"] is not None
    assert [h["name"] for h in internal.list_hosts()] == ["compute-1"]


def test_heartbeat_of_unknown_host_is_404_with_code(internal: InternalClient) -> None:
    with pytest.raises(errors.NotFound) as caught:
        internal.heartbeat("nowhere")
    assert caught.value.code == "internal.host.not_found"


def test_non_admin_token_is_forbidden(api_app: object) -> None:
    client = InternalClient("http://cloud/internal/v1", token="alice:demo",
                            transport=httpx.WSGITransport(app=api_app))
    with pytest.raises(errors.Forbidden):
        client.list_hosts()


def test_bad_lease_body_is_400_in_placement_shape(api_app: object) -> None:
    http = httpx.Client(transport=httpx.WSGITransport(app=api_app), base_url="http://cloud")
    reply = http.post("/internal/v1/hosts/h/tasks/lease", json={"owner": "a",
                      "lease_seconds": 0}, headers={"X-Auth-Token": "admin"})
    assert reply.status_code == 400
    error = reply.json()["errors"][0]
    assert error["status"] == 400 and "lease_seconds" in error["detail"]
    assert error["request_id"].startswith("req-")


def test_two_tasks_are_leased_oldest_first_and_only_once(internal: InternalClient) -> None:
    first = internal.enqueue_task("compute-1", "spawn", {"instance_uuid": "a"})
    second = internal.enqueue_task("compute-1", "destroy", {"instance_uuid": "a"})
    internal.enqueue_task("compute-2", "spawn", {"instance_uuid": "b"})
    leased = internal.lease_tasks("compute-1", "agent-x", max_tasks=5)
    assert [t["uuid"] for t in leased] == [first["uuid"], second["uuid"]]
    assert all(t["state"] == "leased" and t["attempts"] == 1 for t in leased)
    assert internal.lease_tasks("compute-1", "agent-y", max_tasks=5) == []


def test_enqueue_with_the_same_uuid_is_idempotent(internal: InternalClient) -> None:
    uuid = str(uuidlib.uuid4())
    one = internal.enqueue_task("compute-1", "spawn", {"instance_uuid": "a"}, uuid=uuid)
    two = internal.enqueue_task("compute-1", "spawn", {"instance_uuid": "a"}, uuid=uuid)
    assert one == two
    with pytest.raises(errors.Conflict) as caught:
        internal.enqueue_task("compute-1", "spawn", {"instance_uuid": "other"}, uuid=uuid)
    assert caught.value.code == "internal.task.duplicate"


def test_expired_lease_is_handed_out_again_and_old_owner_cannot_report(
    internal: InternalClient, compute_engine: Engine
) -> None:
    task = internal.enqueue_task("compute-1", "spawn", {"instance_uuid": "a"})
    internal.lease_tasks("compute-1", "crashed-agent", lease_seconds=60)
    with compute_engine.begin() as connection:  # the lease runs out
        connection.execute(update(tasks).values(lease_expires_at=task_rows.utcnow()
                                                .replace(year=2000)))
    [again] = internal.lease_tasks("compute-1", "new-agent")
    assert again["uuid"] == task["uuid"] and again["attempts"] == 2
    with pytest.raises(errors.Conflict) as caught:
        internal.report_result(task["uuid"], "crashed-agent", "done", result={})
    assert caught.value.code == "internal.task.not_lease_owner"
    done = internal.report_result(task["uuid"], "new-agent", "done", result={"ok": 1})
    assert done["state"] == "done" and done["result"] == {"ok": 1}
    assert internal.report_result(task["uuid"], "new-agent", "done", result={"ok": 1}) == done
    assert internal.get_task(task["uuid"])["state"] == "done"


def test_long_poll_returns_a_task_enqueued_while_waiting(internal: InternalClient) -> None:
    got: list[list[dict[str, object]]] = []
    poller = threading.Thread(target=lambda: got.append(
        internal.lease_tasks("compute-1", "agent-x", wait_seconds=10)))
    poller.start()
    task = internal.enqueue_task("compute-1", "spawn", {"instance_uuid": "a"})
    poller.join()
    assert [t["uuid"] for t in got[0]] == [task["uuid"]]


def test_concurrent_leases_never_share_a_task(compute_engine: Engine) -> None:
    for n in range(12):
        task_rows.enqueue(compute_engine, "compute-1", "spawn", {"n": n})
    won: dict[str, list[str]] = {}

    def agent(owner: str) -> None:
        mine = won.setdefault(owner, [])
        while batch := task_rows.lease(compute_engine, "compute-1", owner, 60, 2):
            mine.extend(t.uuid for t in batch)

    threads = [threading.Thread(target=agent, args=(f"agent-{i}",)) for i in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    leased = [uuid for batch in won.values() for uuid in batch]
    assert len(leased) == len(set(leased)) == 12


def test_the_api_process_serves_the_internal_api(database_url: str) -> None:
    from vgpucloud.api.wsgi import build_application
    from vgpucloud.conf import Settings

    app = build_application(Settings(database_url=database_url))
    http = httpx.Client(transport=httpx.WSGITransport(app=app), base_url="http://cloud")
    services = {s["name"]: s for s in http.get("/").json()["services"]}
    assert services["internal"]["href"] == "http://cloud/internal/v1"
    reply = http.get("/internal/v1/hosts", headers={"X-Auth-Token": "admin"})
    assert reply.status_code == 200 and "hosts" in reply.json()
