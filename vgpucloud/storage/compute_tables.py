"""Tables of the compute side: registered hosts and the durable host tasks they lease.

They live in the same ``MetaData`` as the Placement tables (``storage.tables``), so one
Alembic history and one schema-drift test cover both. No foreign keys to Placement: a host
names its root provider by UUID, the way a client of Placement would.
"""

from __future__ import annotations

from sqlalchemy import (
    Boolean,
    Column,
    DateTime,
    Index,
    Integer,
    String,
    Table,
    Text,
)

from vgpucloud.storage.tables import metadata

TASK_STATES = ("queued", "leased", "done", "failed")

hosts = Table(
    "hosts",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("name", String(255), nullable=False, unique=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("hypervisor_type", String(64), nullable=True),
    Column("libvirt_version", String(32), nullable=True),
    Column("qemu_version", String(32), nullable=True),
    Column("kernel_version", String(32), nullable=True),
    Column("root_provider_uuid", String(36), nullable=True),
    Column("enabled", Boolean, nullable=False, default=True),
    Column("last_heartbeat", DateTime, nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
)

tasks = Table(
    "tasks",
    metadata,
    Column("id", Integer, primary_key=True, autoincrement=True),
    Column("uuid", String(36), nullable=False, unique=True),
    Column("host", String(255), nullable=False),
    Column("kind", String(64), nullable=False),
    Column("payload", Text, nullable=False),
    Column("state", String(16), nullable=False),
    Column("lease_owner", String(255), nullable=True),
    Column("lease_expires_at", DateTime, nullable=True),
    Column("attempts", Integer, nullable=False, default=0),
    Column("result", Text, nullable=True),
    Column("fault", Text, nullable=True),
    Column("created_at", DateTime, nullable=False),
    Column("updated_at", DateTime, nullable=False),
    # The lease query: this host's queued tasks, and its leased ones whose lease ran out.
    Index(None, "host", "state", "id"),
)
