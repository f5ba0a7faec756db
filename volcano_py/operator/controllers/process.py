"""``volcano-py controllers`` as a process: one asyncio loop runs the informers (the
scheduler's raw list+watch), the work queues of the job, PodGroup, queue, command, CronJob,
JobFlow and JobTemplate controllers, the Lease elector, the event recorder and the HTTP endpoints.

The controllers are I/O-bound (one ``sync_job`` is microseconds next to its writes), so unlike
the scheduler there is no second thread. Work waits until every informer has listed once and,
with ``--leader-elect``, while this replica leads; losing the Lease exits with status 1 (as
vc-controller-manager), so a replica that may have missed events restarts from a fresh LIST.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.types import DEFAULT_SCHEDULER_NAME
from volcano_py.controllers.ownership import job_of_owner
from volcano_py.metrics import CONTROLLERS_REGISTRY
from volcano_py.operator.controllers.commands import CommandConsumer
from volcano_py.operator.controllers.cronjobs import CronJobController
from volcano_py.operator.controllers.hypernodes import HyperNodeController
from volcano_py.operator.controllers.job_ttl import JobTtlCollector
from volcano_py.operator.controllers.jobflows import JobFlowController, JobTemplateController
from volcano_py.operator.controllers.jobs import JobController
from volcano_py.operator.controllers.kinds import PLUGIN_KINDS, WATCHED_KINDS
from volcano_py.operator.controllers.podgroups import PodGroupController
from volcano_py.operator.controllers.ports import ApiRequests, EventRecorder
from volcano_py.operator.controllers.queues import QueueController
from volcano_py.operator.controllers.store import ObjectStore
from volcano_py.operator.informer import (
    HYPER_NODE,
    NODE,
    Informers,
    object_key,
    readiness_problem,
)
from volcano_py.operator.writers import BatchedEventRecorder
from volcano_py.runtime.apiclient import ClusterAccess, KubeApi
from volcano_py.runtime.health import HttpEndpoints, Probes
from volcano_py.runtime.heap_trim import trim_heap_periodically
from volcano_py.runtime.leaderelection import LeaseConfig, LeaseElector
from volcano_py.runtime.logsetup import flush_and_exit

log = logging.getLogger(__name__)

LEASE_NAME = "volcano-py-controllers"
_PLUGIN_KIND_NAMES = frozenset(kind.kind for kind in PLUGIN_KINDS)


@dataclass
class ControllersOptions:
    kubeconfig: str | None = None
    scheduler_names: tuple[str, ...] = (DEFAULT_SCHEDULER_NAME,)
    leader_elect: bool = False
    lease: LeaseConfig = field(default_factory=lambda: LeaseConfig(name=LEASE_NAME))
    kube_api_qps: float = 50.0
    kube_api_burst: int = 100
    listen_address: str = ":8081"
    healthz_address: str = ":11252"
    job_workers: int = 5
    pod_group_workers: int = 2
    queue_workers: int = 2
    cronjob_workers: int = 3
    # Upstream runs one worker each for JobFlows and JobTemplates (no flag).
    jobflow_workers: int = 1
    gc_workers: int = 1
    events: str = "all"
    # Kinds not watched (feature gates off: VolcanoJobSupport -> Job, QueueCommandSync ->
    # Command, PriorityClass -> PriorityClass), so their controllers never hear of them.
    skipped_kinds: frozenset[str] = frozenset()
    # --ca-cert-file, --tls-cert-file, --tls-private-key-file: /healthz over TLS.
    health_ssl: ssl.SSLContext | None = None
    # hyperNode-controller (on unless --controllers turns it off): Nodes and HyperNodes are
    # watched only for it.
    hyper_node_controller: bool = True


class LiveControllers:
    def __init__(
        self,
        options: ControllersOptions,
        *,
        access: ClusterAccess | None = None,
        on_lost_lease: Callable[[], None] = flush_and_exit,
    ) -> None:
        self.options = options
        self.access = access or ClusterAccess.load(options.kubeconfig)
        self.on_lost_lease = on_lost_lease
        self.store = ObjectStore()
        self.informers: Informers | None = None
        self.elector: LeaseElector | None = None
        self.stop_requested: asyncio.Event | None = None
        self.jobs: JobController | None = None
        self.job_ttl: JobTtlCollector | None = None
        self.pod_groups: PodGroupController | None = None
        self.queues: QueueController | None = None
        self.commands: CommandConsumer | None = None
        self.cronjobs: CronJobController | None = None
        self.jobflows: JobFlowController | None = None
        self.jobtemplates: JobTemplateController | None = None
        self.hypernodes: HyperNodeController | None = None
        self._namespaced = {kind.kind: kind.namespaced for kind in self.watched_kinds()}

    def watched_kinds(self) -> list[Any]:
        kinds = [kind for kind in WATCHED_KINDS if kind.kind not in self.options.skipped_kinds]
        if self.options.hyper_node_controller:
            kinds += [NODE, HYPER_NODE]
        return kinds

    # ---- readiness

    @property
    def is_leader(self) -> bool:
        return not self.options.leader_elect or (
            self.elector is not None and self.elector.is_leader
        )

    def synced(self) -> bool:
        return self.informers is not None and self.informers.synced()

    def may_work(self) -> bool:
        stopping = self.stop_requested is not None and self.stop_requested.is_set()
        return not stopping and self.synced() and self.is_leader

    def not_ready(self) -> str:
        return readiness_problem(self.informers, self.is_leader)

    # ---- events

    def on_event(self, kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        """The informers' sink: keep the object, then tell the controllers that care."""
        hypernodes = self.hypernodes
        if kind == "ConfigMap" and hypernodes and hypernodes.wants_config_map(object_key(obj)):
            self.store.apply(kind, event_type, obj)
            hypernodes.on_config_map()
            return
        if kind in _PLUGIN_KIND_NAMES and job_of_owner(obj) is None and event_type != "DELETED":
            return  # only objects of Volcano Jobs matter (and a cluster has many Secrets)
        applied, old = self.store.apply(kind, event_type, obj, self._namespaced.get(kind, True))
        if not applied:
            return
        if kind == "Node" and hypernodes:
            hypernodes.on_node(event_type, old, obj)
            return
        if kind == "HyperNode" and hypernodes:
            hypernodes.on_hyper_node(event_type, obj)
            return
        assert self.jobs and self.job_ttl and self.pod_groups and self.queues and self.commands
        assert self.cronjobs and self.jobflows and self.jobtemplates
        if kind == "Job":
            self.jobs.on_job(event_type, old, obj)
            self._job_changed(event_type, old, obj)
        elif kind == "CronJob":
            self.cronjobs.on_cronjob(event_type, old, obj)
        elif kind == "JobFlow":
            self.jobflows.on_jobflow(event_type, old, obj)
        elif kind == "JobTemplate":
            self.jobtemplates.on_jobtemplate(event_type, old, obj)
        elif kind == "Pod":
            self.jobs.on_pod(event_type, old, obj)
            self.pod_groups.on_pod(event_type, obj)
        elif kind == "PodGroup":
            self.jobs.on_pod_group(event_type, old, obj)
            self.queues.on_pod_group(obj)
        elif kind == "Queue":
            self.queues.on_queue(event_type, old, obj)
        elif kind == "Command":
            self.commands.on_command(event_type, object_key(obj))

    def _job_changed(
        self, event_type: str, old: Mapping[str, Any] | None, obj: Mapping[str, Any]
    ) -> None:
        """A Job changed, seen by its watch or written by the job controller: what follows
        Jobs besides that controller hears of it."""
        assert self.job_ttl and self.cronjobs and self.jobflows and self.jobtemplates
        self.job_ttl.on_job(event_type, object_key(obj), obj)
        self.cronjobs.on_job(event_type, old, obj)
        self.jobflows.on_job(event_type, old, obj)
        self.jobtemplates.on_job(event_type, old, obj)

    def build(self, api: ApiRequests, recorder: EventRecorder) -> None:
        """The controllers over ``api`` (a fake one in the unit tests)."""
        options = self.options
        self.jobs = JobController(
            api,
            self.store,
            recorder,
            scheduler_name=options.scheduler_names[0],
            workers=options.job_workers,
            may_work=self.may_work,
            on_status_written=lambda old, new: self._job_changed("MODIFIED", old, new),
        )
        self.job_ttl = JobTtlCollector(
            api, self.store, workers=options.gc_workers, may_work=self.may_work
        )
        self.pod_groups = PodGroupController(
            api,
            self.store,
            options.scheduler_names,
            workers=options.pod_group_workers,
            may_work=self.may_work,
        )
        self.queues = QueueController(
            api, self.store, recorder, workers=options.queue_workers, may_work=self.may_work
        )
        self.commands = CommandConsumer(
            api, self.store, self.jobs, self.queues, may_work=self.may_work
        )
        self.cronjobs = CronJobController(
            api, self.store, recorder, workers=options.cronjob_workers, may_work=self.may_work
        )
        self.jobflows = JobFlowController(
            api, self.store, recorder, workers=options.jobflow_workers, may_work=self.may_work
        )
        self.jobtemplates = JobTemplateController(
            api, self.store, workers=options.jobflow_workers, may_work=self.may_work
        )
        if options.hyper_node_controller:
            self.hypernodes = HyperNodeController(api, self.store, may_work=self.may_work)
            self.hypernodes.start()

    def work_queues(self) -> list[Any]:
        assert self.jobs and self.job_ttl and self.pod_groups and self.queues and self.commands
        assert self.cronjobs and self.jobflows and self.jobtemplates
        return [
            self.jobs.queue,
            self.job_ttl.queue,
            self.pod_groups.queue,
            self.queues.queue,
            self.commands.queue,
            self.cronjobs.queue,
            self.jobflows.queue,
            self.jobtemplates.queue,
            *([self.hypernodes.queue] if self.hypernodes else []),
        ]

    # ---- the process

    def request_stop(self) -> None:
        if self.stop_requested is not None:
            self.stop_requested.set()

    def _lost(self) -> None:
        log.critical("leader election lost: stopping (exit 1)")
        self.on_lost_lease()

    def _election_ended(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("leader election failed: %s", task.exception())
            self._lost()

    async def run(self) -> int:
        """Until ``request_stop()`` (SIGTERM/SIGINT): 0, or 1 if the endpoints cannot be
        served."""
        options = self.options
        self.stop_requested = asyncio.Event()
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(signum, self.request_stop)
        api = KubeApi(
            self.access,
            qps=options.kube_api_qps,
            burst=options.kube_api_burst,
            user_agent="volcano-py-controllers",
        )
        await api.open()
        tasks: list[asyncio.Task[Any]] = []
        endpoints = HttpEndpoints(
            options.listen_address,
            options.healthz_address,
            Probes(alive=lambda: "", ready=self.not_ready),
            health_ssl=options.health_ssl,
            registry=CONTROLLERS_REGISTRY,
        )
        try:
            try:
                await endpoints.start()
            except OSError as error:
                log.error("cannot serve the endpoints: %s", error)
                return 1
            recorder = BatchedEventRecorder(
                api,
                mode=options.events,
                component="volcano-py-controllers",
                instance=options.lease.identity,
                may_write=lambda: self.is_leader,
            )
            self.build(api, recorder)
            self.informers = Informers(api, self.on_event, kinds=self.watched_kinds())
            tasks += self.informers.start()
            tasks += recorder.start()
            # Freed C heap back to the system: RSS would otherwise stay at the largest burst.
            tasks.append(asyncio.create_task(trim_heap_periodically(), name="heap trim"))
            for work_queue in self.work_queues():
                tasks += work_queue.start()
            if options.leader_elect:
                self.elector = LeaseElector(api, options.lease, on_stopped_leading=self._lost)
                election = self.elector.start()
                election.add_done_callback(self._election_ended)
                tasks.append(election)
            log.info(
                "volcano-py controllers started: scheduler names %s%s; serving %s",
                ",".join(options.scheduler_names),
                f", leader election on {options.lease.namespace}/{options.lease.name} as "
                f"{options.lease.identity}"
                if options.leader_elect
                else "",
                ", ".join(f"{a} (port {p})" for a, p in endpoints.ports.items()),
            )
            await self.stop_requested.wait()
            log.info("stopping")
            if self.is_leader:
                await recorder.flush()
            if self.elector is not None:
                await self.elector.release()
            return 0
        finally:
            if self.hypernodes is not None:
                self.hypernodes.stop()
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            await endpoints.stop()
            await api.close()
