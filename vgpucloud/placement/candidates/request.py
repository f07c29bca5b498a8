"""What a ``GET /allocation_candidates`` asks for, as plain values, and the rules between them.

``?resources=VCPU:1,MEMORY_MB:512&resources1=VGPU:1&required1=CUSTOM_NVIDIA_11
&resources2=VGPU:1&group_policy=isolate&limit=10`` is::

    CandidateRequest(
        groups=(RequestGroup("", {"VCPU": 1, "MEMORY_MB": 512}),
                RequestGroup("1", {"VGPU": 1}, TraitQuery({"CUSTOM_NVIDIA_11"})),
                RequestGroup("2", {"VGPU": 1})),
        group_policy="isolate", limit=10)

The unsuffixed group ("") may spread its resource classes over several providers of one
tree (and sharing providers); every suffixed group takes all of its resources from one
provider.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from vgpucloud.errors import BadRequest, QueryBadValue, QueryMissingValue
from vgpucloud.placement.models import AggregateQuery, TraitQuery

ISOLATE = "isolate"
NONE = "none"
NO_TRAITS = TraitQuery()
ANY_AGGREGATE = AggregateQuery()


@dataclasses.dataclass(frozen=True, slots=True)
class RequestGroup:
    suffix: str  # "" for the unsuffixed group
    resources: Mapping[str, int]
    traits: TraitQuery = NO_TRAITS
    member_of: AggregateQuery = ANY_AGGREGATE
    in_tree: str | None = None

    @property
    def same_provider(self) -> bool:
        """Suffixed ("granular") groups are satisfied by exactly one provider."""
        return bool(self.suffix)


@dataclasses.dataclass(frozen=True, slots=True)
class CandidateRequest:
    groups: tuple[RequestGroup, ...]
    group_policy: str | None = None
    limit: int | None = None
    # 1.35: traits the anchor (root) provider must have / must not have.
    root_required: TraitQuery = NO_TRAITS
    # 1.36: each set of suffixes must land in one subtree.
    same_subtree: tuple[frozenset[str], ...] = ()
    # Before 1.29 clients cannot take more than one provider per tree.
    nested_aware: bool = True

    def resource_classes(self) -> set[str]:
        return {rc for group in self.groups for rc in group.resources}

    def granular_count(self) -> int:
        return sum(1 for group in self.groups if group.same_provider)


@dataclasses.dataclass(frozen=True, slots=True)
class GenerationPolicy:
    """``[placement]`` options that bound and order the work (see ``vgpucloud.conf``)."""

    max_candidates: int = -1  # -1: no cap
    strategy: str = "depth-first"  # or "breadth-first": round-robin across roots
    randomize: bool = False


DEFAULT_POLICY = GenerationPolicy()


def check_request(request: CandidateRequest, *, resourceless_allowed: bool) -> None:
    """Refuse a request Placement refuses, with Placement's wording.

    ``resourceless_allowed`` is microversion 1.36 and later (groups without resources must
    then be named in ``same_subtree``); before that every group needs resources.
    """
    if resourceless_allowed:
        _check_resourceless(request)
    else:
        _check_orphans(request)
    _check_conflicting_traits(request)
    if request.granular_count() > 1 and not request.group_policy:
        raise BadRequest(
            'The "group_policy" parameter is required when specifying more than one '
            '"resources{N}" parameter.')


def _check_resourceless(request: CandidateRequest) -> None:
    if all(not group.resources for group in request.groups):
        raise QueryMissingValue(
            "There must be at least one resources or resources[$S] parameter.")
    in_subtree = set().union(*request.same_subtree)
    bad = [group.suffix for group in request.groups
           if not group.resources and group.suffix not in in_subtree]
    if bad:
        raise QueryBadValue(
            "Resourceless suffixed group request should be specified in `same_subtree` "
            f"query param: bad group(s) - {bad}.")
    known = [group.suffix for group in request.groups]
    unknown = sorted(in_subtree - set(known))
    if unknown:
        raise QueryBadValue(
            f"Real suffixes should be specified in `same_subtree`: {unknown} not found in "
            f"{known}.")


def _check_orphans(request: CandidateRequest) -> None:
    if not request.groups:
        raise BadRequest(
            "At least one request group (`resources` or `resources{$S}`) is required.")
    for group in request.groups:
        if group.resources:
            continue
        if group.traits.all_names():
            raise BadRequest(
                "All traits parameters must be associated with resources.  Found the "
                f"following orphaned traits keys: required{group.suffix}")
        if group.member_of.any_of or group.member_of.forbidden:
            raise BadRequest(
                "All member_of parameters must be associated with resources. Found the "
                f"following orphaned member_of keys: member_of{group.suffix}")
        raise BadRequest("All request groups must specify resources.")


def _check_conflicting_traits(request: CandidateRequest) -> None:
    conflicts = []
    for group in request.groups:
        wanted = [frozenset({name}) for name in group.traits.required]
        wanted += list(group.traits.any_of)
        for names in wanted:
            if names <= group.traits.forbidden:
                conflicts.append(f"required{group.suffix}: ({', '.join(sorted(names))})")
    if conflicts:
        raise BadRequest(
            "Conflicting required and forbidden traits found in the following traits "
            f"keys: {', '.join(sorted(conflicts))}")
