"""Registered compute hosts: register (insert or update facts), heartbeat, list.

Functions take an ``Engine``, like the rest of ``storage``; ``SqlHostTaskStore`` in
``storage.tasks`` bundles them for the internal API.
"""

from __future__ import annotations

import dataclasses
import datetime
import uuid as uuidlib
from typing import Any

from sqlalchemy import Connection, Engine, insert, select, update

from vgpucloud.compute.hosttasks import Host, HostFacts
from vgpucloud.errors import NotFound
from vgpucloud.storage.compute_tables import hosts
from vgpucloud.storage.tx import transaction

HOST_NOT_FOUND = "internal.host.not_found"
_FACTS = ("hypervisor_type", "libvirt_version", "qemu_version", "kernel_version",
          "root_provider_uuid")


def utcnow() -> datetime.datetime:
    """Naive UTC, the way every DateTime column here stores time."""
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None, microsecond=0)


def register_host(engine: Engine, name: str, facts: HostFacts) -> Host:
    """Insert ``name`` or refresh its facts; a re-registering host keeps its UUID unless
    it names another one (a reinstalled host with a new identity)."""
    now = utcnow()
    values: dict[str, Any] = {f: getattr(facts, f) for f in _FACTS}
    with transaction(engine, write=True) as db:
        existing = _row(db, name)
        if existing is None:
            db.execute(insert(hosts).values(
                name=name, uuid=facts.uuid or str(uuidlib.uuid4()), enabled=True,
                last_heartbeat=now, created_at=now, updated_at=now, **values))
        else:
            if facts.uuid:
                values["uuid"] = facts.uuid
            db.execute(update(hosts).where(hosts.c.name == name).values(
                last_heartbeat=now, updated_at=now, **values))
        return _require(db, name)


def heartbeat(engine: Engine, name: str) -> Host:
    with transaction(engine, write=True) as db:
        _require(db, name)
        db.execute(update(hosts).where(hosts.c.name == name).values(last_heartbeat=utcnow()))
        return _require(db, name)


def list_hosts(engine: Engine) -> list[Host]:
    with transaction(engine, write=False) as db:
        return [_host(row) for row in db.execute(select(hosts).order_by(hosts.c.name))]


def get_host(engine: Engine, name: str) -> Host:
    with transaction(engine, write=False) as db:
        return _require(db, name)


def _row(db: Connection, name: str) -> Any:
    return db.execute(select(hosts).where(hosts.c.name == name)).first()


def _require(db: Connection, name: str) -> Host:
    row = _row(db, name)
    if row is None:
        raise NotFound(f"host {name} is not registered; start its agent (vgpucloud agent "
                       "--config-file nova.conf), which registers it", code=HOST_NOT_FOUND)
    return _host(row)


def _host(row: Any) -> Host:
    facts = HostFacts(uuid=row.uuid, **{f: getattr(row, f) for f in _FACTS})
    return Host(name=row.name, uuid=row.uuid, facts=dataclasses.replace(facts),
                enabled=bool(row.enabled), last_heartbeat=row.last_heartbeat,
                created_at=row.created_at, updated_at=row.updated_at)
