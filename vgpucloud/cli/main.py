"""The ``vgpucloud`` command: the composition root.

Each subcommand lives in its own module under ``vgpucloud.cli`` exposing
``register(subparsers)``; the module sets ``func`` on its parser, which receives the parsed
namespace and returns the process exit code. Only this package builds adapters from
config and wires them together; nothing imports ``cli``.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from vgpucloud.errors import ConfigError, VgpucloudError

# Order is the order of `vgpucloud --help`.
COMMAND_MODULES = ("up", "demo", "api", "db", "sim", "host", "agent", "conductor")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="vgpucloud",
        description="A cloud control plane for virtual GPUs (Placement + Compute compatible).",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMAND_MODULES:
        try:
            module = importlib.import_module(f"vgpucloud.cli.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"vgpucloud.cli.{name}":
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except ConfigError as exc:
        print(f"vgpucloud {args.command}: {exc}", file=sys.stderr)
        return 1
    except VgpucloudError as exc:
        print(f"vgpucloud {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # `vgpucloud host types | head`: the reader left; that is not an error of ours.
        # Point stdout at /dev/null so the interpreter's final flush does not complain.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
