"""One vgpucloud.conf read by the API's and the conductor's settings loaders alike."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from vgpucloud.conductor.settings import load_conductor_settings
from vgpucloud.conf import load_settings
from vgpucloud.errors import ConfigError

SHARED = """
[database]
connection = postgresql+psycopg://vgpucloud@db.example/vgpucloud

[scheduler]
vgpu_policy = pack

[conductor]
lease_seconds = 900
"""


def test_api_and_conductor_read_their_groups_from_one_file(tmp_path: Path) -> None:
    path = tmp_path / "vgpucloud.conf"
    path.write_text(SHARED)
    settings = load_settings(str(path))
    conductor = load_conductor_settings(str(path))
    assert settings.database_url == "postgresql+psycopg://vgpucloud@db.example/vgpucloud"
    assert (conductor.scheduler.vgpu_policy, conductor.lease_seconds) == ("pack", 900)


@pytest.mark.parametrize("load", [load_settings, load_conductor_settings],
                         ids=["api", "conductor"])
def test_missing_file_names_the_flag_and_the_fix(
        tmp_path: Path, load: Callable[[str], object]) -> None:
    missing = tmp_path / "nope.conf"
    with pytest.raises(ConfigError) as caught:
        load(str(missing))
    assert f"--config-file {missing}: no such file; pass an existing file or omit the flag" \
        in str(caught.value)


def test_conductor_value_out_of_range_names_the_groups(tmp_path: Path) -> None:
    path = tmp_path / "vgpucloud.conf"
    path.write_text("[conductor]\nlease_seconds = 3\n")
    with pytest.raises(ConfigError) as caught:
        load_conductor_settings(str(path))
    assert "lease_seconds" in str(caught.value)
    assert "fix the value in [scheduler] or [conductor]" in str(caught.value)
