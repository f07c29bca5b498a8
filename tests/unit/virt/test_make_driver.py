"""Choosing a guest driver, and what happens when libvirt-python is missing."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from vgpucloud.agent.virt import FakeDriver, make_driver
from vgpucloud.agent.virt.errors import DriverUnavailable
from vgpucloud.errors import ConfigError


def test_fake_driver_keeps_guests_under_the_state_dir(tmp_path: Path) -> None:
    held: list[tuple[str, ...]] = []
    driver = make_driver("fake", tmp_path, "qemu:///system", on_start=held.append)
    assert isinstance(driver, FakeDriver)
    assert (tmp_path / "qemu").is_dir()


def test_unknown_driver_kind_names_the_choices(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'xen' is unknown; use one of fake, libvirt"):
        make_driver("xen", tmp_path, "xen:///system")


def test_missing_libvirt_python_says_how_to_install_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "libvirt", None)  # makes `import libvirt` fail
    with pytest.raises(DriverUnavailable) as caught:
        make_driver("libvirt", tmp_path, "qemu:///system")
    assert "pip install 'vgpucloud[libvirt]'" in caught.value.message
    assert "libvirt-dev pkg-config" in caught.value.message
