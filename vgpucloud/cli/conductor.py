"""``vgpucloud conductor``: schedule and build servers, delete them; run any number, e.g.::

    vgpucloud conductor --database-url postgresql+psycopg://vgpucloud@db/vgpucloud \\
        --placement-url http://controller:8780/placement --config-file vgpucloud.conf

It leases ``build``/``delete`` tasks from the central database, claims in Placement over
HTTP (ours or OpenStack's) and hands host work to agents, until SIGTERM or Ctrl-C.
``[scheduler]`` and ``[conductor]`` settings come from ``--config-file``.
"""

from __future__ import annotations

import argparse
import logging
from typing import Any

from vgpucloud.cli.stopping import run_until_stopped
from vgpucloud.client.placement import PlacementClient
from vgpucloud.conductor.service import Conductor
from vgpucloud.conductor.settings import load_conductor_settings
from vgpucloud.conf import load_settings
from vgpucloud.storage.compute_store import SqlComputeStore
from vgpucloud.storage.engine import create_engine

DEFAULT_PLACEMENT = "http://127.0.0.1:8780/placement"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "conductor", help="run a conductor (scheduling and server workflows)",
        description="Lease build/delete tasks, schedule through Placement, drive agents.")
    parser.add_argument("--database-url", metavar="URL",
                        help="SQLAlchemy URL of the central database "
                             "(default: [database] connection of --config-file)")
    parser.add_argument("--placement-url", default=DEFAULT_PLACEMENT, metavar="URL",
                        help=f"Placement endpoint (default {DEFAULT_PLACEMENT})")
    parser.add_argument("--token", default="admin", help="X-Auth-Token (default admin)")
    parser.add_argument("--config-file", metavar="FILE",
                        help="vgpucloud.conf with [database], [scheduler], [conductor]")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: "
                        "%(message)s")
    settings = load_settings(args.config_file, {"database_url": args.database_url})
    conductor_settings = load_conductor_settings(args.config_file)
    engine = create_engine(settings.database_url)
    placement = PlacementClient(args.placement_url, token=args.token)
    conductor = Conductor(engine, SqlComputeStore(engine), placement, conductor_settings)
    try:
        run_until_stopped(conductor.run_forever)
    finally:
        placement.close()
        engine.dispose()
    return 0
