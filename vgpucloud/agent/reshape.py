"""Reshape a pre-Stein host: VGPU inventory on the root provider -> one child per pGPU.

When the root provider still carries inventory of a configured mdev class (``VGPU`` or a
``CUSTOM_*`` mdev_class), the agent moves that inventory and every allocation of it to the
pGPU children in one ``POST /reshaper``, so Placement never shows the host half-moved.
Which pGPU each instance uses comes from the mdev ledger and, for mdevs made before the
ledger existed, from the mdevs named in the guests' domain XML. An allocation it cannot
place (no mdev found, a count mismatch, an unconfigured pGPU) stops the reshape with one
error listing every such consumer, and nothing is written.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import uuid as uuidlib
from collections import Counter
from typing import Any

from vgpucloud.agent.config import AgentConfig
from vgpucloud.agent.ledger import OWNED_STATES, Ledger
from vgpucloud.agent.mdev import Sysfs
from vgpucloud.agent.provider_tree import DesiredTree, child_name
from vgpucloud.agent.virt import VirtDriver
from vgpucloud.agent.virt.driver import GuestInfo
from vgpucloud.client.placement import PlacementClient
from vgpucloud.errors import MdevNotFound, VgpucloudError

LOG = logging.getLogger(__name__)


class ReshapeError(VgpucloudError):
    code = "agent.reshape_failed"


@dataclasses.dataclass(frozen=True, slots=True)
class ReshapeReport:
    root_uuid: str
    moved_classes: tuple[str, ...]
    consumers: dict[str, dict[str, int]]  # consumer -> {child provider name: amount}


class Reshaper:
    def __init__(self, config: AgentConfig, sysfs: Sysfs, ledger: Ledger, driver: VirtDriver,
                 placement: PlacementClient) -> None:
        self.config = config
        self.sysfs = sysfs
        self.ledger = ledger
        self.driver = driver
        self.placement = placement

    def reshape_if_needed(self, desired: DesiredTree) -> ReshapeReport | None:
        roots = self.placement.list_providers(name=self.config.host)
        if not roots:
            return None
        root_uuid = roots[0]["uuid"]
        inventories = self.placement.get_inventories(root_uuid)["inventories"]
        classes = {a.mdev_class for a in self.config.assignments.values()}
        moving = tuple(sorted(set(inventories) & classes))
        if not moving:
            return None
        moves = self._plan_moves(root_uuid, moving)
        children = self._ensure_children(root_uuid, desired)
        body = self._body(root_uuid, moving, desired, children, moves)
        self.placement.reshape(body)
        LOG.info("reshaped %s of host %s from the root provider to %d pGPU providers",
                 ", ".join(moving), self.config.host, len(children))
        return ReshapeReport(root_uuid, moving, moves)

    # --- which consumer goes where ---------------------------------------------------------

    def _plan_moves(self, root_uuid: str, moving: tuple[str, ...]) -> dict[str, dict[str, int]]:
        allocations = self.placement.get_provider_allocations(root_uuid)["allocations"]
        moves: dict[str, dict[str, int]] = {}
        problems: list[str] = []
        for consumer, allocation in sorted(allocations.items()):
            wanted = {rc: int(n) for rc, n in allocation["resources"].items() if rc in moving}
            if wanted:
                moves[consumer] = self._children_of(consumer, wanted, problems)
        if problems:
            raise ReshapeError(
                f"cannot reshape {', '.join(moving)} of host {self.config.host} to per-pGPU "
                "providers; nothing was changed:\n  - " + "\n  - ".join(problems))
        return moves

    def _children_of(self, consumer: str, wanted: dict[str, int],
                     problems: list[str]) -> dict[str, int]:
        per_parent = Counter(self._mdev_parents(consumer).values())
        found: Counter[str] = Counter()
        target: dict[str, int] = {}
        for parent, count in sorted(per_parent.items()):
            assignment = self.config.assignment_for(parent)
            if assignment is None:
                problems.append(f"instance {consumer} uses mdevs on {parent}, which no "
                                "[mdev_*] group configures; add it to device_addresses")
                continue
            found[assignment.mdev_class] += count
            target[child_name(self.config.host, parent)] = count
        if dict(found) != wanted:
            have = ", ".join(f"{rc}={n}" for rc, n in sorted(found.items())) or "no mdevs"
            problems.append(
                f"instance {consumer} holds {_amounts(wanted)} on the root provider but the "
                f"ledger and its domain show {have}; recreate its mdevs (or delete the "
                "instance) and restart the agent")
        return target

    @functools.cached_property
    def _guests(self) -> dict[str, GuestInfo]:
        """The host's guests by uuid, listed once per reshape (a libvirt call each time)."""
        return {guest.uuid: guest for guest in self.driver.list_guests()}

    def _mdev_parents(self, consumer: str) -> dict[str, str]:
        """mdev uuid -> parent, from the ledger, then from the guest's domain XML."""
        parents = {e.uuid: e.parent for e in self.ledger.by_owner(consumer)
                   if e.state in OWNED_STATES}
        guest = self._guests.get(consumer)
        for mdev_uuid in guest.mdev_uuids if guest else ():
            if mdev_uuid not in parents:
                try:
                    parents[mdev_uuid] = self.sysfs.mdev(mdev_uuid).parent
                except MdevNotFound:
                    continue
        return parents

    # --- the request -------------------------------------------------------------------------

    def _ensure_children(self, root_uuid: str, desired: DesiredTree) -> dict[str, dict[str, Any]]:
        """Child providers by name; missing ones are created empty (invisible to scheduling
        until the reshape gives them inventory)."""
        tree = {p["name"]: p for p in self.placement.list_providers(in_tree=root_uuid)}
        for rc in sorted(desired.custom_resource_classes()):
            self.placement.ensure_resource_class(rc)
        for spec in desired.children:
            if spec.name not in tree:
                tree[spec.name] = self.placement.create_provider(
                    spec.name, uuid=str(uuidlib.uuid4()), parent_provider_uuid=root_uuid)
        return {spec.name: tree[spec.name] for spec in desired.children}

    def _body(self, root_uuid: str, moving: tuple[str, ...], desired: DesiredTree,
              children: dict[str, dict[str, Any]],
              moves: dict[str, dict[str, int]]) -> dict[str, Any]:
        root = self.placement.get_inventories(root_uuid)
        inventories: dict[str, Any] = {root_uuid: {
            "resource_provider_generation": root["resource_provider_generation"],
            "inventories": {rc: inv for rc, inv in root["inventories"].items()
                            if rc not in moving},
        }}
        for spec in desired.children:
            child = self.placement.get_inventories(children[spec.name]["uuid"])
            inventories[children[spec.name]["uuid"]] = {
                "resource_provider_generation": child["resource_provider_generation"],
                "inventories": {rc: dict(inv) for rc, inv in spec.inventories.items()},
            }
        classes = {child_name(self.config.host, a.address): a.mdev_class
                   for a in self.config.assignments.values()}
        allocations: dict[str, Any] = {}
        for consumer, targets in moves.items():
            current = self.placement.get_allocations(consumer)
            new = {rp: dict(a["resources"]) for rp, a in current["allocations"].items()}
            new[root_uuid] = {rc: n for rc, n in new[root_uuid].items() if rc not in moving}
            if not new[root_uuid]:
                del new[root_uuid]
            for name, count in targets.items():
                new.setdefault(children[name]["uuid"], {})[classes[name]] = count
            allocations[consumer] = {
                "allocations": {rp: {"resources": r} for rp, r in new.items()},
                **{k: current[k] for k in ("project_id", "user_id", "consumer_generation",
                                           "consumer_type") if k in current},
            }
        return {"inventories": inventories, "allocations": allocations}


def _amounts(amounts: dict[str, int]) -> str:
    return ", ".join(f"{rc}={n}" for rc, n in sorted(amounts.items()))
