"""``SimHost``: build and drive a simulated GPU host under a root directory.

    host = SimHost.create(tmp_path, "t4", gpus=8)
    sysfs = host.sysfs()              # Sysfs(root, kernel=host.kernel)
    mdev = sysfs.create_mdev("0000:18:00.0", "nvidia-222")
    host.hold(mdev.uuid, "instance-1")   # a guest runs with it: remove -> MdevBusy
    host.reboot()                      # every mdev vanishes, VFs vanish until enable_vfs()

A process that only has the root (the all-in-one mode, ``vgpucloud host ...``) gets the same
host back with ``SimHost(root)``; ``kernel_for(root)`` returns the fake kernel when the
root is a simulated host and ``None`` for a real one, for the composition root to pass to
``Sysfs``.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

from vgpucloud.agent.mdev import Sysfs
from vgpucloud.agent.mdev.sysfs import translate_os_error
from vgpucloud.errors import ConfigError
from vgpucloud.sim import tree
from vgpucloud.sim.kernel import STATE_DIR, FakeKernel, is_simulated
from vgpucloud.sim.profiles import GpuProfile, Layout, profile

FIRST_IOMMU_GROUP = 16


def kernel_for(root: str | os.PathLike[str]) -> FakeKernel | None:
    return FakeKernel(root) if is_simulated(root) else None


class SimHost:
    """A simulated host rooted at ``root`` (which must already have been created)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.kernel = FakeKernel(self.root)

    @classmethod
    def create(cls, root: str | os.PathLike[str], profile_key: str, gpus: int | None = None,
               *, numa_nodes: int = 2, enable_vfs: bool = True) -> SimHost:
        """A host with ``gpus`` GPUs of one profile (default: the profile's usual count)."""
        return cls.create_mixed(root, [(profile_key, gpus)], numa_nodes=numa_nodes,
                                enable_vfs=enable_vfs)

    @classmethod
    def create_mixed(cls, root: str | os.PathLike[str],
                     gpus: Sequence[tuple[str, int | None]], *, numa_nodes: int = 2,
                     enable_vfs: bool = True) -> SimHost:
        """A host with several GPU models, e.g. ``[("m60", 2), ("t4", 2)]``."""
        root = Path(root)
        if is_simulated(root):
            raise ConfigError([f"--root {root}: already a simulated host; "
                               "pick an empty directory or delete it first"])
        plan = _plan(gpus, numa_nodes)
        (root / STATE_DIR).mkdir(parents=True, exist_ok=True)
        state = {
            "gpus": {address: {"profile": p.key, "numa_node": numa}
                     for address, p, numa in plan},
            "held": {},
            "next_group": FIRST_IOMMU_GROUP,
        }
        (root / STATE_DIR / "state.json").write_text(json.dumps(state, indent=1))
        host = cls(root)
        host._build(plan)
        if enable_vfs:
            host.enable_vfs()
        return host

    def sysfs(self) -> Sysfs:
        return Sysfs(self.root, kernel=self.kernel)

    @property
    def gpus(self) -> dict[str, str]:
        return self.kernel.gpus()

    def hold(self, device: str, guest: str) -> None:
        self.kernel.hold(device, guest)

    def release(self, device: str) -> None:
        self.kernel.release(device)

    def reboot(self) -> None:
        self.kernel.reboot()

    def enable_vfs(self, pf: str | None = None) -> list[str]:
        """What ``/usr/lib/nvidia/sriov-manage -e <pf>|ALL`` does: all VFs of each SR-IOV
        GPU appear. Returns the PFs enabled now (already-enabled ones are left alone)."""
        enabled = []
        for address, key in self.gpus.items():
            gpu_profile = profile(key)
            if gpu_profile.layout not in (Layout.SRIOV, Layout.VARIANT):
                continue
            if pf is not None and address != pf:
                continue
            numvfs = self.root / "sys" / "bus" / "pci" / "devices" / address / "sriov_numvfs"
            if int(numvfs.read_text()) == 0:
                self._write(numvfs, str(gpu_profile.total_vfs), f"enable the VFs of {address}")
                enabled.append(address)
        return enabled

    def disable_vfs(self, pf: str) -> None:
        numvfs = self.root / "sys" / "bus" / "pci" / "devices" / pf / "sriov_numvfs"
        self._write(numvfs, "0", f"disable the VFs of {pf}")

    def _write(self, path: Path, data: str, what: str) -> None:
        try:
            self.kernel.write(path, data)
        except OSError as exc:
            raise translate_os_error(exc, what) from exc

    def _build(self, plan: list[tuple[str, GpuProfile, int]]) -> None:
        sys = self.root / "sys"
        tree.ensure_skeleton(sys, tree.layout_drivers([p for _, p, _ in plan]))
        group = FIRST_IOMMU_GROUP
        for address, gpu_profile, numa in plan:
            if gpu_profile.layout is Layout.VIRTUAL:
                device = tree.add_virtual_device(sys, address)
            else:
                device = tree.add_pci_device(sys, address, gpu_profile, numa_node=numa,
                                             group=group)
                group += 1
            if gpu_profile.layout in (Layout.PCI, Layout.VIRTUAL):
                tree.add_mdev_types(sys, device, gpu_profile.types)
            else:
                tree.write_attr(device / "sriov_totalvfs", gpu_profile.total_vfs)
                tree.write_attr(device / "sriov_numvfs", 0)
        # Kernel-made groups (VFs, mdevs) are numbered after the GPUs' groups.
        state_path = self.root / STATE_DIR / "state.json"
        state = json.loads(state_path.read_text())
        state["next_group"] = group
        state_path.write_text(json.dumps(state, indent=1))
        self.kernel.refresh_all()


def _plan(gpus: Sequence[tuple[str, int | None]],
          numa_nodes: int) -> list[tuple[str, GpuProfile, int]]:
    """``(address, profile, numa_node)`` for every GPU: profile buses first, then free buses;
    the first half of the GPUs on NUMA node 0, the rest spread over the other nodes."""
    problems: list[str] = []
    chosen: list[tuple[str, GpuProfile]] = []
    used_buses: set[int] = set()
    for key, count in gpus:
        gpu_profile = profile(key)
        count = count if count is not None else max(1, len(gpu_profile.buses))
        if not 1 <= count <= gpu_profile.max_gpus:
            problems.append(f"--gpus {count}: the {key} profile takes 1 to "
                            f"{gpu_profile.max_gpus} GPUs per host")
            continue
        if gpu_profile.layout is Layout.VIRTUAL:
            chosen.append((gpu_profile.driver, gpu_profile))
            continue
        buses = [b for b in gpu_profile.buses if b not in used_buses]
        spare = (b for b in range(0x02, 0x100) if b not in used_buses and b not in buses)
        buses = (buses + list(spare))[:count]
        if len(buses) < count:
            problems.append(f"--gpus {count}: not enough PCI buses left for {key}")
        used_buses.update(buses)
        chosen.extend((f"0000:{bus:02x}:{0x02 if bus == 0 else 0:02x}.0", gpu_profile)
                      for bus in buses)
    if problems:
        raise ConfigError(problems)
    nodes = max(1, numa_nodes)
    return [(address, p, -1 if p.layout is Layout.VIRTUAL else i * nodes // len(chosen))
            for i, (address, p) in enumerate(chosen)]
