"""Image records (no bits): what ``--image NAME`` resolves to and what ``image list`` shows."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, delete, insert, select

from vgpucloud.compute.models import Image
from vgpucloud.errors import Conflict, NotFound
from vgpucloud.storage.hosts import utcnow
from vgpucloud.storage.nova_tables import images

IMAGE_NOT_FOUND = "image.not_found"
IMAGE_EXISTS = "image.exists"


def create(db: Connection, image: Image) -> Image:
    if db.scalar(select(images.c.id).where(images.c.id == image.id)) is not None:
        raise Conflict(f"Image with identifier {image.id} already exists!", code=IMAGE_EXISTS)
    now = utcnow()
    db.execute(insert(images).values(
        id=image.id, name=image.name, status=image.status, disk_format=image.disk_format,
        container_format=image.container_format, min_disk=image.min_disk,
        min_ram=image.min_ram, size=image.size, visibility=image.visibility, owner=image.owner,
        properties=json.dumps(dict(image.properties), sort_keys=True), created_at=now,
        updated_at=now))
    return require(db, image.id)


def require(db: Connection, image_id: str) -> Image:
    row = db.execute(select(images).where(images.c.id == image_id)).first()
    if row is None:
        raise NotFound(f"No image found with ID {image_id}", code=IMAGE_NOT_FOUND)
    return _image(row)


def list_matching(db: Connection, names: Sequence[str] | None,
                  ids: Sequence[str] | None) -> list[Image]:
    statement = select(images).order_by(images.c.created_at.desc(), images.c.id)
    if names is not None:
        statement = statement.where(images.c.name.in_(list(names)))
    if ids is not None:
        statement = statement.where(images.c.id.in_(list(ids)))
    return [_image(row) for row in db.execute(statement)]


def remove(db: Connection, image_id: str) -> None:
    if db.execute(delete(images).where(images.c.id == image_id)).rowcount != 1:
        raise NotFound(f"No image found with ID {image_id}", code=IMAGE_NOT_FOUND)


def _image(row: Any) -> Image:
    return Image(id=row.id, name=row.name, status=row.status, disk_format=row.disk_format,
                 container_format=row.container_format, min_disk=row.min_disk,
                 min_ram=row.min_ram, size=row.size, visibility=row.visibility,
                 owner=row.owner, created_at=row.created_at, updated_at=row.updated_at,
                 properties=json.loads(row.properties))
