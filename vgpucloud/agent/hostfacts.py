"""What the agent tells about its host: the root provider's capacity and the versions that
later decide whether guests with mdevs can live-migrate here.

A real host is read from ``/proc`` and the file system holding ``state_path``; a simulated
host (``vgpucloud sim create``) reports the seed machine of the nova vGPU docs (48 CPUs,
65442 MB, 49 GB) unless its ``.vgpucloud-sim/state.json`` carries a ``"resources"`` object
with other ``vcpus`` / ``memory_mb`` / ``disk_gb``.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from vgpucloud.agent.provider_tree import HostResources
from vgpucloud.agent.virt import VirtDriver
from vgpucloud.sim import is_simulated
from vgpucloud.sim.kernel import STATE_DIR

SEED_HOST = HostResources(vcpus=48, memory_mb=65442, disk_gb=49)
GIB = 1024 ** 3


def parse_meminfo(text: str) -> int:
    """MemTotal in MiB from ``/proc/meminfo``; ``"MemTotal:       65442304 kB"`` -> 63908."""
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "MemTotal":
            amount, _, unit = value.strip().partition(" ")
            if unit.strip() != "kB" or not amount.isdigit():
                raise ValueError(f"/proc/meminfo MemTotal {value.strip()!r} is not '<n> kB'")
            return int(amount) // 1024
    raise ValueError("/proc/meminfo has no MemTotal line")


def host_resources(sysfs_root: str | os.PathLike[str], state_path: Path) -> HostResources:
    """The root provider's VCPU / MEMORY_MB / DISK_GB for the host at ``sysfs_root``."""
    if is_simulated(sysfs_root):
        return simulated_resources(Path(sysfs_root))
    state_path.mkdir(parents=True, exist_ok=True)
    return HostResources(
        vcpus=os.cpu_count() or 1,
        memory_mb=parse_meminfo(Path("/proc/meminfo").read_text()),
        disk_gb=shutil.disk_usage(state_path).total // GIB,
    )


def simulated_resources(root: Path) -> HostResources:
    state: dict[str, Any] = json.loads((root / STATE_DIR / "state.json").read_text())
    stored = state.get("resources") or {}
    return HostResources(
        vcpus=int(stored.get("vcpus", SEED_HOST.vcpus)),
        memory_mb=int(stored.get("memory_mb", SEED_HOST.memory_mb)),
        disk_gb=int(stored.get("disk_gb", SEED_HOST.disk_gb)),
    )


def registration_facts(driver: VirtDriver, root_provider_uuid: str | None) -> dict[str, Any]:
    """The body of ``PUT /internal/v1/hosts/{name}``."""
    info = driver.host_info()
    return {
        "hypervisor_type": info.hypervisor_type,
        "libvirt_version": str(info.libvirt_version),
        "qemu_version": str(info.qemu_version),
        "kernel_version": str(info.kernel_version),
        "root_provider_uuid": root_provider_uuid,
    }
