"""Why nothing fits: one sentence per failed constraint, built from Placement reads.

Only run when a boot found no host, so its extra reads cost nothing on the happy path. It
asks Placement the question of each constraint alone (``GET /resource_providers?resources=
VGPU:4&required=CUSTOM_NVIDIA_11``) and, when no provider answers, finds the closest one::

    no provider with 4 free VGPU of CUSTOM_NVIDIA_11; best: host1_pci_0000_85_00_0 has 2
"""

from __future__ import annotations

from collections.abc import Sequence

from vgpucloud.client.placement import PlacementClient
from vgpucloud.compute.extra_specs import GroupSpec
from vgpucloud.compute.request_spec import RequestSpec
from vgpucloud.scheduler.candidates import HOST_CLASSES
from vgpucloud.scheduler.filters import Rejection


def explain_no_fit(placement: PlacementClient, spec: RequestSpec,
                   rejections: Sequence[Rejection]) -> str:
    reasons = [r for group in spec.groups for r in _group_reasons(placement, group)]
    if rejections:
        passed_over = "; ".join(f"{r.host}: {r.reason}" for r in rejections)
        reasons.append(f"hosts passed over by filters: {passed_over}")
    if not reasons:
        together = "every constraint fits alone, but no host fits all of them together"
        if spec.group_policy == "isolate" and len(spec.groups) > 2:
            together += " with each numbered group on a different provider (group_policy=isolate)"
        reasons.append(together)
    if spec.member_of:
        reasons.append("only hosts in aggregates " + " and ".join(
            "(" + " or ".join(s) + ")" for s in spec.member_of) + " were considered")
    return "; ".join(reasons)


def _group_reasons(placement: PlacementClient, group: GroupSpec) -> list[str]:
    reasons = []
    for rc, amount in sorted(group.resources.items()):
        # In the unsuffixed group traits may sit on any provider of the tree; they matter
        # for the device classes (a pGPU's trait), not for the compute node's VCPU/RAM.
        traits = _trait_query(group) if group.suffix or rc not in HOST_CLASSES else ""
        reason = _class_reason(placement, rc, amount, traits)
        if reason:
            reasons.append(reason)
    return reasons


def _trait_query(group: GroupSpec) -> str:
    return ",".join(sorted(group.required_traits)
                    + [f"!{t}" for t in sorted(group.forbidden_traits)])


def _class_reason(placement: PlacementClient, rc: str, amount: int, traits: str) -> str | None:
    query = {"resources": f"{rc}:{amount}"} | ({"required": traits} if traits else {})
    if placement.list_providers(**query):
        return None
    of = f" of {traits}" if traits else ""
    what = f"no provider with {amount} free {rc}{of}"
    best = _best(placement, rc, traits)
    if best is None:
        what += f"; no provider{of} has any {rc} free"
    else:
        what += f"; best: {best[0]} has {best[1]}"
    if traits:
        others = placement.list_providers(resources=f"{rc}:{amount}")
        if others:
            names = ", ".join(sorted(p["name"] for p in others)[:3])
            what += f" ({names} {'has' if len(others) == 1 else 'have'} {amount} free " \
                    f"{rc} but not {traits})"
    return what


def _best(placement: PlacementClient, rc: str, traits: str) -> tuple[str, int] | None:
    query = {"resources": f"{rc}:1"} | ({"required": traits} if traits else {})
    best: tuple[str, int] | None = None
    for provider in placement.list_providers(**query):
        inventory = placement.get_inventories(provider["uuid"])["inventories"].get(rc)
        if inventory is None:
            continue
        usage = placement.get_provider_usages(provider["uuid"])["usages"].get(rc, 0)
        capacity = int((inventory["total"] - inventory["reserved"])
                       * inventory["allocation_ratio"])
        free = capacity - int(usage)
        if best is None or free > best[1]:
            best = (provider["name"], free)
    return best
