"""Keeps this host's provider tree in Placement equal to ``provider_tree.desired_tree``.

Talks to Placement only through ``client.PlacementClient``, so it works against ours and
OpenStack's. The rules it keeps (DESIGN §4):

- **Cheap when nothing changed.** It remembers the tree it last wrote and the provider
  generations it saw; when the desired tree is the same and ``GET /resource_providers?in_tree=``
  shows the same generations, that one GET is the whole report.
- **Operator traits survive.** It removes only traits it recorded setting itself (in
  ``<state_path>/placement.json``), so ``openstack resource provider trait set --trait
  CUSTOM_NVIDIA_11 …`` outlives every report and restart. Losing that file can leave a stale
  agent trait behind; it can never remove an operator's.
- **Providers are stable.** A child whose device is still present is never deleted; one that
  cannot hold its inventory any more keeps it fenced (``reserved = total``) while in use, and
  loses it only when unused. A child whose device is gone is deleted once it holds nothing.
- **Races are retried.** Every read-modify-write runs under ``retry_on_conflict`` with a fresh
  read; a 409 is never ignored.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import os
import tempfile
import uuid as uuidlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from vgpucloud import errors
from vgpucloud.agent.provider_tree import DesiredTree, ProviderSpec
from vgpucloud.client.placement import PlacementClient, retry_on_conflict

LOG = logging.getLogger(__name__)
STATE_FILE = "placement.json"


@dataclasses.dataclass
class ReportResult:
    """What one report did; ``unchanged`` is the one-GET fast path."""

    unchanged: bool = False
    created: list[str] = dataclasses.field(default_factory=list)
    inventories_updated: list[str] = dataclasses.field(default_factory=list)
    traits_updated: list[str] = dataclasses.field(default_factory=list)
    fenced: list[str] = dataclasses.field(default_factory=list)
    deleted: list[str] = dataclasses.field(default_factory=list)


class ProviderReporter:
    def __init__(self, client: PlacementClient, state_path: Path) -> None:
        self.client = client
        self.state_file = Path(state_path) / STATE_FILE
        self._state = self._load_state()
        self._last_desired: DesiredTree | None = None
        self._last_generations: dict[str, int] = {}
        self._ensured_names: set[str] = set()

    @property
    def root_uuid(self) -> str | None:
        value = self._state.get("root_uuid")
        return str(value) if value else None

    # --- the report ------------------------------------------------------------

    def report(self, desired: DesiredTree) -> ReportResult:
        result = ReportResult()
        tree = self._current_tree(desired.root.name, result)
        generations = {p["uuid"]: p["generation"] for p in tree}
        if desired == self._last_desired and generations == self._last_generations:
            result.unchanged = True
            return result
        self._ensure_names(desired)
        by_name = {p["name"]: p for p in tree}
        for spec in desired.providers:
            provider = by_name.get(spec.name) or self._create_child(spec, result)
            by_name[spec.name] = provider
            self._sync_inventories(provider["uuid"], spec, result)
            self._sync_traits(provider["uuid"], spec, result)
        wanted = {spec.name for spec in desired.providers}
        for provider in tree:
            if provider["name"] not in wanted:
                self._retire(provider, present=provider["name"] in desired.present, result=result)
        self._last_desired = desired
        self._last_generations = {
            p["uuid"]: p["generation"] for p in self._list_tree(self.root_uuid or "")
        }
        return result

    def _current_tree(self, host: str, result: ReportResult) -> list[dict[str, Any]]:
        """The providers of our tree, creating (or re-finding) the root when needed."""
        if self.root_uuid:
            tree = self._list_tree(self.root_uuid)
            if tree:
                return tree
        found = self.client.list_providers(name=host)
        if found:
            root = found[0]
            if root.get("parent_provider_uuid"):
                raise errors.ConfigError([
                    f"[DEFAULT] host = {host}: Placement already has a provider of that name "
                    f"({root['uuid']}) under parent {root['parent_provider_uuid']}; give this "
                    "host a unique name"
                ])
        else:
            root = self.client.create_provider(host, uuid=str(uuidlib.uuid4()))
            result.created.append(host)
            LOG.info("created root provider %s (%s)", host, root["uuid"])
        self._save_state(root_uuid=root["uuid"])
        return self._list_tree(root["uuid"])

    def _list_tree(self, root_uuid: str) -> list[dict[str, Any]]:
        return self.client.list_providers(in_tree=root_uuid) if root_uuid else []

    def _create_child(self, spec: ProviderSpec, result: ReportResult) -> dict[str, Any]:
        provider = self.client.create_provider(
            spec.name, uuid=str(uuidlib.uuid4()), parent_provider_uuid=self.root_uuid
        )
        result.created.append(spec.name)
        LOG.info("created pGPU provider %s (%s)", spec.name, provider["uuid"])
        return provider

    def _ensure_names(self, desired: DesiredTree) -> None:
        for rc in sorted(desired.custom_resource_classes() - self._ensured_names):
            self.client.ensure_resource_class(rc)
            self._ensured_names.add(rc)
        for trait in sorted(desired.custom_traits() - self._ensured_names):
            self.client.ensure_trait(trait)
            self._ensured_names.add(trait)

    # --- inventories --------------------------------------------------------------

    def _sync_inventories(self, uuid: str, spec: ProviderSpec, result: ReportResult) -> None:
        def step() -> None:
            current = self.client.get_inventories(uuid)
            target = {rc: dict(inv) for rc, inv in spec.inventories.items()}
            if _same_inventories(current["inventories"], target):
                return
            generation = current["resource_provider_generation"]
            try:
                self.client.put_inventories(uuid, generation, target)
                result.inventories_updated.append(spec.name)
            except errors.InventoryInUse:
                self._put_fenced(uuid, spec.name, current, target, result)

        retry_on_conflict(step)

    def _put_fenced(
        self, uuid: str, name: str, current: dict[str, Any], target: dict[str, dict[str, Any]],
        result: ReportResult,
    ) -> None:
        """The wanted inventory would drop below what guests hold: keep what is held,
        let nothing new in (reserved = total), and say so. ``current`` is the inventory the
        refused write was based on (a refusal changes nothing, so it is still current)."""
        usages = self.client.get_provider_usages(uuid)["usages"]
        fenced = dict(target)
        for rc, inventory in current["inventories"].items():
            used = usages.get(rc, 0)
            wanted = target.get(rc)
            if used and (wanted is None or wanted["total"] < used):
                fenced[rc] = {**inventory, "reserved": inventory["total"]}
        if _same_inventories(current["inventories"], fenced):
            return  # already fenced: writing again would only bump the generation
        self.client.put_inventories(uuid, current["resource_provider_generation"], fenced)
        result.fenced.append(name)
        LOG.warning(
            "provider %s cannot shrink to its new inventory while guests hold resources; "
            "fenced (reserved = total) until they are gone", name,
        )

    # --- traits ------------------------------------------------------------------

    def _sync_traits(self, uuid: str, spec: ProviderSpec, result: ReportResult) -> None:
        previously_set = set(self._state.get("traits", {}).get(uuid, []))

        def step() -> None:
            current = self.client.get_provider_traits(uuid)
            have = set(current["traits"])
            want = (have - (previously_set - spec.traits)) | spec.traits
            if want != have:
                self.client.put_provider_traits(
                    uuid, current["resource_provider_generation"], sorted(want)
                )
                result.traits_updated.append(spec.name)

        retry_on_conflict(step)
        self._remember_traits(uuid, sorted(spec.traits))

    def _remember_traits(self, uuid: str, traits: list[str] | None) -> None:
        """Record the traits we set on ``uuid`` (None: the provider is gone); written to
        disk only when that changes."""
        known = dict(self._state.get("traits", {}))
        if known.get(uuid) == traits:
            return
        if traits is None:
            del known[uuid]
        else:
            known[uuid] = traits
        self._save_state(traits=known)

    # --- providers that should not be there -------------------------------------------

    def _retire(self, provider: dict[str, Any], *, present: bool, result: ReportResult) -> None:
        uuid, name = provider["uuid"], provider["name"]
        if uuid == self.root_uuid:
            return
        in_use = any(self.client.get_provider_usages(uuid)["usages"].values())
        if not present and not in_use:
            self.client.delete_provider(uuid)
            self._remember_traits(uuid, None)
            result.deleted.append(name)
            LOG.info("deleted provider %s: its device is gone and it holds nothing", name)
            return
        empty = ProviderSpec(name=name, inventories={}, traits=frozenset())
        self._sync_inventories(uuid, empty, result)
        self._sync_traits(uuid, empty, result)

    # --- durable state -----------------------------------------------------------------

    def _load_state(self) -> dict[str, Any]:
        try:
            return dict(json.loads(self.state_file.read_text()))
        except FileNotFoundError:
            return {}
        except ValueError as exc:
            raise errors.ConfigError([
                f"{self.state_file}: unreadable agent state ({exc}); move it aside to let the "
                "agent rebuild it (it will find its providers again by host name)"
            ]) from exc

    def _save_state(self, **changes: Any) -> None:
        self._state.update(changes)
        self.state_file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=self.state_file.parent, prefix=".placement.")
        with os.fdopen(fd, "w") as out:
            json.dump(self._state, out, indent=1, sort_keys=True)
        os.replace(tmp, self.state_file)


def _same_inventories(
    current: Mapping[str, Mapping[str, Any]], target: Mapping[str, Mapping[str, Any]]
) -> bool:
    if set(current) != set(target):
        return False
    return all(
        all(current[rc].get(field) == value for field, value in target[rc].items())
        for rc in target
    )
