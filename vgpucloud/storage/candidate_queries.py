"""The small, set-based queries that load an allocation-candidates ``Snapshot``.

Only trees that can matter are read, so the cost grows with the providers that can match,
not with the size of the cloud::

    1. roots with room      providers with room for a requested class (index
                            inventories(resource_class_id, resource_provider_id), usage
                            summed over allocations(resource_provider_id, resource_class_id))
    2. sharing anchors      for the sharing providers among them, the roots of every tree
                            in one of their aggregates
    3. in_tree roots        the trees ``in_tree`` names (an unknown one yields no candidates)
    4. whole trees          providers, inventories with usage, traits and aggregates of those
                            roots (index resource_providers(root_provider_id))

Unknown resource classes and traits are refused with Placement's messages.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator
from typing import Any

from sqlalchemy import Connection, and_, func, literal, or_, select

from vgpucloud.errors import BadRequest
from vgpucloud.placement.candidates.request import CandidateRequest
from vgpucloud.placement.candidates.snapshot import (
    SHARING_TRAIT,
    ProviderNode,
    ResourceCapacity,
    Snapshot,
)
from vgpucloud.storage import tables as t

rp = t.resource_providers
inv = t.inventories
alloc = t.allocations

# Bound parameters per IN list: far below every backend's limit, large enough to be rare.
_CHUNK = 2000


def load_snapshot(connection: Connection, request: CandidateRequest) -> Snapshot:
    class_ids = _class_ids(connection, request.resource_classes())
    _check_traits(connection, _trait_names(request))
    smallest: dict[int, int] = {}
    for group in request.groups:
        for rc, amount in group.resources.items():
            rc_id = class_ids[rc]
            smallest[rc_id] = min(amount, smallest.get(rc_id, amount))
    with_room = _providers_with_room(connection, smallest)
    roots = set(with_room.values())
    sharing = _sharing_providers(connection) & set(with_room)
    roots |= _anchor_roots(connection, sharing)
    roots |= _in_tree_roots(connection, {g.in_tree for g in request.groups if g.in_tree})
    return Snapshot(_trees(connection, roots), cloud_has_nested=_cloud_has_nested(connection))


# --- validation ---------------------------------------------------------------------------


def _class_ids(connection: Connection, names: Collection[str]) -> dict[str, int]:
    rc = t.resource_classes
    found = dict(connection.execute(
        select(rc.c.name, rc.c.id).where(rc.c.name.in_(sorted(names)))).all())
    missing = sorted(set(names) - set(found))
    if missing:
        raise BadRequest(
            "Invalid resource class in resources parameter: No such resource class "
            f"{', '.join(missing)}. Create it first with PUT /resource_classes/{missing[0]}.")
    return found


def _trait_names(request: CandidateRequest) -> set[str]:
    names = set(request.root_required.all_names())
    for group in request.groups:
        names |= group.traits.all_names()
    return names


def _check_traits(connection: Connection, names: Collection[str]) -> None:
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


# --- which trees can matter ---------------------------------------------------------------


def _providers_with_room(connection: Connection, smallest: dict[int, int]) -> dict[int, int]:
    """provider id -> root id, for providers with room for the smallest amount asked of one
    of their classes."""
    if not smallest:
        return {}
    usage = (select(alloc.c.resource_provider_id, alloc.c.resource_class_id,
                    func.sum(alloc.c.used).label("used"))
             .where(alloc.c.resource_class_id.in_(list(smallest)))
             .group_by(alloc.c.resource_provider_id, alloc.c.resource_class_id)
             .subquery("usage"))
    room = (inv.c.total - inv.c.reserved) * inv.c.allocation_ratio - func.coalesce(usage.c.used,
                                                                                   0)
    query = (
        select(inv.c.resource_provider_id, rp.c.root_provider_id)
        .select_from(
            inv.join(rp, rp.c.id == inv.c.resource_provider_id)
            .outerjoin(usage, and_(usage.c.resource_provider_id == inv.c.resource_provider_id,
                                   usage.c.resource_class_id == inv.c.resource_class_id)))
        .where(or_(*(and_(inv.c.resource_class_id == rc_id, room >= amount)
                     for rc_id, amount in smallest.items())))
    )
    return dict(connection.execute(query).all())


def _sharing_providers(connection: Connection) -> set[int]:
    rpt, tr = t.resource_provider_traits, t.traits
    query = (select(rpt.c.resource_provider_id)
             .select_from(rpt.join(tr, tr.c.id == rpt.c.trait_id))
             .where(tr.c.name == SHARING_TRAIT))
    return set(connection.execute(query).scalars())


def _anchor_roots(connection: Connection, sharing: set[int]) -> set[int]:
    """Roots of every tree that has a provider in an aggregate of a sharing provider."""
    mine = t.resource_provider_aggregates.alias("mine")
    theirs = t.resource_provider_aggregates.alias("theirs")
    roots: set[int] = set()
    for chunk in _chunks(sharing):
        query = (select(rp.c.root_provider_id).distinct()
                 .select_from(mine.join(theirs, theirs.c.aggregate_id == mine.c.aggregate_id)
                              .join(rp, rp.c.id == theirs.c.resource_provider_id))
                 .where(mine.c.resource_provider_id.in_(chunk)))
        roots |= set(connection.execute(query).scalars())
    return roots


def _in_tree_roots(connection: Connection, uuids: set[str]) -> set[int]:
    if not uuids:
        return set()
    query = select(rp.c.root_provider_id).where(rp.c.uuid.in_(sorted(uuids)))
    return set(connection.execute(query).scalars())


def _cloud_has_nested(connection: Connection) -> bool:
    query = select(literal(1)).where(rp.c.parent_provider_id.is_not(None)).limit(1)
    return connection.execute(query).first() is not None


# --- loading whole trees ------------------------------------------------------------------


def _trees(connection: Connection, roots: set[int]) -> list[ProviderNode]:
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
