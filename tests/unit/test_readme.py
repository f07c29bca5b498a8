"""The README's quick start is a contract with new users: two commands, the second of which
is exactly what CI runs."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def quick_start_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block, "README quick start has no code block"
    return [line for line in block.group(1).splitlines() if line.strip()]


def test_quick_start_is_exactly_two_commands() -> None:
    commands = quick_start_commands()
    assert len(commands) == 2, commands
    assert commands[0].endswith("vgpucloud up")
    assert commands[1].startswith("pip install -e '.[test]'")


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text()
    assert "VGPUCLOUD_REQUIRE_SERVICES=1" in ci
    ci_lines = [line.strip() for line in ci.splitlines()]
    assert quick_start_commands()[1] in ci_lines, ".ci/run must run the README's test command"
