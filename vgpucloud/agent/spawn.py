"""``spawn`` and ``destroy``: a guest with the mdevs Placement allocated to it, and back.

Spawn, for instance ``I`` (every step idempotent, so a redelivered task converges)::

    GET /allocations/I  ->  per provider holding the parent's mdev_class: (pGPU, type, n)
    ledger.reserve(I, pGPU, type, n)   a free mdev of that type, or the intent to create one
    materialize                        create it with the ledger's UUID (adopt if it exists)
    define + start                     domain XML with <hostdev type='mdev'> per mdev
    ledger.attach                      the mdevs are the guest's

On hosts with NVIDIA's kernel variant driver the allocated provider is a VF: its claim is a
ledger row too, ``materialize`` becomes writing the VF's vGPU type, and the guest gets the VF
as ``<hostdev type='pci'>`` (see ``vgpucloud.agent.variant``).

The ledger is written before sysfs and libvirt (DESIGN rule 1). On any failure the guest is
undefined and everything ``I`` holds is released (created mdevs become ``free`` for reuse,
never-created reservations vanish), and the error names the device, the cause and the fix.
Destroy powers off, undefines and releases; mdevs stay, ``free``, for the next guest, while
VFs get their type cleared (only a type we set) and are free again.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vgpucloud.agent.config import AgentConfig
from vgpucloud.agent.ledger import Ledger, LedgerEntry, materialize
from vgpucloud.agent.mdev import Sysfs
from vgpucloud.agent.provider_tree import child_name
from vgpucloud.agent.variant import VariantVfs
from vgpucloud.agent.virt import GuestMdev, GuestSpec, GuestState, VirtDriver
from vgpucloud.client.placement import PlacementClient
from vgpucloud.errors import HostDeviceError, MdevNotFound, NoInstancesLeft, VgpucloudError

LOG = logging.getLogger(__name__)
NVIDIA_VENDOR = "0x10de"


class SpawnError(VgpucloudError):
    """A spawn that failed and was rolled back; the message names the device and the fix."""

    code = "agent.spawn_failed"


@dataclasses.dataclass(frozen=True, slots=True)
class MdevWant:
    """``count`` mdevs of ``type_id`` on ``parent``, allocated from provider ``provider``;
    with ``variant``, ``parent`` is a variant-driver VF that itself becomes the vGPU."""

    provider: str
    provider_name: str
    parent: str
    type_id: str
    count: int
    variant: bool = False


@dataclasses.dataclass(frozen=True, slots=True)
class Claims:
    """What a spawn holds on this host: mdev rows and VF claim rows of the ledger."""

    mdevs: tuple[LedgerEntry, ...] = ()
    vfs: tuple[LedgerEntry, ...] = ()

    @property
    def entries(self) -> tuple[LedgerEntry, ...]:
        return self.mdevs + self.vfs


@dataclasses.dataclass(frozen=True, slots=True)
class SpawnRequest:
    """The payload of a ``spawn`` task, e.g. ``{"instance_uuid": "c217...", "vcpus": 2,
    "memory_mb": 4096, "name": "instance-0000000a", "image": "cirros"}``."""

    instance_uuid: str
    name: str
    vcpus: int
    memory_mb: int
    disk_path: str | None = None
    image: str | None = None

    @classmethod
    def from_payload(cls, payload: Mapping[str, Any]) -> SpawnRequest:
        try:
            uuid = str(payload["instance_uuid"])
            return cls(instance_uuid=uuid, name=str(payload.get("name") or f"instance-{uuid}"),
                       vcpus=int(payload.get("vcpus", 1)),
                       memory_mb=int(payload.get("memory_mb", 512)),
                       disk_path=payload.get("disk_path"), image=payload.get("image"))
        except (KeyError, TypeError, ValueError) as exc:
            raise SpawnError(f"spawn payload {dict(payload)} is malformed ({exc!r}); it needs "
                             "instance_uuid and integer vcpus/memory_mb") from exc


class GuestOps:
    """Executes spawn and destroy on this host."""

    def __init__(self, config: AgentConfig, sysfs: Sysfs, ledger: Ledger, driver: VirtDriver,
                 placement: PlacementClient) -> None:
        self.config = config
        self.sysfs = sysfs
        self.ledger = ledger
        self.driver = driver
        self.placement = placement
        self.vfs = VariantVfs(sysfs, ledger)

    # --- spawn ---------------------------------------------------------------------------

    def spawn(self, payload: Mapping[str, Any], root_uuid: str) -> dict[str, Any]:
        request = SpawnRequest.from_payload(payload)
        owner = request.instance_uuid
        wants = self.mdev_wants(owner, root_uuid)
        try:
            claims = self._reserve(owner, wants)
            guest = self._guest_spec(request, claims)
            self.driver.define(guest)
            self.driver.start(owner)
            for entry in claims.entries:
                self.ledger.attach(entry.uuid, owner)
        except Exception as exc:
            self._roll_back(owner)
            reason = exc.message if isinstance(exc, VgpucloudError) else repr(exc)
            raise SpawnError(f"spawn of instance {owner} failed and was rolled back: "
                             f"{reason}") from exc
        LOG.info("instance %s running with mdevs %s and VFs %s", owner,
                 [e.uuid for e in claims.mdevs], [e.parent for e in claims.vfs])
        return {"instance_uuid": owner, "state": "running",
                "mdevs": [_mdev_doc(e) for e in claims.mdevs],
                "vfs": [_vf_doc(e) for e in claims.vfs]}

    def mdev_wants(self, instance: str, root_uuid: str) -> list[MdevWant]:
        """What the instance's allocations ask of this host's pGPUs."""
        allocations = self.placement.get_allocations(instance).get("allocations", {})
        tree = {p["uuid"]: p["name"] for p in self.placement.list_providers(in_tree=root_uuid)}
        by_name = {child_name(self.config.host, a): a for a in self.config.assignments}
        wants = []
        for provider, allocation in sorted(allocations.items()):
            resources: Mapping[str, int] = allocation.get("resources", {})
            name = tree.get(provider)
            address = by_name.get(name or "")
            assignment = self.config.assignment_for(address) if address else None
            if assignment is None:
                self._check_not_an_mdev_class(instance, provider, name, resources)
                continue
            count = int(resources.get(assignment.mdev_class, 0))
            if count:
                wants.append(MdevWant(provider, name or provider, assignment.address,
                                      assignment.type_id, count,
                                      variant=self.vfs.is_vf(assignment.address)))
        self._check_one_per_nvidia_gpu(instance, wants)
        return wants

    def _check_not_an_mdev_class(self, instance: str, provider: str, name: str | None,
                                 resources: Mapping[str, int]) -> None:
        classes = {a.mdev_class for a in self.config.assignments.values()}
        stray = sorted(rc for rc in resources if rc in classes)
        if stray:
            where = f"provider {name} ({provider})" if name else f"provider {provider}, " \
                f"which is not in the tree of host {self.config.host}"
            raise SpawnError(
                f"instance {instance} holds {', '.join(stray)} on {where} that maps to no "
                "configured pGPU of this host; the allocation predates a reshape or a config "
                "change: restart the agent to reshape, or reschedule the instance")

    def _check_one_per_nvidia_gpu(self, instance: str, wants: list[MdevWant]) -> None:
        for want in wants:
            if want.count > 1 and self.sysfs.parent(want.parent).vendor_id == NVIDIA_VENDOR:
                raise SpawnError(
                    f"instance {instance} was allocated {want.count} vGPUs on one NVIDIA GPU "
                    f"({want.parent}, provider {want.provider_name}); NVIDIA gives a guest at "
                    "most one vGPU per physical GPU: request them in separate numbered groups "
                    "with group_policy=isolate")

    def _reserve(self, owner: str, wants: list[MdevWant]) -> Claims:
        mdevs: list[LedgerEntry] = []
        vfs: list[LedgerEntry] = []
        for want in wants:
            if want.variant:
                vfs.append(self._claim_vf(owner, want))
                continue
            reserved = self.ledger.reserve(owner, want.parent, want.type_id,
                                           provider=want.provider, count=want.count)
            for entry in reserved:
                self._materialize(entry, want)
            mdevs.extend(self.ledger.get(e.uuid) or e for e in reserved)
        return Claims(tuple(mdevs), tuple(vfs))

    def _claim_vf(self, owner: str, want: MdevWant) -> LedgerEntry:
        try:
            return self.vfs.claim(owner, want.parent, want.type_id, want.provider)
        except HostDeviceError as exc:
            raise SpawnError(f"VF {want.parent} (vGPU type {want.type_id}, provider "
                             f"{want.provider_name}) could not be claimed: "
                             f"{exc.message}") from exc

    def _materialize(self, entry: LedgerEntry, want: MdevWant) -> None:
        try:
            try:
                materialize(self.ledger, self.sysfs, entry)
            except NoInstancesLeft:
                if not self.make_room(want.parent, want.type_id):
                    raise
                materialize(self.ledger, self.sysfs, entry)
        except HostDeviceError as exc:
            raise SpawnError(f"mdev {entry.uuid} ({want.type_id} on pGPU {want.parent}, "
                             f"provider {want.provider_name}) could not be created: "
                             f"{exc.message}") from exc

    def make_room(self, parent: str, type_id: str) -> bool:
        """NVIDIA runs one type per GPU: our own free mdevs of another type block ``type_id``
        on ``parent``. Remove those (only ours, only free: DESIGN rule 2). The ledger row goes
        first, in a compare-and-swap, so an operator's ``host orphans --remove`` running at
        the same time cannot make us remove a device twice. True if anything was removed."""
        removed = False
        free = self.ledger.free(parent=parent)
        if free and self.vfs.is_vf(parent):
            # Free VF rows are releases a crash interrupted: finish them (clear our type).
            return bool(self.vfs.sweep(parent))
        for entry in free:
            if entry.type_id == type_id or not entry.created_by_us:
                continue
            if not self.ledger.forget_if_free(entry.uuid):
                continue
            # Already gone (removed by hand, or a host reboot): nothing left to free.
            with contextlib.suppress(MdevNotFound):
                self.sysfs.remove_mdev(entry.uuid)
            removed = True
            LOG.info("removed our free mdev %s (%s) on %s to make room for %s",
                     entry.uuid, entry.type_id, parent, type_id)
        return removed

    def _guest_spec(self, request: SpawnRequest, claims: Claims) -> GuestSpec:
        mdevs = []
        for entry in claims.mdevs:
            offered = self.sysfs.parent(entry.parent).type(entry.type_id)
            mdevs.append(GuestMdev(entry.uuid, offered.device_api if offered else "vfio-pci"))
        disk = request.disk_path or str(self.instance_dir(request.instance_uuid) / "disk")
        return GuestSpec(uuid=request.instance_uuid, name=request.name, vcpus=request.vcpus,
                         memory_mb=request.memory_mb, disk_path=disk, mdevs=tuple(mdevs),
                         image=request.image,
                         pci_devices=tuple(entry.parent for entry in claims.vfs))

    def instance_dir(self, instance: str) -> Path:
        return self.config.state_path / "instances" / instance

    def _roll_back(self, owner: str) -> None:
        try:
            if self.driver.state(owner) == GuestState.RUNNING:
                return  # a previous delivery finished the spawn; this one changes nothing
            self.driver.undefine(owner)
        except VgpucloudError as exc:  # keep the spawn's own error the one reported
            LOG.error("rolling back spawn of %s: cannot undefine the guest: %s", owner, exc)
        try:
            self.vfs.deactivate_owned(owner)
        except VgpucloudError as exc:  # the free row keeps the type known as ours
            LOG.error("rolling back spawn of %s: cannot clear a VF's vGPU type: %s", owner,
                      exc)
        released = self.ledger.release(owner)
        self.vfs.forget_released(released)
        LOG.warning("rolled back spawn of %s: released %s", owner,
                    [e.uuid for e in released])

    # --- destroy -------------------------------------------------------------------------

    def destroy(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        try:
            owner = str(payload["instance_uuid"])
        except KeyError as exc:
            raise SpawnError(f"destroy payload {dict(payload)} has no instance_uuid") from exc
        self.driver.undefine(owner)
        # VF types are cleared while the rows are still the instance's: a crash half-way
        # leaves rows the redelivered destroy finds again.
        self.vfs.deactivate_owned(owner)
        released = self.ledger.release(owner)
        vfs = self.vfs.forget_released(released)
        mdevs = [e for e in released if e not in vfs]
        LOG.info("instance %s destroyed; mdevs %s and VFs %s are free", owner,
                 [e.uuid for e in mdevs], [e.parent for e in vfs])
        return {"instance_uuid": owner, "state": "deleted",
                "released_mdevs": sorted(e.uuid for e in mdevs),
                "released_vfs": sorted(e.parent for e in vfs)}


def _mdev_doc(entry: LedgerEntry) -> dict[str, Any]:
    return {"uuid": entry.uuid, "parent": entry.parent, "type": entry.type_id,
            "provider": entry.provider}


def _vf_doc(entry: LedgerEntry) -> dict[str, Any]:
    return {"address": entry.parent, "type": entry.type_id, "provider": entry.provider,
            "claim": entry.uuid}
