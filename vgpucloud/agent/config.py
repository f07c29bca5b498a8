"""The agent's nova.conf: ``[DEFAULT]``, ``[libvirt]``, ``[devices]`` and ``[mdev_<type>]``.

Parsed with oslo.config on a private ``ConfigOpts`` (never the global CONF), with nova's
names, aliases and defaults, so an existing nova.conf works unchanged::

    [DEFAULT]
    host = compute-1
    cpu_allocation_ratio = 16.0

    [devices]
    enabled_mdev_types = nvidia-35, nvidia-36      # deprecated name: enabled_vgpu_types

    [mdev_nvidia-35]                               # deprecated group: [vgpu_nvidia-35]
    device_addresses = 0000:84:00.0,0000:85:00.0
    mdev_class = CUSTOM_M60_0B
    max_instances = 8

    [mdev_nvidia-36]
    device_addresses = 0000:86:00.0

A type whose group lists no addresses is the default for every unlisted parent that offers
it; only one type may be that default. ``load_agent_config(files, parents=...)`` checks the
config against the host's parent devices and raises ``ConfigError`` with one problem per
mistake (the agent refuses to start), or returns an ``AgentConfig`` telling, per parent
device, which type, resource class and instance cap apply.
"""

from __future__ import annotations

import dataclasses
import re
import socket
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from oslo_config import cfg

from vgpucloud.agent.mdev import ParentDevice, ParentKind, names
from vgpucloud.errors import ConfigError

DEFAULT_STATE_PATH = "/var/lib/vgpucloud"
MDEV_CLASS_RE = re.compile(r"^(VGPU|CUSTOM_[A-Z0-9_]+)$")

_DEFAULT_OPTS = [
    cfg.StrOpt("host", default=socket.gethostname(),
               help="Name of this compute host, as Placement and the API know it."),
    cfg.StrOpt("state_path", default=DEFAULT_STATE_PATH,
               help="Directory of the agent's durable state (the mdev ledger)."),
    cfg.FloatOpt("cpu_allocation_ratio", default=16.0, min=0.0),
    cfg.FloatOpt("ram_allocation_ratio", default=1.5, min=0.0),
    cfg.FloatOpt("disk_allocation_ratio", default=1.0, min=0.0),
    cfg.IntOpt("reserved_host_memory_mb", default=512, min=0),
    cfg.IntOpt("reserved_host_disk_mb", default=0, min=0),
    cfg.IntOpt("reserved_host_cpus", default=0, min=0),
]
_LIBVIRT_OPTS = [
    cfg.StrOpt("connection_uri", default="qemu:///system"),
    cfg.IntOpt("live_migration_downtime", default=500, min=100),
    cfg.IntOpt("live_migration_downtime_steps", default=10, min=3),
    cfg.IntOpt("live_migration_downtime_delay", default=75, min=3),
]
_DEVICES_OPTS = [
    cfg.ListOpt("enabled_mdev_types", default=[], deprecated_name="enabled_vgpu_types",
                help="mdev types this host offers to guests, e.g. nvidia-35."),
]


@dataclasses.dataclass(frozen=True, slots=True)
class MdevTypeConfig:
    """One ``[mdev_<type>]`` group (or the implied one of a single enabled type)."""

    type_id: str
    device_addresses: tuple[str, ...] = ()
    mdev_class: str = "VGPU"
    max_instances: int | None = None
    section: str = ""  # the group name the operator wrote, for messages


@dataclasses.dataclass(frozen=True, slots=True)
class ParentAssignment:
    """What the agent reports for one parent device: its type, resource class and cap."""

    address: str
    type_id: str
    mdev_class: str
    max_instances: int | None


@dataclasses.dataclass(frozen=True, slots=True)
class DevicesConfig:
    types: tuple[MdevTypeConfig, ...] = ()

    def type_config(self, type_id: str) -> MdevTypeConfig | None:
        return next((t for t in self.types if t.type_id == type_id), None)

    @property
    def default_types(self) -> tuple[MdevTypeConfig, ...]:
        return tuple(t for t in self.types if not t.device_addresses)


@dataclasses.dataclass(frozen=True, slots=True)
class AgentConfig:
    host: str
    state_path: Path
    connection_uri: str
    live_migration_downtime: int
    live_migration_downtime_steps: int
    live_migration_downtime_delay: int
    cpu_allocation_ratio: float
    ram_allocation_ratio: float
    disk_allocation_ratio: float
    reserved_host_memory_mb: int
    reserved_host_disk_mb: int
    reserved_host_cpus: int
    devices: DevicesConfig
    # Per parent address; empty until checked against a host's parents.
    assignments: Mapping[str, ParentAssignment] = dataclasses.field(default_factory=dict)
    config_files: tuple[str, ...] = ()

    def assignment_for(self, address: str) -> ParentAssignment | None:
        return self.assignments.get(address)


def load_agent_config(config_files: Sequence[str | Path],
                      *, parents: Sequence[ParentDevice] | None = None) -> AgentConfig:
    """Parse ``config_files``; with ``parents``, also check the config against the host."""
    files = [str(f) for f in config_files]
    conf = _parse(files)
    problems: list[str] = []
    scalars = _scalars(conf, problems)
    devices = _devices(conf, problems)
    assignments: dict[str, ParentAssignment] = {}
    if parents is not None:
        assignments = assign_parents(devices, parents, problems)
    if problems:
        raise ConfigError(problems)
    return AgentConfig(devices=devices, assignments=assignments, config_files=tuple(files),
                       **scalars)


def _parse(files: list[str]) -> cfg.ConfigOpts:
    missing = [f for f in files if not Path(f).is_file()]
    if missing:
        raise ConfigError([f"--config-file {f}: no such file; pass an existing nova.conf"
                           for f in missing])
    conf = cfg.ConfigOpts()
    conf.register_opts(_DEFAULT_OPTS)
    conf.register_opts(_LIBVIRT_OPTS, group="libvirt")
    conf.register_opts(_DEVICES_OPTS, group="devices")
    try:
        conf(args=[], project="nova", default_config_files=files, default_config_dirs=[])
    except cfg.Error as exc:
        raise ConfigError([f"{', '.join(files)}: cannot parse: {exc}; fix the file's syntax"]
                          ) from exc
    return conf


def _get(conf: cfg.ConfigOpts, group: str | None, name: str, problems: list[str]) -> object:
    """An option's value, or a problem naming it when oslo.config rejects the value."""
    try:
        return conf[group][name] if group else conf[name]
    except (ValueError, cfg.Error) as exc:
        where = f"[{group or 'DEFAULT'}] {name}"
        problems.append(f"{where}: {exc}; fix the value or remove it to use the default")
        return None


def _scalars(conf: cfg.ConfigOpts, problems: list[str]) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for opt in _DEFAULT_OPTS:
        values[opt.dest] = _get(conf, None, opt.dest, problems)
    for opt in _LIBVIRT_OPTS:
        values[opt.dest] = _get(conf, "libvirt", opt.dest, problems)
    values["state_path"] = Path(str(values["state_path"]))
    return values


def _devices(conf: cfg.ConfigOpts, problems: list[str]) -> DevicesConfig:
    enabled = _get(conf, "devices", "enabled_mdev_types", problems) or []
    assert isinstance(enabled, list)
    type_ids = list(dict.fromkeys(t.strip() for t in enabled if t.strip()))
    sections = set(conf.list_all_sections())
    types = []
    for type_id in type_ids:
        if not names.MDEV_TYPE_RE.match(type_id):
            problems.append(f"[devices] enabled_mdev_types: {type_id!r} is not an mdev type "
                            "name; use a name from /sys/class/mdev_bus/*/mdev_supported_types")
            continue
        types.append(_type_group(conf, type_id, sections, problems))
    _check_stale_sections(sections, type_ids, problems)
    _check_duplicates(types, problems)
    defaults = [t.type_id for t in types if not t.device_addresses]
    if len(defaults) > 1:
        problems.append(
            f"[devices] enabled_mdev_types = {', '.join(type_ids)}: types {', '.join(defaults)}"
            " have no device_addresses, but only one type can be the default for unlisted "
            "GPUs; give each of the others a [mdev_<type>] device_addresses list"
        )
    return DevicesConfig(types=tuple(types))


def _type_group(conf: cfg.ConfigOpts, type_id: str, sections: set[str],
                problems: list[str]) -> MdevTypeConfig:
    group = f"mdev_{type_id}"
    legacy = f"vgpu_{type_id}"
    section = legacy if legacy in sections and group not in sections else group
    conf.register_opts([
        cfg.ListOpt("device_addresses", default=[], deprecated_group=legacy),
        cfg.StrOpt("mdev_class", default="VGPU", deprecated_group=legacy),
        cfg.IntOpt("max_instances", default=None, min=1, deprecated_group=legacy),
    ], group=group)
    raw_addresses = _get(conf, group, "device_addresses", problems) or []
    assert isinstance(raw_addresses, list)
    addresses = []
    for raw in raw_addresses:
        address = names.normalize_pci_address(raw)
        if not (names.is_pci_address(address) or names.VIRTUAL_PARENT_RE.match(address)):
            problems.append(
                f"[{section}] device_addresses: {raw!r} is not a PCI address; write it as "
                "DDDD:BB:SS.F, e.g. 0000:84:00.0 (see `vgpucloud host types`)"
            )
        elif address not in addresses:
            addresses.append(address)
    mdev_class = _get(conf, group, "mdev_class", problems)
    if mdev_class is not None and not MDEV_CLASS_RE.match(str(mdev_class)):
        problems.append(
            f"[{section}] mdev_class = {mdev_class}: must be VGPU or a custom resource class "
            "CUSTOM_<NAME> (upper-case letters, digits, _); fix the value"
        )
    max_instances = _get(conf, group, "max_instances", problems)
    return MdevTypeConfig(
        type_id=type_id,
        device_addresses=tuple(addresses),
        mdev_class=str(mdev_class or "VGPU"),
        max_instances=max_instances if isinstance(max_instances, int) else None,
        section=section,
    )


def _check_stale_sections(sections: set[str], type_ids: list[str], problems: list[str]) -> None:
    for section in sorted(sections):
        prefix, _, type_id = section.partition("_")
        if prefix in ("mdev", "vgpu") and type_id and type_id not in type_ids:
            enabled = ", ".join(type_ids) or "empty"
            problems.append(
                f"[{section}] configures {type_id}, which is not in [devices] "
                f"enabled_mdev_types ({enabled}); add {type_id} there or remove the section"
            )


def _check_duplicates(types: list[MdevTypeConfig], problems: list[str]) -> None:
    owner: dict[str, MdevTypeConfig] = {}
    for type_config in types:
        for address in type_config.device_addresses:
            first = owner.setdefault(address, type_config)
            if first is not type_config:
                problems.append(
                    f"[{first.section}] and [{type_config.section}] device_addresses both list "
                    f"{address}; a GPU runs one mdev type at a time: keep {address} under "
                    "only one of them"
                )


def assign_parents(devices: DevicesConfig, parents: Sequence[ParentDevice],
                   problems: list[str]) -> dict[str, ParentAssignment]:
    """Which type applies to each parent; appends a problem for every mismatch with the host."""
    by_address = {p.address: p for p in parents}
    found = ", ".join(by_address) or "none"
    model_types = _variant_model_types(parents)
    assignments: dict[str, ParentAssignment] = {}
    for type_config in devices.types:
        for address in type_config.device_addresses:
            parent = by_address.get(address)
            if parent is None:
                problems.append(
                    f"[{type_config.section}] device_addresses: no mdev parent {address} on "
                    f"this host (found: {found}); fix the address, load the GPU driver or, "
                    "for SR-IOV GPUs, enable the VFs (sriov-manage -e)"
                )
            elif not _offers(parent, type_config.type_id, model_types):
                problems.append(
                    f"[{type_config.section}] device_addresses: {address} does not offer "
                    f"{type_config.type_id} (it offers: {', '.join(parent.type_ids) or 'none'});"
                    f" move {address} to a group of a type it offers"
                )
            else:
                assignments[address] = _assignment(address, type_config)
    for default in devices.default_types:
        offering = [p for p in parents if _offers(p, default.type_id, model_types)]
        if not offering:
            problems.append(
                f"[devices] enabled_mdev_types: no device on this host offers "
                f"{default.type_id} (parents: {found}); enable a type that "
                "`vgpucloud host types` lists"
            )
        for parent in offering:
            assignments.setdefault(parent.address, _assignment(parent.address, default))
    return dict(sorted(assignments.items()))


def _offers(parent: ParentDevice, type_id: str,
            model_types: Mapping[str | None, set[str]]) -> bool:
    if type_id in parent.type_ids or parent.current_type == type_id:
        return True
    # A variant-driver VF lists only the types it can take *now* (none of the others once
    # a VF of its GPU runs a type): fall back on what VFs of the same GPU model list.
    return (parent.kind is ParentKind.NVIDIA_VARIANT
            and type_id in model_types.get(parent.device_id, set()))


def _variant_model_types(parents: Sequence[ParentDevice]) -> dict[str | None, set[str]]:
    """vGPU types listed or run by the variant-driver VFs of each GPU model (device id)."""
    types: dict[str | None, set[str]] = {}
    for parent in parents:
        if parent.kind is ParentKind.NVIDIA_VARIANT:
            known = types.setdefault(parent.device_id, set())
            known.update(parent.type_ids)
            if parent.current_type is not None:
                known.add(parent.current_type)
    return types


def _assignment(address: str, type_config: MdevTypeConfig) -> ParentAssignment:
    return ParentAssignment(address=address, type_id=type_config.type_id,
                            mdev_class=type_config.mdev_class,
                            max_instances=type_config.max_instances)
