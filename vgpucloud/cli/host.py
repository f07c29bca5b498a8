"""``vgpucloud host``: what an operator looks at on a compute host.

    vgpucloud host types [--sysfs-root DIR] [--format table|json]
    vgpucloud host mdevs [--sysfs-root DIR] [--ledger FILE]
    vgpucloud host check-config --config-file nova.conf [--sysfs-root DIR]
    vgpucloud host orphans --config-file nova.conf [--sysfs-root DIR] [--virt fake|libvirt]
                           [--remove [--include-foreign]]

``types`` is the MOSK blog's shell loop over ``mdev_supported_types`` as a table; ``mdevs``
is pGPU -> mdev -> type -> owner (like ``nvidia-smi vgpu``); ``check-config`` runs the
agent's start-up validation and exits 1 listing every problem; ``orphans`` is the MOSK
blog's orphan-mdev workaround (``agent.orphans``), listing by default and removing on request.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path

from vgpucloud.agent.config import load_agent_config
from vgpucloud.agent.ledger import Ledger, LedgerEntry
from vgpucloud.agent.mdev import Mdev, MdevType, ParentDevice, Sysfs
from vgpucloud.sim import kernel_for


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("host", help="inspect this host's GPUs, mdevs and config")
    commands = parser.add_subparsers(dest="host_command", metavar="HOST_COMMAND", required=True)

    types = commands.add_parser("types", help="parent devices x mdev types, with capacity")
    _sysfs_root(types)
    types.add_argument("--format", choices=("table", "json"), default="table")
    types.set_defaults(func=run_types)

    mdevs = commands.add_parser("mdevs", help="pGPU -> mdev -> type -> owner")
    _sysfs_root(mdevs)
    mdevs.add_argument("--ledger", metavar="FILE",
                       help="the agent's mdev ledger, to show owners and foreign mdevs")
    mdevs.set_defaults(func=run_mdevs)

    check = commands.add_parser("check-config", help="validate nova.conf against this host")
    check.add_argument("--config-file", action="append", required=True, metavar="FILE",
                       help="nova.conf (repeatable; later files override earlier ones)")
    _sysfs_root(check)
    check.set_defaults(func=run_check_config)

    orphans = commands.add_parser(
        "orphans", help="mdevs no guest uses (the type-change workaround), optionally removed")
    orphans.add_argument("--config-file", action="append", required=True, metavar="FILE",
                         help="the agent's nova.conf (ledger location, libvirt URI)")
    _sysfs_root(orphans)
    orphans.add_argument("--virt", choices=("fake", "libvirt"), default="libvirt",
                         help="where the guests are defined (default libvirt)")
    orphans.add_argument("--remove", action="store_true",
                         help="remove the orphans we created (default: only list)")
    orphans.add_argument("--include-foreign", action="store_true",
                         help="with --remove, also remove orphans vgpucloud did not create")
    orphans.set_defaults(func=run_orphans)


def _sysfs_root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--sysfs-root", default="/", metavar="DIR",
                        help="directory holding sys/ (default /; a simulated host's root)")


def sysfs_for(root: str) -> Sysfs:
    return Sysfs(root, kernel=kernel_for(root))


def format_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(h) for h in headers], *[["-" if c is None else str(c) for c in r] for r in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip()
             for row in cells]
    return "\n".join(lines)


# --- types -----------------------------------------------------------------------

TYPE_HEADERS = ("PARENT", "KIND", "TYPE", "NAME", "AVAIL", "MAX", "FRAMEBUFFER", "HEADS",
                "RESOLUTION", "FRL")


def type_rows(parents: Sequence[ParentDevice]) -> list[tuple[object, ...]]:
    rows: list[tuple[object, ...]] = []
    for parent in parents:
        for t in parent.types:
            framebuffer = f"{t.framebuffer_mb}M" if t.framebuffer_mb is not None else None
            rows.append((parent.address, parent.kind.value, t.id, t.name, t.available_instances,
                         t.max_instance, framebuffer, t.num_heads, t.max_resolution,
                         t.frl_config))
        if not parent.types:
            rows.append((parent.address, parent.kind.value, parent.current_type, None, 0,
                         None, None, None, None, None))
    return rows


def _type_json(t: MdevType) -> dict[str, object]:
    return {"id": t.id, "name": t.name, "available_instances": t.available_instances,
            "device_api": t.device_api, "description": t.description, "fields": dict(t.fields)}


def run_types(args: argparse.Namespace) -> int:
    parents = sysfs_for(args.sysfs_root).parents()
    if args.format == "json":
        doc = [{**{k: v for k, v in dataclasses.asdict(p).items() if k != "types"},
                "kind": p.kind.value, "types": [_type_json(t) for t in p.types]}
               for p in parents]
        print(json.dumps(doc, indent=2))
        return 0
    if not parents:
        print(f"no mdev parent devices under {Path(args.sysfs_root, 'sys', 'class', 'mdev_bus')}")
        return 0
    print(format_table(TYPE_HEADERS, type_rows(parents)))
    return 0


# --- mdevs -----------------------------------------------------------------------

MDEV_HEADERS = ("PARENT", "MDEV", "TYPE", "NAME", "STATE", "OWNER")


def mdev_rows(parents: Sequence[ParentDevice], mdevs: Sequence[Mdev],
              ledger: Sequence[LedgerEntry] | None) -> list[tuple[object, ...]]:
    """One row per mdev, per ledger row missing from sysfs, and per idle parent."""
    recorded = {e.uuid: e for e in ledger or ()}
    present = {m.uuid for m in mdevs}
    rows: list[tuple[object, ...]] = []
    for parent in parents:
        names = {t.id: t.name for t in parent.types}
        mine = [m for m in mdevs if m.parent == parent.address]
        for mdev in mine:
            entry = recorded.get(mdev.uuid)
            state = entry.state if entry else ("foreign" if ledger is not None else "present")
            rows.append((parent.address, mdev.uuid, mdev.type_id, names.get(mdev.type_id),
                         state, entry.owner if entry else None))
        gone = [e for e in recorded.values()
                if e.parent == parent.address and e.uuid not in present]
        for entry in gone:
            rows.append((parent.address, entry.uuid, entry.type_id, names.get(entry.type_id),
                         f"missing ({entry.state})", entry.owner))
        if parent.current_type is not None:
            rows.append((parent.address, "(vf)", parent.current_type, None, "assigned", None))
        elif not mine and not gone:
            rows.append((parent.address, None, None, None, None, None))
    return rows


def run_mdevs(args: argparse.Namespace) -> int:
    sysfs = sysfs_for(args.sysfs_root)
    entries = None
    if args.ledger:
        ledger = Ledger(args.ledger)
        try:
            entries = ledger.entries()
        finally:
            ledger.close()
    print(format_table(MDEV_HEADERS, mdev_rows(sysfs.parents(), sysfs.mdevs(), entries)))
    return 0


# --- check-config ------------------------------------------------------------------


def run_check_config(args: argparse.Namespace) -> int:
    parents = sysfs_for(args.sysfs_root).parents()
    config = load_agent_config(args.config_file, parents=parents)
    assigned = config.assignments
    print(f"host {config.host}: {len(assigned)} of {len(parents)} parent device(s) configured")
    rows: list[tuple[object, ...]] = [
        (a.address, a.type_id, a.mdev_class, a.max_instances) for a in assigned.values()]
    rows += [(p.address, "(unused)", None, None) for p in parents if p.address not in assigned]
    print(format_table(("PARENT", "TYPE", "MDEV_CLASS", "MAX_INSTANCES"), rows))
    return 0


def run_orphans(args: argparse.Namespace) -> int:
    from vgpucloud.agent.orphans import Origin, find_orphans
    from vgpucloud.agent.virt import make_driver
    from vgpucloud.agent.virt.driver import mdev_holders

    sysfs = sysfs_for(args.sysfs_root)
    config = load_agent_config(args.config_file)
    driver = make_driver(args.virt, config.state_path / "guests", config.connection_uri)
    ledger = Ledger.in_state_dir(config.state_path)
    try:
        held = mdev_holders(driver.list_guests())
        orphans = find_orphans(sysfs.mdevs(), ledger.entries(), held)
        rows = [(o.mdev.parent, o.mdev.uuid, o.mdev.type_id, o.origin.value) for o in orphans]
        print(format_table(("PARENT", "MDEV", "TYPE", "ORIGIN"), rows) if rows else
              "no orphan mdevs: every mdev is held by a guest or reserved by the agent")
        if not args.remove:
            return 0
        for orphan in orphans:
            if orphan.origin is Origin.FOREIGN and not args.include_foreign:
                print(f"kept {orphan.mdev.uuid}: not created by vgpucloud "
                      "(pass --include-foreign to remove it too)")
                continue
            if orphan.origin is Origin.OURS and not ledger.forget_if_free(orphan.mdev.uuid):
                print(f"kept {orphan.mdev.uuid}: the agent reserved it meanwhile")
                continue
            sysfs.remove_mdev(orphan.mdev.uuid)
            print(f"removed {orphan.mdev.uuid} ({orphan.mdev.type_id} on {orphan.mdev.parent})")
        return 0
    finally:
        ledger.close()
        driver.close()
