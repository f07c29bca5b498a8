"""Flavor → what the scheduler asks Placement, and what its filters check afterwards. Pure.

A flavor ``vgpu_1`` (2 vCPU, 2048 MiB, 20 GiB) with ``resources:VGPU=1`` and
``trait:CUSTOM_NVIDIA_11=required`` becomes::

    GET /allocation_candidates?resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2,VGPU:1
        &required=CUSTOM_NVIDIA_11&limit=1000

and one with ``resources1:VGPU=1``, ``resources2:VGPU=1``, ``group_policy=isolate``::

    ?resources=DISK_GB:20,MEMORY_MB:2048,VCPU:2&resources1=VGPU:1&resources2=VGPU:1
        &group_policy=isolate

As in Nova, ``resources:VCPU=0`` (or ``MEMORY_MB``/``DISK_GB``) overrides what the flavor's
own columns ask for, and amounts of 0 are not requested at all.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence

from vgpucloud.compute.extra_specs import (
    GroupSpec,
    ParsedExtraSpecs,
    check_bootable,
    parse_extra_specs,
)
from vgpucloud.compute.models import Flavor

DEFAULT_LIMIT = 1000


@dataclasses.dataclass(frozen=True, slots=True)
class RequestSpec:
    """``params`` is the Placement query; the rest is what filters and explanations need."""

    flavor_id: str
    groups: tuple[GroupSpec, ...]  # unsuffixed first (with the flavor's own resources)
    group_policy: str | None
    aggregate_specs: Mapping[str, str]
    member_of: tuple[tuple[str, ...], ...]
    limit: int

    @property
    def params(self) -> dict[str, str | list[str]]:
        """Everything for ``GET /allocation_candidates``, ``member_of`` repeated."""
        params: dict[str, str | list[str]] = dict(placement_params(self))
        if self.member_of:
            params["member_of"] = member_of_params(self)
        return params

    def group(self, suffix: str) -> GroupSpec:
        return next(g for g in self.groups if g.suffix == suffix)


def flavor_resources(flavor: Flavor) -> dict[str, int]:
    """The flavor's own columns as resource classes; swap (MiB) counts as whole GiB of disk."""
    disk = flavor.disk + flavor.ephemeral + math.ceil(flavor.swap / 1024)
    return {"VCPU": flavor.vcpus, "MEMORY_MB": flavor.ram, "DISK_GB": disk}


def build_request_spec(flavor: Flavor, *, member_of: Sequence[Sequence[str]] = (),
                       limit: int = DEFAULT_LIMIT) -> RequestSpec:
    """``member_of`` holds aggregate UUID sets; each becomes ``member_of=in:a,b``."""
    parsed: ParsedExtraSpecs = parse_extra_specs(flavor.extra_specs)
    check_bootable(parsed)
    own = flavor_resources(flavor)
    unsuffixed = parsed.unsuffixed
    merged = {**own, **unsuffixed.resources}  # "resources:VCPU=0" wins over flavor.vcpus
    first = dataclasses.replace(unsuffixed, resources=_positive(merged))
    numbered = [dataclasses.replace(g, resources=_positive(g.resources))
                for g in parsed.numbered()]
    return RequestSpec(
        flavor_id=flavor.id, groups=(first, *numbered), group_policy=parsed.group_policy,
        aggregate_specs=dict(parsed.aggregate_specs),
        member_of=tuple(tuple(sorted(s)) for s in member_of if s), limit=limit)


def _positive(resources: Mapping[str, int]) -> dict[str, int]:
    return {rc: n for rc, n in sorted(resources.items()) if n > 0}


def placement_params(spec: RequestSpec) -> dict[str, str]:
    """The query string of ``GET /allocation_candidates`` (microversion >= 1.33)."""
    params: dict[str, str] = {}
    for group in spec.groups:
        if group.resources:
            params[f"resources{group.suffix}"] = ",".join(
                f"{rc}:{n}" for rc, n in sorted(group.resources.items()))
        traits = sorted(group.required_traits) + [f"!{t}" for t in sorted(group.forbidden_traits)]
        if traits:
            params[f"required{group.suffix}"] = ",".join(traits)
    if spec.group_policy and len(spec.groups) > 1:
        params["group_policy"] = spec.group_policy
    params["limit"] = str(spec.limit)
    return params


def member_of_params(spec: RequestSpec) -> list[str]:
    """Values of the repeated ``member_of`` key (1.24: every one must hold), e.g.
    ``["in:0f1e…,77aa…"]``; kept apart because a plain mapping holds one value per key."""
    return ["in:" + ",".join(s) for s in spec.member_of]
