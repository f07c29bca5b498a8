"""Resource class and trait names (inside a transaction).

Standard names are synced by ``storage.schema.sync`` and never change here; custom ones
(``CUSTOM_*``) are created, renamed and deleted by clients. Custom resource class ids
start at ``tables.FIRST_CUSTOM_RESOURCE_CLASS_ID`` so standard ids can grow below them.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, delete, exists, func, insert, select, update
from sqlalchemy.exc import IntegrityError

from vgpucloud.errors import Conflict, DuplicateName, NotFound
from vgpucloud.placement import catalogue
from vgpucloud.placement.models import ResourceClass
from vgpucloud.storage import tables as t

rc, traits = t.resource_classes, t.traits
_RC_ID_ATTEMPTS = 5

# --- resource classes -------------------------------------------------------------


def list_resource_classes(connection: Connection) -> list[ResourceClass]:
    names = connection.scalars(select(rc.c.name).order_by(rc.c.id))
    return [ResourceClass(name, not catalogue.is_custom(name)) for name in names]


def get_resource_class(connection: Connection, name: str) -> ResourceClass:
    if connection.scalar(select(rc.c.id).where(rc.c.name == name)) is None:
        raise NotFound(f"No such resource class {name}.")
    return ResourceClass(name, not catalogue.is_custom(name))


def create_resource_class(connection: Connection, name: str) -> ResourceClass:
    catalogue.check_custom_name("resource class", name)
    if not ensure_resource_class(connection, name):
        raise DuplicateName(f"Conflicting resource class already exists: {name}")
    return ResourceClass(name, standard=False)


def ensure_resource_class(connection: Connection, name: str) -> bool:
    """Create the custom class if missing; True if this call created it."""
    catalogue.check_custom_name("resource class", name)
    for _ in range(_RC_ID_ATTEMPTS):
        if connection.scalar(select(rc.c.id).where(rc.c.name == name)) is not None:
            return False
        highest = connection.scalar(
            select(func.max(rc.c.id)).where(rc.c.id >= t.FIRST_CUSTOM_RESOURCE_CLASS_ID)
        )
        new_id = (highest or t.FIRST_CUSTOM_RESOURCE_CLASS_ID - 1) + 1
        try:
            # Savepoint: a concurrent creator taking the same id or name must not poison
            # our transaction; we look again and pick the next id.
            with connection.begin_nested():
                connection.execute(insert(rc).values(id=new_id, name=name))
            return True
        except IntegrityError:
            continue
    raise Conflict(
        f"could not create resource class {name}: other writers kept taking the next id; retry"
    )


def rename_resource_class(connection: Connection, name: str, new_name: str) -> ResourceClass:
    catalogue.check_not_standard("resource class", name, "update")
    catalogue.check_custom_name("resource class", new_name)
    get_resource_class(connection, name)
    if connection.scalar(select(rc.c.id).where(rc.c.name == new_name)) is not None:
        raise DuplicateName(f"Conflicting resource class already exists: {new_name}")
    connection.execute(update(rc).where(rc.c.name == name).values(name=new_name))
    return ResourceClass(new_name, standard=False)


def delete_resource_class(connection: Connection, name: str) -> None:
    catalogue.check_not_standard("resource class", name, "delete")
    rc_id = connection.scalar(select(rc.c.id).where(rc.c.name == name))
    if rc_id is None:
        raise NotFound(f"No such resource class {name}.")
    for table, where in ((t.inventories, "inventory"), (t.allocations, "allocations")):
        if connection.scalar(select(exists().where(table.c.resource_class_id == rc_id))):
            raise Conflict(
                f"Unable to delete resource class {name}. Resource class is in use in "
                f"{where}; remove the inventories of {name} from every provider first."
            )
    connection.execute(delete(rc).where(rc.c.id == rc_id))


# --- traits ------------------------------------------------------------------------


def list_traits(
    connection: Connection,
    name_in: Iterable[str] | None,
    name_startswith: str | None,
    associated: bool | None,
) -> list[str]:
    query = select(traits.c.name).order_by(traits.c.name)
    if name_in is not None:
        query = query.where(traits.c.name.in_(list(name_in)))
    if name_startswith:
        escaped = name_startswith.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        query = query.where(traits.c.name.like(f"{escaped}%", escape="\\"))
    if associated is not None:
        linked = exists().where(t.resource_provider_traits.c.trait_id == traits.c.id)
        query = query.where(linked if associated else ~linked)
    return list(connection.scalars(query))


def trait_exists(connection: Connection, name: str) -> bool:
    return connection.scalar(select(traits.c.id).where(traits.c.name == name)) is not None


def ensure_trait(connection: Connection, name: str) -> bool:
    catalogue.check_custom_name("trait", name)
    if trait_exists(connection, name):
        return False
    try:
        with connection.begin_nested():
            connection.execute(insert(traits).values(name=name))
    except IntegrityError:
        return False  # a concurrent writer created it: the outcome the caller asked for
    return True


def delete_trait(connection: Connection, name: str) -> None:
    catalogue.check_not_standard("trait", name, "delete")
    trait_id = connection.scalar(select(traits.c.id).where(traits.c.name == name))
    if trait_id is None:
        raise NotFound(f"No such trait(s): {name}.")
    link = t.resource_provider_traits
    if connection.scalar(select(exists().where(link.c.trait_id == trait_id))):
        raise Conflict(
            f"The trait {name} is in use by a resource provider; remove it from every "
            "provider's traits first."
        )
    connection.execute(delete(traits).where(traits.c.id == trait_id))
