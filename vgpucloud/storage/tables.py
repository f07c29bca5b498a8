"""The Placement schema as SQLAlchemy Core tables: the single source every query builds on.

Normalised with integer ids so the allocation-candidate queries join narrow integer
columns; every name or uuid a client sends is resolved to an id once per request.

Standard resource classes keep the id of their position in ``os_resource_classes.STANDARDS``
(that list is append-only, so ids never move); custom ones are numbered from
``FIRST_CUSTOM_RESOURCE_CLASS_ID`` like OpenStack Placement does.

The migrations under ``storage/migrations/versions`` create exactly this schema; a test
compares the two so they cannot drift apart.
"""

from __future__ import annotations

from sqlalchemy import (
    Column,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    UniqueConstraint,
)

FIRST_CUSTOM_RESOURCE_CLASS_ID = 10000

# Deterministic constraint names, so migrations can address them on every backend.
metadata = MetaData(
    naming_convention={
        "ix": "ix_%(table_name)s_%(column_0_N_name)s",
        "uq": "uq_%(table_name)s_%(column_0_N_name)s",
        "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
        "pk": "pk_%(table_name)s",
    }
)

resource_providers = Table(
    "resource_providers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("name", String(200), nullable=False, unique=True),
    Column("generation", Integer, nullable=False, default=0),
    Column("parent_provider_id", Integer, ForeignKey("resource_providers.id"), nullable=True),
    # NULL only between the INSERT of a root and the UPDATE that points it at itself.
    Column("root_provider_id", Integer, ForeignKey("resource_providers.id"), nullable=True),
    Column("created_at", DateTime, nullable=True),
    Column("updated_at", DateTime, nullable=True),
    Index(None, "root_provider_id"),
    Index(None, "parent_provider_id"),
)

resource_classes = Table(
    "resource_classes",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=False),
    Column("name", String(255), nullable=False, unique=True),
)

inventories = Table(
    "inventories",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("resource_provider_id", Integer, ForeignKey("resource_providers.id"), nullable=False),
    Column("resource_class_id", Integer, ForeignKey("resource_classes.id"), nullable=False),
    Column("total", Integer, nullable=False),
    Column("reserved", Integer, nullable=False),
    Column("min_unit", Integer, nullable=False),
    Column("max_unit", Integer, nullable=False),
    Column("step_size", Integer, nullable=False),
    Column("allocation_ratio", Double, nullable=False),
    UniqueConstraint("resource_provider_id", "resource_class_id"),
    Index(None, "resource_class_id", "resource_provider_id"),
)

traits = Table(
    "traits",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),
)

resource_provider_traits = Table(
    "resource_provider_traits",
    metadata,
    Column("resource_provider_id", Integer, ForeignKey("resource_providers.id"), nullable=False),
    Column("trait_id", Integer, ForeignKey("traits.id"), nullable=False),
    PrimaryKeyConstraint("resource_provider_id", "trait_id"),
    Index(None, "trait_id"),
)

placement_aggregates = Table(
    "placement_aggregates",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
)

resource_provider_aggregates = Table(
    "resource_provider_aggregates",
    metadata,
    Column("resource_provider_id", Integer, ForeignKey("resource_providers.id"), nullable=False),
    Column("aggregate_id", Integer, ForeignKey("placement_aggregates.id"), nullable=False),
    PrimaryKeyConstraint("resource_provider_id", "aggregate_id"),
    Index(None, "aggregate_id"),
)

projects = Table(
    "projects",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("external_id", String(255), nullable=False, unique=True),
)

users = Table(
    "users",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("external_id", String(255), nullable=False, unique=True),
)

consumer_types = Table(
    "consumer_types",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),
)

consumers = Table(
    "consumers",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("project_id", Integer, ForeignKey("projects.id"), nullable=False),
    Column("user_id", Integer, ForeignKey("users.id"), nullable=False),
    Column("generation", Integer, nullable=False, default=0),
    Column("consumer_type_id", Integer, ForeignKey("consumer_types.id"), nullable=True),
    Column("created_at", DateTime, nullable=True),
    Column("updated_at", DateTime, nullable=True),
    # GET /usages filters by project (and user).
    Index(None, "project_id", "user_id"),
)

allocations = Table(
    "allocations",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("resource_provider_id", Integer, ForeignKey("resource_providers.id"), nullable=False),
    Column("consumer_id", Integer, ForeignKey("consumers.id"), nullable=False),
    Column("resource_class_id", Integer, ForeignKey("resource_classes.id"), nullable=False),
    Column("used", Integer, nullable=False),
    UniqueConstraint("consumer_id", "resource_provider_id", "resource_class_id"),
    Index(None, "resource_provider_id", "resource_class_id"),
    Index(None, "consumer_id"),
)

# What `db sync` fills from os-resource-classes / os-traits, and what test fixtures keep
# between tests; everything else is user data.
CATALOGUE_TABLES = (resource_classes, traits)

# The compute tables share this MetaData; importing them here keeps migrations and the
# schema-drift test looking at one complete schema.
from vgpucloud.storage import compute_tables as _compute_tables  # noqa: E402, F401
from vgpucloud.storage import nova_tables as _nova_tables  # noqa: E402, F401
