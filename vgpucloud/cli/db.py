"""``vgpucloud db sync|version``: create or upgrade the central database.

Examples::

    vgpucloud db sync --database-url sqlite:////var/lib/vgpucloud/vgpucloud.sqlite
    vgpucloud db sync --config-file /etc/vgpucloud/vgpucloud.conf   # [database] connection
    vgpucloud db version --database-url postgresql://vgpucloud@db/vgpucloud

``--database-url`` overrides ``[database] connection`` of ``--config-file``.
"""

from __future__ import annotations

import argparse
from typing import Any

from vgpucloud.conf import load_settings
from vgpucloud.storage import schema
from vgpucloud.storage.engine import masked


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("db", help="create, upgrade and inspect the central database")
    commands = parser.add_subparsers(dest="db_command", metavar="DB_COMMAND", required=True)
    sync = commands.add_parser(
        "sync", help="create or upgrade the schema and add missing standard resource classes "
        "and traits (idempotent)")
    _add_common(sync)
    sync.set_defaults(func=run_sync)
    version = commands.add_parser("version", help="print the schema revision of the database")
    _add_common(version)
    version.set_defaults(func=run_version)


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--database-url", help="SQLAlchemy URL; overrides [database] connection")
    parser.add_argument("--config-file", help="vgpucloud.conf to read [database] connection from")


def _database_url(args: argparse.Namespace) -> str:
    settings = load_settings(args.config_file, {"database_url": args.database_url})
    return settings.database_url


def run_sync(args: argparse.Namespace) -> int:
    url = _database_url(args)
    report = schema.sync(url)
    print(f"database {masked(url)}")
    for line in report.lines():
        print(f"  {line}")
    return 0


def run_version(args: argparse.Namespace) -> int:
    url = _database_url(args)
    revision = schema.current_revision(url)
    head = schema.head_revision()
    if revision is None:
        print(f"{masked(url)}: empty (never synced); run: vgpucloud db sync")
        return 1
    state = "up to date" if revision == head else f"behind {head}; run: vgpucloud db sync"
    print(f"{revision} ({state})")
    return 0
