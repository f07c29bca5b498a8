"""Compute API tables (flavors, images, instances, actions, aggregates) and the seed images.

Frozen copy of ``storage/nova_tables.py`` as of this revision. The two public cirros image
records are what ``openstack server create --image cirros-0.3.5-x86_64-uec`` (the nova vGPU
guide's command) and ``--image cirros`` resolve; being part of the migration, they are
inserted exactly once, by the ``vgpucloud db sync`` that reaches this revision.

Revision ID: 0003_compute
Revises: 0002_hosts_tasks
"""

from __future__ import annotations

import datetime

import sqlalchemy as sa
from alembic import op

revision = "0003_compute"
down_revision = "0002_hosts_tasks"
branch_labels = None
depends_on = None

SEED_IMAGES = (
    ("fc3c5f9e-e08f-44f7-990b-fdfc5427bbee", "cirros-0.3.5-x86_64-uec", "ami", "ami",
     25165824),
    ("b5d9a83a-3d4b-4d93-be1c-ed0a430a9b5b", "cirros", "qcow2", "bare", 21430272),
)


def _id() -> sa.Column[int]:
    return sa.Column("id", sa.Integer, primary_key=True, autoincrement=True)


def upgrade() -> None:
    op.create_table(
        "flavors", _id(),
        sa.Column("flavorid", sa.String(255), nullable=False, unique=True),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        sa.Column("vcpus", sa.Integer, nullable=False),
        sa.Column("memory_mb", sa.Integer, nullable=False),
        sa.Column("root_gb", sa.Integer, nullable=False),
        sa.Column("ephemeral_gb", sa.Integer, nullable=False),
        sa.Column("swap", sa.Integer, nullable=False),
        sa.Column("rxtx_factor", sa.Double, nullable=False),
        sa.Column("is_public", sa.Boolean, nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
    )
    op.create_table(
        "flavor_extra_specs", _id(),
        sa.Column("flavor_id", sa.Integer, sa.ForeignKey("flavors.id"), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("value", sa.String(255), nullable=False),
        sa.UniqueConstraint("flavor_id", "key"),
    )
    images = op.create_table(
        "images",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(255), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("disk_format", sa.String(32), nullable=True),
        sa.Column("container_format", sa.String(32), nullable=True),
        sa.Column("min_disk", sa.Integer, nullable=False),
        sa.Column("min_ram", sa.Integer, nullable=False),
        sa.Column("size", sa.BigInteger, nullable=True),
        sa.Column("visibility", sa.String(16), nullable=False),
        sa.Column("owner", sa.String(255), nullable=True),
        sa.Column("properties", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
        sa.Index(None, "name"),
    )
    _create_instance_tables()
    _create_aggregate_tables()
    now = datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)
    op.bulk_insert(images, [
        {"id": image_id, "name": name, "status": "active", "disk_format": disk_format,
         "container_format": container_format, "min_disk": 0, "min_ram": 0, "size": size,
         "visibility": "public", "owner": None, "properties": "{}", "created_at": now,
         "updated_at": now}
        for image_id, name, disk_format, container_format, size in SEED_IMAGES])


def _create_instance_tables() -> None:
    op.create_table(
        "instances", _id(),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("user_id", sa.String(255), nullable=False),
        sa.Column("flavor", sa.Text, nullable=False),
        sa.Column("image_ref", sa.String(255), nullable=False),
        sa.Column("vm_state", sa.String(16), nullable=False),
        sa.Column("task_state", sa.String(16), nullable=True),
        sa.Column("host", sa.String(255), nullable=True),
        sa.Column("node", sa.String(255), nullable=True),
        sa.Column("fault", sa.Text, nullable=True),
        sa.Column("reservation_id", sa.String(255), nullable=False),
        sa.Column("launch_index", sa.Integer, nullable=False),
        sa.Column("metadata", sa.Text, nullable=False),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
        sa.Column("launched_at", sa.DateTime, nullable=True),
        sa.Column("terminated_at", sa.DateTime, nullable=True),
        sa.Index(None, "project_id", "vm_state"),
        sa.Index(None, "reservation_id"),
        sa.Index(None, "host"),
    )
    op.create_table(
        "instance_actions", _id(),
        sa.Column("request_id", sa.String(255), nullable=False),
        sa.Column("action", sa.String(255), nullable=False),
        sa.Column("instance_uuid", sa.String(36), nullable=False),
        sa.Column("project_id", sa.String(255), nullable=False),
        sa.Column("user_id", sa.String(255), nullable=False),
        sa.Column("start_time", sa.DateTime, nullable=False),
        sa.Column("message", sa.String(255), nullable=True),
        sa.Column("updated_at", sa.DateTime, nullable=True),
        sa.UniqueConstraint("instance_uuid", "request_id"),
    )
    op.create_table(
        "instance_action_events", _id(),
        sa.Column("action_id", sa.Integer, sa.ForeignKey("instance_actions.id"),
                  nullable=False),
        sa.Column("event", sa.String(255), nullable=False),
        sa.Column("start_time", sa.DateTime, nullable=False),
        sa.Column("finish_time", sa.DateTime, nullable=True),
        sa.Column("result", sa.String(255), nullable=True),
        sa.Column("traceback", sa.Text, nullable=True),
        sa.Column("host", sa.String(255), nullable=True),
        sa.UniqueConstraint("action_id", "event"),
    )


def _create_aggregate_tables() -> None:
    op.create_table(
        "aggregates", _id(),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
        sa.Column("created_at", sa.DateTime, nullable=False),
        sa.Column("updated_at", sa.DateTime, nullable=True),
    )
    op.create_table(
        "aggregate_hosts", _id(),
        sa.Column("aggregate_id", sa.Integer, sa.ForeignKey("aggregates.id"), nullable=False),
        sa.Column("host", sa.String(255), nullable=False),
        sa.UniqueConstraint("aggregate_id", "host"),
        sa.Index(None, "host"),
    )
    op.create_table(
        "aggregate_metadata", _id(),
        sa.Column("aggregate_id", sa.Integer, sa.ForeignKey("aggregates.id"), nullable=False),
        sa.Column("key", sa.String(255), nullable=False),
        sa.Column("value", sa.String(255), nullable=False),
        sa.UniqueConstraint("aggregate_id", "key"),
    )


def downgrade() -> None:
    for table in ("aggregate_metadata", "aggregate_hosts", "aggregates",
                  "instance_action_events", "instance_actions", "instances", "images",
                  "flavor_extra_specs", "flavors"):
        op.drop_table(table)
