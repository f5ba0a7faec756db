"""Reclaim: which tasks a queue below its deserved may take back, and which gangreclaim may
evict. A victim queue never drops below its guarantee and is only taken from while above what
it deserves (with ``ancestorReclaimLevel``, its nearest ancestors too)."""

from __future__ import annotations

import logging

from volcano_py.api.resource import (
    DimensionDefault,
    Resource,
    intersection,
    intersection_with_ignored_scalar_resources,
)
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import ROOT_QUEUE, Vote
from volcano_py.framework.hooks import (
    EvictableFn,
    EvictionContext,
    EvictionKind,
    UnifiedEvictableFn,
)
from volcano_py.framework.priority_queue import PriorityQueue
from volcano_py.framework.session import Session, victims_queue
from volcano_py.plugins.capacity.attributes import (
    CapacityState,
    QueueAttributes,
    ancestor_at_depth,
    ancestors_within,
)

log = logging.getLogger(__name__)


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


def reclaimee_ancestor_to_check(
    state: CapacityState, reclaimer: QueueAttributes, reclaimee: QueueAttributes, level: int
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
    return state.queue_attributes.get(reclaimee_ancestor), True


def shares_non_root_ancestor_within_level(
    state: CapacityState, left: QueueAttributes, right: QueueAttributes
) -> bool:
    level = state.ancestor_reclaim_level
    if level <= 0:
        return False
    left_ancestors = set(ancestors_within(left, level).values())
    right_ancestors = set(ancestors_within(right, level).values())
    return bool((left_ancestors & right_ancestors) - {ROOT_QUEUE})


def reclaimable_fn(state: CapacityState, ssn: Session) -> EvictableFn:
    def reclaimable(reclaimer: TaskInfo, reclaimees: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
        if not state.ready:
            log.info("capacity: queue hierarchy is inconsistent; no reclaim")
            return [], Vote.REJECT
        reclaimer_job = ssn.jobs.get(reclaimer.job)
        if reclaimer_job is None:
            log.warning(
                "capacity: skip reclaim for %s: its job is not in the session", reclaimer.key
            )
            return [], Vote.REJECT
        reclaimer_attr = state.queue_attributes.get(reclaimer_job.queue)
        if reclaimer_attr is None:
            log.warning(
                "capacity: skip reclaim for %s: queue %s has no attributes",
                reclaimer.key,
                reclaimer_job.queue,
            )
            return [], Vote.REJECT
        victims = select_victims(state, ssn, reclaimer, reclaimer_attr, reclaimees)
        return victims, Vote.PERMIT

    return reclaimable


def gang_evictable_fn(state: CapacityState, ssn: Session) -> UnifiedEvictableFn:
    """gangreclaim's victims: per victim queue, never below its guarantee, and only while
    the queue is above what it deserves on the victim's dimensions (a task holding nothing
    the queue deserves is always a victim). gangpreempt stays inside one queue, where
    capacity has nothing to say."""

    def evictable(
        context: EvictionContext, candidates: list[TaskInfo]
    ) -> tuple[list[TaskInfo], int]:
        if context.kind is EvictionKind.GANG_PREEMPT:
            return candidates, Vote.PERMIT
        if not state.ready:
            log.info("capacity: queue hierarchy is inconsistent; no reclaim")
            return [], Vote.REJECT
        victims: list[TaskInfo] = []
        allocations: dict[str, Resource] = {}
        for candidate in candidates:
            job = ssn.jobs.get(candidate.job)
            attr = state.queue_attributes.get(job.queue) if job is not None else None
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


def select_victims(
    state: CapacityState,
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
    use_ancestors = state.hierarchy and state.ancestor_reclaim_level > 0
    ordered: PriorityQueue[TaskInfo] = victims_queue(ssn, reclaimees, reclaimer)
    while not ordered.empty():
        reclaimee = ordered.pop()
        job = ssn.jobs.get(reclaimee.job)
        attr = state.queue_attributes.get(job.queue) if job is not None else None
        if job is None or attr is None:
            log.warning("capacity: skip reclaimee %s: job or queue unknown", reclaimee.key)
            continue
        # Evicting a task that frees nothing the reclaimer needs would not help it.
        if not intersection_with_ignored_scalar_resources(reclaimee.resreq, reclaimer.init_resreq):
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
                and shares_non_root_ancestor_within_level(state, reclaimer_attr, attr)
                and not _has_relevant_deserved(reclaimer, reclaimer_attr.deserved)
            ):
                continue
        elif not _above_deserved(attr, allocated, reclaimee):
            continue

        ancestor_allocations: dict[str, Resource] = {}
        if use_ancestors and not ancestors_over_deserved(
            state, reclaimer_attr, attr, reclaimee, allocations, ancestor_allocations
        ):
            continue

        allocated.sub_without_assert(reclaimee.resreq)
        for ancestor_allocated in ancestor_allocations.values():
            ancestor_allocated.sub_without_assert(reclaimee.resreq)
        victims.append(reclaimee)
    return victims


def ancestors_over_deserved(
    state: CapacityState,
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
    for level in range(1, state.ancestor_reclaim_level + 1):
        ancestor, must_check = reclaimee_ancestor_to_check(state, reclaimer_attr, attr, level)
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
