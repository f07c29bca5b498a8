"""vGPUs on hosts with NVIDIA's kernel variant driver (Ubuntu Noble, RHEL 10): VF claims.

There the GPU's SR-IOV VFs show no mdev types; a vGPU is a VF whose vGPU type was written
to ``/sys/bus/pci/devices/<vf>/nvidia/current_vgpu_type`` and which the guest gets whole, as
a PCI hostdev. The VF has no UUID, so its claim is a ledger row like an mdev's whose
``uuid`` is a generated claim id and whose ``parent`` is the VF address; ``pending_create``
means "the type is not written yet". The ledger's rules then hold for VFs unchanged::

    claim      no foreign type on the VF; ledger.reserve(I, vf, type)   (DESIGN rule 1)
    activate   echo 557 > current_vgpu_type, or adopt it when a crash came after the write
    release    echo 0 > current_vgpu_type only when the VF runs the type our row records
               (rule 2), while the row is still the instance's; then the row is dropped

Every step checks what the VF shows first, so a task redelivered after a crash converges
(rule 8). A VF whose type somebody else set (no row of ours) is never used nor cleared.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

from vgpucloud.agent.ledger import Ledger, LedgerEntry
from vgpucloud.agent.mdev import ParentDevice, ParentKind, Sysfs
from vgpucloud.errors import (
    InvalidDeviceName,
    MdevBusy,
    MdevClaimConflict,
    NoInstancesLeft,
    ParentGone,
)

LOG = logging.getLogger(__name__)


def variant_vfs(parents: Iterable[ParentDevice]) -> dict[str, ParentDevice]:
    """The variant-driver VFs among ``parents``, by address."""
    return {p.address: p for p in parents if p.kind is ParentKind.NVIDIA_VARIANT}


def foreign_vfs(parents: Iterable[ParentDevice], entries: Iterable[LedgerEntry]) -> set[str]:
    """VFs running a vGPU type that no ledger row of ours records: somebody else's.

    They are not capacity and are never cleared; like foreign mdevs, they are reported.
    """
    ours = {(e.parent, e.type_id) for e in entries}
    return {vf.address for vf in variant_vfs(parents).values()
            if vf.current_type is not None and (vf.address, vf.current_type) not in ours}


def current_type_path(vf: str) -> str:
    return f"/sys/bus/pci/devices/{vf}/nvidia/current_vgpu_type"


class VariantVfs:
    """Claims, activates and releases variant-driver VFs through the ledger and sysfs."""

    def __init__(self, sysfs: Sysfs, ledger: Ledger) -> None:
        self.sysfs = sysfs
        self.ledger = ledger

    def find(self, address: str) -> ParentDevice | None:
        """The VF at ``address`` if it is a variant-driver VF now, else None."""
        try:
            device = self.sysfs.parent(address)
        except (ParentGone, InvalidDeviceName):
            return None
        return device if device.kind is ParentKind.NVIDIA_VARIANT else None

    def is_vf(self, address: str) -> bool:
        return self.find(address) is not None

    # --- spawn ---------------------------------------------------------------------------

    def claim(self, owner: str, vf: str, type_id: str, provider: str | None) -> LedgerEntry:
        """``vf`` with ``type_id`` for ``owner``: recorded, then its type written."""
        self.sweep(vf)
        device = self._require(vf)
        rows = self._rows_on(vf)
        taken = sorted({e.owner for e in rows if e.owner not in (None, owner)})
        if taken:
            raise MdevClaimConflict(
                f"VF {vf} is claimed by instance {taken[0]} in the ledger; Placement should "
                f"not have allocated it to {owner}: run `vgpucloud host mdevs` and compare "
                "the VF's provider allocations")
        if not rows and device.current_type is not None:
            raise MdevBusy(
                f"VF {vf} already runs vGPU type {device.current_type}, set by somebody "
                f"else (the ledger has no claim on it), so it is left alone; if no guest "
                f"uses it, clear it with `echo 0 > {current_type_path(vf)}`")
        [entry] = self.ledger.reserve(owner, vf, type_id, provider=provider, count=1)
        return self.activate(entry)

    def activate(self, entry: LedgerEntry) -> LedgerEntry:
        """Write the row's type to the VF, or adopt it when the VF already runs it (a crash
        after the write). Idempotent."""
        device = self._require(entry.parent)
        if device.current_type is None:
            self._set_type(device, entry.type_id)
        elif device.current_type != entry.type_id:
            raise MdevBusy(
                f"VF {entry.parent} runs vGPU type {device.current_type}, but the ledger "
                f"claim {entry.uuid} of instance {entry.owner} records {entry.type_id}; "
                "somebody changed it by hand: delete that instance or restore the type")
        if entry.pending_create:
            entry = self.ledger.mark_created(entry.uuid)
        LOG.info("VF %s runs %s for instance %s", entry.parent, entry.type_id, entry.owner)
        return entry

    def _set_type(self, device: ParentDevice, type_id: str) -> None:
        try:
            self.sysfs.set_vgpu_type(device.address, type_id)
        except NoInstancesLeft as exc:
            others = sorted({vf.current_type for vf in self._siblings(device)
                             if vf.current_type not in (None, type_id)})
            if not others:
                raise
            raise NoInstancesLeft(
                f"VF {device.address} cannot take {type_id}: other VFs of GPU {device.gpu} "
                f"run {', '.join(others)} and NVIDIA GPUs run one type at a time; move the "
                f"GPU's VFs to one type in nova.conf or use another GPU") from exc

    def _siblings(self, device: ParentDevice) -> list[ParentDevice]:
        return [vf for vf in variant_vfs(self.sysfs.parents()).values()
                if vf.gpu == device.gpu and vf.address != device.address]

    # --- release -------------------------------------------------------------------------

    def deactivate(self, entry: LedgerEntry) -> bool:
        """Clear the VF's type when it is the one ``entry`` records (ours). The guest must be
        gone. A vanished VF (host reboot, VFs disabled) took its type with it. True if
        cleared."""
        device = self.find(entry.parent)
        if device is None or device.current_type != entry.type_id:
            return False
        self.sysfs.clear_vgpu_type(entry.parent)
        LOG.info("cleared vGPU type %s of VF %s (claim %s)", entry.type_id, entry.parent,
                 entry.uuid)
        return True

    def deactivate_owned(self, owner: str) -> list[LedgerEntry]:
        """Clear the types of every VF ``owner`` holds, rows still the owner's, so a crash
        half-way leaves rows that a redelivered task finds and finishes."""
        cleared = []
        for entry in self.ledger.by_owner(owner):
            if self.is_vf(entry.parent) and self.deactivate(entry):
                cleared.append(entry)
        return cleared

    def forget_released(self, released: Sequence[LedgerEntry]) -> list[LedgerEntry]:
        """Drop released rows on VFs: a VF without its type is nothing to reuse, unlike a
        free mdev. (Rows on a VF that vanished stay free until reconcile forgets them.)"""
        dropped = []
        for entry in released:
            vf = self.find(entry.parent)
            # A type still set (clearing failed: a guest held the VF) keeps its row, so
            # the type stays known as ours and a later sweep clears it.
            if vf is not None and vf.current_type != entry.type_id \
                    and self.ledger.forget_if_free(entry.uuid):
                dropped.append(entry)
        return dropped

    def sweep(self, vf: str) -> list[LedgerEntry]:
        """Finish releases a crash interrupted: free rows on ``vf`` get their type cleared
        (when it is still ours) and are dropped."""
        swept = []
        for entry in self._rows_on(vf):
            if entry.state == "free":
                self.deactivate(entry)
                if self.ledger.forget_if_free(entry.uuid):
                    swept.append(entry)
        return swept

    # --- internals -----------------------------------------------------------------------

    def _rows_on(self, vf: str) -> list[LedgerEntry]:
        return [e for e in self.ledger.entries() if e.parent == vf]

    def _require(self, vf: str) -> ParentDevice:
        device = self.find(vf)
        if device is None:
            raise ParentGone(
                f"VF {vf} is not a VF driven by NVIDIA's kernel variant driver on this host "
                f"(no /sys/bus/pci/devices/{vf}/nvidia): after a host reboot, enable the "
                "VFs with `/usr/lib/nvidia/sriov-manage -e ALL`, then restart the agent")
        return device
