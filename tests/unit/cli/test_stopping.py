"""The agent's and conductor's loops end on SIGTERM and on Ctrl-C."""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator

import pytest

from vgpucloud.cli.stopping import run_until_stopped


@pytest.fixture(autouse=True)
def _restore_sigterm() -> Iterator[None]:
    previous = signal.getsignal(signal.SIGTERM)
    yield
    signal.signal(signal.SIGTERM, previous)


def test_sigterm_from_the_service_manager_sets_stop() -> None:
    seen: list[bool] = []

    def loop(stop: threading.Event) -> None:
        os.kill(os.getpid(), signal.SIGTERM)  # the handler runs before kill returns here
        seen.append(stop.wait(timeout=5))

    run_until_stopped(loop)
    assert seen == [True]


def test_ctrl_c_mid_step_sets_stop_and_returns() -> None:
    stops: list[threading.Event] = []

    def loop(stop: threading.Event) -> None:
        stops.append(stop)
        raise KeyboardInterrupt

    run_until_stopped(loop)
    assert stops[0].is_set()
