"""How the long-running commands (agent, conductor) stop: SIGTERM or Ctrl-C sets ``stop``."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from types import FrameType


def run_until_stopped(run_forever: Callable[[threading.Event], object]) -> None:
    """``run_forever(stop)`` until SIGTERM (systemd, Kubernetes) or Ctrl-C sets ``stop``.

    A leased task in hand keeps its lease when Ctrl-C interrupts it; when the lease
    expires another worker resumes it, so nothing here waits for it.
    """
    stop = threading.Event()

    def on_signal(signum: int, frame: FrameType | None) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    try:
        run_forever(stop)
    except KeyboardInterrupt:
        stop.set()
