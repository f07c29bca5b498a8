"""The e2e harness: a real ``vgpucloud api`` process and the real ``openstack`` CLI.

Nothing here imports vgpucloud: the server is driven as an operator drives it (``vgpucloud db
sync`` then ``vgpucloud api``) and spoken to only by the ``openstack`` CLI with osc-placement,
so these tests prove wire compatibility, not internal behaviour.

The CLI authenticates with keystoneauth's ``admin_token`` plugin. That plugin answers every
endpoint lookup with its own ``endpoint``, so osc-placement (which asks the session for
``service_type=placement``) reaches our ``/placement`` without a Keystone catalog.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CLOUD_NAME = "vgpucloud-e2e"
ADMIN_TOKEN = "admin"  # noauth2: the token "admin" is the cloud administrator
SERVER_START_SECONDS = 30.0
CLI_TIMEOUT_SECONDS = 60.0
LOG_TAIL_LINES = 40


def free_loopback_port() -> int:
    """A TCP port that nothing listens on right now (the kernel picks it)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def vgpucloud_command() -> list[str]:
    """How to run ``vgpucloud``: the console script of this interpreter, else the module."""
    script = Path(sys.executable).with_name("vgpucloud")
    if script.exists():
        return [str(script)]
    found = shutil.which("vgpucloud")
    if found:
        return [found]
    return [sys.executable, "-m", "vgpucloud.cli.main"]


def tail(path: Path, lines: int = LOG_TAIL_LINES) -> str:
    if not path.exists():
        return "(no output)"
    text = path.read_text(errors="replace").splitlines()
    return "\n".join(text[-lines:]) or "(no output)"


@dataclass
class PlacementServer:
    """One ``vgpucloud api`` process on a loopback port, with its stderr kept in a file."""

    workdir: Path
    port: int = field(default_factory=free_loopback_port)
    process: subprocess.Popen[bytes] | None = None

    @property
    def database_url(self) -> str:
        return f"sqlite:///{self.workdir / 'vgpucloud.sqlite'}"

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}/placement"

    @property
    def log_path(self) -> Path:
        return self.workdir / "api.stderr.log"

    def log_tail(self) -> str:
        return tail(self.log_path)

    def sync_database(self) -> None:
        cmd = [*vgpucloud_command(), "db", "sync", "--database-url", self.database_url]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False)
        if done.returncode != 0:
            raise RuntimeError(
                f"`{' '.join(cmd)}` exited {done.returncode}\n"
                f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
            )

    def start(self) -> None:
        cmd = [
            *vgpucloud_command(), "api",
            "--bind", f"127.0.0.1:{self.port}",
            "--database-url", self.database_url,
        ]  # fmt: skip
        with self.log_path.open("wb") as log:
            self.process = subprocess.Popen(
                cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL
            )
        self._wait_until_answering(cmd)

    def _wait_until_answering(self, cmd: Sequence[str]) -> None:
        """Poll ``GET /placement/`` until it answers 200, the process dies, or time runs out."""
        assert self.process is not None
        deadline = time.monotonic() + SERVER_START_SECONDS
        last_error = "no attempt yet"
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"`{' '.join(cmd)}` exited {self.process.returncode} before answering "
                    f"GET {self.endpoint}/\nits output:\n{self.log_tail()}"
                )
            try:
                probe = urllib.request.Request(
                    f"{self.endpoint}/", headers={"X-Auth-Token": ADMIN_TOKEN}
                )
                with urllib.request.urlopen(probe, timeout=2) as resp:
                    if resp.status == 200:
                        return
                    last_error = f"HTTP {resp.status}"
            except (urllib.error.URLError, OSError) as exc:
                last_error = str(exc)
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(
            f"`{' '.join(cmd)}` did not answer GET {self.endpoint}/ with 200 within "
            f"{SERVER_START_SECONDS:.0f}s (last error: {last_error})\n"
            f"its output:\n{self.log_tail()}"
        )

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)


def write_clouds_yaml(path: Path, endpoint: str) -> Path:
    """The minimal clouds.yaml that points osc-placement at ``endpoint``.

    JSON is valid YAML, so no YAML library is needed to write it.
    """
    clouds = {
        "clouds": {
            CLOUD_NAME: {
                "auth_type": "admin_token",
                "auth": {"endpoint": endpoint, "token": ADMIN_TOKEN},
            }
        }
    }
    path.write_text(json.dumps(clouds, indent=2))
    return path


@dataclass(frozen=True)
class CliFailure:
    """What a refused ``openstack`` command left behind."""

    returncode: int
    stderr: str


class OpenStackCli:
    """Runs the real ``openstack`` executable against one cloud from a clouds.yaml."""

    def __init__(self, executable: str, clouds_yaml: Path, server: PlacementServer) -> None:
        self.executable = executable
        self.server = server
        # Drop the caller's OS_* settings so that only our clouds.yaml decides.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("OS_")}
        self.env.update(OS_CLIENT_CONFIG_FILE=str(clouds_yaml), OS_CLOUD=CLOUD_NAME)

    def __call__(self, *args: str, version: str | None = None) -> Any:
        """Run ``openstack [--os-placement-api-version V] ARGS -f json``; the parsed output."""
        out = self.run(*args, "-f", "json", version=version)
        try:
            return json.loads(out)
        except json.JSONDecodeError as exc:
            raise AssertionError(f"`{self._show(args, version)}` printed non-JSON:\n{out}") from exc

    def run(self, *args: str, version: str | None = None) -> str:
        """Run a command that must succeed (e.g. one without output); its stdout."""
        done = self._execute(args, version)
        if done.returncode != 0:
            raise AssertionError(self._report(args, version, done, "failed"))
        return done.stdout

    def fails(self, *args: str, version: str | None = None) -> CliFailure:
        """Run a command that the server must refuse; its exit code and stderr."""
        done = self._execute(args, version)
        if done.returncode == 0:
            raise AssertionError(self._report(args, version, done, "succeeded but must fail"))
        return CliFailure(done.returncode, done.stderr)

    def each(self, *commands: Sequence[str], version: str | None = None) -> list[Any]:
        """Run independent JSON commands side by side (CLI start-up dominates each call)."""
        workers = max(2, os.cpu_count() or 2)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            futures = [pool.submit(self, *cmd, version=version) for cmd in commands]
            return [f.result() for f in futures]

    def _execute(
        self, args: Sequence[str], version: str | None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self._argv(args, version),
            capture_output=True,
            text=True,
            env=self.env,
            timeout=CLI_TIMEOUT_SECONDS,
            check=False,
        )

    def _argv(self, args: Sequence[str], version: str | None) -> list[str]:
        pinned = ["--os-placement-api-version", version] if version else []
        return [self.executable, *pinned, *args]

    def _show(self, args: Sequence[str], version: str | None) -> str:
        return " ".join(["openstack", *self._argv(args, version)[1:]])

    def _report(
        self,
        args: Sequence[str],
        version: str | None,
        done: subprocess.CompletedProcess[str],
        verdict: str,
    ) -> str:
        return (
            f"`{self._show(args, version)}` {verdict} (exit {done.returncode})\n"
            f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}\n"
            f"vgpucloud api output (last {LOG_TAIL_LINES} lines):\n{self.server.log_tail()}"
        )
