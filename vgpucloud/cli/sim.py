"""``vgpucloud sim``: build and drive simulated GPU hosts.

    vgpucloud sim create --profile t4 --gpus 8 --root DIR
    vgpucloud sim sriov-enable --root DIR [--pf 0000:41:00.0]
    vgpucloud sim reboot --root DIR
    vgpucloud sim hold --root DIR UUID GUEST / vgpucloud sim release --root DIR UUID
"""

from __future__ import annotations

import argparse

from vgpucloud.sim import PROFILES, SimHost


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("sim", help="simulated GPU hosts (sysfs trees + fake kernel)")
    commands = parser.add_subparsers(dest="sim_command", metavar="SIM_COMMAND", required=True)

    create = commands.add_parser("create", help="build a simulated host under --root")
    create.add_argument("--profile", choices=sorted(PROFILES), required=True)
    create.add_argument("--gpus", type=int, default=None,
                        help="number of GPUs (default: the profile's usual count)")
    create.add_argument("--numa-nodes", type=int, default=2)
    create.add_argument("--no-vfs", action="store_true",
                        help="SR-IOV profiles: leave VFs disabled (as after a reboot)")
    _root(create)
    create.set_defaults(func=run_create)

    enable = commands.add_parser("sriov-enable", help="what sriov-manage -e does")
    _root(enable)
    enable.add_argument("--pf", default=None, help="one PF address (default: all)")
    enable.set_defaults(func=run_sriov_enable)

    reboot = commands.add_parser("reboot", help="power-cycle: mdevs and VFs vanish")
    _root(reboot)
    reboot.set_defaults(func=run_reboot)

    hold = commands.add_parser("hold", help="a guest opens an mdev (remove gets EBUSY)")
    _root(hold)
    hold.add_argument("device", help="mdev UUID (or variant-driver VF address)")
    hold.add_argument("guest")
    hold.set_defaults(func=run_hold)

    release = commands.add_parser("release", help="the guest lets go of the device")
    _root(release)
    release.add_argument("device")
    release.set_defaults(func=run_release)


def _root(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--root", required=True, metavar="DIR",
                        help="directory of the simulated host (its sysfs is DIR/sys)")


def run_create(args: argparse.Namespace) -> int:
    host = SimHost.create(args.root, args.profile, args.gpus, numa_nodes=args.numa_nodes,
                          enable_vfs=not args.no_vfs)
    parents = host.sysfs().parents()
    print(f"simulated {args.profile} host at {host.root}: {len(host.gpus)} GPU(s), "
          f"{len(parents)} parent device(s)")
    print(f"inspect it with: vgpucloud host types --sysfs-root {host.root}")
    return 0


def run_sriov_enable(args: argparse.Namespace) -> int:
    enabled = SimHost(args.root).enable_vfs(args.pf)
    print(f"VFs enabled on: {', '.join(enabled) or 'nothing (already enabled)'}")
    return 0


def run_reboot(args: argparse.Namespace) -> int:
    SimHost(args.root).reboot()
    print(f"{args.root} rebooted: every mdev is gone; re-enable SR-IOV VFs with sriov-enable")
    return 0


def run_hold(args: argparse.Namespace) -> int:
    SimHost(args.root).hold(args.device, args.guest)
    return 0


def run_release(args: argparse.Namespace) -> int:
    SimHost(args.root).release(args.device)
    return 0
