"""The compute agent: one per host, embeddable (``vgpucloud up`` runs N of them as threads).

    agent = build_agent(["nova.conf"], sysfs_root="/", virt="libvirt",
                        placement=PlacementClient(...), internal=InternalClient(...))
    agent.start()             # validate config, reconcile, reshape, report tree, register
    agent.run_forever(stop)   # heartbeat, lease, execute, report; until stop is set

``start`` refuses to run (``ConfigError`` listing every problem) when nova.conf does not fit
the host; it reconciles before it takes any task, so a guest never starts without its mdevs.
"""

from __future__ import annotations

import logging
import os
import threading
import time
import uuid as uuidlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from vgpucloud.agent.config import AgentConfig, load_agent_config
from vgpucloud.agent.hostfacts import host_resources, registration_facts
from vgpucloud.agent.ledger import Ledger
from vgpucloud.agent.mdev import Sysfs
from vgpucloud.agent.provider_tree import DesiredTree, HostResources, desired_tree
from vgpucloud.agent.reconcile import ReconcileReport, reconcile
from vgpucloud.agent.reporter import ProviderReporter, ReportResult
from vgpucloud.agent.reshape import Reshaper, ReshapeReport
from vgpucloud.agent.spawn import GuestOps
from vgpucloud.agent.tasks import Outcome, TaskRunner
from vgpucloud.agent.variant import foreign_vfs
from vgpucloud.agent.virt import VirtDriver, make_driver
from vgpucloud.client.internal import InternalClient
from vgpucloud.client.placement import PlacementClient
from vgpucloud.errors import ConfigError, VgpucloudError
from vgpucloud.sim import SimHost, is_simulated, kernel_for

LOG = logging.getLogger(__name__)


class Agent:
    def __init__(self, config: AgentConfig, sysfs: Sysfs, ledger: Ledger, driver: VirtDriver,
                 placement: PlacementClient, internal: InternalClient, *,
                 resources: HostResources, lease_seconds: int = 300,
                 wait_seconds: float = 0, report_interval: float = 60.0,
                 resume_guests: bool = True) -> None:
        self.config = config
        self.sysfs = sysfs
        self.ledger = ledger
        self.driver = driver
        self.placement = placement
        self.internal = internal
        self.resources = resources
        self.reporter = ProviderReporter(placement, config.state_path)
        self.ops = GuestOps(config, sysfs, ledger, driver, placement)
        # Unique per process: a crashed agent's leases expire instead of being mistaken
        # for the restarted one's.
        self.owner = f"{config.host}:{uuidlib.uuid4().hex[:12]}"
        self.runner = TaskRunner(internal, self.owner,
                                 {"spawn": self._spawn, "destroy": self._destroy})
        self.lease_seconds = lease_seconds
        self.wait_seconds = wait_seconds
        self.report_interval = report_interval
        self.resume_guests = resume_guests
        self.reconciled: ReconcileReport | None = None
        self.reshaped: ReshapeReport | None = None
        self._last_report = 0.0

    @property
    def host(self) -> str:
        return self.config.host

    # --- start ---------------------------------------------------------------------------

    def start(self) -> None:
        self._validate_config()
        self.reconciled = reconcile(self.config, self.sysfs, self.ledger, self.driver,
                                    resume_guests=self.resume_guests)
        self.reclaim_retyped_mdevs()
        desired = self.desired_tree()
        self.reshaped = Reshaper(self.config, self.sysfs, self.ledger, self.driver,
                                 self.placement).reshape_if_needed(desired)
        self.report_tree(desired)
        self.register()
        LOG.info("agent for host %s started (owner %s)", self.host, self.owner)

    def _validate_config(self) -> None:
        if not self.config.config_files:
            return  # built in code (tests, embedding): checked by whoever built it
        self.config = load_agent_config(self.config.config_files, parents=self.sysfs.parents())
        self.ops.config = self.config

    def reclaim_retyped_mdevs(self) -> None:
        """Free our unused mdevs of a type the operator replaced, so the configured type gets
        its capacity back at once (a pGPU with a leftover mdev of the old type offers 0 of the
        new one: the seeds' NoValidHost after a type change). Guests' mdevs stay: that case
        is reported by reconcile and the provider fenced."""
        for address, assignment in self.config.assignments.items():
            self.ops.make_room(address, assignment.type_id)

    def desired_tree(self) -> DesiredTree:
        mdevs = self.sysfs.mdevs()
        parents = self.sysfs.parents()
        entries = self.ledger.entries()
        foreign = {m.uuid for m in self.ledger.foreign(mdevs, entries)}
        foreign |= foreign_vfs(parents, entries)
        return desired_tree(self.config, self.resources, parents, mdevs, foreign)

    def report_tree(self, desired: DesiredTree | None = None) -> ReportResult:
        result = self.reporter.report(desired or self.desired_tree())
        self._last_report = time.monotonic()
        return result

    def register(self) -> None:
        self.internal.register_host(self.host,
                                    registration_facts(self.driver, self.reporter.root_uuid))

    # --- work ----------------------------------------------------------------------------

    def run_once(self, wait_seconds: float | None = None) -> list[Outcome]:
        """Heartbeat, lease this host's tasks, run and report them, refresh the tree."""
        self.internal.heartbeat(self.host)
        wait = self.wait_seconds if wait_seconds is None else wait_seconds
        leased = self.internal.lease_tasks(self.host, self.owner,
                                           lease_seconds=self.lease_seconds,
                                           wait_seconds=wait, max_tasks=10)
        outcomes = [self.runner.run(task) for task in leased]
        if outcomes or time.monotonic() - self._last_report >= self.report_interval:
            self.report_tree()
        return outcomes

    def run_forever(self, stop: threading.Event, retry_delay: float = 5.0) -> None:
        while not stop.is_set():
            try:
                self.run_once()
            except VgpucloudError as exc:
                LOG.error("agent %s: %s; retrying in %.0fs", self.host, exc.message,
                          retry_delay)
                stop.wait(retry_delay)

    def close(self) -> None:
        self.driver.close()
        self.ledger.close()

    def _destroy(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        result = self.ops.destroy(payload)
        # The config is fixed once started, so old-type mdevs only become unused when a
        # guest that kept one (attached before the type change) goes away: free them now.
        self.reclaim_retyped_mdevs()
        return result

    def _spawn(self, payload: Mapping[str, Any]) -> dict[str, Any]:
        root = self.reporter.root_uuid
        if root is None:
            raise ConfigError([f"host {self.host} has no root provider yet; start() the "
                               "agent (it reports the provider tree) before running tasks"])
        return self.ops.spawn(payload, root)


def sim_hooks(root: str | os.PathLike[str]) -> dict[str, object]:
    """FakeDriver hooks that make a simulated kernel see guests hold and release mdevs."""
    host = SimHost(root)
    devices = Path(root) / "sys" / "bus" / "mdev" / "devices"

    def on_start(mdevs: tuple[str, ...]) -> None:
        for mdev in mdevs:
            host.hold(mdev, "qemu")

    def on_stop(mdevs: tuple[str, ...]) -> None:
        for mdev in mdevs:
            host.release(mdev)

    return {"on_start": on_start, "on_stop": on_stop,
            "mdev_exists": lambda mdev: (devices / mdev).exists()}


def build_agent(config_files: Sequence[str], *, sysfs_root: str, virt: str,
                placement: PlacementClient, internal: InternalClient,
                **options: object) -> Agent:
    """An agent wired from nova.conf and flags: what ``vgpucloud agent`` and ``up`` run."""
    sysfs = Sysfs(sysfs_root, kernel=kernel_for(sysfs_root))
    config = load_agent_config(config_files, parents=sysfs.parents())
    # Under libvirt, QEMU opens the mdevs itself; only the fake driver needs the hooks.
    hooks = sim_hooks(sysfs_root) if is_simulated(sysfs_root) and virt == "fake" else {}
    driver = make_driver(virt, config.state_path / "guests", config.connection_uri,
                         **hooks)  # type: ignore[arg-type]
    ledger = Ledger.in_state_dir(config.state_path)
    resources = host_resources(sysfs_root, config.state_path)
    return Agent(config, sysfs, ledger, driver, placement, internal, resources=resources,
                 **options)  # type: ignore[arg-type]
