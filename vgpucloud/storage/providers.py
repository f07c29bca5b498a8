"""Resource providers: create, read, filter, rename/re-parent, delete (inside a transaction).

Trees are stored twice over, as ``parent_provider_id`` and ``root_provider_id``, so that
``in_tree`` and the allocation-candidate queries find a whole tree with one indexed
equality; re-parenting therefore rewrites the root of the moved subtree.
"""

from __future__ import annotations

import uuid as uuidlib
from typing import Any

from sqlalchemy import (
    ColumnElement,
    Connection,
    Row,
    delete,
    exists,
    func,
    insert,
    literal,
    select,
    update,
)

from vgpucloud.errors import BadRequest, CannotDeleteParent, DuplicateName, ProviderInUse
from vgpucloud.placement.models import (
    AggregateQuery,
    ProviderFilter,
    ResourceProvider,
    TraitQuery,
)
from vgpucloud.storage import tables as t
from vgpucloud.storage.lookups import (
    bump_generation,
    ids_by_name,
    now,
    provider_from_row,
    provider_row,
    provider_select,
    resource_class_ids,
    rp,
)


def create(
    connection: Connection, name: str, uuid: str | None, parent_uuid: str | None
) -> ResourceProvider:
    uuid = uuid or str(uuidlib.uuid4())
    _check_name_free(connection, name)
    if connection.scalar(select(rp.c.id).where(rp.c.uuid == uuid)) is not None:
        raise DuplicateName(f"Conflicting resource provider uuid: {uuid} already exists.")
    parent = provider_row(connection, parent_uuid) if parent_uuid else None
    stamp = now()
    provider_id = connection.execute(
        insert(rp).values(
            uuid=uuid, name=name, generation=0, created_at=stamp, updated_at=stamp,
            parent_provider_id=parent.id if parent else None,
            root_provider_id=parent.root_provider_id if parent else None,
        )
    ).inserted_primary_key[0]
    if parent is None:
        connection.execute(
            update(rp).where(rp.c.id == provider_id).values(root_provider_id=provider_id)
        )
    return get(connection, uuid)


def get(connection: Connection, uuid: str) -> ResourceProvider:
    return provider_from_row(provider_row(connection, uuid))


def update_provider(
    connection: Connection, uuid: str, name: str, parent_uuid: str | None, allow_reparent: bool
) -> ResourceProvider:
    row = provider_row(connection, uuid)
    if name != row.name:
        _check_name_free(connection, name)
    values: dict[str, Any] = {"name": name}
    parent = provider_row(connection, parent_uuid) if parent_uuid else None
    new_parent_id = parent.id if parent else None
    if new_parent_id != row.parent_provider_id:
        _check_move(row, parent, allow_reparent)
        subtree = _subtree_ids(connection, row)
        if parent is not None and parent.id in subtree:
            raise BadRequest("creating loop in the provider tree is not allowed.")
        new_root = parent.root_provider_id if parent else row.id
        connection.execute(
            update(rp).where(rp.c.id.in_(subtree)).values(root_provider_id=new_root)
        )
        values["parent_provider_id"] = new_parent_id
    bump_generation(connection, row.id, row.uuid, row.generation)
    connection.execute(update(rp).where(rp.c.id == row.id).values(**values))
    return get(connection, uuid)


def _check_move(row: Row[Any], parent: Row[Any] | None, allow_reparent: bool) -> None:
    """Before microversion 1.37 a provider with a parent keeps it; a root may get one."""
    if allow_reparent or row.parent_provider_id is None:
        return
    if parent is None:
        raise BadRequest("un-parenting a provider is not currently allowed.")
    raise BadRequest("re-parenting a provider is not currently allowed.")


def _subtree_ids(connection: Connection, row: Row[Any]) -> set[int]:
    """The provider and all its descendants (one query over its tree)."""
    tree = connection.execute(
        select(rp.c.id, rp.c.parent_provider_id).where(
            rp.c.root_provider_id == row.root_provider_id
        )
    ).all()
    children: dict[int, list[int]] = {}
    for provider_id, parent_id in tree:
        children.setdefault(parent_id, []).append(provider_id)
    found, todo = {row.id}, [row.id]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def delete_provider(connection: Connection, uuid: str) -> None:
    row = provider_row(connection, uuid)
    if connection.scalar(select(exists().where(rp.c.parent_provider_id == row.id))):
        raise CannotDeleteParent(
            f"Unable to delete parent resource provider {uuid}: It has child resource "
            "providers. Delete or re-parent the children first."
        )
    if connection.scalar(
        select(exists().where(t.allocations.c.resource_provider_id == row.id))
    ):
        raise ProviderInUse(
            f"Unable to delete resource provider {uuid}: Resource provider has allocations. "
            "Delete or move the allocations of its consumers first."
        )
    for table in (t.inventories, t.resource_provider_traits, t.resource_provider_aggregates):
        connection.execute(delete(table).where(table.c.resource_provider_id == row.id))
    # A root points at itself; clear that before the row goes (MariaDB checks per row).
    connection.execute(update(rp).where(rp.c.id == row.id).values(root_provider_id=None))
    connection.execute(delete(rp).where(rp.c.id == row.id))


def _check_name_free(connection: Connection, name: str) -> None:
    if connection.scalar(select(rp.c.id).where(rp.c.name == name)) is not None:
        raise DuplicateName(f"Conflicting resource provider name: {name} already exists.")


# --- GET /resource_providers ---------------------------------------------------------


def list_providers(connection: Connection, query: ProviderFilter) -> list[ResourceProvider]:
    conditions: list[ColumnElement[bool]] = []
    if query.name is not None:
        conditions.append(rp.c.name == query.name)
    if query.uuid is not None:
        conditions.append(rp.c.uuid == query.uuid)
    if query.in_tree is not None:
        tree_root = select(rp.c.root_provider_id).where(rp.c.uuid == query.in_tree)
        conditions.append(rp.c.root_provider_id == tree_root.scalar_subquery())
    conditions += aggregate_conditions(query.member_of)
    conditions += trait_conditions(connection, query.traits)
    if query.resources:
        conditions += _capacity_conditions(connection, query.resources)
    rows = connection.execute(provider_select().where(*conditions).order_by(rp.c.id))
    return [provider_from_row(row) for row in rows]


def aggregate_conditions(member_of: AggregateQuery) -> list[ColumnElement[bool]]:
    """Conditions on ``rp.c.id``: in an aggregate of every group, in none of ``forbidden``."""

    def members(uuids: frozenset[str]) -> Any:
        link, agg = t.resource_provider_aggregates, t.placement_aggregates
        return (
            select(link.c.resource_provider_id)
            .join(agg, agg.c.id == link.c.aggregate_id)
            .where(agg.c.uuid.in_(uuids))
        )

    conditions = [rp.c.id.in_(members(group)) for group in member_of.any_of]
    if member_of.forbidden:
        conditions.append(rp.c.id.not_in(members(member_of.forbidden)))
    return conditions


def trait_conditions(connection: Connection, traits: TraitQuery) -> list[ColumnElement[bool]]:
    """Conditions on ``rp.c.id`` for a ``required=`` filter; unknown names are a BadRequest."""
    names = traits.all_names()
    ids = ids_by_name(connection, t.traits, names)
    missing = sorted(names - ids.keys())
    if missing:
        raise BadRequest(f"No such trait(s): {', '.join(missing)}.")
    link = t.resource_provider_traits

    def having(group: frozenset[str]) -> Any:
        return select(link.c.resource_provider_id).where(
            link.c.trait_id.in_([ids[n] for n in group])
        )

    conditions: list[ColumnElement[bool]] = []
    if traits.required:
        conditions.append(rp.c.id.in_(
            having(traits.required)
            .group_by(link.c.resource_provider_id)
            .having(func.count() == len(traits.required))
        ))
    if traits.forbidden:
        conditions.append(rp.c.id.not_in(having(traits.forbidden)))
    conditions += [rp.c.id.in_(having(group)) for group in traits.any_of]
    return conditions


def _capacity_conditions(
    connection: Connection, resources: dict[str, int] | Any
) -> list[ColumnElement[bool]]:
    """Providers whose own inventory could take each amount now (like Placement's filter)."""
    ids = resource_class_ids(
        connection, list(resources), "Invalid resource class in resources parameter: "
        "No such resource class "
    )
    inv, alloc = t.inventories, t.allocations
    conditions: list[ColumnElement[bool]] = []
    for name, amount in resources.items():
        rc_id = ids[name]
        used = (
            select(func.coalesce(func.sum(alloc.c.used), 0))
            .where(alloc.c.resource_provider_id == inv.c.resource_provider_id,
                   alloc.c.resource_class_id == rc_id)
            .scalar_subquery()
        )
        fits = select(inv.c.resource_provider_id).where(
            inv.c.resource_class_id == rc_id,
            used + amount <= (inv.c.total - inv.c.reserved) * inv.c.allocation_ratio,
            inv.c.min_unit <= amount,
            inv.c.max_unit >= amount,
            literal(amount) % inv.c.step_size == 0,
        )
        conditions.append(rp.c.id.in_(fits))
    return conditions
