"""``vgpucloud agent``: the compute agent of one host, e.g.::

    vgpucloud agent --config-file /etc/nova/nova.conf --api http://controller:8780
    vgpucloud agent --config-file nova.conf --sysfs-root /tmp/sim1 --virt fake --once

``--api`` is the base URL of ``vgpucloud api`` (Placement at ``/placement``, the agent API
at ``/internal/v1``); ``--placement-url`` points Placement elsewhere (e.g. an OpenStack
Placement). It starts (validate nova.conf against the host, reconcile, reshape, report the
provider tree, register), then leases and runs host tasks until SIGTERM or Ctrl-C;
``--once`` runs one round and exits.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from vgpucloud.agent.service import build_agent
from vgpucloud.agent.virt import DRIVER_KINDS
from vgpucloud.cli.stopping import run_until_stopped
from vgpucloud.client.internal import InternalClient
from vgpucloud.client.placement import PlacementClient

DEFAULT_API = "http://127.0.0.1:8780"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "agent", help="run the compute agent of this host",
        description="Report this host's GPUs to Placement and run its host tasks.")
    parser.add_argument("--config-file", action="append", required=True, metavar="FILE",
                        help="nova.conf (repeatable; later files override earlier ones)")
    parser.add_argument("--api", default=DEFAULT_API, metavar="URL",
                        help=f"base URL of vgpucloud api (default {DEFAULT_API})")
    parser.add_argument("--placement-url", metavar="URL",
                        help="Placement endpoint (default: <api>/placement)")
    parser.add_argument("--token", default="admin", help="X-Auth-Token (default admin)")
    parser.add_argument("--sysfs-root", default="/", metavar="DIR",
                        help="directory holding sys/ (default /; a simulated host's root)")
    parser.add_argument("--virt", choices=DRIVER_KINDS, default="libvirt",
                        help="guest driver (default libvirt; fake for simulated hosts)")
    parser.add_argument("--wait", type=float, default=20.0, metavar="SECONDS",
                        help="long-poll for tasks up to this long per round (default 20)")
    parser.add_argument("--once", action="store_true", help="run one round, then exit")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: "
                        "%(message)s")
    api = args.api.rstrip("/")
    placement = PlacementClient(args.placement_url or f"{api}/placement", token=args.token)
    internal = InternalClient(f"{api}/internal/v1", token=args.token)
    agent = build_agent(args.config_file, sysfs_root=args.sysfs_root, virt=args.virt,
                        placement=placement, internal=internal, wait_seconds=args.wait)
    try:
        agent.start()
        for problem in agent.reconciled.problems if agent.reconciled else []:
            print(f"vgpucloud agent: warning: {problem}")
        if args.once:
            for outcome in agent.run_once(wait_seconds=0):
                print(f"task {outcome.task_uuid} ({outcome.kind}): {outcome.state}"
                      + (f": {outcome.fault}" if outcome.fault else ""))
            return 0
        run_until_stopped(agent.run_forever)
        return 0
    finally:
        agent.close()
        placement.close()
        internal.close()
