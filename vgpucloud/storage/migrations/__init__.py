"""Alembic migrations of the vgpucloud schema, run programmatically by ``storage.schema``."""
