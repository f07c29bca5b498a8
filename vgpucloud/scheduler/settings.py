"""The ``[scheduler]`` settings as a frozen value (the conductor's loader reads them from
the same ``--config-file`` as everything else)::

    [scheduler]
    vgpu_policy = pack              # or spread
    vgpu_weight_multiplier = 10.0
    ram_weight_multiplier = 1.0
    service_down_time = 60
    max_attempts = 3
"""

from __future__ import annotations

import dataclasses

PACK = "pack"
SPREAD = "spread"
VGPU_POLICIES = (PACK, SPREAD)


@dataclasses.dataclass(frozen=True, slots=True)
class SchedulerSettings:
    # XenServer's depth-first (pack: the fullest pGPU first, keeping whole GPUs free for
    # big types) or breadth-first (spread: the emptiest pGPU first, for performance).
    vgpu_policy: str = PACK
    # vGPUs are the scarce resource, so their policy outweighs the RAM spread by default;
    # free RAM only breaks ties between equally full pGPUs.
    vgpu_weight_multiplier: float = 10.0
    ram_weight_multiplier: float = 1.0
    # A host whose agent has not heartbeaten for this long is down (Nova's default).
    service_down_time: int = 60
    # Spawns per instance before it goes to ERROR (the first try plus reschedules).
    max_attempts: int = 3
    # Fresh GET /allocation_candidates rounds when every claim of a round lost a race.
    claim_rounds: int = 3
    candidate_limit: int = 1000
