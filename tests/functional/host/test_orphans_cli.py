"""``vgpucloud host orphans``: the MOSK blog's type-change workaround, made safe."""

from __future__ import annotations

from pathlib import Path

import pytest

from vgpucloud.agent.ledger import Ledger
from vgpucloud.agent.virt.domain import GuestMdev, GuestSpec
from vgpucloud.agent.virt.fake import FakeDriver
from vgpucloud.cli.main import main
from vgpucloud.errors import NoInstancesLeft
from vgpucloud.sim.host import SimHost

GPU = "0000:18:00.0"


def test_type_change_blocked_by_orphans_until_they_are_removed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Old type nvidia-222 on a T4: one mdev in a guest, one free of ours, one left by
    somebody else. The new type cannot be created until the unused ones are gone."""
    host = SimHost.create(tmp_path / "root", "t4", gpus=1)
    sysfs = host.sysfs()
    state = tmp_path / "state"
    conf = tmp_path / "nova.conf"
    conf.write_text(f"[DEFAULT]\nhost = h1\nstate_path = {state}\n"
                    "[devices]\nenabled_mdev_types = nvidia-222\n")
    ledger = Ledger.in_state_dir(state)
    in_guest = ledger.reserve("inst-1", GPU, "nvidia-222")[0]
    sysfs.create_mdev(GPU, "nvidia-222", uuid=in_guest.uuid)
    ledger.mark_created(in_guest.uuid)
    ledger.attach(in_guest.uuid, "inst-1")
    ours = ledger.reserve("inst-2", GPU, "nvidia-222")[0]
    sysfs.create_mdev(GPU, "nvidia-222", uuid=ours.uuid)
    ledger.mark_created(ours.uuid)
    ledger.release("inst-2")
    foreign = sysfs.create_mdev(GPU, "nvidia-222")
    ledger.close()
    guests = FakeDriver(state / "guests")
    guests.define(GuestSpec(uuid="5294f726-33d5-472a-bef1-9e19bb41626d", name="vgpu1", vcpus=1,
                            memory_mb=512, disk_path="/dev/null",
                            mdevs=(GuestMdev(in_guest.uuid, "vfio-pci"),)))
    guests.close()
    base = ["host", "orphans", "--config-file", str(conf), "--sysfs-root",
            str(tmp_path / "root"), "--virt", "fake"]

    assert main(base) == 0
    listed = capsys.readouterr().out
    assert f"{ours.uuid}  nvidia-222  ours" in listed
    assert f"{foreign.uuid}  nvidia-222  foreign" in listed
    assert in_guest.uuid not in listed

    assert main([*base, "--remove"]) == 0
    out = capsys.readouterr().out
    assert f"removed {ours.uuid}" in out
    assert f"kept {foreign.uuid}: not created by vgpucloud" in out
    assert {m.uuid for m in sysfs.mdevs()} == {in_guest.uuid, foreign.uuid}

    assert main([*base, "--remove", "--include-foreign"]) == 0
    assert f"removed {foreign.uuid}" in capsys.readouterr().out
    assert {m.uuid for m in sysfs.mdevs()} == {in_guest.uuid}
    with pytest.raises(NoInstancesLeft):  # the guest's mdev still pins the old type
        sysfs.create_mdev(GPU, "nvidia-223")
