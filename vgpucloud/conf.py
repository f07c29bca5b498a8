"""Typed settings of the control-plane services (API, conductor, all-in-one).

Read once by ``cli`` from an optional INI file (oslo.config semantics, like placement.conf)
and command-line flags, then passed down as a frozen ``Settings``; no module reads global
config. Flags override the file. Example ``vgpucloud.conf``::

    [database]
    connection = postgresql+psycopg://vgpucloud@db.example/vgpucloud

    [api]
    bind = 0.0.0.0:8780
    auth_strategy = noauth2

    [placement]
    max_allocation_candidates = 1000
    allocation_candidates_generation_strategy = breadth-first
    randomize_allocation_candidates = false

The agent's nova.conf (``[devices]``, ``[mdev_*]``) is parsed by ``agent.config``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oslo_config import cfg

from vgpucloud.errors import ConfigError

DEFAULT_DATABASE_URL = "sqlite:///vgpucloud.sqlite"
DEFAULT_BIND = "127.0.0.1:8780"

_OPTS: dict[str, list[cfg.Opt]] = {
    "database": [
        cfg.StrOpt("connection", default=DEFAULT_DATABASE_URL,
                   help="SQLAlchemy URL of the central database."),
    ],
    "api": [
        cfg.StrOpt("bind", default=DEFAULT_BIND, help="HOST:PORT the API listens on."),
        cfg.StrOpt("auth_strategy", default="noauth2", choices=["noauth2", "keystone"],
                   help="noauth2 (token 'admin' or 'user:project') or keystone."),
    ],
    "placement": [
        cfg.IntOpt("max_allocation_candidates", default=-1, min=-1,
                   help="Cap on candidates generated per request; -1 is no cap."),
        cfg.StrOpt("allocation_candidates_generation_strategy", default="depth-first",
                   choices=["depth-first", "breadth-first"],
                   help="Order in which candidates are generated across root providers."),
        cfg.BoolOpt("randomize_allocation_candidates", default=False,
                    help="Shuffle candidates before applying 'limit'."),
    ],
}


@dataclasses.dataclass(frozen=True, slots=True)
class PlacementSettings:
    max_allocation_candidates: int = -1
    allocation_candidates_generation_strategy: str = "depth-first"
    randomize_allocation_candidates: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class Settings:
    database_url: str = DEFAULT_DATABASE_URL
    bind: str = DEFAULT_BIND
    auth_strategy: str = "noauth2"
    placement: PlacementSettings = PlacementSettings()
    config_file: str | None = None
    # The raw oslo.config object, for optional components (keystonemiddleware) that read
    # their own groups from the same file.
    raw: Any = dataclasses.field(default=None, compare=False, repr=False)


def read_config_file(config_file: str | None,
                     opts: Mapping[str, Sequence[cfg.Opt]]) -> cfg.ConfigOpts:
    """``config_file`` (None: defaults only) parsed for ``opts`` by group name, e.g.
    ``{"database": [cfg.StrOpt("connection")]}`` reads ``[database] connection = ...``.

    Groups and options it does not name are left to their owners. Reading an option with a
    bad value raises oslo.config's error or ``ValueError`` lazily: callers convert values
    inside their own ``try`` to name the group to fix.
    """
    conf = cfg.ConfigOpts()
    for group, group_opts in opts.items():
        conf.register_opts(list(group_opts), group=group)
    files = []
    if config_file:
        if not Path(config_file).is_file():
            raise ConfigError([f"--config-file {config_file}: no such file; "
                               "pass an existing file or omit the flag"])
        files = [config_file]
    try:
        conf(args=[], project="vgpucloud", default_config_files=files)
    except (cfg.Error, ValueError) as exc:
        raise ConfigError([f"{config_file}: {exc}"]) from exc
    return conf


def load_settings(
    config_file: str | None = None, overrides: Mapping[str, Any] | None = None
) -> Settings:
    """Settings from ``config_file`` (if any) with ``overrides`` (flag values; None = unset)."""
    conf = read_config_file(config_file, _OPTS)
    placement = PlacementSettings(
        max_allocation_candidates=conf.placement.max_allocation_candidates,
        allocation_candidates_generation_strategy=(
            conf.placement.allocation_candidates_generation_strategy),
        randomize_allocation_candidates=conf.placement.randomize_allocation_candidates,
    )
    settings = Settings(
        database_url=conf.database.connection,
        bind=conf.api.bind,
        auth_strategy=conf.api.auth_strategy,
        placement=placement,
        config_file=config_file,
        raw=conf,
    )
    given = {k: v for k, v in (overrides or {}).items() if v is not None}
    return dataclasses.replace(settings, **given) if given else settings
