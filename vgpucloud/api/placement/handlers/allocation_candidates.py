"""GET /allocation_candidates (1.10+): parse the query, ask the engine, render by microversion.

A query and what it becomes (1.39)::

    ?resources=VCPU:1,MEMORY_MB:512&resources1=VGPU:1&required1=CUSTOM_NVIDIA_11
    &resources_GPU2=VGPU:1&group_policy=isolate&limit=100&root_required=!CUSTOM_MAINT

    CandidateRequest(groups=(RequestGroup("", {VCPU: 1, MEMORY_MB: 512}),
                             RequestGroup("1", {VGPU: 1}, required CUSTOM_NVIDIA_11),
                             RequestGroup("_GPU2", {VGPU: 1})),
                     group_policy="isolate", limit=100, root_required=forbidden CUSTOM_MAINT)

Which keys a microversion knows: ``resources`` 1.10, ``limit`` 1.16, ``required`` 1.17,
``member_of`` 1.21, suffixed groups and ``group_policy`` 1.25, ``in_tree`` 1.31, named
suffixes 1.33, ``root_required`` 1.35, ``same_subtree`` and resourceless groups 1.36.
Response shapes: 1.10 lists allocations, 1.12 keys them by provider, 1.17 adds traits to
summaries, 1.27 lists every inventory in them, 1.29 adds parent/root uuids (and nested
candidates), 1.34 adds ``mappings``.
"""

from __future__ import annotations

import contextlib
import gc
import json
import re
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import webob

from vgpucloud.api.microversion import Version
from vgpucloud.api.placement import params
from vgpucloud.api.placement.context import PlacementRequest, mark_uncacheable
from vgpucloud.api.placement.handlers.candidate_rendering import (
    render_text,
    request_dict,
    summary_dict,
    summary_shape,
)
from vgpucloud.errors import BadRequest, QueryBadValue, QueryDuplicateKey, QueryMissingValue
from vgpucloud.placement.candidates import (
    CandidateRequest,
    CandidateResult,
    GenerationPolicy,
    RequestGroup,
    Snapshot,
    check_request,
    find_candidates,
)
from vgpucloud.placement.models import TraitQuery

_GROUP_KEY = re.compile(r"^(resources|required|member_of|in_tree)(.*)$")
_NUMBERED = re.compile(r"^[1-9][0-9]*$")
_NAMED = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_LIMIT = re.compile(r"^[1-9][0-9]*$")
_SINCE = {"resources": 10, "limit": 16, "required": 17, "member_of": 21, "group_policy": 25,
          "in_tree": 31, "root_required": 35, "same_subtree": 36}


def list_allocation_candidates(request: PlacementRequest) -> webob.Response:
    candidate_request = parse_request(request.query(), request.version)
    placement = request.settings.placement
    policy = GenerationPolicy(
        max_candidates=placement.max_allocation_candidates,
        strategy=placement.allocation_candidates_generation_strategy,
        randomize=placement.randomize_allocation_candidates)
    with _without_cyclic_gc():
        # Only the encoded answer outlives _answer: when the collector resumes, the
        # thousands of candidates are already freed instead of being scanned.
        body = _answer(request, candidate_request, policy)
    response = webob.Response(body=body, content_type="application/json", charset=None)
    if request.at_least(15):
        mark_uncacheable(response)
    return response


def _answer(request: PlacementRequest, candidate_request: CandidateRequest,
            policy: GenerationPolicy) -> bytes:
    snapshot = request.store.candidate_snapshot(candidate_request)
    result = find_candidates(snapshot, candidate_request, policy)
    if request.version < (1, 12):
        return json.dumps(render(snapshot, candidate_request, result, request.version)).encode()
    return render_text(snapshot, candidate_request, result, request.version).encode()


_gc_lock = threading.Lock()
_gc_holders = 0
_gc_was_enabled = True


@contextlib.contextmanager
def _without_cyclic_gc() -> Iterator[None]:
    """Pause the cyclic garbage collector while a request builds its answer.

    A large answer allocates tens of thousands of short-lived tuples and dicts, none in a
    reference cycle (reference counting frees them all), yet each allocation burst triggers
    generation-0/1 collections that measured at ~40% of the request. Counted across threads,
    so the collector resumes when the last concurrent request finishes. Keep it that way:
    anything cyclic built per request (a self-recursive closure, say) is only reclaimed by
    the next collection, which then scans everything it holds (``combine._walk``).
    """
    global _gc_holders, _gc_was_enabled
    with _gc_lock:
        _gc_holders += 1
        if _gc_holders == 1:
            _gc_was_enabled = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _gc_lock:
            _gc_holders -= 1
            if _gc_holders == 0 and _gc_was_enabled:
                gc.enable()


# --- parsing --------------------------------------------------------------------------------


def parse_request(pairs: Sequence[tuple[str, str]], version: Version) -> CandidateRequest:
    """The query pairs as a checked ``CandidateRequest``; BadRequest when Placement says 400."""
    by_suffix = _split_groups(pairs, version)
    if "" not in by_suffix and version < (1, 25):
        raise QueryMissingValue(
            "Invalid query string parameters: 'resources' is a required property; "
            "send ?resources=VCPU:1,MEMORY_MB:512.")
    groups = tuple(_group(suffix, group_pairs, version)
                   for suffix, group_pairs in by_suffix.items())
    request = CandidateRequest(
        groups=groups,
        group_policy=_group_policy(pairs),
        limit=_limit(pairs),
        root_required=_root_required(pairs),
        same_subtree=_same_subtree(pairs),
        nested_aware=version >= (1, 29),
    )
    check_request(request, resourceless_allowed=version >= (1, 36))
    return request


def _split_groups(pairs: Sequence[tuple[str, str]], version: Version
                  ) -> dict[str, list[tuple[str, str]]]:
    by_suffix: dict[str, list[tuple[str, str]]] = {}
    for key, value in pairs:
        match = _GROUP_KEY.match(key)
        if match is None or not _known_suffix(match.group(1), match.group(2), version):
            if key not in _SINCE or version < (1, _SINCE[key]):
                raise BadRequest(
                    f"Invalid query string parameters: {key!r} is not a known parameter of "
                    f"GET /allocation_candidates at microversion {version}.")
            continue
        prefix, suffix = match.groups()
        by_suffix.setdefault(suffix, []).append((prefix, value))
    return by_suffix


def _known_suffix(prefix: str, suffix: str, version: Version) -> bool:
    if version < (1, _SINCE[prefix]):
        return False
    if not suffix:
        return True
    if version < (1, 25):
        return False
    if prefix == "in_tree" and version < (1, 31):
        return False
    return bool((_NAMED if version >= (1, 33) else _NUMBERED).match(suffix))


def _group(suffix: str, pairs: list[tuple[str, str]], version: Version) -> RequestGroup:
    resources = params.single_value(pairs, "resources")
    in_tree = params.single_value(pairs, "in_tree")
    return RequestGroup(
        suffix=suffix,
        resources=params.parse_resources(resources) if resources is not None else {},
        traits=params.parse_required(params.values_of(pairs, "required"), version,
                                     f"required{suffix}"),
        member_of=params.parse_member_of(params.values_of(pairs, "member_of"), version),
        in_tree=params.parse_uuid(f"in_tree{suffix}", in_tree) if in_tree else None,
    )


def _group_policy(pairs: Sequence[tuple[str, str]]) -> str | None:
    policy = params.single_value(pairs, "group_policy")
    if policy is not None and policy not in ("none", "isolate"):
        raise QueryBadValue(
            f"Invalid query string parameters: group_policy {policy!r} is not one of "
            "'none', 'isolate'.")
    return policy


def _limit(pairs: Sequence[tuple[str, str]]) -> int | None:
    limit = params.single_value(pairs, "limit")
    if limit is None:
        return None
    if not _LIMIT.match(limit):
        raise QueryBadValue(
            f"Invalid query string parameters: 'limit' must be a positive integer; got "
            f"{limit!r}.")
    return int(limit)


def _root_required(pairs: Sequence[tuple[str, str]]) -> TraitQuery:
    values = params.values_of(pairs, "root_required")
    if len(values) > 1:
        raise QueryDuplicateKey("Query parameter 'root_required' may be specified only once.")
    if not values:
        return TraitQuery()
    if values[0].startswith("in:"):
        raise QueryBadValue("The 'in:' syntax is not supported by 'root_required'.")
    query = params.parse_required(values, Version(1, 35), "root_required")
    return query


def _same_subtree(pairs: Sequence[tuple[str, str]]) -> tuple[frozenset[str], ...]:
    subtrees = []
    for value in params.values_of(pairs, "same_subtree"):
        suffixes = frozenset(part.strip() for part in value.split(","))
        if "" in suffixes:
            raise QueryBadValue(
                "Empty string (unsuffixed group) can not be specified in `same_subtree` ")
        subtrees.append(suffixes)
    return tuple(subtrees)


# --- rendering ------------------------------------------------------------------------------


def render(snapshot: Snapshot, request: CandidateRequest, result: CandidateResult,
           version: Version) -> dict[str, Any]:
    """The answer as a dict: the reference that ``candidate_rendering.render_text`` matches
    byte for byte (once encoded), and the renderer of the pre-1.12 list shape."""
    if version >= (1, 12):
        with_mappings = version >= (1, 34)
        requests = [request_dict(snapshot, candidate, with_mappings)
                    for candidate in result.candidates]
    else:
        providers = snapshot.providers
        requests = [{"allocations": [
            {"resource_provider": {"uuid": providers[pid].uuid}, "resources": resources}
            for pid, resources in candidate.allocations.items()]}
            for candidate in result.candidates]
    shape = summary_shape(request, version)
    return {"allocation_requests": requests,
            "provider_summaries": {node.uuid: summary_dict(snapshot, node, shape)
                                   for node in result.summaries}}
