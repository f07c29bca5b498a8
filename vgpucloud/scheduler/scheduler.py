"""Request spec → allocation candidates → filters → weighers → a claim in Placement.

    scheduler = Scheduler(placement, settings, hosts=lambda: list_hosts(engine),
                          aggregates_of_host=instance_store.aggregates_of_host)
    claim = scheduler.claim(instance_uuid, project_id, user_id, spec)

``claim`` tries EVERY weighed candidate with ``PUT /allocations/{instance}`` (consumer
generation null: the consumer must be new) until one succeeds, so capacity spread over
several pGPUs is used (DESIGN rule 6). A claim that loses a race (409: the capacity went
to a concurrent boot) moves on to the next candidate; when a whole round lost, it asks
Placement again. Only Placement's compare-and-swap decides, so any number of conductors
may schedule at once.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from collections.abc import Callable, Collection, Sequence
from typing import Any

from vgpucloud import errors
from vgpucloud.client.placement import PlacementClient
from vgpucloud.compute.models import Aggregate
from vgpucloud.compute.request_spec import RequestSpec
from vgpucloud.scheduler.candidates import Candidate, host_by_root, parse_candidates
from vgpucloud.scheduler.explain import explain_no_fit
from vgpucloud.scheduler.filters import FilterContext, HostView, Rejection, run_filters
from vgpucloud.scheduler.settings import SchedulerSettings
from vgpucloud.scheduler.weighers import weigh

LOG = logging.getLogger(__name__)


class NoValidHost(errors.VgpucloudError):
    """No host can take the instance; the message says which constraint failed where."""

    code = "compute.no_valid_host"

    def __init__(self, reasons: str) -> None:
        super().__init__(f"No valid host was found. {reasons}")
        self.reasons = reasons


@dataclasses.dataclass(frozen=True, slots=True)
class Selection:
    candidates: list[Candidate]  # filtered and weighed, best first
    rejections: list[Rejection]
    returned: int  # how many Placement returned before filtering


@dataclasses.dataclass(frozen=True, slots=True)
class Claim:
    host: str
    root: str
    allocations: dict[str, dict[str, int]]


def _utcnow() -> datetime.datetime:
    return datetime.datetime.now(datetime.UTC).replace(tzinfo=None)


class Scheduler:
    def __init__(self, placement: PlacementClient, settings: SchedulerSettings, *,
                 hosts: Callable[[], Sequence[Any]],
                 aggregates_of_host: Callable[[str], Sequence[Aggregate]],
                 clock: Callable[[], datetime.datetime] = _utcnow) -> None:
        self.placement = placement
        self.settings = settings
        self.hosts = hosts
        self.aggregates_of_host = aggregates_of_host
        self.clock = clock

    def select(self, spec: RequestSpec, excluded_hosts: Collection[str] = ()) -> Selection:
        hosts = list(self.hosts())
        body = self.placement.allocation_candidates(spec.params)  # type: ignore[arg-type]
        found = parse_candidates(body, host_by_root(hosts))
        views = {h.name: HostView(h.name, h.enabled, h.last_heartbeat) for h in hosts}
        ctx = FilterContext(spec, views, self.aggregates_of_host, self.clock(),
                            self.settings.service_down_time, excluded_hosts)
        passed, rejections = run_filters(found, ctx)
        return Selection(weigh(passed, self.settings), rejections, len(found))

    def claim(self, instance_uuid: str, project_id: str, user_id: str, spec: RequestSpec,
              excluded_hosts: Collection[str] = ()) -> Claim:
        """Claim the best candidate that can still be had; ``NoValidHost`` explains why not."""
        lost = 0
        for _ in range(self.settings.claim_rounds):
            selection = self.select(spec, excluded_hosts)
            if not selection.candidates:
                raise NoValidHost(explain_no_fit(self.placement, spec, selection.rejections))
            for candidate in selection.candidates:
                if self._try(instance_uuid, project_id, user_id, candidate):
                    assert candidate.host is not None  # the compute filter guarantees it
                    return Claim(candidate.host, candidate.root,
                                 {rp: dict(r) for rp, r in candidate.allocations.items()})
                lost += 1
        raise NoValidHost(
            f"every candidate was taken by concurrent boots ({lost} claims lost in "
            f"{self.settings.claim_rounds} rounds); "
            + explain_no_fit(self.placement, spec, ()))

    def _try(self, instance_uuid: str, project_id: str, user_id: str,
             candidate: Candidate) -> bool:
        try:
            self.placement.put_allocations(instance_uuid,
                                           candidate.claim_body(project_id, user_id))
        except errors.Conflict as exc:
            # Capacity exceeded or provider generation moved: someone else got there first.
            LOG.debug("claim of %s on %s lost: %s", instance_uuid, candidate.host, exc)
            return False
        return True
