"""The capacity plugin itself: reads its arguments, builds the queue attributes at session
open (flat or hierarchical), registers the hooks of the other modules of this package, and
records the queue metrics."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Final

from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import ALLOCATED_STATUSES, Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.hooks import SimulationState
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import plugin_option
from volcano_py.plugins.capacity import dra_quota, queue_order, quota, reclaim, simulate
from volcano_py.plugins.capacity.attributes import PLUGIN_NAME, CapacityState
from volcano_py.plugins.capacity.flat import build_flat, real_capability
from volcano_py.plugins.capacity.hierarchy import build_hierarchical

log = logging.getLogger(__name__)

ANCESTOR_RECLAIM_LEVEL_KEY: Final = "ancestorReclaimLevel"
DRA_ENABLE_KEY: Final = "capacity.DynamicResourceAllocationEnable"
DRA_CONSUMABLE_CAPACITY_KEY: Final = "capacity.DRAConsumableCapacityEnable"
ARGUMENTS: Final[frozenset[str]] = frozenset(
    {ANCESTOR_RECLAIM_LEVEL_KEY, DRA_ENABLE_KEY, DRA_CONSUMABLE_CAPACITY_KEY}
)


class CapacityPlugin(CapacityState):
    """The plugin is its session state (queue attributes, mode, readiness) plus the hooks."""

    def __init__(self, arguments: Arguments) -> None:
        super().__init__(name=PLUGIN_NAME)
        self.arguments = arguments
        self.dra_enabled = False
        self.dra_consumable = False
        self.dra_quota: dict[str, dra_quota.DraQuota] = {}

    # ------------------------------------------------------------------ public reads

    def deserved_by_queue(self) -> Mapping[str, Resource]:
        """Queue name -> deserved amount, for every queue the plugin built attributes for
        (flat: queues with a job in the session; hierarchical: all, ``root`` holding the sum
        of its children)."""
        return {name: attr.deserved for name, attr in self.queue_attributes.items()}

    def deserved(self, queue: str) -> Resource | None:
        attr = self.queue_attributes.get(queue)
        return attr.deserved if attr is not None else None

    def summary(self) -> dict[str, dict[str, object]]:
        """Per queue, the computed amounts as Kubernetes quantity strings, for display."""
        return {
            name: {
                "deserved": attr.deserved.to_list(),
                "allocated": attr.allocated.to_list(),
                "request": attr.request.to_list(),
                "inqueue": attr.inqueue.to_list(),
                "elastic": attr.elastic.to_list(),
                "capability": attr.capability.to_list(),
                "realCapability": attr.real_capability.to_list(),
                "guarantee": attr.guarantee.to_list(),
                "share": attr.share,
                "ancestors": list(attr.ancestors),
            }
            for name, attr in self.queue_attributes.items()
        }

    # ------------------------------------------------------------------ session

    # ------------------------------------------------------------------ session

    def _parse_arguments(self) -> None:
        level = self.arguments.get_int(ANCESTOR_RECLAIM_LEVEL_KEY, 0)
        # Through the arguments' channel: named once per conf load, not every session.
        if level < 0:
            self.arguments.warn(
                f"{ANCESTOR_RECLAIM_LEVEL_KEY} should be non-negative, got {level}; using 0"
            )
            level = 0
        self.ancestor_reclaim_level = level

    def _open_dra_quota(self, ssn: Session) -> None:
        """The queues' DRA quota (``deviceclass/<class>`` keys), on with
        ``capacity.DynamicResourceAllocationEnable`` (default: the DynamicResourceAllocation
        gate), capacity dimensions with ``capacity.DRAConsumableCapacityEnable`` (default:
        the DRAConsumableCapacity gate)."""
        gates = ssn.state.kube_feature_gates
        self.dra_enabled = self.arguments.get_bool(
            DRA_ENABLE_KEY, gates.get("DynamicResourceAllocation", True)
        )
        self.dra_consumable = self.arguments.get_bool(
            DRA_CONSUMABLE_CAPACITY_KEY, gates.get("DRAConsumableCapacity", True)
        )
        self.dra_quota = {}
        self._dra_claims: dict[str, dict[str, dra_quota.DraAmounts]] = {}
        self._dra_snapshot = ssn.dra
        if not self.dra_enabled or ssn.dra is None:
            return
        for name in self.queue_attributes:
            queue = ssn.queues.get(name)
            spec = (queue.raw.get("spec") or {}) if queue is not None else {}
            queue_quota = dra_quota.DraQuota.of_queue(spec)
            if queue_quota is not None:
                self.dra_quota[name] = queue_quota
        if not self.dra_quota:
            return
        for job in ssn.jobs.values():
            quotas = self._dra_path(job.queue)
            if not quotas:
                continue
            for status, tasks in job.task_status_index.items():
                if status in ALLOCATED_STATUSES:
                    for task in tasks.values():
                        for queue_quota in quotas:
                            queue_quota.add_task(self.task_dra(task))

    def _dra_path(self, queue: str) -> list[dra_quota.DraQuota]:
        """The DRA quota of the queue and of its ancestors (hierarchical mode), those that
        have one."""
        attr = self.queue_attributes.get(queue)
        if attr is None or not self.dra_quota:
            return []
        return [self.dra_quota[a.name] for a in self.path(attr) if a.name in self.dra_quota]

    def task_dra(self, task: TaskInfo) -> dict[str, dra_quota.DraAmounts]:
        found = self._dra_claims.get(task.uid)
        if found is None:
            found = self._dra_claims[task.uid] = dra_quota.task_claims(
                task, self._dra_snapshot, self.dra_consumable
            )
        return found

    def dra_allocatable(self, queue: str, task: TaskInfo) -> bool:
        for queue_quota in self._dra_path(queue):
            wanted = queue_quota.incremental(self.task_dra(task))
            over = (
                queue_quota.fits(wanted, self.dra_consumable, with_inqueue=False) if wanted else ""
            )
            if over:
                log.info("capacity: queue %s: DRA quota %s exceeded by %s", queue, over, task.key)
                return False
        return True

    def dra_job_minimum(self, job: JobInfo) -> dra_quota.DraAmounts:
        pending = sorted(job.tasks.values(), key=lambda t: t.name)
        return dra_quota.job_minimum(pending, job.min_available, self.task_dra)

    def on_session_open(self, ssn: Session) -> None:
        self._parse_arguments()
        self.total_resource = ssn.total_resource.clone()
        self.total_guarantee = Resource()
        self.queue_attributes = {}
        option = plugin_option(ssn, self.name)
        self.hierarchy = option is not None and option.enabled("enableHierarchy")
        if self.hierarchy:
            self.ready = build_hierarchical(self, ssn)
            if self.ready:
                self._record_metrics(ssn)
                ssn.add_queue_order_fn(self.name, self.hierarchical_queue_order)
                ssn.add_victim_queue_order_fn(self.name, self.victim_queue_order)
        else:
            self.ready = True
            build_flat(self, ssn)
            self._record_metrics(ssn)
            ssn.add_queue_order_fn(self.name, self.flat_queue_order)

        self._open_dra_quota(ssn)
        ssn.add_reclaimable_fn(self.name, reclaim.reclaimable_fn(self, ssn))
        ssn.add_unified_evictable_fn(self.name, reclaim.gang_evictable_fn(self, ssn))
        ssn.add_preemptive_fn(self.name, self.preemptive)
        ssn.add_allocatable_fn(self.name, self.allocatable)
        ssn.add_job_enqueueable_fn(
            self.name, self._with_dra_enqueue(quota.job_enqueueable_fn(self, ssn))
        )
        ssn.add_job_enqueued_fn(self.name, self.job_enqueued)
        simulate.register_simulation(self, ssn)
        ssn.add_event_handler(
            EventHandler(
                allocate=self._on_event(ssn, allocate=True),
                deallocate=self._on_event(ssn, allocate=False),
                owner=self.name,
            )
        )

    def on_session_close(self, ssn: Session) -> None:
        for attr in self.queue_attributes.values():
            metrics.QUEUE_OVERUSED.labels(queue_name=attr.name).set(1.0 if attr.share > 1 else 0.0)
            metrics.update_queue_resource("allocated", attr.name, attr.allocated)
            metrics.QUEUE_SHARE.labels(queue_name=attr.name).set(attr.share)
        # queue_attributes stays for deserved_by_queue(); the instance dies with its session.

    def _record_metrics(self, ssn: Session) -> None:
        for name, queue in ssn.queues.items():
            attr = self.queue_attributes.get(name)
            if attr is not None:
                metrics.update_queue_resource("deserved", name, attr.deserved)
                metrics.update_queue_resource("allocated", name, attr.allocated)
                metrics.update_queue_resource("request", name, attr.request)
                metrics.update_queue_resource("inqueue", name, attr.inqueue)
                metrics.update_queue_resource("capacity", name, attr.capability)
                metrics.update_queue_resource("real_capacity", name, attr.real_capability)
                metrics.QUEUE_SHARE.labels(queue_name=name).set(attr.share)
                continue
            if self.hierarchy:
                continue
            # Flat mode has no attributes for queues without jobs: report their spec.
            empty = Resource()
            metrics.update_queue_resource("deserved", name, queue.deserved or empty)
            for kind in ("allocated", "request", "inqueue"):
                metrics.update_queue_resource(kind, name, empty)
            if queue.capability is not None:
                metrics.update_queue_resource("capacity", name, queue.capability)
            real = real_capability(self, queue.guarantee or empty, queue.capability)
            metrics.update_queue_resource("real_capacity", name, real)

    # ------------------------------------------------------------------ hooks (bound, so a
    # test can call them on the plugin a session opened)

    def flat_queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        return queue_order.flat_queue_order(self, left, right)

    def hierarchical_queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        return queue_order.hierarchical_queue_order(self, left, right)

    def victim_queue_order(self, left: QueueInfo, right: QueueInfo, preemptor: QueueInfo) -> int:
        return queue_order.victim_queue_order(self, left, right, preemptor)

    def preemptive(self, queue: QueueInfo, candidates: list[TaskInfo]) -> bool:
        return quota.preemptive(self, queue, candidates)

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        if not quota.allocatable(self, queue, task):
            return False
        return not self.dra_quota or self.dra_allocatable(queue.name, task)

    def _with_dra_enqueue(
        self, enqueueable: Callable[[JobInfo], Vote]
    ) -> Callable[[JobInfo], Vote]:
        def vote(job: JobInfo) -> Vote:
            answer = enqueueable(job)
            quotas = self._dra_path(job.queue)
            if answer is Vote.REJECT or not quotas:
                return answer
            minimum = self.dra_job_minimum(job)
            over = next(
                (
                    found
                    for queue_quota in quotas
                    if (found := queue_quota.fits(minimum, self.dra_consumable, with_inqueue=True))
                ),
                "",
            )
            if over:
                log.info(
                    "capacity: job %s exceeds queue %s DRA capability (%s)",
                    job.uid,
                    job.queue,
                    over,
                )
                return Vote.REJECT
            return answer

        return vote

    def job_enqueued(self, job: JobInfo) -> None:
        quota.job_enqueued(self, job)
        quotas = self._dra_path(job.queue)
        if quotas:
            minimum = self.dra_job_minimum(job)
            for queue_quota in quotas:
                dra_quota.merge(queue_quota.inqueue, minimum)

    def simulate_allocatable(
        self, state: SimulationState, queue: QueueInfo, task: TaskInfo
    ) -> bool:
        return simulate.simulate_allocatable(self, state, queue, task)

    # ------------------------------------------------------------------ events

    def _on_event(self, ssn: Session, allocate: bool) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            task = event.task
            job = ssn.jobs.get(task.job)
            attr = self.queue_attributes.get(job.queue) if job is not None else None
            if attr is None:
                log.warning("capacity: skip event for %s: job or queue unknown", task.key)
                return
            for queue_quota in self._dra_path(attr.name):
                if allocate:
                    queue_quota.add_task(self.task_dra(task))
                else:
                    queue_quota.remove_task(self.task_dra(task))
            # Only the leaf's share is refreshed, as upstream: ancestors keep the share of
            # session open for the queue order, their allocation is kept current.
            for level in self.path(attr):
                if allocate:
                    level.allocated.add(task.resreq)
                else:
                    level.allocated.sub_without_assert(task.resreq)
            # Gauges are set once at session close, not per placement.
            attr.update_share()

        return handle


def new(arguments: Arguments) -> CapacityPlugin:
    return CapacityPlugin(arguments)
