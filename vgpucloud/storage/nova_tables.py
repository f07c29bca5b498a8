"""Tables of the Compute API: flavors, images, instances, their actions, host aggregates.

They live in the same ``MetaData`` as the Placement tables (``storage.tables``), so one
Alembic history (revision 0003) and one schema-drift test cover them all.

Values Nova keeps as JSON blobs stay JSON text here too (an instance's flavor snapshot, its
fault, an image's properties): they are read and written whole, never queried into.
Times are naive UTC (``storage.hosts.utcnow``).
"""

from __future__ import annotations

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Double,
    ForeignKey,
    Index,
    Integer,
    String,
    Table,
    Text,
    UniqueConstraint,
)

from vgpucloud.storage.tables import metadata

flavors = Table(
    "flavors",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    # Nova's "flavorid": what the API calls the flavor's id (any string, often a UUID).
    Column("flavorid", String(255), nullable=False, unique=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("vcpus", Integer, nullable=False),
    Column("memory_mb", Integer, nullable=False),
    Column("root_gb", Integer, nullable=False),
    Column("ephemeral_gb", Integer, nullable=False),
    Column("swap", Integer, nullable=False),
    Column("rxtx_factor", Double, nullable=False),
    Column("is_public", Boolean, nullable=False),
    Column("description", Text, nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=True),
)

flavor_extra_specs = Table(
    "flavor_extra_specs",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("flavor_id", Integer, ForeignKey("flavors.id"), nullable=False),
    Column("key", String(255), nullable=False),
    Column("value", String(255), nullable=False),
    UniqueConstraint("flavor_id", "key"),
)

images = Table(
    "images",
    metadata,
    Column("id", String(36), primary_key=True),
    Column("name", String(255), nullable=True),
    Column("status", String(32), nullable=False),
    Column("disk_format", String(32), nullable=True),
    Column("container_format", String(32), nullable=True),
    Column("min_disk", Integer, nullable=False),
    Column("min_ram", Integer, nullable=False),
    Column("size", BigInteger, nullable=True),
    Column("visibility", String(16), nullable=False),
    Column("owner", String(255), nullable=True),
    Column("properties", Text, nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=True),
    Index(None, "name"),
)

instances = Table(
    "instances",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("name", String(255), nullable=False),
    Column("project_id", String(255), nullable=False),
    Column("user_id", String(255), nullable=False),
    Column("flavor", Text, nullable=False),
    Column("image_ref", String(255), nullable=False),
    Column("vm_state", String(16), nullable=False),
    Column("task_state", String(16), nullable=True),
    Column("host", String(255), nullable=True),
    Column("node", String(255), nullable=True),
    Column("fault", Text, nullable=True),
    Column("reservation_id", String(255), nullable=False),
    Column("launch_index", Integer, nullable=False),
    Column("metadata", Text, nullable=False),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=True),
    Column("launched_at", DateTime, nullable=True),
    Column("terminated_at", DateTime, nullable=True),
    Index(None, "project_id", "vm_state"),
    Index(None, "reservation_id"),
    Index(None, "host"),
)

instance_actions = Table(
    "instance_actions",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("request_id", String(255), nullable=False),
    Column("action", String(255), nullable=False),
    Column("instance_uuid", String(36), nullable=False),
    Column("project_id", String(255), nullable=False),
    Column("user_id", String(255), nullable=False),
    Column("start_time", DateTime, nullable=False),
    Column("message", String(255), nullable=True),
    Column("updated_at", DateTime, nullable=True),
    UniqueConstraint("instance_uuid", "request_id"),
)

instance_action_events = Table(
    "instance_action_events",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("action_id", Integer, ForeignKey("instance_actions.id"), nullable=False),
    Column("event", String(255), nullable=False),
    Column("start_time", DateTime, nullable=False),
    Column("finish_time", DateTime, nullable=True),
    Column("result", String(255), nullable=True),
    Column("traceback", Text, nullable=True),
    Column("host", String(255), nullable=True),
    UniqueConstraint("action_id", "event"),
)

aggregates = Table(
    "aggregates",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=True),
)

aggregate_hosts = Table(
    "aggregate_hosts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("aggregate_id", Integer, ForeignKey("aggregates.id"), nullable=False),
    Column("host", String(255), nullable=False),
    UniqueConstraint("aggregate_id", "host"),
    Index(None, "host"),
)

aggregate_metadata = Table(
    "aggregate_metadata",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("aggregate_id", Integer, ForeignKey("aggregates.id"), nullable=False),
    Column("key", String(255), nullable=False),
    Column("value", String(255), nullable=False),
    UniqueConstraint("aggregate_id", "key"),
)

# Children before parents: the order tests and tools delete user data in.
COMPUTE_USER_TABLES = (
    instance_action_events, instance_actions, instances, flavor_extra_specs, flavors,
    aggregate_metadata, aggregate_hosts, aggregates,
)
