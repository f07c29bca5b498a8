"""Capacity of variant-driver VFs, as pure functions of what sysfs shows and the ledger."""

from __future__ import annotations

import pytest

from vgpucloud.agent.config import ParentAssignment
from vgpucloud.agent.ledger import LedgerEntry
from vgpucloud.agent.mdev import MdevType, ParentDevice, ParentKind
from vgpucloud.agent.provider_tree import vgpu_total
from vgpucloud.agent.variant import foreign_vfs

PF = "0000:41:00.0"
A40_1Q = ParentAssignment("0000:41:00.4", "nvidia-557", "VGPU", None)


def vf(address: str = "0000:41:00.4", creatable: tuple[str, ...] = ("nvidia-557", "nvidia-558"),
       current: str | None = None) -> ParentDevice:
    types = tuple(MdevType(t, None, "", (), 0 if current else 1, "vfio-pci") for t in creatable)
    return ParentDevice(address, ParentKind.NVIDIA_VARIANT, types, vendor_id="0x10de",
                        device_id="0x2235", physfn=PF, current_type=current)


def claim(parent: str, type_id: str) -> LedgerEntry:
    return LedgerEntry("c2177883-f1bb-47f0-914d-32a22e3a8804", parent, type_id, "attached",
                       "6c1a5b3e-6b1f-4f0b-9a51-2f8d5f7e0c11", None, True, False, "t", "t")


@pytest.mark.parametrize(("device", "gpu_types", "total"), [
    (vf(), (), 1),                                            # unset, creatable: one vGPU
    (vf(), ("nvidia-557",), 1),                               # a sibling runs the same type
    (vf(), ("nvidia-558",), 0),                               # a sibling runs another type
    (vf(creatable=("nvidia-558",)), (), 0),                   # the type is not creatable here
    (vf(creatable=(), current="nvidia-557"), ("nvidia-557",), 1),  # ours, as the sim lists it
    # A driver that keeps listing creatable types on a typed VF: still exactly one vGPU.
    (vf(current="nvidia-557"), ("nvidia-557",), 1),
    (vf(current="nvidia-558"), ("nvidia-558",), 0),
], ids=["unset", "same-type-sibling", "other-type-sibling", "not-creatable", "typed-empty-list",
        "typed-full-list", "typed-other"])
def test_a40_vf_capacity(device: ParentDevice, gpu_types: tuple[str, ...], total: int) -> None:
    assert vgpu_total(A40_1Q, device, (), gpu_types=gpu_types) == total


def test_vf_typed_without_a_claim_of_ours_is_foreign() -> None:
    parents = [vf("0000:41:00.4", current="nvidia-557"), vf("0000:41:00.5", current="nvidia-557"),
               vf("0000:41:00.6")]
    assert foreign_vfs(parents, [claim("0000:41:00.4", "nvidia-557")]) == {"0000:41:00.5"}
    # A claim of another type does not make the VF's current type ours.
    assert foreign_vfs(parents[:1], [claim("0000:41:00.4", "nvidia-558")]) == {"0000:41:00.4"}
