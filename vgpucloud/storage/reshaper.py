"""POST /reshaper: move inventories and allocations in one transaction.

The typical vGPU case (seed nova-vgpu-doc.rst, upgrade to nested providers): the root's
``VGPU: 32`` inventory moves to two pGPU children with 16 each, and every instance's VGPU
allocation moves from the root to the child that holds its mdev. Between the two halves
the state is inconsistent on purpose, so capacity is checked only once everything is
written.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sqlalchemy import Connection, select

from vgpucloud.placement import capacity
from vgpucloud.placement.models import ConsumerAllocationRequest, Inventory
from vgpucloud.storage import allocations, inventories
from vgpucloud.storage import tables as t
from vgpucloud.storage.lookups import names_by_id, provider_row


def reshape(
    connection: Connection,
    new_inventories: Mapping[str, tuple[int, Mapping[str, Inventory]]],
    requests: Sequence[ConsumerAllocationRequest],
) -> None:
    provider_ids = []
    for uuid, (generation, wanted) in sorted(new_inventories.items()):
        inventories.replace_all(connection, uuid, generation, wanted, check_usage=False)
        provider_ids.append(provider_row(connection, uuid).id)
    # Capacity of the written allocations is checked against the new inventories here...
    allocations.replace(connection, requests, check_capacity=True)
    # ...and allocations of consumers the request left alone against them here.
    _check_final_state(connection, provider_ids)


def _check_final_state(connection: Connection, provider_ids: list[int]) -> None:
    if not provider_ids:
        return
    uuids = dict(connection.execute(
        select(t.resource_providers.c.id, t.resource_providers.c.uuid)
        .where(t.resource_providers.c.id.in_(provider_ids))
    ).all())
    usage = allocations.usages(connection, provider_ids)
    rc_names = names_by_id(connection, t.resource_classes, {rc_id for _, rc_id in usage})
    current = {pid: inventories.read(connection, pid) for pid in provider_ids}
    for (provider_id, rc_id), used in sorted(usage.items()):
        name = rc_names[rc_id]
        inventory = current[provider_id].get(name)
        if inventory is None:
            capacity.check_removal(uuids[provider_id], name, used)
        else:
            capacity.check_usage_fits(uuids[provider_id], inventory, used, fencing_allowed=False)
