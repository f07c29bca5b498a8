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
"""

from __future__ import annotations

import dataclasses
import logging

from vgpucloud.agent.config import AgentConfig
from vgpucloud.agent.ledger import OWNED_STATES, Ledger, materialize
from vgpucloud.agent.mdev import Mdev, Sysfs
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


def reconcile(config: AgentConfig, sysfs: Sysfs, ledger: Ledger, driver: VirtDriver,
              *, resume_guests: bool = True) -> ReconcileReport:
    report = ReconcileReport()
    plan = ledger.plan_recovery(sysfs.mdevs())
    for entry in plan.forget:
        ledger.forget(entry.uuid)
        report.forgotten.append(entry.uuid)
    for entry in plan.recreate:
        if entry.pending_create:
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
    report.foreign = list(plan.foreign)
    for mdev in report.foreign:
        LOG.warning("foreign mdev %s (%s on %s) is not ours: left alone", mdev.uuid,
                    mdev.type_id, mdev.parent)
    report.problems.extend(_type_changes(config, ledger))
    if resume_guests:
        report.restarted = _resume_guests(ledger, sysfs, driver, report)
    for problem in report.problems:
        LOG.error("%s", problem)
    return report


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
    owners: dict[str, list[str]] = {}
    for entry in ledger.entries():
        if entry.state == "attached" and entry.owner:
            owners.setdefault(entry.owner, []).append(entry.uuid)
    restarted = []
    for owner, mdevs in sorted(owners.items()):
        state = driver.state(owner)
        if state is None or state.is_active:
            continue
        missing = sorted(set(mdevs) - present)
        if missing:
            report.problems.append(f"instance {owner} stays off: its mdevs {missing} are "
                                   "missing (see above)")
            continue
        try:
            driver.start(owner)
        except VgpucloudError as exc:
            report.problems.append(f"instance {owner} could not be started again: "
                                   f"{exc.message}")
            continue
        restarted.append(owner)
    return restarted
