"""Compute hosts and durable host tasks.

Frozen copy of ``storage/compute_tables.py`` as of this revision.

Revision ID: 0002_hosts_tasks
Revises: 0001_placement
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002_hosts_tasks"
down_revision = "0001_placement"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "hosts",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("hypervisor_type", sa.String(64), nullable=True),
        sa.Column("libvirt_version", sa.String(32), nullable=True),
        sa.Column("qemu_version", sa.String(32), nullable=True),
        sa.Column("kernel_version", sa.String(32), nullable=True),
        sa.Column("root_provider_uuid", sa.String(36), nullable=True),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("last_heartbeat", sa.DateTime, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
    )
    op.create_table(
        "tasks",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("host", sa.String(255), nullable=False),
        sa.Column("kind", sa.String(64), nullable=False),
        sa.Column("payload", sa.Text, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("lease_owner", sa.String(255), nullable=True),
        sa.Column("lease_expires_at", sa.DateTime, nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        sa.Column("result", sa.Text, nullable=True),
        sa.Column("fault", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=False),
        sa.Index(None, "host", "state", "id"),
    )


def downgrade() -> None:
    op.drop_table("tasks")
    op.drop_table("hosts")
