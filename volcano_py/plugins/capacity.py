"""capacity: queue quotas from explicit ``deserved`` amounts, flat or hierarchical
(``pkg/scheduler/plugins/capacity/capacity.go``).

Each queue gets a ``deserved`` amount straight from its spec (proportion computes it from
weights), a ``guarantee`` nobody else may use, a ``capability`` it may never exceed and a
``realCapability``: the capability cut down to what the cluster can give it once every other
queue's guarantee is set aside. A queue may borrow idle resources up to its real capability;
what it holds beyond ``deserved`` can be reclaimed by a queue still below its own.

With ``enableHierarchy`` on the plugin's tier entry the queues form a tree under ``root``
(``spec.parent``, default ``root``): a job's usage also counts on every ancestor, every check
runs for the leaf and each ancestor, a child inherits its parent's capability where it sets
none, and only leaf queues may hold jobs. An inconsistent tree (unknown parent, a job in an
inner queue, no ``root`` queue) makes the plugin refuse everything for the session, as
upstream does, rather than schedule against a quota it cannot compute.

Registers QueueOrderFn, VictimQueueOrderFn (hierarchical only), ReclaimableFn, PreemptiveFn
(with the ``ancestorReclaimLevel`` argument), AllocatableFn, JobEnqueueableFn, JobEnqueuedFn
and allocation event handlers; records the queue metrics and, on close, ``queue_overused``.
For topology-aware preemption's dry run it also registers a PrePredicateFn seeding the task's
simulation state and SimulateAllocatableFn / SimulateAddTaskFn / SimulateRemoveTaskFn, which
check and move the queues' allocations in that state (``_simulated_allocations``).
``deserved_by_queue()`` and ``summary()`` stay readable after the session closed (the
simulator prints them).

Not ported:

* Dynamic Resource Allocation quota (``deviceclass/<class>`` counts and
  ``<dim>.deviceclass/<class>`` capacities, ``capacity.DynamicResourceAllocationEnable``,
  ``capacity.DRAConsumableCapacityEnable``): the scheduler has no ResourceClaim model. Such
  names in a queue spec are dropped like any non-resource name; asking for DRA is logged.
* The ``SchedulingGatesQueueAdmission`` reserved-task cache (an alpha feature gate, off by
  default upstream; the project has no feature gates yet).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Final

from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import (
    MAX_FLOAT,
    MAX_INT_AS_FLOAT,
    DimensionDefault,
    Resource,
    exceeded_part,
    intersection,
    intersection_with_ignored_scalar_resources,
)
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import ROOT_QUEUE, Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.hooks import (
    EvictableFn,
    EvictionContext,
    EvictionKind,
    SimulationState,
    UnifiedEvictableFn,
    VoteFn,
)
from volcano_py.framework.priority_queue import PriorityQueue
from volcano_py.framework.session import Session, victims_queue
from volcano_py.plugins._plugin_helpers import (
    JobUsage,
    format_resource_names,
    job_usage,
    max_resource,
    plugin_option,
    share,
)
from volcano_py.plugins._simulated_allocations import (
    SimulatedAllocations,
    register_queue_simulation,
)

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "capacity"
ANCESTOR_RECLAIM_LEVEL_KEY: Final = "ancestorReclaimLevel"
DRA_ENABLE_KEY: Final = "capacity.DynamicResourceAllocationEnable"
DRA_CONSUMABLE_CAPACITY_KEY: Final = "capacity.DRAConsumableCapacityEnable"


@dataclass(slots=True)
class QueueAttributes:
    """What the plugin knows of one queue during a session."""

    name: str
    deserved: Resource = field(default_factory=Resource)
    # Flat mode: the spec capability with cpu/memory <= 0 read as unlimited, empty when unset.
    # Hierarchical mode: the spec capability, completed from the parent's where unset.
    capability: Resource = field(default_factory=Resource)
    # The capability cut to what the cluster (or the parent) can give once the guarantees
    # of the other queues are set aside: the hard limit every check uses.
    real_capability: Resource = field(default_factory=Resource)
    guarantee: Resource = field(default_factory=Resource)
    allocated: Resource = field(default_factory=Resource)
    # allocated plus what pending tasks ask for.
    request: Resource = field(default_factory=Resource)
    # minResources still reserved by admitted jobs that are not fully placed.
    inqueue: Resource = field(default_factory=Resource)
    # What jobs hold beyond their minResources.
    elastic: Resource = field(default_factory=Resource)
    # Root first, parent last (hierarchical mode only).
    ancestors: list[str] = field(default_factory=list)
    children: dict[str, QueueAttributes] = field(default_factory=dict)
    share: float = 0.0

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def update_share(self) -> None:
        """The largest fraction of ``deserved`` the queue holds. A queue without ``deserved``
        is best-effort and gets share 1 whatever it holds, so it is served only after every
        queue with a deserved amount reached it (the queue order breaks the tie in favour of
        queues with ``deserved``); otherwise an idle best-effort queue at share 0 would keep
        winning the queue order and be reclaimed from again and again."""
        if self.deserved.is_empty():
            self.share = 1.0
            return
        highest = 0.0
        for name in self.deserved.resource_names():
            highest = max(highest, share(self.allocated.get(name), self.deserved.get(name)))
        self.share = highest


def _add_usage(attr: QueueAttributes, usage: JobUsage) -> None:
    attr.allocated.add(usage.allocated)
    attr.request.add(usage.request)
    attr.inqueue.add(usage.inqueue)
    attr.elastic.add(usage.elastic)


def common_ancestor_level(left: QueueAttributes, right: QueueAttributes) -> int:
    """Index in ``ancestors`` of the deepest ancestor two queues share (``getQueueLevel``):
    the length of the common prefix of their ancestor paths, minus one, floored at 0."""
    level = 0
    for index in range(min(len(left.ancestors), len(right.ancestors))):
        if left.ancestors[index] != right.ancestors[index]:
            break
        level = index
    return level


def ancestor_at_depth(attr: QueueAttributes, depth: int) -> str | None:
    """The ancestor ``depth`` levels up (1: the parent), if the queue has one."""
    if depth <= 0 or len(attr.ancestors) < depth:
        return None
    return attr.ancestors[len(attr.ancestors) - depth]


def _ancestors_within(attr: QueueAttributes, max_level: int) -> dict[int, str]:
    """Level -> ancestor, for the levels 1..``max_level`` the queue has."""
    found: dict[int, str] = {}
    for level in range(1, max_level + 1):
        ancestor = ancestor_at_depth(attr, level)
        if ancestor is not None:
            found[level] = ancestor
    return found


def _running_allocation(allocations: dict[str, Resource], attr: QueueAttributes) -> Resource:
    """The queue's allocation as a victim walk has lowered it so far (a copy, made once)."""
    allocated = allocations.get(attr.name)
    if allocated is None:
        allocated = allocations[attr.name] = attr.allocated.clone()
    return allocated


def _keeps_guarantee(attr: QueueAttributes, allocated: Resource, victim: TaskInfo) -> bool:
    """Without ``victim`` the queue would still hold at least its guarantee."""
    remaining = allocated.clone().sub_without_assert(victim.resreq)
    return attr.guarantee.less_equal(remaining, DimensionDefault.ZERO)


def _above_deserved(attr: QueueAttributes, allocated: Resource, victim: TaskInfo) -> bool:
    """The queue holds more than it deserves on some dimension ``victim`` uses."""
    exceeds, _ = allocated.greater_partly_with_relevant_dimensions(attr.deserved, victim.resreq)
    return exceeds


def _has_relevant_deserved(task: TaskInfo, deserved: Resource) -> bool:
    return bool(intersection(task.resreq, deserved))


class _HierarchyError(ValueError):
    """The queue tree cannot be built (unknown parent, cycle)."""


class CapacityPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.ancestor_reclaim_level = 0
        self.hierarchy = False
        # False when the queue tree is inconsistent: every check then refuses.
        self.ready = True
        self.total_resource = Resource()
        self.total_guarantee = Resource()
        self.queue_attributes: dict[str, QueueAttributes] = {}

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

    def _parse_arguments(self) -> None:
        level = self.arguments.get_int(ANCESTOR_RECLAIM_LEVEL_KEY, 0)
        # Through the arguments' channel: named once per conf load, not every session.
        if level < 0:
            self.arguments.warn(
                f"{ANCESTOR_RECLAIM_LEVEL_KEY} should be non-negative, got {level}; using 0"
            )
            level = 0
        self.ancestor_reclaim_level = level
        for key in (DRA_ENABLE_KEY, DRA_CONSUMABLE_CAPACITY_KEY):
            if self.arguments.get_bool(key, False):
                self.arguments.warn(f"{key} is not supported; DRA quota is not enforced")

    def on_session_open(self, ssn: Session) -> None:
        self._parse_arguments()
        self.total_resource = ssn.total_resource.clone()
        self.total_guarantee = Resource()
        self.queue_attributes = {}
        option = plugin_option(ssn, self.name)
        self.hierarchy = option is not None and option.enabled("enableHierarchy")
        if self.hierarchy:
            self.ready = self._build_hierarchical(ssn)
            if self.ready:
                self._record_metrics(ssn)
                ssn.add_queue_order_fn(self.name, self.hierarchical_queue_order)
                ssn.add_victim_queue_order_fn(self.name, self.victim_queue_order)
        else:
            self.ready = True
            self._build_flat(ssn)
            self._record_metrics(ssn)
            ssn.add_queue_order_fn(self.name, self.flat_queue_order)

        ssn.add_reclaimable_fn(self.name, self._reclaimable(ssn))
        ssn.add_unified_evictable_fn(self.name, self._gang_evictable(ssn))
        ssn.add_preemptive_fn(self.name, self.preemptive)
        ssn.add_allocatable_fn(self.name, self.allocatable)
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
        for attr in self.queue_attributes.values():
            metrics.QUEUE_OVERUSED.labels(queue_name=attr.name).set(1.0 if attr.share > 1 else 0.0)
            metrics.update_queue_resource("allocated", attr.name, attr.allocated)
            metrics.QUEUE_SHARE.labels(queue_name=attr.name).set(attr.share)
        # queue_attributes stays for deserved_by_queue(); the instance dies with its session.

    # ------------------------------------------------------------------ flat attributes

    def _real_capability(self, guarantee: Resource, capability: Resource | None) -> Resource:
        """What the cluster can give a queue once the other queues' guarantees are set aside,
        capped by its capability (dimensions the capability does not name are not capped)."""
        real = exceeded_part(self.total_resource, self.total_guarantee).add(guarantee)
        if capability is not None:
            real.min_dimension_resource(capability, DimensionDefault.INFINITY)
        return real

    def _new_flat_attributes(self, queue: QueueInfo) -> QueueAttributes:
        attr = QueueAttributes(queue.name)
        if queue.deserved is not None:
            attr.deserved = queue.deserved.clone()
        if queue.guarantee is not None:
            attr.guarantee = queue.guarantee.clone()
        capability: Resource | None = None
        if queue.capability is not None:
            capability = queue.capability.clone()
            # A capability that names no cpu (or memory) does not limit it.
            if capability.milli_cpu <= 0:
                capability.milli_cpu = MAX_FLOAT
            if capability.memory <= 0:
                capability.memory = MAX_FLOAT
            attr.capability = capability
        attr.real_capability = self._real_capability(attr.guarantee, capability)
        return attr

    def _build_flat(self, ssn: Session) -> None:
        for spec in ssn.queues.values():
            if spec.guarantee is not None:
                self.total_guarantee.add(spec.guarantee)
        for job in ssn.jobs.values():
            attr = self.queue_attributes.get(job.queue)
            if attr is None:
                queue = ssn.queues.get(job.queue)
                if queue is None:
                    log.warning(
                        "capacity: job %s: queue %s is not in the session", job.uid, job.queue
                    )
                    continue
                attr = self.queue_attributes[job.queue] = self._new_flat_attributes(queue)
            _add_usage(attr, job_usage(job))
        for attr in self.queue_attributes.values():
            # A queue cannot deserve more than it may ever hold, nor less than it is promised.
            attr.deserved.min_dimension_resource(attr.real_capability, DimensionDefault.INFINITY)
            attr.deserved = max_resource(attr.deserved, attr.guarantee)
            attr.update_share()
            self._log_attributes(attr)

    # ------------------------------------------------------------------ hierarchical attributes

    @staticmethod
    def _new_tree_attributes(queue: QueueInfo) -> QueueAttributes:
        attr = QueueAttributes(queue.name)
        if queue.deserved is not None:
            attr.deserved = queue.deserved.clone()
        if queue.capability is not None:
            attr.capability = queue.capability.clone()
        if queue.guarantee is not None:
            attr.guarantee = queue.guarantee.clone()
        return attr

    def _link_to_parent(self, queue: QueueInfo, ssn: Session, visiting: set[str]) -> None:
        """Hang ``queue`` under its parent (creating the parent's attributes, and linking
        the parent in turn, the first time it is met) and record its ancestor path."""
        if queue.name == ROOT_QUEUE:
            return
        if queue.name in visiting:
            raise _HierarchyError(f"cycle detected in queue hierarchy for queue {queue.name}")
        visiting.add(queue.name)
        try:
            parent_name = queue.parent_name
            parent = ssn.queues.get(parent_name)
            if parent is None:
                raise _HierarchyError(
                    f"the queue {queue.name} has invalid parent queue {parent_name}"
                )
            attrs = self.queue_attributes
            if parent_name not in attrs:
                attrs[parent_name] = self._new_tree_attributes(parent)
                self._link_to_parent(parent, ssn, visiting)
            attrs[parent_name].children[queue.name] = attrs[queue.name]
            attrs[queue.name].ancestors = [*attrs[parent_name].ancestors, parent_name]
        finally:
            visiting.discard(queue.name)

    def _build_hierarchical(self, ssn: Session) -> bool:
        attrs = self.queue_attributes
        for queue in ssn.queues.values():
            if queue.name in attrs:
                continue
            attrs[queue.name] = self._new_tree_attributes(queue)
            try:
                self._link_to_parent(queue, ssn, set())
            except _HierarchyError as error:
                log.error(
                    "capacity: failed to build the attributes of queue %s: %s", queue.name, error
                )
                return False

        for job in ssn.jobs.values():
            attr = attrs.get(job.queue)
            if attr is None:
                log.warning(
                    "capacity: job %s references queue %s, which is not in the session; skipped",
                    job.uid,
                    job.queue,
                )
                continue
            if not attr.is_leaf:
                log.error(
                    "capacity: the queue %s of job %s is not a leaf queue; only leaf queues"
                    " may hold jobs",
                    attr.name,
                    job.uid,
                )
                return False
            usage = job_usage(job)
            _add_usage(attr, usage)
            for ancestor in attr.ancestors:
                _add_usage(attrs[ancestor], usage)

        root = attrs.get(ROOT_QUEUE)
        if root is None:
            log.warning(
                "capacity: root queue %r is not in the session; hierarchy unusable", ROOT_QUEUE
            )
            return False
        # Users may submit more than the cluster holds today, so root is not limited by the
        # cluster size: without a capability of its own it is unlimited on cpu, memory and
        # every resource the cluster has. Quotas are set on the queues users create.
        if root.capability.is_empty():
            unlimited = Resource.infinite()
            for name in self.total_resource.scalar_resources:
                unlimited.set_scalar(name, MAX_INT_AS_FLOAT)
            root.capability = unlimited
        root.real_capability = root.capability.clone()
        self._check_hierarchical_queue(root)

        unreachable = [
            name for name, attr in attrs.items() if name != ROOT_QUEUE and not attr.ancestors
        ]
        if unreachable:
            # Only a parent cycle leaves a queue off root's tree; such queues keep an empty
            # real capability, so nothing in them can be admitted or placed.
            log.error("capacity: queues %s are not under root (parent cycle)", sorted(unreachable))
        for attr in attrs.values():
            attr.update_share()
            self._log_attributes(attr)
        return True

    def _check_hierarchical_queue(self, attr: QueueAttributes) -> None:
        """Complete each child's deserved, capability and real capability from ``attr``, top
        down. Inconsistent specs (children promised more than the parent has) are logged
        only: stopping every scheduling cycle over a quota typo would hurt more."""
        total_guarantee, total_deserved = Resource(), Resource()
        for child in attr.children.values():
            child.deserved = max_resource(child.deserved, child.guarantee)
            total_deserved.add(child.deserved)
            total_guarantee.add(child.guarantee)
            # cpu/memory <= 0 means "not set": inherit the parent's.
            if child.capability.milli_cpu <= 0:
                child.capability.milli_cpu = attr.capability.milli_cpu
            if child.capability.memory <= 0:
                child.capability.memory = attr.capability.memory
            for name, value in attr.capability.scalar_resources.items():
                child.capability.scalar_resources.setdefault(name, value)
            exceeds, names = child.capability.greater_partly_with_resources_name(
                attr.capability, DimensionDefault.INFINITY
            )
            if exceeds:
                log.error(
                    "capacity: child queue %s capability (%s) exceeds parent queue %s capability"
                    " (%s) on %s; the child's effective capability is limited by the parent",
                    child.name,
                    child.capability,
                    attr.name,
                    attr.capability,
                    names,
                )
        if attr.name == ROOT_QUEUE:
            attr.guarantee = total_guarantee
            attr.deserved = total_deserved
        for child in attr.children.values():
            # The parent's room minus what all its children are guaranteed, plus the child's
            # own guarantee, capped by the child's capability.
            real = exceeded_part(attr.real_capability, total_guarantee).add(child.guarantee)
            real.min_dimension_resource(child.capability, DimensionDefault.INFINITY)
            child.real_capability = real
        if attr.deserved.less_partly(total_deserved, DimensionDefault.ZERO):
            log.error(
                "capacity: sum of child queue deserved (%s) exceeds parent queue %s deserved"
                " (%s); this may affect resource distribution",
                total_deserved,
                attr.name,
                attr.deserved,
            )
        if attr.guarantee.less_partly(total_guarantee, DimensionDefault.ZERO):
            log.error(
                "capacity: sum of child queue guarantees (%s) exceeds parent queue %s guarantee"
                " (%s); not all child guarantees can be met at once",
                total_guarantee,
                attr.name,
                attr.guarantee,
            )
        for child in attr.children.values():
            self._check_hierarchical_queue(child)

    @staticmethod
    def _log_attributes(attr: QueueAttributes) -> None:
        log.debug(
            "capacity: queue %s deserved <%s> realCapability <%s> allocated <%s> request <%s>"
            " inqueue <%s> elastic <%s> share %.2f",
            attr.name,
            attr.deserved,
            attr.real_capability,
            attr.allocated,
            attr.request,
            attr.inqueue,
            attr.elastic,
            attr.share,
        )

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
            real = self._real_capability(queue.guarantee or empty, queue.capability)
            metrics.update_queue_resource("real_capacity", name, real)

    # ------------------------------------------------------------------ queue order

    @staticmethod
    def _compare_share(left: QueueAttributes | None, right: QueueAttributes | None) -> int:
        """Smaller share first; at equal shares a queue with ``deserved`` goes before a
        best-effort one (which always has share 1)."""
        if left is None or right is None:
            return 0
        if left.share == right.share:
            left_has, right_has = not left.deserved.is_empty(), not right.deserved.is_empty()
            if left_has == right_has:
                return 0
            return -1 if left_has else 1
        return -1 if left.share < right.share else 1

    def flat_queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        if left.priority != right.priority:
            return right.priority - left.priority
        attrs = self.queue_attributes
        return self._compare_share(attrs.get(left.name), attrs.get(right.name))

    def hierarchical_queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        """Priority; then leaves before inner queues; two inner queues by share; two leaves by
        the shares of their subtrees where their paths part (the children of their deepest
        common ancestor), so fairness holds between subtrees, not only between leaves."""
        if left.priority != right.priority:
            return right.priority - left.priority
        attrs = self.queue_attributes
        left_attr, right_attr = attrs.get(left.name), attrs.get(right.name)
        if left_attr is None or right_attr is None:
            return 0
        if left_attr.is_leaf != right_attr.is_leaf:
            return -1 if left_attr.is_leaf else 1
        if not left_attr.is_leaf:
            return self._compare_share(left_attr, right_attr)
        level = common_ancestor_level(left_attr, right_attr)
        left_side = left_attr.name
        if level + 1 < len(left_attr.ancestors):
            left_side = left_attr.ancestors[level + 1]
        right_side = right_attr.name
        if level + 1 < len(right_attr.ancestors):
            right_side = right_attr.ancestors[level + 1]
        return self._compare_share(attrs.get(left_side), attrs.get(right_side))

    def victim_queue_order(self, left: QueueInfo, right: QueueInfo, preemptor: QueueInfo) -> int:
        """Take first from the queue closest to the preemptor's in the tree (the deeper the
        common ancestor, the closer): siblings settle among themselves before a reclaim
        reaches into other subtrees."""
        attrs = self.queue_attributes
        left_attr, right_attr = attrs.get(left.name), attrs.get(right.name)
        preemptor_attr = attrs.get(preemptor.name)
        if left_attr is None or right_attr is None or preemptor_attr is None:
            return 0
        left_level = common_ancestor_level(left_attr, preemptor_attr)
        right_level = common_ancestor_level(right_attr, preemptor_attr)
        if left_level == right_level:
            return 0
        return -1 if left_level > right_level else 1

    # ------------------------------------------------------------------ reclaim

    def _reclaimee_ancestor_to_check(
        self, reclaimer: QueueAttributes, reclaimee: QueueAttributes, level: int
    ) -> tuple[QueueAttributes | None, bool]:
        """(ancestor of the reclaimee at ``level``, whether it must be checked). Root and an
        ancestor the reclaimer shares at the same level are not checked: reclaiming inside a
        subtree does not change that subtree's total."""
        if level <= 0:
            return None, False
        reclaimee_ancestor = ancestor_at_depth(reclaimee, level)
        if reclaimee_ancestor is None or reclaimee_ancestor == ROOT_QUEUE:
            return None, False
        if ancestor_at_depth(reclaimer, level) == reclaimee_ancestor:
            return None, False
        return self.queue_attributes.get(reclaimee_ancestor), True

    def _shares_non_root_ancestor_within_level(
        self, left: QueueAttributes, right: QueueAttributes
    ) -> bool:
        level = self.ancestor_reclaim_level
        if level <= 0:
            return False
        left_ancestors = set(_ancestors_within(left, level).values())
        right_ancestors = set(_ancestors_within(right, level).values())
        return bool((left_ancestors & right_ancestors) - {ROOT_QUEUE})

    def _reclaimable(self, ssn: Session) -> EvictableFn:
        def reclaimable(
            reclaimer: TaskInfo, reclaimees: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            if not self.ready:
                log.info("capacity: queue hierarchy is inconsistent; no reclaim")
                return [], Vote.REJECT
            reclaimer_job = ssn.jobs.get(reclaimer.job)
            if reclaimer_job is None:
                log.warning(
                    "capacity: skip reclaim for %s: its job is not in the session", reclaimer.key
                )
                return [], Vote.REJECT
            reclaimer_attr = self.queue_attributes.get(reclaimer_job.queue)
            if reclaimer_attr is None:
                log.warning(
                    "capacity: skip reclaim for %s: queue %s has no attributes",
                    reclaimer.key,
                    reclaimer_job.queue,
                )
                return [], Vote.REJECT
            victims = self._select_victims(ssn, reclaimer, reclaimer_attr, reclaimees)
            return victims, Vote.PERMIT

        return reclaimable

    def _gang_evictable(self, ssn: Session) -> UnifiedEvictableFn:
        """gangreclaim's victims: per victim queue, never below its guarantee, and only while
        the queue is above what it deserves on the victim's dimensions (a task holding nothing
        the queue deserves is always a victim). gangpreempt stays inside one queue, where
        capacity has nothing to say."""

        def evictable(
            context: EvictionContext, candidates: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            if context.kind is EvictionKind.GANG_PREEMPT:
                return candidates, Vote.PERMIT
            if not self.ready:
                log.info("capacity: queue hierarchy is inconsistent; no reclaim")
                return [], Vote.REJECT
            victims: list[TaskInfo] = []
            allocations: dict[str, Resource] = {}
            for candidate in candidates:
                job = ssn.jobs.get(candidate.job)
                attr = self.queue_attributes.get(job.queue) if job is not None else None
                if job is None or attr is None:
                    continue
                allocated = _running_allocation(allocations, attr)
                if not _keeps_guarantee(attr, allocated, candidate):
                    continue
                if _has_relevant_deserved(candidate, attr.deserved) and not _above_deserved(
                    attr, allocated, candidate
                ):
                    continue
                allocated.sub_without_assert(candidate.resreq)
                victims.append(candidate)
            return victims, Vote.PERMIT

        return evictable

    def _select_victims(
        self,
        ssn: Session,
        reclaimer: TaskInfo,
        reclaimer_attr: QueueAttributes,
        reclaimees: list[TaskInfo],
    ) -> list[TaskInfo]:
        """Walk the reclaimees most-evictable first, keeping running copies of each queue's
        allocation so a queue is only taken from while it stays above what it deserves (and
        never below its guarantee)."""
        victims: list[TaskInfo] = []
        allocations: dict[str, Resource] = {}
        use_ancestors = self.hierarchy and self.ancestor_reclaim_level > 0
        ordered: PriorityQueue[TaskInfo] = victims_queue(ssn, reclaimees, reclaimer)
        while not ordered.empty():
            reclaimee = ordered.pop()
            job = ssn.jobs.get(reclaimee.job)
            attr = self.queue_attributes.get(job.queue) if job is not None else None
            if job is None or attr is None:
                log.warning("capacity: skip reclaimee %s: job or queue unknown", reclaimee.key)
                continue
            # Evicting a task that frees nothing the reclaimer needs would not help it.
            if not intersection_with_ignored_scalar_resources(
                reclaimee.resreq, reclaimer.init_resreq
            ):
                continue
            allocated = _running_allocation(allocations, attr)
            if not _keeps_guarantee(attr, allocated, reclaimee):
                continue

            if not _has_relevant_deserved(reclaimee, attr.deserved):
                # The queue deserves nothing of what the task holds: it only borrows. Unless
                # both sides share a subtree where the reclaimer deserves nothing of what it
                # asks either: then there is no real contention to settle by eviction.
                if (
                    use_ancestors
                    and self._shares_non_root_ancestor_within_level(reclaimer_attr, attr)
                    and not _has_relevant_deserved(reclaimer, reclaimer_attr.deserved)
                ):
                    continue
            elif not _above_deserved(attr, allocated, reclaimee):
                continue

            ancestor_allocations: dict[str, Resource] = {}
            if use_ancestors and not self._ancestors_over_deserved(
                reclaimer_attr, attr, reclaimee, allocations, ancestor_allocations
            ):
                continue

            allocated.sub_without_assert(reclaimee.resreq)
            for ancestor_allocated in ancestor_allocations.values():
                ancestor_allocated.sub_without_assert(reclaimee.resreq)
            victims.append(reclaimee)
        return victims

    def _ancestors_over_deserved(
        self,
        reclaimer_attr: QueueAttributes,
        attr: QueueAttributes,
        reclaimee: TaskInfo,
        allocations: dict[str, Resource],
        ancestor_allocations: dict[str, Resource],
    ) -> bool:
        """With ``ancestorReclaimLevel`` k: every ancestor of the reclaimee's queue up to k
        levels (not root, not shared with the reclaimer) must itself be above its deserved
        on the task's dimensions, so a subtree within its share is not raided because one
        of its leaves borrowed from a sibling."""
        for level in range(1, self.ancestor_reclaim_level + 1):
            ancestor, must_check = self._reclaimee_ancestor_to_check(reclaimer_attr, attr, level)
            if not must_check:
                continue
            if ancestor is None:
                log.warning(
                    "capacity: skip reclaimee %s: ancestor at level %d unknown",
                    reclaimee.key,
                    level,
                )
                return False
            allocated = allocations.get(ancestor.name)
            if allocated is None:
                allocated = allocations[ancestor.name] = ancestor.allocated.clone()
            ancestor_allocations[ancestor.name] = allocated
            if not _has_relevant_deserved(reclaimee, ancestor.deserved):
                continue
            exceeds, _ = allocated.greater_partly_with_relevant_dimensions(
                ancestor.deserved, reclaimee.resreq
            )
            if not exceeds:
                return False
        return True

    # ------------------------------------------------------------------ quota checks

    def preemptive(self, queue: QueueInfo, candidates: list[TaskInfo]) -> bool:
        """May the queue reclaim for ``candidates``? Only within its real capability, and
        only while it is below ``deserved`` on some dimension the candidates ask for (or,
        with ``ancestorReclaimLevel``, one of its nearest ancestors is)."""
        if not self.ready:
            log.info(
                "capacity: queue hierarchy is inconsistent; queue %s may not reclaim", queue.name
            )
            return False
        if not queue.is_open:
            log.info("capacity: queue %s is %s, not Open: no reclaim", queue.name, queue.state)
            return False
        attr = self.queue_attributes.get(queue.name)
        if attr is None:
            return True
        requested = Resource()
        for task in candidates:
            requested.add(task.resreq)
        future = attr.allocated.clone().add(requested)
        fits, _ = future.less_equal_with_dimension_and_resources_name(
            attr.real_capability, requested
        )
        if not fits:
            log.info(
                "capacity: queue %s cannot reclaim: future use <%s> exceeds realCapability <%s>",
                queue.name,
                future,
                attr.real_capability,
            )
            return False
        preemptive, _ = future.less_equal_partly_with_dimension_zero_filtered(
            attr.deserved, requested
        )
        if preemptive or not (self.hierarchy and self.ancestor_reclaim_level > 0):
            return preemptive
        for level in range(1, self.ancestor_reclaim_level + 1):
            ancestor_name = ancestor_at_depth(attr, level)
            if ancestor_name is None or ancestor_name == ROOT_QUEUE:
                continue
            ancestor = self.queue_attributes.get(ancestor_name)
            if ancestor is None:
                continue
            future_ancestor = ancestor.allocated.clone().add(requested)
            preemptive, _ = future_ancestor.less_equal_partly_with_dimension_zero_filtered(
                ancestor.deserved, requested
            )
            if preemptive:
                return True
        return False

    def _queue_allocatable(self, attr: QueueAttributes, task: TaskInfo) -> bool:
        """``allocated + task <= realCapability`` on the dimensions the task asks for. No
        ``deserved`` test: a queue may borrow idle resources up to its real capability."""
        future = attr.allocated.clone().add(task.resreq)
        fits, names = future.less_equal_with_dimension_and_resources_name(
            attr.real_capability, task.resreq
        )
        if not fits:
            log.info(
                "capacity: queue %s: realCapability <%s>, allocated <%s>; task %s requests <%s>"
                " (insufficient %s)",
                attr.name,
                attr.real_capability,
                attr.allocated,
                task.key,
                task.resreq,
                ", ".join(names),
            )
        return fits

    def _path(self, attr: QueueAttributes) -> Iterable[QueueAttributes]:
        """The queue, then its ancestors up to root (flat mode: the queue alone)."""
        yield attr
        for name in reversed(attr.ancestors):
            yield self.queue_attributes[name]

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        if not queue.is_open:
            log.info(
                "capacity: queue %s is %s, not Open: cannot allocate %s",
                queue.name,
                queue.state,
                task.key,
            )
            return False
        if not self.ready:
            log.info("capacity: queue hierarchy is inconsistent; cannot allocate %s", task.key)
            return False
        attr = self.queue_attributes.get(queue.name)
        if attr is None:
            return True
        if self.hierarchy and not attr.is_leaf:
            log.info(
                "capacity: queue %s is not a leaf queue: cannot allocate %s", queue.name, task.key
            )
            return False
        return all(self._queue_allocatable(level, task) for level in self._path(attr))

    # ------------------------------------------------------------------ dry runs

    def _register_simulation(self, ssn: Session) -> None:
        def queues_of(task: TaskInfo) -> list[QueueAttributes] | str:
            job = ssn.jobs.get(task.job)
            attr = self.queue_attributes.get(job.queue) if job is not None else None
            if attr is None or not self.ready:
                return f"job or queue of {task.key} not in a usable queue tree"
            return list(self._path(attr))

        register_queue_simulation(ssn, self.name, self.simulate_allocatable, queues_of)

    def simulate_allocatable(
        self, state: SimulationState, queue: QueueInfo, task: TaskInfo
    ) -> bool:
        """``allocatable`` against the dry run's allocations, for the queue and each ancestor.
        Upstream does not look at the queue's state here; no seeded state means no."""
        allocations = state.get(self.name)
        if not isinstance(allocations, SimulatedAllocations) or not self.ready:
            return False
        attr = self.queue_attributes.get(queue.name)
        if attr is None:
            return True
        if self.hierarchy and not attr.is_leaf:
            return False
        return all(
            self._queue_allocatable_as(level, allocations.allocated(level), task)
            for level in self._path(attr)
        )

    @staticmethod
    def _queue_allocatable_as(attr: QueueAttributes, allocated: Resource, task: TaskInfo) -> bool:
        future = allocated.clone().add(task.resreq)
        fits, _ = future.less_equal_with_dimension_and_resources_name(
            attr.real_capability, task.resreq
        )
        return fits

    def _job_enqueueable(self, ssn: Session) -> VoteFn:
        def enqueueable(job: JobInfo) -> Vote:
            if not self.ready:
                log.info("capacity: queue hierarchy is inconsistent; job %s stays pending", job.uid)
                return Vote.REJECT
            attr = self.queue_attributes.get(job.queue)
            queue = ssn.queues.get(job.queue)
            if attr is None or queue is None:
                log.warning("capacity: job %s: queue %s unknown", job.uid, job.queue)
                return Vote.REJECT
            if self.hierarchy and not attr.is_leaf:
                return Vote.REJECT
            if not queue.is_open:
                log.info(
                    "capacity: queue %s is %s, not Open: job %s stays pending",
                    queue.name,
                    queue.state,
                    job.uid,
                )
                return Vote.REJECT
            if job.pod_group is None or job.pod_group.min_resources is None:
                return Vote.PERMIT
            minimum = job.min_resources()
            for level in self._path(attr):
                # What the queue would hold with this job admitted; elastic parts of running
                # jobs can be reclaimed, so they do not count against it.
                wanted = (
                    minimum.clone()
                    .add(level.allocated)
                    .add(level.inqueue)
                    .sub_without_assert(level.elastic)
                )
                fits, names = wanted.less_equal_with_dimension_and_resources_name(
                    level.real_capability, minimum
                )
                if not fits:
                    ssn.record_job_event(
                        job,
                        "Normal",
                        "Unschedulable",
                        format_resource_names(
                            "queue resource quota insufficient", "insufficient", names
                        ),
                    )
                    return Vote.REJECT
            return Vote.PERMIT

        return enqueueable

    def job_enqueued(self, job: JobInfo) -> None:
        if job.pod_group is None or job.pod_group.min_resources is None:
            return
        attr = self.queue_attributes.get(job.queue)
        if attr is None:
            return
        # Gated tasks will not be created soon; reserving for them would block other jobs.
        reserved = job.deduct_sch_gated_resources(job.min_resources())
        for level in self._path(attr):
            level.inqueue.add(reserved)

    # ------------------------------------------------------------------ events

    def _on_event(self, ssn: Session, allocate: bool) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            task = event.task
            job = ssn.jobs.get(task.job)
            attr = self.queue_attributes.get(job.queue) if job is not None else None
            if attr is None:
                log.warning("capacity: skip event for %s: job or queue unknown", task.key)
                return
            # Only the leaf's share is refreshed, as upstream: ancestors keep the share of
            # session open for the queue order, their allocation is kept current.
            for level in self._path(attr):
                if allocate:
                    level.allocated.add(task.resreq)
                else:
                    level.allocated.sub_without_assert(task.resreq)
            # Gauges are set once at session close, not per placement.
            attr.update_share()

        return handle


# The arguments this plugin reads (the keys upstream capacity.go reads).
ARGUMENTS: Final[frozenset[str]] = frozenset(
    {ANCESTOR_RECLAIM_LEVEL_KEY, DRA_ENABLE_KEY, DRA_CONSUMABLE_CAPACITY_KEY}
)


def new(arguments: Arguments) -> CapacityPlugin:
    return CapacityPlugin(arguments)
