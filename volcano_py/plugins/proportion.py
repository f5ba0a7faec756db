"""proportion: weighted max-min fair shares between queues
(``pkg/scheduler/plugins/proportion/proportion.go``).

At session open every queue that has a job in the session gets a ``deserved`` amount by
water-filling: the cluster is handed out by weight, each queue capped by its real capability
and by what it asks for and raised to its guarantee, and what a capped queue leaves is handed
out again until nothing moves (spec §4.5).

Registers QueueOrderFn, ReclaimableFn, OverusedFn, AllocatableFn, PreemptiveFn,
JobEnqueueableFn, JobEnqueuedFn and allocation event handlers, and for topology-aware
preemption's dry run a PrePredicateFn that seeds the task's simulation state, and
SimulateAllocatableFn / SimulateAddTaskFn / SimulateRemoveTaskFn that check and move the
queues' allocations in it (``_simulated_allocations``).

For the simulator and status output, ``ProportionPlugin.queue_attributes`` maps each such queue
name to its ``QueueAttributes`` (deserved, allocated, request, inqueue, elastic, capability,
real capability, guarantee, share); ``deserved(name)`` and ``summary()`` read it. They stay
readable after ``close_session``.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Final

from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import (
    IGNORED_SCALAR_RESOURCES,
    MAX_FLOAT,
    DimensionDefault,
    Resource,
    exceeded_part,
)
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.hooks import SimulationState, VoteFn
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import (
    JobUsage,
    flat_amounts,
    format_resource_names,
    job_usage,
    log_queue_not_open,
    max_resource,
    same_amounts,
    share,
)
from volcano_py.plugins._simulated_allocations import (
    SimulatedAllocations,
    register_queue_simulation,
)

log = logging.getLogger(__name__)

PLUGIN_NAME = "proportion"


# A queue's share computed when read after placements moved it (False: after every placement,
# the tests' reference).
_LAZY_SHARE = True
# ``allocatable`` of a task without scalar resources in plain floats (False: always through
# ``queue_allocatable``'s Resources, the tests' reference).
_PLAIN_ALLOCATABLE = True
# ... and of a task with scalar resources too (False: only without; the tests' reference).
_PLAIN_SCALARS = True
# A queue's totals at open summed over its jobs' usages by ``Resource.add_all`` (the same
# additions in the same order), not one ``add`` call per job and total (False: the tests'
# reference).
_ADD_BY_QUEUE = True
# Those totals summed in one pass over the usages (False: one ``add_all`` per total, the
# tests' reference).
_ONE_PASS_TOTALS = True


@dataclass(slots=True)
class QueueAttributes:
    name: str
    weight: int
    # Spec capability with cpu/memory <= 0 read as unlimited; empty when the queue sets none.
    capability: Resource = field(default_factory=Resource)
    # min(cluster - all guarantees + own guarantee, capability): the most the queue may hold.
    real_capability: Resource = field(default_factory=Resource)
    guarantee: Resource = field(default_factory=Resource)
    deserved: Resource = field(default_factory=Resource)
    allocated: Resource = field(default_factory=Resource)
    # allocated plus what pending tasks ask for.
    request: Resource = field(default_factory=Resource)
    # minResources still reserved by admitted jobs that are not fully placed.
    inqueue: Resource = field(default_factory=Resource)
    # What jobs hold beyond their minResources (reclaimable without breaking a gang).
    elastic: Resource = field(default_factory=Resource)
    # ``share`` as last computed, and whether ``allocated`` moved since (``share_outdated``).
    computed_share: float = 0.0
    outdated: bool = False

    @property
    def share(self) -> float:
        """The largest fraction of ``deserved`` the queue holds in any dimension. After a
        placement or an eviction it is computed when next read, not at once: a gang of 100
        moved it 100 times for the few times the queue order read it."""
        if self.outdated:
            self.update_share()
        return self.computed_share

    def update_share(self) -> None:
        highest = 0.0
        for name in self.deserved.resource_names():
            highest = max(highest, share(self.allocated.get(name), self.deserved.get(name)))
        self.computed_share = highest
        self.outdated = False

    def share_outdated(self) -> None:
        """``allocated`` moved: ``share`` is computed again when read (with ``deserved`` as
        it is then: it changes only at session open, where ``update_share`` follows)."""
        if _LAZY_SHARE:
            self.outdated = True
        else:
            self.update_share()

    def clone(self) -> QueueAttributes:
        return QueueAttributes(
            self.name,
            self.weight,
            self.capability.clone(),
            self.real_capability.clone(),
            self.guarantee.clone(),
            self.deserved.clone(),
            self.allocated.clone(),
            self.request.clone(),
            self.inqueue.clone(),
            self.elastic.clone(),
            self.share,
        )


def _add_usages(attr: QueueAttributes, usages: list[JobUsage]) -> None:
    """The four ``add_all`` of a queue's job usages into its totals in one pass: each total
    takes the same parts in the same order (the same floats, the same scalar names in the
    same order), one loop over the jobs rather than four generators."""
    allocated, request, inqueue, elastic = attr.allocated, attr.request, attr.inqueue, attr.elastic
    allocated_cpu, allocated_memory = allocated.milli_cpu, allocated.memory
    request_cpu, request_memory = request.milli_cpu, request.memory
    inqueue_cpu, inqueue_memory = inqueue.milli_cpu, inqueue.memory
    elastic_cpu, elastic_memory = elastic.milli_cpu, elastic.memory
    targets = (
        allocated.scalar_resources,
        request.scalar_resources,
        inqueue.scalar_resources,
        elastic.scalar_resources,
    )
    for usage in usages:
        # A kept usage carries its amounts in one tuple; another's are read into one here.
        # Each total takes each usage's parts in the same order as ``add_all`` would.
        flat = usage.flat if usage.flat is not None else flat_amounts(usage)
        allocated_cpu += flat[0]
        allocated_memory += flat[1]
        request_cpu += flat[2]
        request_memory += flat[3]
        inqueue_cpu += flat[4]
        inqueue_memory += flat[5]
        elastic_cpu += flat[6]
        elastic_memory += flat[7]
        scalars = flat[8]
        if scalars is not None:
            for index in range(0, len(scalars), 3):
                target = targets[scalars[index]]
                name = scalars[index + 1]
                target[name] = target.get(name, 0.0) + scalars[index + 2]
    allocated.milli_cpu, allocated.memory = allocated_cpu, allocated_memory
    request.milli_cpu, request.memory = request_cpu, request_memory
    inqueue.milli_cpu, inqueue.memory = inqueue_cpu, inqueue_memory
    elastic.milli_cpu, elastic.memory = elastic_cpu, elastic_memory


def compute_deserved(total: Resource, queues: Iterable[QueueAttributes]) -> None:
    """Water-fill ``total`` over ``queues``, setting each one's ``deserved`` and ``share``.

    Within a round every queue takes its weight's part of the same ``remaining``, so the order
    of queues does not matter. A queue leaves the game when its request is covered or when its
    caps stop it from growing; the round's net change comes off ``remaining``. The loop ends
    when no weight is left, nothing remains (pods aside), or a round moved nothing.
    """
    attributes = list(queues)
    remaining = total.clone()
    met: set[str] = set()
    while True:
        total_weight = sum(attr.weight for attr in attributes if attr.name not in met)
        if total_weight == 0:
            break
        before = remaining.clone()
        increased, decreased = Resource(), Resource()
        for attr in attributes:
            if attr.name in met:
                continue
            old = attr.deserved.clone()
            attr.deserved.add(remaining.clone().multi(attr.weight / total_weight))
            # A dimension the capability does not name is not limited by it; one the request
            # does not name is not wanted at all.
            attr.deserved.min_dimension_resource(attr.real_capability, DimensionDefault.INFINITY)
            attr.deserved.min_dimension_resource(attr.request, DimensionDefault.ZERO)
            attr.deserved = max_resource(attr.deserved, attr.guarantee)
            attr.update_share()
            if attr.request.less_equal(attr.deserved, DimensionDefault.ZERO) or same_amounts(
                attr.deserved, old
            ):
                met.add(attr.name)
            up, down = attr.deserved.diff(old, DimensionDefault.ZERO)
            increased.add(up)
            decreased.add(down)
            log.debug(
                "proportion: queue %s deserved <%s> realCapability <%s> allocated <%s>"
                " request <%s> share %.2f",
                attr.name,
                attr.deserved,
                attr.real_capability,
                attr.allocated,
                attr.request,
                attr.share,
            )
        remaining = exceeded_part(remaining.clone().add(decreased), increased)
        if remaining.is_empty() or same_amounts(remaining, before):
            break


def _scalars_within(request: Resource, allocated: Resource, deserved: Resource) -> bool:
    """The scalar part of ``queue_allocatable``'s check for one task in plain floats: each
    scalar the task asks for (but those the quota ignores, ``pods``) summed as
    ``allocated + (0.0 + request)`` is within ``deserved`` (a missing one is zero)."""
    held, limit = allocated.scalar_resources, deserved.scalar_resources
    for name, value in request.scalar_resources.items():
        if name in IGNORED_SCALAR_RESOURCES:
            continue
        quantity = 0.0 + value
        if quantity > 0 and held.get(name, 0.0) + quantity > limit.get(name, 0.0):
            return False
    return True


class ProportionPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.total_resource = Resource()
        self.total_guarantee = Resource()
        self.queue_attributes: dict[str, QueueAttributes] = {}

    # ------------------------------------------------------------------ public reads

    def deserved(self, queue: str) -> Resource | None:
        """The deserved amount computed for ``queue`` (None: it had no job in the session)."""
        attr = self.queue_attributes.get(queue)
        return attr.deserved if attr is not None else None

    def summary(self) -> dict[str, dict[str, object]]:
        """Per queue, the computed amounts as Kubernetes quantity strings, for display."""
        return {
            name: {
                "weight": attr.weight,
                "deserved": attr.deserved.to_list(),
                "allocated": attr.allocated.to_list(),
                "request": attr.request.to_list(),
                "inqueue": attr.inqueue.to_list(),
                "elastic": attr.elastic.to_list(),
                "realCapability": attr.real_capability.to_list(),
                "guarantee": attr.guarantee.to_list(),
                "share": attr.share,
            }
            for name, attr in self.queue_attributes.items()
        }

    # ------------------------------------------------------------------ session

    def on_session_open(self, ssn: Session) -> None:
        self.total_resource = ssn.total_resource.clone()
        self.total_guarantee = Resource()
        for spec in ssn.queues.values():
            if spec.guarantee is not None:
                self.total_guarantee.add(spec.guarantee)
        self.queue_attributes = {}
        usages: dict[str, list[JobUsage]] = {}
        for job in ssn.jobs.values():
            attr = self.queue_attributes.get(job.queue)
            if attr is None:
                queue = ssn.queues.get(job.queue)
                if queue is None:
                    continue
                attr = self.queue_attributes[job.queue] = self._new_attributes(queue)
                usages[job.queue] = []
            if _ADD_BY_QUEUE:
                usages[job.queue].append(job_usage(job))
            else:
                self._account_job(attr, job)
        for name, listed in usages.items():
            # Each total takes its jobs' parts in the order ``_account_job`` adds them.
            attr = self.queue_attributes[name]
            if _ONE_PASS_TOTALS:
                _add_usages(attr, listed)
                continue
            attr.allocated.add_all(usage.allocated for usage in listed)
            attr.request.add_all(usage.request for usage in listed)
            attr.inqueue.add_all(usage.inqueue for usage in listed)
            attr.elastic.add_all(usage.elastic for usage in listed)

        compute_deserved(self.total_resource, self.queue_attributes.values())
        self._record_metrics(ssn)

        ssn.add_queue_order_fn(self.name, self.queue_order)
        ssn.add_reclaimable_fn(self.name, self._reclaimable(ssn))
        ssn.add_overused_fn(self.name, self.overused)
        ssn.add_allocatable_fn(self.name, self.allocatable)
        ssn.add_preemptive_fn(self.name, self.queue_allocatable)
        ssn.add_job_enqueueable_fn(self.name, self._job_enqueueable(ssn))
        ssn.add_job_enqueued_fn(self.name, self.job_enqueued)
        self._register_simulation(ssn)
        ssn.add_event_handler(
            EventHandler(
                allocate=self._on_event(ssn, allocate=True),
                deallocate=self._on_event(ssn, allocate=False),
                owner=self.name,
            )
        )

    def on_session_close(self, ssn: Session) -> None:
        # queue_attributes stays: the simulator prints deserved after the session closed, and
        # the plugin instance is dropped with its session anyway.
        for attr in self.queue_attributes.values():
            metrics.update_queue_resource("allocated", attr.name, attr.allocated)
            metrics.QUEUE_SHARE.labels(queue_name=attr.name).set(attr.share)

    def _record_metrics(self, ssn: Session) -> None:
        for name in ssn.queues:
            attr = self.queue_attributes.get(name)
            if attr is None:
                # A queue without jobs in this session holds and asks for nothing.
                for kind in ("allocated", "request", "inqueue"):
                    metrics.update_queue_resource(kind, name, Resource())
                continue
            metrics.update_queue_resource("allocated", name, attr.allocated)
            metrics.update_queue_resource("request", name, attr.request)
            metrics.update_queue_resource("inqueue", name, attr.inqueue)
            metrics.update_queue_resource("deserved", name, attr.deserved)
            metrics.QUEUE_WEIGHT.labels(queue_name=name).set(attr.weight)
            metrics.QUEUE_SHARE.labels(queue_name=name).set(attr.share)

    def _new_attributes(self, queue: QueueInfo) -> QueueAttributes:
        attr = QueueAttributes(queue.name, queue.weight)
        if queue.guarantee is not None:
            attr.guarantee = queue.guarantee.clone()
        real_capability = exceeded_part(self.total_resource, self.total_guarantee).add(
            attr.guarantee
        )
        if queue.capability is not None:
            capability = queue.capability.clone()
            # A capability that names no cpu (or memory) does not limit it.
            if capability.milli_cpu <= 0:
                capability.milli_cpu = MAX_FLOAT
            if capability.memory <= 0:
                capability.memory = MAX_FLOAT
            attr.capability = capability
            real_capability.min_dimension_resource(capability, DimensionDefault.INFINITY)
        attr.real_capability = real_capability
        return attr

    @staticmethod
    def _account_job(attr: QueueAttributes, job: JobInfo) -> None:
        usage = job_usage(job)
        attr.allocated.add(usage.allocated)
        attr.request.add(usage.request)
        attr.inqueue.add(usage.inqueue)
        attr.elastic.add(usage.elastic)

    # ------------------------------------------------------------------ hooks

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        if left.priority != right.priority:
            return right.priority - left.priority
        left_attr = self.queue_attributes.get(left.name)
        right_attr = self.queue_attributes.get(right.name)
        left_share = left_attr.share if left_attr is not None else 0.0
        right_share = right_attr.share if right_attr is not None else 0.0
        if left_share == right_share:
            return 0
        return -1 if left_share < right_share else 1

    def _reclaimable(
        self, ssn: Session
    ) -> Callable[[TaskInfo, list[TaskInfo]], tuple[list[TaskInfo], int]]:
        def reclaimable(
            _reclaimer: TaskInfo, candidates: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            """Take from a queue only while it holds more than it deserves."""
            victims: list[TaskInfo] = []
            remaining: dict[str, Resource] = {}
            for candidate in candidates:
                job = ssn.jobs.get(candidate.job)
                attr = self.queue_attributes.get(job.queue) if job is not None else None
                if job is None or attr is None:
                    log.warning(
                        "proportion: skip reclaimee %s: job or queue unknown", candidate.key
                    )
                    continue
                allocated = remaining.get(job.queue)
                if allocated is None:
                    allocated = remaining[job.queue] = attr.allocated.clone()
                if not allocated.less_equal(attr.deserved, DimensionDefault.ZERO):
                    allocated.sub_without_assert(candidate.resreq)
                    victims.append(candidate)
            return victims, Vote.PERMIT

        return reclaimable

    def overused(self, queue: QueueInfo) -> bool:
        attr = self.queue_attributes.get(queue.name)
        if attr is None:
            return False
        overused = attr.deserved.less_equal(attr.allocated, DimensionDefault.ZERO)
        metrics.QUEUE_OVERUSED.labels(queue_name=queue.name).set(1 if overused else 0)
        if overused:
            log.info(
                "proportion: queue %s is overused: deserved <%s>, allocated <%s>, share %s",
                queue.name,
                attr.deserved,
                attr.allocated,
                attr.share,
            )
        return overused

    def queue_allocatable(self, queue: QueueInfo, candidates: list[TaskInfo]) -> bool:
        """Would the queue stay within ``deserved`` in every dimension the candidates ask for?"""
        if not queue.is_open:
            log_queue_not_open(log, "proportion", queue, "no allocation in it")
            return False
        attr = self.queue_attributes.get(queue.name)
        if attr is None:
            return True
        requested = Resource()
        for task in candidates:
            requested.add(task.resreq)
        future = attr.allocated.clone().add(requested)
        fits, _ = future.less_equal_with_dimension_and_resources_name(attr.deserved, requested)
        if not fits:
            log.info(
                "proportion: queue %s: deserved <%s>, allocated <%s>; candidates request <%s>",
                queue.name,
                attr.deserved,
                attr.allocated,
                requested,
            )
        return fits

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        if _PLAIN_ALLOCATABLE and queue.is_open:
            attr = self.queue_attributes.get(queue.name)
            request = task.resreq
            if attr is not None and (_PLAIN_SCALARS or not request.scalar_resources):
                # ``queue_allocatable`` of one task in plain floats: the same sums (0.0 +
                # request, then allocated + that) and comparisons. Asked for every task
                # allocate places; a refusal goes the general way (it logs).
                cpu, memory = 0.0 + request.milli_cpu, 0.0 + request.memory
                allocated, deserved = attr.allocated, attr.deserved
                if (
                    not (cpu > 0 and allocated.milli_cpu + cpu > deserved.milli_cpu)
                    and not (memory > 0 and allocated.memory + memory > deserved.memory)
                    and _scalars_within(request, allocated, deserved)
                ):
                    return True
        return self.queue_allocatable(queue, [task])

    def _job_enqueueable(self, ssn: Session) -> VoteFn:
        def enqueueable(job: JobInfo) -> Vote:
            queue = ssn.queues.get(job.queue)
            if queue is None:
                log.info("proportion: queue %s unknown: job %s stays pending", job.queue, job.uid)
                return Vote.REJECT
            if not queue.is_open:
                log_queue_not_open(log, "proportion", queue, "its jobs stay pending")
                return Vote.REJECT
            attr = self.queue_attributes.get(job.queue)
            if attr is None or job.pod_group is None or job.pod_group.min_resources is None:
                return Vote.PERMIT
            minimum = job.min_resources()
            # What the queue would hold with this job admitted; elastic parts of running jobs
            # can be reclaimed, so they do not count against it.
            wanted = (
                minimum.clone()
                .add(attr.allocated)
                .add(attr.inqueue)
                .sub_without_assert(attr.elastic)
            )
            fits, names = wanted.less_equal_with_dimension_and_resources_name(
                attr.real_capability, minimum
            )
            if fits:
                return Vote.PERMIT
            ssn.record_job_event(
                job,
                "Normal",
                "Unschedulable",
                format_resource_names("queue resource quota insufficient", "insufficient", names),
            )
            return Vote.REJECT

        return enqueueable

    def job_enqueued(self, job: JobInfo) -> None:
        if job.pod_group is None or job.pod_group.min_resources is None:
            return
        attr = self.queue_attributes.get(job.queue)
        if attr is None:
            return
        # Gated tasks will not be created soon; reserving for them would block other jobs.
        attr.inqueue.add(job.deduct_sch_gated_resources(job.min_resources()))

    def _on_event(self, ssn: Session, allocate: bool) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            task = event.task
            job = ssn.jobs.get(task.job)
            attr = self.queue_attributes.get(job.queue) if job is not None else None
            if attr is None:
                log.warning("proportion: skip event for %s: job or queue unknown", task.key)
                return
            if allocate:
                attr.allocated.add(task.resreq)
            else:
                attr.allocated.sub_without_assert(task.resreq)
            # Gauges are set once at session close, not per placement (they were a
            # measurable share of each allocation's cost).
            attr.share_outdated()

        return handle

    # ------------------------------------------------------------------ dry runs

    def _register_simulation(self, ssn: Session) -> None:
        def queues_of(task: TaskInfo) -> list[QueueAttributes] | str:
            job = ssn.jobs.get(task.job)
            attr = self.queue_attributes.get(job.queue) if job is not None else None
            return (
                [attr]
                if attr is not None
                else f"job or queue of task {task.key} not in the session"
            )

        register_queue_simulation(ssn, self.name, self.simulate_allocatable, queues_of)

    def simulate_allocatable(
        self, state: SimulationState, queue: QueueInfo, task: TaskInfo
    ) -> bool:
        """``allocatable`` against the dry run's allocations. Without a seeded state (no
        PrePredicate ran) the answer is no, as upstream's failed state read is."""
        allocations = state.get(self.name)
        attr = self.queue_attributes.get(queue.name)
        if not isinstance(allocations, SimulatedAllocations) or attr is None:
            log.error("proportion: no dry-run state for queue %s, task %s", queue.name, task.key)
            return False
        future = allocations.allocated(attr).clone().add(task.resreq)
        fits, _ = future.less_equal_with_dimension_and_resources_name(attr.deserved, task.resreq)
        return fits


# The arguments this plugin reads (upstream proportion.go reads no argument).
ARGUMENTS: Final[frozenset[str]] = frozenset()


def new(arguments: Arguments) -> ProportionPlugin:
    return ProportionPlugin(arguments)
