"""Order the filtered candidates: the pGPU policy first, free RAM to break ties.

Each weigher gives a raw number per candidate; numbers are scaled to 0..1 across the
candidates (as Nova normalises) and summed with their multipliers. Highest wins; equal
weights keep Placement's order, so the result is deterministic.

- ``vgpu`` (``[scheduler] vgpu_policy``): how full the candidate's pGPUs already are
  (used / capacity of the device classes it takes). ``pack`` prefers the fullest (XenServer
  depth-first: whole GPUs stay free for the big types), ``spread`` the emptiest
  (breadth-first: fewer guests share a GPU's engines).
- ``ram``: free MEMORY_MB of the compute node (spreads guests over hosts, as Nova does).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from vgpucloud.scheduler.candidates import HOST_CLASSES, Candidate
from vgpucloud.scheduler.settings import PACK, SchedulerSettings


def pgpu_fullness(candidate: Candidate) -> float:
    """The fullest pGPU the candidate would use, as used / capacity before this claim."""
    ratios = []
    for summary in candidate.device_providers():
        for rc in candidate.allocations[summary.uuid]:
            capacity, used = summary.resources.get(rc, (0, 0))
            if rc not in HOST_CLASSES and capacity > 0:
                ratios.append(used / capacity)
    return max(ratios, default=0.0)


def free_ram(candidate: Candidate) -> float:
    root = candidate.summaries.get(candidate.root)
    return float(root.free("MEMORY_MB")) if root else 0.0


def _normalised(values: Sequence[float]) -> list[float]:
    low, high = min(values), max(values)
    if high == low:
        return [0.0 for _ in values]
    return [(v - low) / (high - low) for v in values]


def weigh(candidates: Sequence[Candidate], settings: SchedulerSettings) -> list[Candidate]:
    if not candidates:
        return []
    sign = 1.0 if settings.vgpu_policy == PACK else -1.0
    weighers: list[tuple[float, Callable[[Candidate], float]]] = [
        (sign * settings.vgpu_weight_multiplier, pgpu_fullness),
        (settings.ram_weight_multiplier, free_ram),
    ]
    totals = [0.0] * len(candidates)
    for multiplier, weigher in weighers:
        for i, value in enumerate(_normalised([weigher(c) for c in candidates])):
            totals[i] += multiplier * value
    order = sorted(range(len(candidates)), key=lambda i: -totals[i])  # stable on ties
    return [candidates[i] for i in order]
