"""Orphan mdevs: mediated devices that exist but that no guest uses — made safe to clean.

The MOSK vGPU blog's workaround after a type change (Nova never deletes mdevs, and one
unused mdev of the old type blocks the new type on that pGPU) is, by hand::

    1. find the mdevs in all dumped domain XMLs      (virsh dumpxml … | grep uuid)
    2. compare with ls /sys/bus/mdev/devices/
    3. echo 1 > /sys/bus/mdev/devices/$UUID/remove   for the ones no domain names

This module does steps 1-2 from the virt driver's guests and the agent's ledger, and sorts
each orphan by who made it, because only our own may be removed without asking (DESIGN
rule 2). The agent already removes its own free mdevs of an old type when a new type needs
the pGPU; ``vgpucloud host orphans --remove --include-foreign`` is the operator's explicit
decision for mdevs that somebody else (e.g. Nova, before migrating to vgpucloud) left.
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Collection, Sequence

from vgpucloud.agent.ledger import LedgerEntry
from vgpucloud.agent.mdev import Mdev


class Origin(enum.StrEnum):
    OURS = "ours"        # in the ledger, created by us, not attached: safe to remove
    FOREIGN = "foreign"  # not in the ledger (or not created by us): remove only when asked


@dataclasses.dataclass(frozen=True, slots=True)
class Orphan:
    mdev: Mdev
    origin: Origin


def find_orphans(
    mdevs: Sequence[Mdev], ledger: Sequence[LedgerEntry], held_by_guests: Collection[str]
) -> list[Orphan]:
    """Mdevs that no defined guest names and that the ledger does not count as in use
    (attached, reserved for a spawn in progress, or migrating in)."""
    by_uuid = {entry.uuid: entry for entry in ledger}
    orphans = []
    for mdev in sorted(mdevs, key=lambda m: (m.parent, m.uuid)):
        if mdev.uuid in held_by_guests:
            continue
        entry = by_uuid.get(mdev.uuid)
        if entry is not None and entry.state != "free":
            continue  # a spawn or a migration is about to use it
        ours = entry is not None and entry.created_by_us
        orphans.append(Orphan(mdev, Origin.OURS if ours else Origin.FOREIGN))
    return orphans
