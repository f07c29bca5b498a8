"""Placement's nouns as plain values: providers, inventories, consumers, allocations.

Pure: no SQL, no HTTP. ``storage`` persists these; ``api`` renders them.

A vGPU compute host as Placement sees it (seed nova-vgpu-doc.rst)::

    virtlab606 (root)                 VCPU 48 ×16.0, MEMORY_MB 65442 (512 reserved) ×1.5, DISK_GB 49
    ├── virtlab606_pci_0000_84_00_0   VGPU 16   traits: CUSTOM_MDEV_NVIDIA_35
    └── virtlab606_pci_0000_85_00_0   VGPU 16   traits: CUSTOM_MDEV_NVIDIA_35, CUSTOM_NVIDIA_11
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping

# Placement stores integers in a signed 32-bit column; it is also the documented
# default of ``max_unit`` when a client omits it.
MAX_INT = 2147483647
# The largest float the SQL 'FLOAT' type of every backend keeps exactly enough.
MAX_FLOAT = 3.40282e38


@dataclasses.dataclass(frozen=True, slots=True)
class ResourceProvider:
    uuid: str
    name: str
    generation: int
    parent_provider_uuid: str | None
    root_provider_uuid: str


@dataclasses.dataclass(frozen=True, slots=True)
class Inventory:
    """One resource class's inventory on one provider, with Placement's defaults."""

    resource_class: str
    total: int
    reserved: int = 0
    min_unit: int = 1
    max_unit: int = MAX_INT
    step_size: int = 1
    allocation_ratio: float = 1.0

    @property
    def capacity(self) -> int:
        """What may be allocated in all: ``(total - reserved) * allocation_ratio``, floored."""
        return int((self.total - self.reserved) * self.allocation_ratio)

    def unit_problem(self, amount: int) -> str | None:
        """Why ``amount`` is not an allowed single allocation here, or ``None`` if it is."""
        if amount < self.min_unit:
            return f"{amount} is below min_unit {self.min_unit}"
        if amount > self.max_unit:
            return f"{amount} is above max_unit {self.max_unit}"
        if amount % self.step_size:
            return f"{amount} is not a multiple of step_size {self.step_size}"
        return None


@dataclasses.dataclass(frozen=True, slots=True)
class ResourceClass:
    name: str
    standard: bool


@dataclasses.dataclass(frozen=True, slots=True)
class Consumer:
    uuid: str
    project_id: str
    user_id: str
    generation: int
    consumer_type: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class Allocation:
    """``used`` units of ``resource_class`` held by ``consumer_uuid`` on ``provider_uuid``."""

    consumer_uuid: str
    provider_uuid: str
    resource_class: str
    used: int


class GenerationCheck(enum.Enum):
    """How a write treats the consumer generation (microversion 1.28 introduced the check)."""

    SKIP = "skip"  # before 1.28: last writer wins


# A consumer generation expectation: an int (must match), None (consumer must be new),
# or GenerationCheck.SKIP (no check, pre-1.28 behaviour).
ExpectedGeneration = int | None | GenerationCheck


@dataclasses.dataclass(frozen=True, slots=True)
class ConsumerAllocationRequest:
    """What one consumer should hold after a write (PUT /allocations/{c}, POST /allocations,
    POST /reshaper). An empty ``resources`` mapping removes every allocation of the consumer.
    """

    consumer_uuid: str
    # provider uuid -> resource class -> amount
    resources: Mapping[str, Mapping[str, int]]
    project_id: str
    user_id: str
    expected_generation: ExpectedGeneration = GenerationCheck.SKIP
    consumer_type: str | None = None


@dataclasses.dataclass(frozen=True, slots=True)
class TraitQuery:
    """A ``required=`` filter: all of ``required``, none of ``forbidden``, and at least one
    trait of every set in ``any_of`` (microversion 1.39 ``in:`` syntax).

    ``required=CUSTOM_A,!CUSTOM_B&required=in:CUSTOM_C,CUSTOM_D`` is
    ``TraitQuery({"CUSTOM_A"}, {"CUSTOM_B"}, ({"CUSTOM_C", "CUSTOM_D"},))``.
    """

    required: frozenset[str] = frozenset()
    forbidden: frozenset[str] = frozenset()
    any_of: tuple[frozenset[str], ...] = ()

    def all_names(self) -> frozenset[str]:
        names = set(self.required) | set(self.forbidden)
        for group in self.any_of:
            names |= group
        return frozenset(names)

    def matches(self, traits: frozenset[str] | set[str]) -> bool:
        return (
            self.required <= traits
            and not (self.forbidden & traits)
            and all(group & traits for group in self.any_of)
        )


@dataclasses.dataclass(frozen=True, slots=True)
class AggregateQuery:
    """A ``member_of=`` filter: in at least one aggregate of every set in ``any_of``
    (each ``member_of`` parameter is one set; ``in:A,B`` or a single uuid) and in none of
    ``forbidden`` (the ``!`` syntax of 1.32).
    """

    any_of: tuple[frozenset[str], ...] = ()
    forbidden: frozenset[str] = frozenset()

    def matches(self, aggregates: frozenset[str] | set[str]) -> bool:
        return all(group & aggregates for group in self.any_of) and not (
            self.forbidden & aggregates
        )


@dataclasses.dataclass(frozen=True, slots=True)
class ProviderFilter:
    """``GET /resource_providers`` query: every field narrows the result; None means no filter."""

    name: str | None = None
    uuid: str | None = None
    in_tree: str | None = None
    member_of: AggregateQuery = AggregateQuery()
    resources: Mapping[str, int] | None = None
    traits: TraitQuery = TraitQuery()
