"""Host tasks are named after what they are for: resuming a workflow finds its task, a new
user request gets a new one (a second DELETE after a failed destroy must retry)."""

from __future__ import annotations

import uuid as uuidlib

from sqlalchemy import Engine

from vgpucloud.conductor import hosttasks
from vgpucloud.storage import tasks


def test_a_second_delete_queues_a_new_destroy_after_a_failed_one(compute_engine: Engine) -> None:
    instance = str(uuidlib.uuid4())
    payload = {"instance_uuid": instance}
    first = hosttasks.submit(compute_engine, "h1", "destroy", instance, payload,
                             attempt="req-1")
    [leased] = tasks.lease(compute_engine, "h1", "agent-1", 60, 10)
    assert leased.uuid == first
    tasks.finish(compute_engine, first, "agent-1", "failed", None, "guest refused to stop")

    resumed = hosttasks.submit(compute_engine, "h1", "destroy", instance, payload,
                               attempt="req-1")
    retried = hosttasks.submit(compute_engine, "h1", "destroy", instance, payload,
                               attempt="req-2")

    assert resumed == first  # a conductor resuming req-1 sees its finished task
    assert retried != first
    assert tasks.get_task(compute_engine, retried).state == "queued"
