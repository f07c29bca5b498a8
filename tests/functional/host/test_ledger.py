"""The mdev ledger on a real SQLite file, with simulated hosts: picks, crashes, reboots."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from vgpucloud.agent.ledger import Ledger, materialize
from vgpucloud.errors import MdevClaimConflict, MdevNotFound
from vgpucloud.sim import SimHost

GPU = "0000:84:00.0"


@pytest.fixture
def host(tmp_path: Path) -> SimHost:
    return SimHost.create(tmp_path / "host", "m60", gpus=2)


@pytest.fixture
def ledger(tmp_path: Path) -> Ledger:
    return Ledger.in_state_dir(tmp_path / "state")


def test_boot_records_intent_then_creates_then_attaches(host: SimHost, ledger: Ledger) -> None:
    (entry,) = ledger.reserve("instance-1", GPU, "nvidia-35", provider="rp-84")
    assert (entry.state, entry.pending_create, entry.created_by_us) == ("reserved", True, True)
    mdev = materialize(ledger, host.sysfs(), entry)
    assert mdev.uuid == entry.uuid
    attached = ledger.attach(entry.uuid, "instance-1")
    assert (attached.state, attached.owner, attached.provider, attached.pending_create) == (
        "attached", "instance-1", "rp-84", False)
    assert ledger.by_owner("instance-1") == [attached]


def test_delete_frees_the_mdev_and_the_next_boot_reuses_it(host: SimHost,
                                                          ledger: Ledger) -> None:
    (entry,) = ledger.reserve("instance-1", GPU, "nvidia-35")
    materialize(ledger, host.sysfs(), entry)
    ledger.attach(entry.uuid, "instance-1")
    (freed,) = ledger.release("instance-1")
    assert freed.uuid == entry.uuid
    assert [e.uuid for e in ledger.free(GPU, "nvidia-35")] == [entry.uuid]
    (reused,) = ledger.reserve("instance-2", GPU, "nvidia-35")
    assert (reused.uuid, reused.pending_create, reused.owner) == (entry.uuid, False, "instance-2")
    assert ledger.free() == []


def test_attach_for_another_instance_is_refused(host: SimHost, ledger: Ledger) -> None:
    (entry,) = ledger.reserve("instance-1", GPU, "nvidia-35")
    materialize(ledger, host.sysfs(), entry)
    with pytest.raises(MdevClaimConflict, match="reserved for instance-1, not for instance-2"):
        ledger.attach(entry.uuid, "instance-2")
    with pytest.raises(MdevNotFound):
        ledger.attach("00000000-0000-4000-8000-000000000000", "instance-1")


def test_attach_before_create_is_refused(ledger: Ledger) -> None:
    (entry,) = ledger.reserve("instance-1", GPU, "nvidia-35")
    with pytest.raises(MdevNotFound, match="never created"):
        ledger.attach(entry.uuid, "instance-1")


def test_crash_between_reserve_and_create(tmp_path: Path, host: SimHost) -> None:
    before = Ledger.in_state_dir(tmp_path / "state")
    (intent,) = before.reserve("instance-1", GPU, "nvidia-35")
    before.close()  # the agent dies here: no mdev was created
    assert host.sysfs().mdevs() == ()

    after = Ledger.in_state_dir(tmp_path / "state")
    recovery = after.plan_recovery(host.sysfs().mdevs())
    assert [e.uuid for e in recovery.recreate] == [intent.uuid]
    (again,) = after.reserve("instance-1", GPU, "nvidia-35")  # the task is redelivered
    assert again.uuid == intent.uuid and again.pending_create
    materialize(after, host.sysfs(), again)
    after.attach(again.uuid, "instance-1")
    assert [m.uuid for m in host.sysfs().mdevs()] == [intent.uuid]


def test_crash_after_create_before_it_was_recorded(host: SimHost, ledger: Ledger) -> None:
    (intent,) = ledger.reserve("instance-1", GPU, "nvidia-35")
    host.sysfs().create_mdev(GPU, "nvidia-35", intent.uuid)  # then the agent dies
    (again,) = ledger.reserve("instance-1", GPU, "nvidia-35")
    mdev = materialize(ledger, host.sysfs(), again)  # adopts, does not create a second one
    assert mdev.uuid == intent.uuid
    assert len(host.sysfs().mdevs()) == 1
    entry = ledger.get(intent.uuid)
    assert entry is not None and not entry.pending_create


def test_host_reboot_recreates_owned_mdevs_with_their_uuids(host: SimHost,
                                                          ledger: Ledger) -> None:
    sysfs = host.sysfs()
    owned = []
    for instance, gpu in (("instance-1", GPU), ("instance-2", "0000:85:00.0")):
        (entry,) = ledger.reserve(instance, gpu, "nvidia-35")
        materialize(ledger, sysfs, entry)
        owned.append(ledger.attach(entry.uuid, instance))
    (spare,) = ledger.reserve("instance-3", GPU, "nvidia-35")
    materialize(ledger, sysfs, spare)
    ledger.release("instance-3")

    host.reboot()
    foreign = sysfs.create_mdev("0000:85:00.0", "nvidia-35")  # someone else's, e.g. mdevctl
    recovery = ledger.plan_recovery(sysfs.mdevs())
    assert [e.uuid for e in recovery.recreate] == [e.uuid for e in owned]  # by parent
    assert [e.uuid for e in recovery.forget] == [spare.uuid]
    assert recovery.foreign == (foreign,)

    for entry in recovery.recreate:
        materialize(ledger, sysfs, entry)
    for entry in recovery.forget:
        ledger.forget(entry.uuid)
    assert {m.uuid for m in sysfs.mdevs()} == {e.uuid for e in owned} | {foreign.uuid}
    assert ledger.foreign(sysfs.mdevs()) == [foreign]
    assert ledger.missing(sysfs.mdevs()) == []


def test_two_agents_never_pick_the_same_free_mdev(tmp_path: Path, host: SimHost) -> None:
    path = tmp_path / "state" / "mdev-ledger.sqlite"
    seed = Ledger(path)
    for entry in seed.reserve("old", GPU, "nvidia-35", count=4):
        materialize(seed, host.sysfs(), entry)
    seed.release("old")
    picks: list[str] = []
    barrier = threading.Barrier(8)

    def boot(instance: str) -> None:
        mine = Ledger(path)
        barrier.wait()
        (entry,) = mine.reserve(instance, GPU, "nvidia-35")
        picks.append(entry.uuid)
        mine.close()

    threads = [threading.Thread(target=boot, args=(f"instance-{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(picks) == len(set(picks)) == 8
    entries = seed.entries()
    assert sum(1 for e in entries if not e.pending_create) == 4
    assert {e.state for e in entries} == {"reserved"}


def test_mtty_guest_with_two_mdevs_of_one_parent(tmp_path: Path, ledger: Ledger) -> None:
    host = SimHost.create(tmp_path / "mtty", "mtty")
    entries = ledger.reserve("instance-1", "mtty", "mtty-1", count=2)
    assert len({e.uuid for e in entries}) == 2
    assert ledger.reserve("instance-1", "mtty", "mtty-1", count=2) == entries
    for entry in entries:
        materialize(ledger, host.sysfs(), entry)
    assert len(host.sysfs().mdevs()) == 2


def test_live_migration_claim_is_a_ledger_row(ledger: Ledger) -> None:
    (claim,) = ledger.reserve("instance-1", GPU, "nvidia-35", state="migrating-in")
    assert claim.state == "migrating-in"
    ledger.release("instance-1")  # migration aborted: the never-created claim vanishes
    assert ledger.entries() == []
