"""Drive ``vgpucloud up`` as a user does: a real process, read until it says it is ready."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

ADMIN = {"X-Auth-Token": "admin", "OpenStack-API-Version": "placement 1.39"}
READY = re.compile(r"ready in [\d.]+ s — API at (http://127\.0\.0\.1:\d+)/")


class UpProcess:
    def __init__(self, state_dir: Path, *extra: str) -> None:
        self.state_dir = state_dir
        self.clouds_yaml = state_dir / "clouds.yaml"
        self.output: list[str] = []
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "vgpucloud.cli.main",
                "up",
                "--state-dir",
                str(state_dir),
                "--port",
                "0",
                "--report-interval",
                "0.3",
                *extra,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        self.url = self._wait_ready()

    def _wait_ready(self, timeout: float = 60.0) -> str:
        deadline = time.monotonic() + timeout
        assert self.process.stdout is not None
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            if not line and self.process.poll() is not None:
                break
            self.output.append(line)
            match = READY.search(line)
            if match:
                return match.group(1)
        self.process.kill()
        pytest.fail("vgpucloud up never got ready:\n" + "".join(self.output))

    def read_banner(self, timeout: float = 10.0) -> None:
        """Read the rest of the ready banner (it ends with an empty line after the commands)."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            line = self.process.stdout.readline()
            self.output.append(line)
            if not line or (line == "\n" and any(o.strip().startswith("openstack ")
                                                 for o in self.output)):
                return

    def placement(self, path: str) -> dict:
        response = httpx.get(f"{self.url}/placement{path}", headers=ADMIN, timeout=10)
        response.raise_for_status()
        return response.json()

    def put(self, path: str, body: dict) -> dict:
        response = httpx.put(f"{self.url}/placement{path}", headers=ADMIN, json=body, timeout=10)
        response.raise_for_status()
        return response.json()

    def interrupt(self) -> tuple[int, str]:
        self.process.send_signal(signal.SIGINT)
        out, _ = self.process.communicate(timeout=30)
        return self.process.returncode, "".join(self.output) + out
