"""``vgpucloud up``: the all-in-one cloud a new user runs first.

One foreground process: the API on SQLite, and N simulated GPU hosts, each with its own
sysfs tree, generated nova.conf and agent reporting to Placement over real loopback HTTP —
the same wire path a multi-host deployment uses. Everything lives under ``--state-dir`` and
survives a restart; edit a host's ``nova.conf`` there and run ``vgpucloud up`` again to see
the agent apply it::

    <state-dir>/vgpucloud.sqlite          the central database
    <state-dir>/clouds.yaml               for the real `openstack` CLI
    <state-dir>/hosts/compute-1/nova.conf
    <state-dir>/hosts/compute-1/sysfs/    the simulated kernel's /sys
    <state-dir>/hosts/compute-1/state/    the agent's ledger and Placement state
"""

from __future__ import annotations

import argparse
import os
import signal
import threading
import time
from pathlib import Path
from types import FrameType
from typing import Any

from vgpucloud.cli import allinone

DEFAULT_STATE_DIR = Path(os.environ.get("XDG_STATE_HOME", Path.home() / ".local" / "state")) / (
    "vgpucloud")


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "up", help="run the all-in-one cloud: API + simulated GPU hosts on SQLite",
        description="Run the API and N simulated GPU hosts in one process (Ctrl-C stops).")
    parser.add_argument("--hosts", type=int, default=2, help="simulated compute hosts (2)")
    parser.add_argument("--profile", default="m60",
                        help="GPU profile of the hosts: m60, t4, gvtg, a40, a40-variant, mtty")
    parser.add_argument("--gpus", type=int, default=None,
                        help="GPUs per host (default: the profile's usual count)")
    parser.add_argument("--mdev-type", default=None,
                        help="type to enable on every pGPU (default: the profile's first)")
    parser.add_argument("--state-dir", type=Path, default=DEFAULT_STATE_DIR,
                        help=f"where the cloud keeps its state (default {DEFAULT_STATE_DIR})")
    parser.add_argument("--port", type=int, default=8780,
                        help="API port on 127.0.0.1 (default 8780; 0 picks a free one)")
    parser.add_argument("--conductors", type=int, default=2,
                        help="conductor threads scheduling and building servers (2)")
    parser.add_argument("--report-interval", type=float, default=10.0,
                        help="seconds between provider-tree reports of each agent (10)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    cloud = allinone.AllInOne(
        state_dir=args.state_dir.expanduser().resolve(),
        hosts=allinone.uniform_hosts(args.hosts, args.profile, args.gpus, args.mdev_type),
        port=args.port,
        report_interval=args.report_interval,
        conductors=args.conductors,
    )
    print(f"vgpucloud up: state in {cloud.state_dir}", flush=True)
    signal.signal(signal.SIGTERM, _interrupt)
    with cloud.running(_progress):
        _print_ready(cloud, time.monotonic() - started)
        try:
            threading.Event().wait()  # until Ctrl-C or SIGTERM
        except KeyboardInterrupt:
            print("\nvgpucloud up: stopping…", flush=True)
    print(f"vgpucloud up: stopped; state kept in {cloud.state_dir}", flush=True)
    return 0


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


def _progress(step: int, total: int, what: str, detail: str) -> None:
    print(f"[{step}/{total}] {what:<10} {detail}", flush=True)


def _print_ready(cloud: allinone.AllInOne, seconds: float) -> None:
    print(f"\nvgpucloud up: ready in {seconds:.1f} s — API at {cloud.url}/ "
          "(Placement, Compute, Image). Ctrl-C stops it.\n")
    print("Use the openstack CLI (pip install python-openstackclient osc-placement):\n")
    print(f"  export OS_CLIENT_CONFIG_FILE={cloud.clouds_yaml}")
    print(f"  export OS_CLOUD={allinone.CLOUD_NAME}\n")
    print("Then try (the Nova vGPU guide's steps; `vgpucloud demo` replays all of it):\n")
    for command in TRY_COMMANDS:
        print(f"  {command}")
    print(flush=True)


# What the banner suggests; tests/e2e/test_up.py runs exactly these lines.
TRY_COMMANDS = (
    'openstack flavor create --vcpus 1 --ram 512 --disk 1 --property "resources:VGPU=1" vgpu_1',
    "openstack server create --flavor vgpu_1 --image cirros-0.3.5-x86_64-uec --wait test-vgpu",
    "openstack resource provider allocation show $(openstack server show test-vgpu -f value -c id)",
)
