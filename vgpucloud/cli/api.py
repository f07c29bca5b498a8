"""``vgpucloud api``: serve the HTTP APIs with waitress (threaded), e.g.::

    vgpucloud api --database-url sqlite:///vgpucloud.sqlite --sync --bind 127.0.0.1:8780

Flags override the config file. For production behind several workers use gunicorn with
``vgpucloud.api.wsgi:application`` instead.
"""

from __future__ import annotations

import argparse
import signal
import sys
from types import FrameType
from typing import Any

from vgpucloud.conf import load_settings
from vgpucloud.errors import ConfigError

DEFAULT_THREADS = 8


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "api", help="serve the Placement API (and later Compute) over HTTP",
        description="Serve /placement (OpenStack Placement 1.0-1.39) with waitress.")
    parser.add_argument("--bind", metavar="HOST:PORT",
                        help="address to listen on (default [api] bind, 127.0.0.1:8780); "
                        "port 0 picks a free port")
    parser.add_argument("--database-url", metavar="URL",
                        help="SQLAlchemy URL (default [database] connection)")
    parser.add_argument("--config-file", metavar="FILE", help="vgpucloud.conf INI file")
    parser.add_argument("--sync", action="store_true",
                        help="create or upgrade the database schema before serving")
    parser.add_argument("--threads", type=int, default=DEFAULT_THREADS,
                        help=f"worker threads (default {DEFAULT_THREADS})")
    parser.set_defaults(func=run)


def parse_bind(bind: str) -> tuple[str, int]:
    """``"127.0.0.1:8780"`` -> ("127.0.0.1", 8780); ``"[::1]:8780"`` -> ("::1", 8780)."""
    host, colon, port = bind.rpartition(":")
    if not colon or not port.isdigit() or not host:
        raise ConfigError([f"--bind {bind!r}: expected HOST:PORT, e.g. 127.0.0.1:8780"])
    return host.strip("[]"), int(port)


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    # Same clean path as Ctrl-C: waitress closes its sockets and threads.
    raise KeyboardInterrupt


def run(args: argparse.Namespace) -> int:
    import waitress

    from vgpucloud.api.wsgi import build_application
    from vgpucloud.storage.engine import masked

    settings = load_settings(args.config_file, {"bind": args.bind,
                                                "database_url": args.database_url})
    host, port = parse_bind(settings.bind)
    app = build_application(settings, sync=args.sync)
    server: Any = waitress.create_server(app, host=host, port=port, threads=args.threads)
    url_host = f"[{host}]" if ":" in host else host
    url = f"http://{url_host}:{server.effective_port}"
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    try:
        print(f"vgpucloud api: serving {url}/ (Placement at {url}/placement) "
              f"on {masked(settings.database_url)}; Ctrl-C stops", flush=True)
        # waitress returns from run() on Ctrl-C (it handles KeyboardInterrupt itself).
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
    print("vgpucloud api: stopped", file=sys.stderr, flush=True)
    return 0
