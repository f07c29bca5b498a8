"""A provider's traits and aggregates (inside a transaction); each write bumps its generation."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, Table, delete, insert, select

from vgpucloud.errors import BadRequest
from vgpucloud.storage import tables as t
from vgpucloud.storage.lookups import (
    bump_generation,
    check_generation,
    get_or_create,
    ids_by_name,
    provider_row,
)

link_traits, link_aggs = t.resource_provider_traits, t.resource_provider_aggregates


def get_traits(connection: Connection, uuid: str) -> tuple[int, list[str]]:
    row = provider_row(connection, uuid)
    names = connection.scalars(
        select(t.traits.c.name)
        .join(link_traits, link_traits.c.trait_id == t.traits.c.id)
        .where(link_traits.c.resource_provider_id == row.id)
        .order_by(t.traits.c.name)
    )
    return row.generation, list(names)


def set_traits(connection: Connection, uuid: str, generation: int, names: Sequence[str]) -> int:
    row = provider_row(connection, uuid)
    check_generation(row, generation)
    ids = ids_by_name(connection, t.traits, names)
    missing = sorted(set(names) - ids.keys())
    if missing:
        raise BadRequest(
            f"No such trait(s): {', '.join(missing)}. Create custom traits with "
            "PUT /traits/{name} first."
        )
    new_generation = bump_generation(connection, row.id, uuid, generation)
    _replace_links(connection, link_traits, "trait_id", row.id, set(ids.values()))
    return new_generation


def delete_traits(connection: Connection, uuid: str) -> int:
    row = provider_row(connection, uuid)
    new_generation = bump_generation(connection, row.id, uuid, row.generation)
    _replace_links(connection, link_traits, "trait_id", row.id, set())
    return new_generation


def get_aggregates(connection: Connection, uuid: str) -> tuple[int, list[str]]:
    row = provider_row(connection, uuid)
    agg = t.placement_aggregates
    uuids = connection.scalars(
        select(agg.c.uuid)
        .join(link_aggs, link_aggs.c.aggregate_id == agg.c.id)
        .where(link_aggs.c.resource_provider_id == row.id)
        .order_by(agg.c.uuid)
    )
    return row.generation, list(uuids)


def set_aggregates(
    connection: Connection, uuid: str, aggregates: Sequence[str], generation: int | None
) -> int:
    row = provider_row(connection, uuid)
    expected = row.generation if generation is None else generation
    check_generation(row, expected)
    new_generation = bump_generation(connection, row.id, uuid, expected)
    ids = {
        get_or_create(connection, t.placement_aggregates, "uuid", agg_uuid)
        for agg_uuid in sorted(set(aggregates))
    }
    _replace_links(connection, link_aggs, "aggregate_id", row.id, ids)
    return new_generation


def _replace_links(
    connection: Connection, table: Table, column: str, provider_id: int, wanted: set[int]
) -> None:
    """Make the provider's links in ``table`` exactly ``wanted``, touching only the difference."""
    current = set(connection.scalars(
        select(table.c[column]).where(table.c.resource_provider_id == provider_id)
    ))
    gone, new = current - wanted, wanted - current
    if gone:
        connection.execute(
            delete(table).where(
                table.c.resource_provider_id == provider_id, table.c[column].in_(gone)
            )
        )
    if new:
        connection.execute(
            insert(table), [{"resource_provider_id": provider_id, column: i} for i in sorted(new)]
        )
