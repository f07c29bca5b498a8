"""Start-up reconciliation of ledger <-> sysfs <-> domains (after an agent restart or a
host reboot), before the agent takes any task.

- An mdev the ledger owns (reserved, attached, migrating-in) that vanished — a host reboot
  removes every mdev — is recreated with the same UUID on the same parent, so the domain
  XML that names it is valid again; then guests whose mdevs are all back are started
  (``resume_guests``), since an attached row means the instance should be running.
- A free row whose mdev vanished is forgotten (nothing to give back).
- A reservation still ``pending_create`` belongs to a spawn that crashed before its create:
  left alone; the redelivered task finishes it or rolls it back.
- A parent whose configured type differs from the type of mdevs guests hold is reported:
  the guests keep their devices, nothing is re-typed behind them (the provider tree fences
  that pGPU until they are gone).
- Foreign mdevs (not in the ledger) are listed and never touched (DESIGN rule 2).
- Variant-driver VFs (NVIDIA's kernel variant driver): a reboot takes the VFs away until
  ``sriov-manage -e`` brings them back with no vGPU type. A VF claim the ledger owns gets
  its type written again before its guest starts, as an mdev is recreated; a free claim is
  finished (its type cleared if still ours) and dropped; a VF running a type that no claim
  records is listed in ``foreign_vfs`` and never touched. A claim whose VF is absent
  (VFs not enabled yet) is reported, and its guest stays off.
"""

from __future__ import annotations

import dataclasses
import logging

from vgpucloud.agent.config import AgentConfig
from vgpucloud.agent.ledger import OWNED_STATES, Ledger, LedgerEntry, materialize
from vgpucloud.agent.mdev import Mdev, ParentDevice, Sysfs
from vgpucloud.agent.variant import VariantVfs, foreign_vfs, variant_vfs
from vgpucloud.agent.virt import VirtDriver
from vgpucloud.errors import VgpucloudError

LOG = logging.getLogger(__name__)


@dataclasses.dataclass
class ReconcileReport:
    recreated: list[str] = dataclasses.field(default_factory=list)
    forgotten: list[str] = dataclasses.field(default_factory=list)
    foreign: list[Mdev] = dataclasses.field(default_factory=list)
    problems: list[str] = dataclasses.field(default_factory=list)
    restarted: list[str] = dataclasses.field(default_factory=list)
    retyped: list[str] = dataclasses.field(default_factory=list)      # VFs given their type back
    foreign_vfs: list[str] = dataclasses.field(default_factory=list)  # typed by somebody else


def reconcile(config: AgentConfig, sysfs: Sysfs, ledger: Ledger, driver: VirtDriver,
              *, resume_guests: bool = True) -> ReconcileReport:
    report = ReconcileReport()
    vfs = variant_vfs(sysfs.parents())
    plan = ledger.plan_recovery(sysfs.mdevs())
    # VF claims are never in /sys/bus/mdev: they are restored by their own rules below.
    for entry in plan.forget:
        if entry.parent in vfs:
            continue
        ledger.forget(entry.uuid)
        report.forgotten.append(entry.uuid)
    for entry in plan.recreate:
        if entry.pending_create or entry.parent in vfs:
            continue
        try:
            materialize(ledger, sysfs, entry)
        except VgpucloudError as exc:
            report.problems.append(
                f"mdev {entry.uuid} ({entry.type_id} on {entry.parent}) of instance "
                f"{entry.owner} vanished and cannot be recreated: {exc.message}")
            continue
        report.recreated.append(entry.uuid)
        LOG.info("recreated mdev %s (%s on %s) for instance %s", entry.uuid, entry.type_id,
                 entry.parent, entry.owner)
    _restore_vf_types(VariantVfs(sysfs, ledger), ledger, vfs, report)
    report.foreign = list(plan.foreign)
    report.foreign_vfs = sorted(foreign_vfs(sysfs.parents(), ledger.entries()))
    for vf in report.foreign_vfs:
        LOG.warning("VF %s runs a vGPU type nobody recorded in our ledger: left alone", vf)
    for mdev in report.foreign:
        LOG.warning("foreign mdev %s (%s on %s) is not ours: left alone", mdev.uuid,
                    mdev.type_id, mdev.parent)
    report.problems.extend(_type_changes(config, ledger))
    if resume_guests:
        report.restarted = _resume_guests(ledger, sysfs, driver, report)
    for problem in report.problems:
        LOG.error("%s", problem)
    return report


def _restore_vf_types(claims: VariantVfs, ledger: Ledger, vfs: dict[str, ParentDevice],
                      report: ReconcileReport) -> None:
    for vf in sorted({e.parent for e in ledger.free() if e.parent in vfs}):
        report.forgotten.extend(e.uuid for e in claims.sweep(vf))
    for entry in ledger.entries():
        if entry.state not in OWNED_STATES or entry.pending_create or entry.parent not in vfs:
            continue  # a pending claim belongs to a spawn the redelivered task finishes
        try:
            claims.activate(entry)
        except VgpucloudError as exc:
            report.problems.append(
                f"VF {entry.parent} of instance {entry.owner} cannot get its vGPU type "
                f"{entry.type_id} back: {exc.message}")
            continue
        if vfs[entry.parent].current_type is None:
            report.retyped.append(entry.parent)
            LOG.info("VF %s runs %s again for instance %s", entry.parent, entry.type_id,
                     entry.owner)


def _type_changes(config: AgentConfig, ledger: Ledger) -> list[str]:
    problems = []
    held: dict[tuple[str, str], set[str]] = {}
    for entry in ledger.entries():
        if entry.state in OWNED_STATES and entry.owner:
            held.setdefault((entry.parent, entry.type_id), set()).add(entry.owner)
    for (parent, type_id), owners in sorted(held.items()):
        assignment = config.assignment_for(parent)
        configured = assignment.type_id if assignment else None
        if configured == type_id:
            continue
        now = f"is now configured for {configured}" if configured else "is no longer configured"
        problems.append(
            f"pGPU {parent} {now}, but instances {', '.join(sorted(owners))} hold mdevs of "
            f"type {type_id} on it; they keep them and the pGPU takes no new guests until "
            f"they are gone: move or delete them, or restore {type_id} for {parent} in "
            "nova.conf")
    return problems


def _resume_guests(ledger: Ledger, sysfs: Sysfs, driver: VirtDriver,
                   report: ReconcileReport) -> list[str]:
    present = {m.uuid for m in sysfs.mdevs()}
    typed = {(vf.address, vf.current_type) for vf in variant_vfs(sysfs.parents()).values()}

    def missing_device(entry: LedgerEntry) -> str | None:
        if entry.uuid in present or (entry.parent, entry.type_id) in typed:
            return None
        return entry.uuid

    owners: dict[str, list[str | None]] = {}
    for entry in ledger.entries():
        if entry.state == "attached" and entry.owner:
            owners.setdefault(entry.owner, []).append(missing_device(entry))
    restarted = []
    for owner, devices in sorted(owners.items()):
        state = driver.state(owner)
        if state is None or state.is_active:
            continue
        missing = sorted(d for d in devices if d is not None)
        if missing:
            report.problems.append(f"instance {owner} stays off: its mdevs or VF claims "
                                   f"{missing} are missing (see above)")
            continue
        try:
            driver.start(owner)
        except VgpucloudError as exc:
            report.problems.append(f"instance {owner} could not be started again: "
                                   f"{exc.message}")
            continue
        restarted.append(owner)
    return restarted
