"""Allocation candidates (``GET /allocation_candidates``) as pure functions over a snapshot.

``snapshot`` is what storage loads, ``request`` what the API parsed, ``groups`` and
``combine`` the two halves of the algorithm, ``engine.find_candidates`` the entry point.
"""

from vgpucloud.placement.candidates.combine import Candidate
from vgpucloud.placement.candidates.engine import CandidateResult, find_candidates
from vgpucloud.placement.candidates.request import (
    CandidateRequest,
    GenerationPolicy,
    RequestGroup,
    check_request,
)
from vgpucloud.placement.candidates.snapshot import ProviderNode, ResourceCapacity, Snapshot

__all__ = [
    "Candidate",
    "CandidateRequest",
    "CandidateResult",
    "GenerationPolicy",
    "ProviderNode",
    "RequestGroup",
    "ResourceCapacity",
    "Snapshot",
    "check_request",
    "find_candidates",
]
