"""Consumer generation rules (pure), as OpenStack Placement applies them since 1.28.

A write names the generation it last saw: an int for a consumer that holds allocations,
``None`` for one it believes new, or ``GenerationCheck.SKIP`` (before 1.28) for no check.
"""

from __future__ import annotations

from vgpucloud.errors import ConcurrentUpdate
from vgpucloud.placement.models import ExpectedGeneration, GenerationCheck


def check_consumer_generation(
    consumer_uuid: str, expected: ExpectedGeneration, current: int | None
) -> None:
    """Refuse the write when ``expected`` is not the consumer's ``current`` generation
    (``None`` = the consumer does not exist).

    The message keeps Placement's words, "expected" being what is stored and "got"
    what the request sent: ``consumer generation conflict - expected 3 but got 2``.
    """
    if expected is GenerationCheck.SKIP or expected == current:
        return
    stored = "null" if current is None else str(current)
    sent = "null" if expected is None else str(expected)
    raise ConcurrentUpdate(
        f"consumer generation conflict - expected {stored} but got {sent}: consumer "
        f"{consumer_uuid} changed since it was read; re-read its allocations and retry."
    )
