"""Pure pieces of the agent: /proc parsing, task payloads, task dispatch."""

from __future__ import annotations

from typing import Any

import pytest

from vgpucloud.agent.hostfacts import parse_meminfo
from vgpucloud.agent.spawn import SpawnError, SpawnRequest
from vgpucloud.agent.tasks import RETRY, TaskRunner
from vgpucloud.client.internal import InternalClient
from vgpucloud.client.placement import PlacementError
from vgpucloud.errors import MdevBusy

MEMINFO = """MemTotal:       65442304 kB
MemFree:        12345678 kB
"""


def test_meminfo_total_in_mib() -> None:
    assert parse_meminfo(MEMINFO) == 63908


@pytest.mark.parametrize("text", ["MemFree: 1 kB\n", "MemTotal: 12 MB\n", ""])
def test_meminfo_without_a_kb_total_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="MemTotal"):
        parse_meminfo(text)


def test_spawn_payload_defaults_the_name_from_the_instance() -> None:
    request = SpawnRequest.from_payload({"instance_uuid": "c2177883-f1bb-47f0-914d-32a22e3a8804",
                                         "vcpus": "4"})
    assert request.name == "instance-c2177883-f1bb-47f0-914d-32a22e3a8804"
    assert (request.vcpus, request.memory_mb) == (4, 512)


def test_spawn_payload_without_instance_is_a_named_error() -> None:
    with pytest.raises(SpawnError, match="instance_uuid"):
        SpawnRequest.from_payload({"vcpus": 1})


def _runner(**handlers: Any) -> TaskRunner:
    return TaskRunner(InternalClient("http://unused"), "host-1:abc", handlers)


def test_unknown_kind_fails_with_the_kinds_this_agent_runs() -> None:
    outcome = _runner(spawn=lambda p: {}).execute({"uuid": "t1", "kind": "resize"})
    assert outcome.state == "failed" and "'resize'" in (outcome.fault or "")
    assert "spawn" in (outcome.fault or "")


def test_handler_error_message_becomes_the_fault() -> None:
    def busy(payload: Any) -> dict[str, Any]:
        raise MdevBusy("mdev 1234 is held by guest instance-1; stop it first")

    outcome = _runner(destroy=busy).execute({"uuid": "t2", "kind": "destroy", "payload": {}})
    assert (outcome.state, outcome.fault) == (
        "failed", "mdev 1234 is held by guest instance-1; stop it first")


def test_handler_result_is_the_done_result() -> None:
    outcome = _runner(spawn=lambda p: {"got": dict(p)}).execute(
        {"uuid": "t3", "kind": "spawn", "payload": {"instance_uuid": "i"}})
    assert (outcome.state, outcome.result) == ("done", {"got": {"instance_uuid": "i"}})


def test_placement_outage_postpones_the_task_instead_of_failing_it() -> None:
    def unreachable(payload: Any) -> dict[str, Any]:
        raise PlacementError("cannot reach Placement at http://api/placement")

    outcome = _runner(spawn=unreachable).execute({"uuid": "t4", "kind": "spawn"})
    assert outcome.state == RETRY
