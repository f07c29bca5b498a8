"""Loading the allocation-candidates ``Snapshot``: whole provider trees, set-based, and the
checks of the names a request uses.

The snapshot itself is kept by ``storage.candidate_cache.CandidateReadModel`` and patched
tree by tree; this module answers its one question - "load these trees" - with four
queries per chunk of roots, all on indexed columns::

    providers     resource_providers(root_provider_id)
    inventories   joined to their class names, usage summed over allocations
                  (resource_provider_id, resource_class_id)
    traits        resource_provider_traits joined to traits
    aggregates    resource_provider_aggregates joined to placement_aggregates

Unknown resource classes and traits are refused with Placement's messages.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from sqlalchemy import Connection, func, select

from vgpucloud.errors import BadRequest
from vgpucloud.placement.candidates.request import CandidateRequest
from vgpucloud.placement.candidates.snapshot import ProviderNode, ResourceCapacity, Snapshot
from vgpucloud.storage import tables as t
from vgpucloud.storage.candidate_cache import CandidateReadModel

rp = t.resource_providers
inv = t.inventories
alloc = t.allocations

# Bound parameters per IN list: far below every backend's limit, large enough to be rare.
_CHUNK = 2000


def load_snapshot(connection: Connection, request: CandidateRequest,
                  model: CandidateReadModel) -> Snapshot:
    """The whole cloud as of this transaction, after checking the request's names."""
    snapshot, class_ids = model.snapshot(connection, load_trees)
    _check_classes(request.resource_classes(), class_ids)
    _check_traits(connection, _trait_names(request) - snapshot.trait_names())
    return snapshot


# --- validation ---------------------------------------------------------------------------


def _check_classes(names: Collection[str], class_ids: Mapping[str, int]) -> None:
    missing = sorted(set(names) - class_ids.keys())
    if missing:
        raise BadRequest(
            "Invalid resource class in resources parameter: No such resource class "
            f"{', '.join(missing)}. Create it first with PUT /resource_classes/{missing[0]}.")


def _trait_names(request: CandidateRequest) -> set[str]:
    names = set(request.root_required.all_names())
    for group in request.groups:
        names |= group.traits.all_names()
    return names


def _check_traits(connection: Connection, names: Collection[str]) -> None:
    """Refuse unknown traits. The caller leaves out the names some provider of the
    validated snapshot has: a trait in use cannot be deleted (Placement refuses), and
    unsetting it bumps the provider's generation, so those exist without asking."""
    if not names:
        return
    tr = t.traits
    found = set(connection.execute(select(tr.c.name).where(tr.c.name.in_(sorted(names))))
                .scalars())
    missing = sorted(set(names) - found)
    if missing:
        raise BadRequest(
            f"No such trait(s): {', '.join(missing)}. Create custom traits first with "
            f"PUT /traits/{missing[0]}.")


# --- loading whole trees ------------------------------------------------------------------


def load_trees(connection: Connection, roots: set[int]) -> list[ProviderNode]:
    """Every provider of the trees rooted at ``roots``."""
    nodes: list[ProviderNode] = []
    for chunk in _chunks(roots):
        nodes += _load_chunk(connection, chunk)
    return nodes


def _load_chunk(connection: Connection, roots: list[int]) -> list[ProviderNode]:
    in_trees = rp.c.root_provider_id.in_(roots)
    providers = connection.execute(
        select(rp.c.id, rp.c.uuid, rp.c.parent_provider_id, rp.c.root_provider_id)
        .where(in_trees)).all()
    used = _usages(connection, in_trees)
    resources: dict[int, dict[str, ResourceCapacity]] = {}
    for pid, rc_id, name, total, reserved, ratio, min_unit, max_unit, step in \
            connection.execute(_inventory_query(in_trees)):
        resources.setdefault(pid, {})[name] = ResourceCapacity(
            int((total - reserved) * ratio), used.get((pid, rc_id), 0), min_unit, max_unit,
            step)
    traits = _names_by_provider(connection, in_trees, t.resource_provider_traits,
                                t.traits, "trait_id", t.traits.c.name)
    aggregates = _names_by_provider(connection, in_trees, t.resource_provider_aggregates,
                                    t.placement_aggregates, "aggregate_id",
                                    t.placement_aggregates.c.uuid)
    empty: frozenset[str] = frozenset()
    return [
        ProviderNode(pid, uuid, parent, root or pid, resources.get(pid, {}),
                     traits.get(pid, empty), aggregates.get(pid, empty))
        for pid, uuid, parent, root in providers
    ]


def _inventory_query(in_trees: Any) -> Any:
    rc = t.resource_classes
    return (select(inv.c.resource_provider_id, inv.c.resource_class_id, rc.c.name,
                   inv.c.total, inv.c.reserved, inv.c.allocation_ratio, inv.c.min_unit,
                   inv.c.max_unit, inv.c.step_size)
            .select_from(inv.join(rp, rp.c.id == inv.c.resource_provider_id)
                         .join(rc, rc.c.id == inv.c.resource_class_id))
            .where(in_trees))


def _usages(connection: Connection, in_trees: Any) -> dict[tuple[int, int], int]:
    query = (select(alloc.c.resource_provider_id, alloc.c.resource_class_id,
                    func.sum(alloc.c.used))
             .select_from(alloc.join(rp, rp.c.id == alloc.c.resource_provider_id))
             .where(in_trees)
             .group_by(alloc.c.resource_provider_id, alloc.c.resource_class_id))
    return {(pid, rc_id): int(total) for pid, rc_id, total in connection.execute(query)}


def _names_by_provider(connection: Connection, in_trees: Any, link: Any, named: Any,
                       link_column: str, name_column: Any) -> dict[int, frozenset[str]]:
    query = (select(link.c.resource_provider_id, name_column)
             .select_from(link.join(named, named.c.id == link.c[link_column])
                          .join(rp, rp.c.id == link.c.resource_provider_id))
             .where(in_trees))
    found: dict[int, set[str]] = {}
    for pid, name in connection.execute(query):
        found.setdefault(pid, set()).add(name)
    return {pid: frozenset(names) for pid, names in found.items()}


def _chunks(ids: Iterable[int]) -> Iterator[list[int]]:
    ordered = sorted(ids)
    for start in range(0, len(ordered), _CHUNK):
        yield ordered[start:start + _CHUNK]
