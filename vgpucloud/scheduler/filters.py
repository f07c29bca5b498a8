"""Host filters run on Placement's candidates: what Placement cannot know.

- ``compute``: the candidate's tree belongs to a registered host that is enabled and whose
  agent heartbeat is recent (``[scheduler] service_down_time``);
- ``retry``: a host where this instance's spawn already failed is not tried again;
- ``aggregate_instance_extra_specs``: the host's Nova aggregates' metadata satisfies the
  flavor's ``aggregate_instance_extra_specs:`` keys (see ``aggregate_ops``).

Each rejection keeps a reason, so a no-fit fault can say why each host was passed over.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Callable, Collection, Mapping, Sequence

from vgpucloud.compute.models import Aggregate
from vgpucloud.compute.request_spec import RequestSpec
from vgpucloud.scheduler.aggregate_ops import matches
from vgpucloud.scheduler.candidates import Candidate


@dataclasses.dataclass(frozen=True, slots=True)
class HostView:
    """What the filters know of a compute host (from ``storage.hosts``)."""

    name: str
    enabled: bool
    last_heartbeat: datetime.datetime | None


@dataclasses.dataclass(frozen=True, slots=True)
class Rejection:
    host: str  # host name, or the root provider uuid when no host owns the tree
    filter: str
    reason: str


@dataclasses.dataclass
class FilterContext:
    spec: RequestSpec
    hosts: Mapping[str, HostView]
    aggregates_of_host: Callable[[str], Sequence[Aggregate]]
    now: datetime.datetime
    service_down_time: int
    excluded_hosts: Collection[str] = ()
    _aggregates: dict[str, Sequence[Aggregate]] = dataclasses.field(default_factory=dict)

    def aggregates(self, host: str) -> Sequence[Aggregate]:
        if host not in self._aggregates:
            self._aggregates[host] = self.aggregates_of_host(host)
        return self._aggregates[host]


def compute_filter(candidate: Candidate, ctx: FilterContext) -> str | None:
    if candidate.host is None or candidate.host not in ctx.hosts:
        return (f"provider tree {candidate.root} belongs to no registered compute host "
                "(its agent has not registered)")
    host = ctx.hosts[candidate.host]
    if not host.enabled:
        return "the compute service is disabled"
    if host.last_heartbeat is None:
        return "its agent never sent a heartbeat"
    silent = (ctx.now - host.last_heartbeat).total_seconds()
    if silent > ctx.service_down_time:
        return (f"down: last heartbeat {int(silent)}s ago (service_down_time is "
                f"{ctx.service_down_time}s)")
    return None


def retry_filter(candidate: Candidate, ctx: FilterContext) -> str | None:
    if candidate.host in ctx.excluded_hosts:
        return "this instance's spawn already failed there"
    return None


def aggregate_filter(candidate: Candidate, ctx: FilterContext) -> str | None:
    wanted = ctx.spec.aggregate_specs
    if not wanted or candidate.host is None:
        return None
    metadata: dict[str, set[str]] = {}
    for aggregate in ctx.aggregates(candidate.host):
        for key, value in aggregate.metadata.items():
            metadata.setdefault(key, set()).add(value)
    for key, want in sorted(wanted.items()):
        have = metadata.get(key)
        if not have:
            return f"no aggregate of the host has metadata {key!r} (flavor wants {want!r})"
        if not any(matches(value, want) for value in have):
            return (f"aggregate metadata {key}={','.join(sorted(have))} does not satisfy "
                    f"the flavor's {want!r}")
    return None


FILTERS: tuple[tuple[str, Callable[[Candidate, FilterContext], str | None]], ...] = (
    ("compute", compute_filter),
    ("retry", retry_filter),
    ("aggregate_instance_extra_specs", aggregate_filter),
)


def run_filters(candidates: Sequence[Candidate],
                ctx: FilterContext) -> tuple[list[Candidate], list[Rejection]]:
    """The candidates every filter passes, and one rejection per rejected host."""
    passed: list[Candidate] = []
    rejected: dict[str, Rejection] = {}
    verdicts: dict[str, Rejection | None] = {}  # per host: filters judge hosts, not trees
    for candidate in candidates:
        key = candidate.host or candidate.root
        if key not in verdicts:
            verdicts[key] = _judge(key, candidate, ctx)
        verdict = verdicts[key]
        if verdict is None:
            passed.append(candidate)
        else:
            rejected[key] = verdict
    return passed, list(rejected.values())


def _judge(key: str, candidate: Candidate, ctx: FilterContext) -> Rejection | None:
    for name, check in FILTERS:
        reason = check(candidate, ctx)
        if reason is not None:
            return Rejection(key, name, reason)
    return None
