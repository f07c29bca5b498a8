"""The API as a WSGI ``application`` for any WSGI server, e.g.::

    VGPUCLOUD_CONFIG_FILE=/etc/vgpucloud/vgpucloud.conf \\
        gunicorn -w 4 -b 0.0.0.0:8780 'vgpucloud.api.wsgi:application'

Configured from the environment: ``VGPUCLOUD_CONFIG_FILE`` (optional INI file) and
``VGPUCLOUD_DATABASE_URL`` (overrides ``[database] connection``). The app is built on the
first request, not at import, so a pre-forking server (``gunicorn --preload``) never shares
database connections between workers, and importing this module needs no database.

This module and ``vgpucloud.cli.api`` are composition roots: the only places in ``api``
that pick the storage adapter.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

from vgpucloud.api.app import WSGIApp, internal_mount, make_app
from vgpucloud.conf import Settings, load_settings
from vgpucloud.errors import ConfigError

CONFIG_FILE_ENV = "VGPUCLOUD_CONFIG_FILE"
DATABASE_URL_ENV = "VGPUCLOUD_DATABASE_URL"


def build_application(settings: Settings, *, sync: bool = False) -> WSGIApp:
    """The API over the SQL store at ``settings.database_url``; ``sync`` migrates first.

    Refuses a database whose schema is missing or old, naming the command that fixes it.
    """
    from vgpucloud.storage import schema
    from vgpucloud.storage.engine import create_engine, masked
    from vgpucloud.storage.placement_store import SqlPlacementStore
    from vgpucloud.storage.tasks import SqlHostTaskStore

    engine = create_engine(settings.database_url)
    if sync:
        schema.sync(engine)
    current, head = schema.current_revision(engine), schema.head_revision()
    if current != head:
        state = "has no vgpucloud schema" if current is None else (
            f"is at schema revision {current}, this release needs {head}")
        engine.dispose()
        raise ConfigError([
            f"database {masked(settings.database_url)} {state}; run `vgpucloud db sync "
            f"--database-url {masked(settings.database_url)}` (or start with --sync)"])
    from vgpucloud.api.compute.mount import compute_mounts
    from vgpucloud.storage.compute_store import SqlComputeStore

    placement = SqlPlacementStore(engine)
    return make_app(settings, placement,
                    [internal_mount(settings, SqlHostTaskStore(engine)),
                     *compute_mounts(settings, SqlComputeStore(engine), placement)])


def settings_from_environment() -> Settings:
    return load_settings(os.environ.get(CONFIG_FILE_ENV) or None,
                         {"database_url": os.environ.get(DATABASE_URL_ENV) or None})


class LazyApplication:
    """Builds the real app on first call, once, even with concurrent first requests."""

    def __init__(self, factory: Callable[[], WSGIApp]) -> None:
        self._factory = factory
        self._app: WSGIApp | None = None
        self._lock = threading.Lock()

    def __call__(
        self, environ: dict[str, Any], start_response: Callable[..., Any]
    ) -> Iterable[bytes]:
        if self._app is None:
            with self._lock:
                if self._app is None:
                    self._app = self._factory()
        return self._app(environ, start_response)


application = LazyApplication(lambda: build_application(settings_from_environment()))
