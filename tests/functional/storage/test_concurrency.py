"""Concurrent writers: generation compare-and-swap means one winner, never a lost update."""

from __future__ import annotations

import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import text

from tests.functional.storage.helpers import claim, t4_host
from vgpucloud.errors import ConcurrentUpdate, Conflict
from vgpucloud.placement.models import Inventory


def _race(calls):
    """Run the calls at the same moment in threads; each outcome is a result or an error."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        barrier.wait()
        try:
            return call()
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


def test_two_agents_racing_one_generation_one_wins(store):
    provider = store.create_provider("host1")
    outcomes = _race([
        lambda: store.set_inventory(provider.uuid, 0, Inventory("VGPU", 16)),
        lambda: store.set_inventory(provider.uuid, 0, Inventory("VGPU", 8)),
    ])
    winners = [o for o in outcomes if o == 1]
    losers = [o for o in outcomes if isinstance(o, ConcurrentUpdate)]
    assert (len(winners), len(losers)) == (1, 1), outcomes
    generation, inventories = store.get_inventories(provider.uuid)
    assert generation == 1
    assert inventories["VGPU"].total == (16 if outcomes[0] == 1 else 8)


@pytest.mark.parametrize("database_url", ["postgresql"], indirect=True)
def test_writer_queued_behind_a_committed_bump_loses(store, db_engine):
    """The CAS itself (not the early check) stops the second writer: it read generation 0,
    waits on the row lock held by another transaction that bumps to 1, and then finds no
    row at generation 0 to update."""
    provider = store.create_provider("host1")
    gate = threading.Event()

    with db_engine.connect() as holder:
        holder.execute(text(
            "UPDATE resource_providers SET generation = 1 WHERE uuid = :u"), {"u": provider.uuid})
        backend_pid = holder.execute(text("SELECT pg_backend_pid()")).scalar()
        outcome: list[object] = []

        def write() -> None:
            gate.set()
            try:
                outcome.append(store.set_inventory(provider.uuid, 0, Inventory("VGPU", 16)))
            except Exception as exc:
                outcome.append(exc)

        worker = threading.Thread(target=write)
        worker.start()
        gate.wait()
        _wait_until_blocked_by(holder, backend_pid)
        holder.commit()
        worker.join()
    assert len(outcome) == 1 and isinstance(outcome[0], ConcurrentUpdate), outcome
    assert "resource provider generation conflict" in str(outcome[0])
    assert store.get_inventories(provider.uuid) == (1, {})


def _wait_until_blocked_by(observer, holder_pid: int) -> None:
    """Poll pg_stat_activity until some backend waits on a lock held by ``holder_pid``."""
    deadline = time.monotonic() + 30
    query = text("SELECT count(*) FROM pg_stat_activity "
                 "WHERE :pid = ANY(pg_blocking_pids(pid))")
    with observer.engine.connect() as probe:
        while time.monotonic() < deadline:
            if probe.execute(query, {"pid": holder_pid}).scalar():
                return
            probe.rollback()
            time.sleep(0.01)
    raise AssertionError("the writer never queued behind the open transaction")


def test_racing_vgpu_claims_never_overcommit_a_pgpu(store):
    """24 instances race for a 16-VGPU T4 with client retries: exactly 16 get one."""
    _, (gpu,) = t4_host(store, "host1")
    vms = [str(uuid.uuid4()) for _ in range(24)]

    def claim_with_retries(vm: str) -> str:
        for _ in range(200):
            try:
                store.replace_allocations([claim(vm, {gpu.uuid: {"VGPU": 1}})])
                return "claimed"
            except ConcurrentUpdate:
                continue
            except Conflict:
                return "full"
        return "gave up"

    def batch(chunk: list[str]):
        return lambda: [claim_with_retries(vm) for vm in chunk]

    results = _race([batch(vms[i::6]) for i in range(6)])
    flat = [r for chunk in results for r in chunk]
    assert sorted(set(flat)) == ["claimed", "full"], results
    assert flat.count("claimed") == 16
    assert store.get_provider_usages(gpu.uuid)[1] == {"VGPU": 16}
    assert len(store.get_provider_allocations(gpu.uuid)[1]) == 16
