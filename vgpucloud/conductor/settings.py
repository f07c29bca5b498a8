"""The conductor's settings, from the same ``--config-file`` the API reads::

    [scheduler]
    vgpu_policy = spread
    service_down_time = 60
    max_attempts = 3

    [conductor]
    lease_seconds = 600
    spawn_timeout = 300

Groups the conductor does not know (``[database]``, ``[api]``) are left to their owners.
"""

from __future__ import annotations

import dataclasses

from oslo_config import cfg

from vgpucloud.conf import read_config_file
from vgpucloud.errors import ConfigError
from vgpucloud.scheduler.settings import VGPU_POLICIES, SchedulerSettings

_DEFAULT_SCHEDULER = SchedulerSettings()

_SCHEDULER_OPTS = [
    cfg.StrOpt("vgpu_policy", default=_DEFAULT_SCHEDULER.vgpu_policy, choices=VGPU_POLICIES,
               help="pack: fill the fullest pGPU first; spread: the emptiest first."),
    cfg.FloatOpt("vgpu_weight_multiplier", default=_DEFAULT_SCHEDULER.vgpu_weight_multiplier,
                 min=0.0, help="Weight of the pGPU policy among the weighers."),
    cfg.FloatOpt("ram_weight_multiplier", default=_DEFAULT_SCHEDULER.ram_weight_multiplier,
                 help="Positive spreads guests over hosts by free RAM, negative stacks."),
    cfg.IntOpt("service_down_time", default=_DEFAULT_SCHEDULER.service_down_time, min=1,
               help="Seconds without an agent heartbeat after which a host is down."),
    cfg.IntOpt("max_attempts", default=_DEFAULT_SCHEDULER.max_attempts, min=1,
               help="Spawn attempts per instance (first try + reschedules)."),
    cfg.IntOpt("max_placement_results", default=_DEFAULT_SCHEDULER.candidate_limit, min=1,
               help="'limit' of GET /allocation_candidates (Nova's name)."),
]


@dataclasses.dataclass(frozen=True, slots=True)
class ConductorSettings:
    scheduler: SchedulerSettings = dataclasses.field(default_factory=SchedulerSettings)
    # A build task stays leased while its spawns run; past this a dead conductor's task is
    # handed to another one, which resumes from the instances' recorded state.
    lease_seconds: int = 600
    spawn_timeout: float = 300.0
    poll_interval: float = 0.1
    idle_wait: float = 1.0
    tasks_per_lease: int = 1


_DEFAULT = ConductorSettings()
_CONDUCTOR_OPTS = [
    cfg.IntOpt("lease_seconds", default=_DEFAULT.lease_seconds, min=10,
               help="Lease of a conductor task; must exceed spawn_timeout."),
    cfg.FloatOpt("spawn_timeout", default=_DEFAULT.spawn_timeout, min=1.0,
                 help="Seconds to wait for an agent to finish a spawn or destroy task."),
    cfg.FloatOpt("poll_interval", default=_DEFAULT.poll_interval, min=0.01,
                 help="Seconds between reads of a host task's state."),
]


def load_conductor_settings(config_file: str | None = None) -> ConductorSettings:
    conf = read_config_file(config_file, {"scheduler": _SCHEDULER_OPTS,
                                          "conductor": _CONDUCTOR_OPTS})
    try:
        s, c = conf.scheduler, conf.conductor
        scheduler = SchedulerSettings(
            vgpu_policy=s.vgpu_policy, vgpu_weight_multiplier=s.vgpu_weight_multiplier,
            ram_weight_multiplier=s.ram_weight_multiplier,
            service_down_time=s.service_down_time, max_attempts=s.max_attempts,
            candidate_limit=s.max_placement_results)
        settings = ConductorSettings(scheduler=scheduler, lease_seconds=c.lease_seconds,
                                     spawn_timeout=c.spawn_timeout,
                                     poll_interval=c.poll_interval)
    except (cfg.Error, ValueError) as exc:
        raise ConfigError([f"{config_file}: {exc}; fix the value in [scheduler] or "
                           "[conductor]"]) from exc
    if settings.lease_seconds <= settings.spawn_timeout:
        raise ConfigError([f"[conductor] lease_seconds = {settings.lease_seconds} must exceed "
                           f"spawn_timeout = {settings.spawn_timeout:g}, or another conductor "
                           "takes over builds still waiting on a spawn; raise lease_seconds"])
    return settings
