"""The live scheduler: the offline scheduler's cache and cycle, fed by informers and writing
through the live adapters.

Threads:

* the I/O thread runs one asyncio loop: the informers (every watched kind), the binder's
  worker pool, the evictor, the status writer, the event recorder, the Lease elector and the
  HTTP endpoints;
* the scheduling thread runs ``SchedulerLoop``: one session per period, only once every
  informer has listed and, with ``--leader-elect``, only while this replica holds the Lease;
* the calling (main) thread waits for SIGTERM/SIGINT, then stops the loop, lets queued binds
  go out (a few seconds at most), releases the Lease and returns 0.

Losing the Lease stops every write at once and exits the process with status 1, as Volcano's
``OnStoppedLeading: klog.Fatalf``: a replica that may have missed events restarts from a clean
LIST rather than carrying on.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import ssl
import sys
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.dra import KUBE_GATE_DEFAULTS
from volcano_py.api.types import DEFAULT_QUEUE, DEFAULT_SCHEDULER_NAME, ROOT_QUEUE
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.node_selector import NodeSelector
from volcano_py.framework.feasibility import FeasibilityOptions
from volcano_py.framework.session import SchedulingState
from volcano_py.operator.binder import LiveBinder, PodFeed
from volcano_py.operator.informer import WATCHED_KINDS, Informers, readiness_problem
from volcano_py.operator.writers import BatchedEventRecorder, LiveEvictor, LiveStatusWriter
from volcano_py.runtime import pprof
from volcano_py.runtime.apiclient import ApiError, ClusterAccess, KubeApi
from volcano_py.runtime.conffile import ConfFile
from volcano_py.runtime.event_gate import EventGate
from volcano_py.runtime.health import HttpEndpoints, Probes
from volcano_py.runtime.heap_trim import trim_heap_periodically
from volcano_py.runtime.leaderelection import LeaseConfig, LeaseElector
from volcano_py.runtime.logsetup import flush_and_exit
from volcano_py.runtime.loop import SchedulerLoop, describe
from volcano_py.runtime.node_metrics import NodeMetricsCollector
from volcano_py.scheduler.cycle import CycleTimings
from volcano_py.scheduler.registry import PluginRegistry, default_registry

log = logging.getLogger(__name__)


@dataclass
class SchedulerOptions:
    kubeconfig: str | None = None
    scheduler_conf: str | None = None
    schedule_period: float = 1.0
    scheduler_names: tuple[str, ...] = (DEFAULT_SCHEDULER_NAME,)
    default_queue: str = DEFAULT_QUEUE
    leader_elect: bool = False
    lease: LeaseConfig = field(default_factory=LeaseConfig)
    kube_api_qps: float = 2000.0
    kube_api_burst: int = 2000
    listen_address: str = ":8080"
    healthz_address: str = ":11251"
    # Volcano binds each task in a goroutine of its own; 256 in flight reached a quarter more
    # binds a second than 64 on the bench's API server (docs/benchmarks.md).
    bind_concurrency: int = 256
    events: str = "all"
    priority_class: bool = True
    # --node-selector: only nodes with one of these labels are scheduled onto.
    node_selector: NodeSelector = frozenset()
    # --minimum-feasible-nodes, --minimum-percentage-nodes-to-find, --percentage-nodes-to-find
    feasibility: FeasibilityOptions = field(default_factory=FeasibilityOptions)
    # --enable-metrics (/metrics on listen_address) and --enable-pprof (/debug/pprof/ there).
    metrics: bool = True
    pprof: bool = False
    # The PodDisruptionBudgetsSupport feature gate: watch PDBs for the pdb plugin.
    pod_disruption_budgets: bool = True
    # The ResourceTopology feature gate: watch Numatopologies for the numa-aware plugin.
    resource_topology: bool = True
    # The Kubernetes feature gates the plugins read (DRA's), as --feature-gates left them.
    kube_feature_gates: Mapping[str, bool] = field(default_factory=lambda: dict(KUBE_GATE_DEFAULTS))
    # --ca-cert-file, --tls-cert-file, --tls-private-key-file: /healthz over TLS.
    health_ssl: ssl.SSLContext | None = None
    shutdown_grace: float = 5.0
    switch_interval: float = 0.001


def _queue_manifest(name: str, reclaimable: bool) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "reclaimable": reclaimable},
    }


class LiveScheduler:
    def __init__(
        self,
        options: SchedulerOptions,
        *,
        plugins: PluginRegistry | None = None,
        access: ClusterAccess | None = None,
        on_lost_lease: Callable[[], None] = flush_and_exit,
    ) -> None:
        self.options = options
        self.access = access or ClusterAccess.load(options.kubeconfig)
        self.on_lost_lease = on_lost_lease
        registry = plugins if plugins is not None else default_registry()
        # Raises UnknownNameError for an unknown action or plugin: refuse to start.
        self.conf = ConfFile(options.scheduler_conf, registry)
        self.cache = SchedulerCache(
            scheduler_names=frozenset(options.scheduler_names),
            default_queue=options.default_queue,
            node_selector=options.node_selector,
        )
        # Watch events wait here while a session runs (runtime/event_gate.py).
        self.gate = EventGate()
        self.loop_runner = SchedulerLoop(
            self.cache,
            self.conf,
            registry,
            options.schedule_period,
            may_schedule=self.may_schedule,
            state=SchedulingState(
                clock=time.time,
                feasibility=options.feasibility,
                kube_feature_gates=dict(options.kube_feature_gates),
            ),
            on_cycle=self._on_cycle,
            gate=self.gate,
        )
        self.stop_requested = threading.Event()
        self.io_ready = threading.Event()
        self.io_failed: BaseException | None = None
        self._io_loop: asyncio.AbstractEventLoop | None = None
        self._io_stop: asyncio.Event | None = None
        self.informers: Informers | None = None
        self.binder: LiveBinder | None = None
        self.evictor: LiveEvictor | None = None
        self.status: LiveStatusWriter | None = None
        self.recorder: BatchedEventRecorder | None = None
        self.elector: LeaseElector | None = None
        self.endpoints: HttpEndpoints | None = None
        self.node_metrics: NodeMetricsCollector | None = None
        self._last_bound = 0
        self._lost_lease = False

    # ---- readiness

    @property
    def is_leader(self) -> bool:
        if not self.options.leader_elect:
            return True
        return self.elector is not None and self.elector.is_leader and not self._lost_lease

    def synced(self) -> bool:
        return self.informers is not None and self.informers.synced()

    def _restore_claim(self, key: str) -> None:
        informers = self.informers
        if informers is None or "ResourceClaim" not in informers.by_kind:
            return
        watched = informers["ResourceClaim"].objects.get(key)
        if watched is not None:
            self.gate.submit(self.cache.apply_event, "ResourceClaim", "MODIFIED", watched)

    def may_schedule(self) -> bool:
        return not self.stop_requested.is_set() and self.synced() and self.is_leader

    def may_write(self) -> bool:
        return self.is_leader

    def not_ready(self) -> str:
        return readiness_problem(self.informers, self.is_leader)

    def not_alive(self) -> str:
        return "" if self.loop_runner.healthy() else "scheduling loop stalled"

    # ---- the scheduling thread's report

    def _on_cycle(self, number: int, timings: CycleTimings) -> None:
        bound = self.binder.stats.queued if self.binder is not None else 0
        binds, self._last_bound = bound - self._last_bound, bound
        slow = timings.total > self.options.schedule_period
        level = logging.INFO if binds or slow else logging.DEBUG
        if log.isEnabledFor(level):
            pending = self.binder.pending if self.binder is not None else 0
            log.log(
                level,
                "cycle %d: %s; %d binds queued (%d not yet sent)",
                number,
                describe(timings),
                binds,
                pending,
            )

    # ---- I/O thread

    async def _ensure_queues(self, api: KubeApi) -> None:
        """Volcano's scheduler creates the default queue (and root) when missing."""
        wanted = [(ROOT_QUEUE, False), (self.options.default_queue, True)]
        for name, reclaimable in wanted:
            try:
                await api.request(
                    "POST",
                    "/apis/scheduling.volcano.sh/v1beta1/queues",
                    _queue_manifest(name, reclaimable),
                )
                log.info("created queue %s", name)
            except ApiError as error:
                if not error.conflict:
                    log.error("cannot create queue %s: %s", name, error)

    def _lost(self) -> None:
        self._lost_lease = True
        log.critical("leader election lost: stopping (exit 1)")
        self.on_lost_lease()

    def _election_ended(self, task: asyncio.Task[None]) -> None:
        """The elector may only end by losing (it called ``_lost``) or by being cancelled at
        shutdown; if it crashed, leadership is unknown: stop as if lost."""
        if not task.cancelled() and task.exception() is not None:
            log.error("leader election failed: %s", task.exception())
            self._lost()

    async def _io_main(self) -> None:
        options = self.options
        loop = asyncio.get_running_loop()
        self._io_loop = loop
        self._io_stop = asyncio.Event()
        tasks: list[asyncio.Task[Any]] = []
        api = KubeApi(
            self.access,
            qps=options.kube_api_qps,
            burst=options.kube_api_burst,
            max_connections=options.bind_concurrency + 64,
        )
        await api.open()
        try:
            self.endpoints = HttpEndpoints(
                options.listen_address,
                options.healthz_address,
                Probes(alive=self.not_alive, ready=self.not_ready),
                metrics=options.metrics,
                extra_routes=pprof.ROUTES if options.pprof else None,
                health_ssl=options.health_ssl,
            )
            await self.endpoints.start()
            log.info(
                "serving %s",
                ", ".join(
                    f"{address} (port {port})" for address, port in self.endpoints.ports.items()
                ),
            )
            await self._ensure_queues(api)
            kinds = [
                kind
                for kind in WATCHED_KINDS
                if (options.priority_class or kind.kind != "PriorityClass")
                and (options.pod_disruption_budgets or kind.kind != "PodDisruptionBudget")
                and (options.resource_topology or kind.kind != "Numatopology")
            ]
            feed = PodFeed(self.cache.apply_event)
            # Every kind through one gate: held back in order while a session runs.
            self.gate.loop = loop
            self.informers = Informers(
                api,
                self.gate.wrap(self.cache.apply_event),
                kinds=kinds,
                sinks={"Pod": self.gate.wrap(feed)},
            )
            identity = options.lease.identity
            self.recorder = BatchedEventRecorder(
                api,
                mode=options.events,
                component=options.scheduler_names[0],
                instance=identity,
                may_write=self.may_write,
            )
            self.binder = LiveBinder(
                api,
                loop,
                self.informers["Pod"],
                feed,
                concurrency=options.bind_concurrency,
                may_write=self.may_write,
                recorder=self.recorder,
                restore_claim=self._restore_claim,
            )
            binder = self.binder
            self.recorder.defer = lambda: binder.pending > 0
            self.evictor = LiveEvictor(api, loop, may_write=self.may_write)
            self.status = LiveStatusWriter(
                api, loop, self.informers.by_kind, feed, may_write=self.may_write
            )
            self.cache.binder = self.binder
            self.cache.evictor = self.evictor
            self.cache.status_updater = self.status
            self.cache.recorder = self.recorder
            tasks += self.informers.start()
            tasks += self.binder.start()
            tasks += self.evictor.start()
            tasks += self.status.start()
            tasks += self.recorder.start()
            # Node usage for the usage and rescheduling plugins, every metrics.interval.
            self.node_metrics = NodeMetricsCollector(self.cache, lambda: self.conf.conf.metrics)
            tasks.append(asyncio.create_task(self.node_metrics.run(), name="node metrics"))
            # Freed C heap back to the system: RSS would otherwise stay at the largest burst.
            tasks.append(asyncio.create_task(trim_heap_periodically(), name="heap trim"))
            if options.leader_elect:
                self.elector = LeaseElector(api, options.lease, on_stopped_leading=self._lost)
                election = self.elector.start()
                election.add_done_callback(self._election_ended)
                tasks.append(election)
            self.io_ready.set()
            await self._io_stop.wait()
            await self._shutdown(api)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
            if self.endpoints is not None:
                await self.endpoints.stop()
            await api.close()

    async def _shutdown(self, api: KubeApi) -> None:
        grace = self.options.shutdown_grace
        if self.binder is not None and self.is_leader and not await self.binder.drain(grace):
            log.warning("stopping with %d binds not sent", self.binder.pending)
        if self.recorder is not None and self.is_leader:
            await self.recorder.flush()
        if self.elector is not None:
            await self.elector.release()

    def _io_thread(self) -> None:
        try:
            asyncio.run(self._io_main())
        except OSError as error:  # a port in use, say: the user's to fix, no traceback
            self.io_failed = error
            log.error("cannot serve the endpoints: %s", error)
        except BaseException as error:  # reported to the main thread
            self.io_failed = error
            log.exception("the I/O loop failed")
        finally:
            self.io_ready.set()
            self.stop_requested.set()

    # ---- the whole process

    def request_stop(self) -> None:
        self.stop_requested.set()

    def run(self) -> int:
        """Run until ``request_stop()`` (the CLI calls it on SIGTERM/SIGINT). 0 on a clean
        stop, 1 if the I/O loop failed."""
        # The scheduling thread is CPU-bound; a shorter GIL switch interval lets the I/O
        # thread answer bind responses and watch events sooner (5 ms by default).
        sys.setswitchinterval(self.options.switch_interval)
        io_thread = threading.Thread(target=self._io_thread, name="volcano-io", daemon=True)
        io_thread.start()
        self.io_ready.wait()
        if self.io_failed is not None:
            io_thread.join(5)
            return 1
        log.info(
            "volcano-py scheduler started: names %s, period %.3gs, conf %s%s",
            ",".join(self.options.scheduler_names),
            self.options.schedule_period,
            self.options.scheduler_conf or "(built-in default)",
            f", leader election on {self.options.lease.namespace}/"
            f"{self.options.lease.name} as {self.options.lease.identity}"
            if self.options.leader_elect
            else "",
        )
        loop_thread = threading.Thread(
            target=self.loop_runner.run,
            args=(self.stop_requested,),
            name="volcano-scheduler",
            daemon=True,
        )
        loop_thread.start()
        while not self.stop_requested.wait(0.5):
            pass
        log.info("stopping")
        loop_thread.join(60)
        if self._io_loop is not None and self._io_stop is not None:
            with contextlib.suppress(RuntimeError):
                self._io_loop.call_soon_threadsafe(self._io_stop.set)
        io_thread.join(self.options.shutdown_grace + 10)
        return 1 if self.io_failed is not None else 0

    def wait_synced(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.synced():
                return True
            time.sleep(0.05)
        return False
