"""DESIGN §3's import directions, checked on every module's imports (including the ones
inside functions): a layering mistake fails here instead of in review."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "vgpucloud"

# package -> the vgpucloud packages it may import (besides itself)
ALLOWED: dict[str, set[str]] = {
    "placement": {"errors"},
    "compute": {"errors"},
    "agent.mdev": {"errors"},
    "agent.virt": {"errors"},
    "storage": {"errors", "placement", "compute"},
    "client": {"errors"},
    "scheduler": {"errors", "client", "compute", "placement", "conf"},
    "sim": {"errors", "agent.mdev"},
}
# package -> packages it must never import
FORBIDDEN: dict[str, set[str]] = {
    "agent": {"storage", "api", "scheduler", "conductor"},  # agents hold no DB credentials
    "conductor": {"api", "agent"},  # Placement through client; hosts through tasks
}
# api handlers reach storage only through the ports the app factory is given; the modules
# that build the app (composition roots) are the exceptions.
API_COMPOSITION_ROOTS = {"api/wsgi.py"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
        elif isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
    return {n.removeprefix("vgpucloud.") for n in names if n.startswith("vgpucloud.")}


def _layer(module: str) -> str:
    parts = module.split(".")
    return ".".join(parts[:2]) if parts[:2] in (["agent", "mdev"], ["agent", "virt"]) else (
        parts[0])


def _modules() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_import_directions(path: Path) -> None:
    relative = path.relative_to(PACKAGE).as_posix()
    own = _layer(relative.removesuffix(".py").replace("/", "."))
    imported = {_layer(m) for m in _imports(path)} - {own}
    assert "cli" not in imported or own == "cli", f"{relative} imports cli: nothing may"
    if own in ALLOWED:
        extra = {m for m in imported if m not in ALLOWED[own]}
        assert not extra, f"{relative} ({own}) may not import {sorted(extra)}"
    forbidden = imported & FORBIDDEN.get(own, set())
    assert not forbidden, f"{relative} ({own}) must not import {sorted(forbidden)}"
    if own == "api" and relative not in API_COMPOSITION_ROOTS:
        assert "storage" not in imported, f"{relative}: api reaches storage only via ports"
