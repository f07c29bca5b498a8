"""Sorting mdevs into in-use, our orphans and foreign orphans."""

from __future__ import annotations

from vgpucloud.agent.ledger import LedgerEntry
from vgpucloud.agent.mdev import Mdev
from vgpucloud.agent.orphans import Origin, find_orphans

GPU = "0000:18:00.0"


def _mdev(n: int) -> Mdev:
    return Mdev(uuid=f"00000000-0000-4000-8000-00000000000{n}", parent=GPU, type_id="nvidia-222")


def _entry(mdev: Mdev, state: str, *, ours: bool = True) -> LedgerEntry:
    return LedgerEntry(uuid=mdev.uuid, parent=GPU, type_id="nvidia-222", state=state,
                       owner=None if state == "free" else "inst", provider=None,
                       created_by_us=ours, pending_create=False, created_at="", updated_at="")


def test_guest_held_and_ledger_reserved_mdevs_are_not_orphans() -> None:
    held, reserved, free_ours, foreign = (_mdev(n) for n in range(4))
    orphans = find_orphans(
        [held, reserved, free_ours, foreign],
        [_entry(held, "attached"), _entry(reserved, "reserved"), _entry(free_ours, "free")],
        held_by_guests={held.uuid},
    )
    assert [(o.mdev.uuid, o.origin) for o in orphans] == [
        (free_ours.uuid, Origin.OURS),
        (foreign.uuid, Origin.FOREIGN),
    ]


def test_a_free_row_we_did_not_create_is_still_foreign() -> None:
    adopted = _mdev(5)
    orphans = find_orphans([adopted], [_entry(adopted, "free", ours=False)], held_by_guests=())
    assert orphans[0].origin is Origin.FOREIGN


def test_an_mdev_a_stopped_guest_names_is_not_an_orphan() -> None:
    mdev = _mdev(6)
    assert find_orphans([mdev], [], held_by_guests={mdev.uuid}) == []
