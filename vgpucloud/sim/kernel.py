"""A fake kernel and vendor driver acting on a simulated sysfs tree.

``FakeKernel(root)`` implements ``vgpucloud.agent.mdev.Kernel``: ``Sysfs`` hands it every
write it would make to a real attribute file, and the fake kernel applies what the kernel
and the driver would do, or fails with the errno they use:

- ``mdev_supported_types/<type>/create``: a new mdev (device dir, ``mdev_type`` link,
  ``/sys/bus/mdev/devices`` entry, its own IOMMU group); ``EEXIST`` for a used UUID,
  ``EUSERS`` when ``available_instances`` is 0 (what the mdev core returns);
- ``<mdev>/remove``: ``EBUSY`` while a guest holds the mdev (``hold``/``release``);
- ``sriov_numvfs`` (what ``sriov-manage -e`` writes): VFs appear or vanish; ``EBUSY`` when
  changing a non-zero count or disabling VFs in use;
- ``nvidia/current_vgpu_type`` (kernel variant driver): sets or clears a VF's vGPU type.

After each change it recomputes ``available_instances`` the way the driver does: NVIDIA runs
one type per GPU while any mdev of that type exists (other types drop to 0 — the cause of the
NoValidHost after a type change in the seeds), an SR-IOV VF takes one instance, GVT-g and
mtty types share a pool and mix. All state lives in the tree plus ``.vgpucloud-sim/state.json``
(the GPU inventory and which guest holds what), and every operation holds an exclusive
``flock``, so several processes can drive one simulated host as they would a real one.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from vgpucloud.agent.mdev import names
from vgpucloud.errors import MdevNotFound, ParentGone
from vgpucloud.sim import tree
from vgpucloud.sim.profiles import GpuProfile, Layout, Rule, profile

STATE_DIR = ".vgpucloud-sim"
CREATABLE_HEADER = "ID    : vGPU Name"


def is_simulated(root: str | os.PathLike[str]) -> bool:
    return (Path(root) / STATE_DIR / "state.json").is_file()


class FakeKernel:
    """The kernel of a simulated host rooted at ``root`` (see the module docstring)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.sys = self.root / "sys"
        self._state_dir = self.root / STATE_DIR
        if not (self._state_dir / "state.json").is_file():
            raise ParentGone(f"{self.root} is not a simulated host (no {STATE_DIR}/state.json); "
                             "build one with `vgpucloud sim create`")

    # --- the Kernel protocol ----------------------------------------------------

    def write(self, path: Path, data: str) -> None:
        with self._locked() as state:
            self._dispatch(state, Path(path), data.strip())

    # --- what tests and the fake virt driver use --------------------------------

    def hold(self, device: str, guest: str) -> None:
        """A guest opens the mdev (by UUID) or variant VF (by address): remove gets EBUSY."""
        with self._locked() as state:
            if not self._exists(device):
                raise MdevNotFound(f"{device} does not exist on the simulated host {self.root}; "
                                   "create it before a guest can hold it")
            state["held"][device] = guest

    def release(self, device: str) -> None:
        with self._locked() as state:
            state["held"].pop(device, None)

    def holder(self, device: str) -> str | None:
        held: dict[str, str] = self._load()["held"]
        return held.get(device)

    def reboot(self) -> None:
        """Power cycle: every mdev vanishes, VFs vanish until re-enabled, guests are gone."""
        with self._locked() as state:
            state["held"].clear()
            for gpu, spec in state["gpus"].items():
                gpu_profile = profile(spec["profile"])
                for member in self._members(gpu, gpu_profile):
                    for mdev in tree.mdev_dirs(member):
                        tree.remove_mdev(self.sys, mdev)
                if gpu_profile.layout in (Layout.SRIOV, Layout.VARIANT):
                    pf = self._device_dir(gpu, gpu_profile)
                    self._set_numvfs(state, pf, 0, power_cycle=True)
                self._refresh(gpu, gpu_profile)

    def refresh_all(self) -> None:
        with self._locked() as state:
            for gpu, spec in state["gpus"].items():
                self._refresh(gpu, profile(spec["profile"]))

    def gpus(self) -> dict[str, str]:
        """GPU address (or virtual device name) -> profile key."""
        return {gpu: spec["profile"] for gpu, spec in self._load()["gpus"].items()}

    def allocate_group(self, state: dict[str, Any]) -> int:
        number = int(state["next_group"])
        state["next_group"] = number + 1
        return number

    # --- state ------------------------------------------------------------------

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, Any]]:
        with open(self._state_dir / "lock", "a+") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            try:
                state = self._load()
                yield state
                tmp = self._state_dir / "state.json.tmp"
                tmp.write_text(json.dumps(state, indent=1, sort_keys=True))
                os.replace(tmp, self._state_dir / "state.json")
            finally:
                fcntl.flock(lock, fcntl.LOCK_UN)

    def _load(self) -> dict[str, Any]:
        loaded: dict[str, Any] = json.loads((self._state_dir / "state.json").read_text())
        return loaded

    # --- the writes ---------------------------------------------------------------

    def _dispatch(self, state: dict[str, Any], path: Path, data: str) -> None:
        if path.name == "create" and path.parent.parent.name == "mdev_supported_types":
            device = path.parent.parent.parent.resolve()
            self._create(state, device, path.parent.name, data)
        elif path.name == "remove":
            mdev = path.parent.resolve()
            device = mdev.parent
            self._remove(state, mdev)
        elif path.name == "sriov_numvfs":
            device = path.parent.resolve()
            self._set_numvfs(state, device, _int(data))
        elif path.name == "current_vgpu_type" and path.parent.name == "nvidia":
            device = path.parent.parent.resolve()
            self._set_vgpu_type(state, device, _int(data))
        else:
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        gpu = self._gpu_of(device)
        spec = state["gpus"].get(gpu)
        if spec is not None:
            self._refresh(gpu, profile(spec["profile"]))

    def _create(self, state: dict[str, Any], parent: Path, type_id: str, uuid: str) -> None:
        if not names.UUID_RE.match(uuid):
            raise OSError(errno.EINVAL, "Invalid argument")
        if (self.sys / "bus" / "mdev" / "devices" / uuid).exists():
            raise FileExistsError(errno.EEXIST, "File exists")
        available = parent / "mdev_supported_types" / type_id / "available_instances"
        if not available.is_file():
            raise FileNotFoundError(errno.ENOENT, "No such file or directory")
        if int(available.read_text()) <= 0:
            raise OSError(errno.EUSERS, "Too many users")
        tree.add_mdev(self.sys, parent, type_id, uuid, self.allocate_group(state))

    def _remove(self, state: dict[str, Any], mdev: Path) -> None:
        if not mdev.is_dir():
            raise FileNotFoundError(errno.ENODEV, "No such device")
        if mdev.name in state["held"]:
            raise OSError(errno.EBUSY, "Device or resource busy")
        tree.remove_mdev(self.sys, mdev)

    def _set_numvfs(self, state: dict[str, Any], pf: Path, count: int,
                    *, power_cycle: bool = False) -> None:
        spec = state["gpus"].get(pf.name)
        if spec is None:
            raise PermissionError(errno.EACCES, "Permission denied")
        gpu_profile = profile(spec["profile"])
        vfs = self._members(pf.name, gpu_profile)
        if count < 0 or count > gpu_profile.total_vfs:
            raise OSError(errno.ERANGE, "Numerical result out of range")
        if vfs and count and not power_cycle:
            raise OSError(errno.EBUSY, "Device or resource busy")
        if not count and not power_cycle and any(self._in_use(vf, state) for vf in vfs):
            raise OSError(errno.EBUSY, "Device or resource busy")
        for vf in vfs:
            (pf / f"virtfn{vfs.index(vf)}").unlink(missing_ok=True)
            tree.remove_pci_device(self.sys, vf)
        for index in range(count):
            self._add_vf(state, pf, index, gpu_profile, int(spec["numa_node"]))
        tree.write_attr(pf / "sriov_numvfs", count)

    def _add_vf(self, state: dict[str, Any], pf: Path, index: int, gpu_profile: GpuProfile,
                numa_node: int) -> None:
        address = tree.vf_address(pf.name, index)
        vf = tree.add_pci_device(self.sys, address, gpu_profile, numa_node=numa_node,
                                 group=self.allocate_group(state), parent_dir=pf.parent)
        tree.link(vf / "physfn", pf)
        tree.link(pf / f"virtfn{index}", vf)
        if gpu_profile.layout is Layout.SRIOV:
            tree.add_mdev_types(self.sys, vf, gpu_profile.types)
        else:
            (vf / "nvidia").mkdir()
            tree.write_attr(vf / "nvidia" / "current_vgpu_type", 0)
            tree.write_attr(vf / "nvidia" / "creatable_vgpu_types", CREATABLE_HEADER)

    def _set_vgpu_type(self, state: dict[str, Any], vf: Path, number: int) -> None:
        current = vf / "nvidia" / "current_vgpu_type"
        if number == 0:
            if vf.name in state["held"]:
                raise OSError(errno.EBUSY, "Device or resource busy")
            tree.write_attr(current, 0)
            return
        if int(current.read_text()) != 0:
            raise OSError(errno.EBUSY, "Device or resource busy")
        creatable = (vf / "nvidia" / "creatable_vgpu_types").read_text()
        if not any(line.split(":")[0].strip() == str(number) for line in creatable.splitlines()):
            raise OSError(errno.EINVAL, "Invalid argument")
        tree.write_attr(current, number)

    # --- the driver's accounting --------------------------------------------------

    def _refresh(self, gpu: str, gpu_profile: GpuProfile) -> None:
        members = self._members(gpu, gpu_profile)
        per_member = {m: self._member_types(m, gpu_profile) for m in members}
        used = Counter(t for types in per_member.values() for t in types)
        for member, own in per_member.items():
            available = _availability(gpu_profile, used, own_count=len(own))
            if gpu_profile.layout is Layout.VARIANT:
                lines = [CREATABLE_HEADER] + [
                    f"{t.id.split('-')[1]:<6}: {t.name}" for t in gpu_profile.types
                    if available[t.id] > 0
                ]
                tree.write_attr(member / "nvidia" / "creatable_vgpu_types", "\n".join(lines))
                continue
            for spec in gpu_profile.types:
                path = member / "mdev_supported_types" / spec.id / "available_instances"
                tree.write_attr(path, available[spec.id])

    def _member_types(self, member: Path, gpu_profile: GpuProfile) -> list[str]:
        if gpu_profile.layout is Layout.VARIANT:
            number = int((member / "nvidia" / "current_vgpu_type").read_text())
            return [f"nvidia-{number}"] if number else []
        return [Path(os.readlink(m / "mdev_type")).name for m in tree.mdev_dirs(member)]

    def _in_use(self, member: Path, state: dict[str, Any]) -> bool:
        if member.name in state["held"] or tree.mdev_dirs(member):
            return True
        current = member / "nvidia" / "current_vgpu_type"
        return current.is_file() and int(current.read_text()) != 0

    def _members(self, gpu: str, gpu_profile: GpuProfile) -> list[Path]:
        """The parents a GPU exposes: itself, or its VFs (in VF order) under SR-IOV."""
        device = self._device_dir(gpu, gpu_profile)
        if gpu_profile.layout not in (Layout.SRIOV, Layout.VARIANT):
            return [device]
        links = sorted((p for p in device.glob("virtfn*")), key=lambda p: int(p.name[6:]))
        return [p.resolve() for p in links]

    def _device_dir(self, gpu: str, gpu_profile: GpuProfile) -> Path:
        if gpu_profile.layout is Layout.VIRTUAL:
            return self.sys / "devices" / "virtual" / gpu / gpu
        return (self.sys / "bus" / "pci" / "devices" / gpu).resolve()

    def _gpu_of(self, device: Path) -> str:
        physfn = device / "physfn"
        return physfn.resolve().name if physfn.is_symlink() else device.name

    def _exists(self, device: str) -> bool:
        if (self.sys / "bus" / "mdev" / "devices" / device).exists():
            return True
        current = self.sys / "bus" / "pci" / "devices" / device / "nvidia" / "current_vgpu_type"
        return current.is_file() and int(current.read_text()) != 0


def _availability(gpu_profile: GpuProfile, used: Counter[str], own_count: int) -> dict[str, int]:
    """``available_instances`` per type on one parent of a GPU whose mdevs are ``used``."""
    if gpu_profile.rule is Rule.POOL:
        capacity = dict(gpu_profile.pool)
        remaining = {
            r: cap - sum(dict(t.cost).get(r, 0) * used[t.id] for t in gpu_profile.types)
            for r, cap in capacity.items()
        }
        return {t.id: min(remaining[r] // c for r, c in t.cost) for t in gpu_profile.types}
    in_use = set(used)
    available = {
        t.id: 0 if in_use - {t.id} else t.max_instances - used[t.id] for t in gpu_profile.types
    }
    if gpu_profile.layout in (Layout.SRIOV, Layout.VARIANT):
        # A VF carries at most one vGPU.
        return {k: 1 if v > 0 and own_count == 0 else 0 for k, v in available.items()}
    return available


def _int(data: str) -> int:
    try:
        return int(data, 0)
    except ValueError:
        raise OSError(errno.EINVAL, "Invalid argument") from None
