"""Placement schema: providers, inventories, catalogues, aggregates, consumers, allocations.

Frozen copy of ``storage/tables.py`` as of this revision (migrations never import the
live table definitions, which keep evolving).

Revision ID: 0001_placement
Revises:
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_placement"
down_revision = None
branch_labels = None
depends_on = None


def _rp_fk(column: str = "resource_provider_id", nullable: bool = False) -> sa.Column[int]:
    return sa.Column(column, sa.Integer, sa.ForeignKey("resource_providers.id"),
                     nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "resource_providers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("generation", sa.Integer, nullable=False),
        _rp_fk("parent_provider_id", nullable=True),
        _rp_fk("root_provider_id", nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=True),
        sa.Column("updated_at", sa.DateTime, nullable=True),
        sa.Index(None, "root_provider_id"),
        sa.Index(None, "parent_provider_id"),
    )
    op.create_table(
        "resource_classes",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=False),
        sa.Column("name", sa.String(255), nullable=False, unique=True),
    )
    op.create_table(
        "inventories",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _rp_fk(),
        sa.Column("resource_class_id", sa.Integer, sa.ForeignKey("resource_classes.id"),
                  nullable=False),
        *(sa.Column(name, sa.Integer, nullable=False)
          for name in ("total", "reserved", "min_unit", "max_unit", "step_size")),
        sa.Column("allocation_ratio", sa.Double, nullable=False),
        sa.UniqueConstraint("resource_provider_id", "resource_class_id"),
        sa.Index(None, "resource_class_id", "resource_provider_id"),
    )
    for table in ("traits", "consumer_types"):
        op.create_table(
            table,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("name", sa.String(255), nullable=False, unique=True),
        )
    op.create_table(
        "resource_provider_traits",
        _rp_fk(),
        sa.Column("trait_id", sa.Integer, sa.ForeignKey("traits.id"), nullable=False),
        sa.PrimaryKeyConstraint("resource_provider_id", "trait_id"),
        sa.Index(None, "trait_id"),
    )
    op.create_table(
        "placement_aggregates",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
    )
    op.create_table(
        "resource_provider_aggregates",
        _rp_fk(),
        sa.Column("aggregate_id", sa.Integer, sa.ForeignKey("placement_aggregates.id"),
                  nullable=False),
        sa.PrimaryKeyConstraint("resource_provider_id", "aggregate_id"),
        sa.Index(None, "aggregate_id"),
    )
    for table in ("projects", "users"):
        op.create_table(
            table,
            sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
            sa.Column("external_id", sa.String(255), nullable=False, unique=True),
        )
    op.create_table(
        "consumers",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("uuid", sa.String(36), nullable=False, unique=True),
        sa.Column("project_id", sa.Integer, sa.ForeignKey("projects.id"), nullable=False),
        sa.Column("user_id", sa.Integer, sa.ForeignKey("users.id"), nullable=False),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("consumer_type_id", sa.Integer, sa.ForeignKey("consumer_types.id"),
                  nullable=True),
        sa.Column("created_at", sa.DateTime, nullable=True),
        sa.Column("updated_at", sa.DateTime, nullable=True),
        sa.Index(None, "project_id", "user_id"),
    )
    op.create_table(
        "allocations",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        _rp_fk(),
        sa.Column("consumer_id", sa.Integer, sa.ForeignKey("consumers.id"), nullable=False),
        sa.Column("resource_class_id", sa.Integer, sa.ForeignKey("resource_classes.id"),
                  nullable=False),
        sa.Column("used", sa.Integer, nullable=False),
        sa.UniqueConstraint("consumer_id", "resource_provider_id", "resource_class_id"),
        sa.Index(None, "resource_provider_id", "resource_class_id"),
        sa.Index(None, "consumer_id"),
    )


def downgrade() -> None:
    for table in (
        "allocations", "consumers", "users", "projects", "resource_provider_aggregates",
        "placement_aggregates", "resource_provider_traits", "consumer_types", "traits",
        "inventories", "resource_classes", "resource_providers",
    ):
        op.drop_table(table)
