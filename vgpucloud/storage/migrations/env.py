"""Alembic environment: runs on the connection ``storage.schema`` hands over.

No alembic.ini is needed at run time: ``storage.schema.alembic_config`` builds the config
and puts an open connection in ``config.attributes["connection"]``.
"""

from __future__ import annotations

from alembic import context

from vgpucloud.storage.tables import metadata


def run_migrations_online() -> None:
    connection = context.config.attributes.get("connection")
    if connection is None:
        raise RuntimeError(
            "vgpucloud migrations run through `vgpucloud db sync`, which supplies the "
            "database connection; the alembic command line is not supported"
        )
    context.configure(connection=connection, target_metadata=metadata, compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("offline (--sql) migrations are not supported; run `vgpucloud db sync`")
run_migrations_online()
