"""The quota checks: may a queue reclaim (``preemptive``), take a task (``allocatable``), admit
a job (``job_enqueueable``), and what an admitted job reserves (``job_enqueued``)."""

from __future__ import annotations

import logging

from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import ROOT_QUEUE, Vote
from volcano_py.framework.hooks import VoteFn
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import format_resource_names, log_queue_not_open
from volcano_py.plugins.capacity.attributes import (
    CapacityState,
    QueueAttributes,
    ancestor_at_depth,
)

log = logging.getLogger(__name__)


def preemptive(state: CapacityState, queue: QueueInfo, candidates: list[TaskInfo]) -> bool:
    """May the queue reclaim for ``candidates``? Only within its real capability, and
    only while it is below ``deserved`` on some dimension the candidates ask for (or,
    with ``ancestorReclaimLevel``, one of its nearest ancestors is)."""
    if not state.ready:
        log.info("capacity: queue hierarchy is inconsistent; queue %s may not reclaim", queue.name)
        return False
    if not queue.is_open:
        log_queue_not_open(log, "capacity", queue, "no reclaim for it")
        return False
    attr = state.queue_attributes.get(queue.name)
    if attr is None:
        return True
    requested = Resource()
    for task in candidates:
        requested.add(task.resreq)
    future = attr.allocated.clone().add(requested)
    fits, _ = future.less_equal_with_dimension_and_resources_name(attr.real_capability, requested)
    if not fits:
        log.info(
            "capacity: queue %s cannot reclaim: future use <%s> exceeds realCapability <%s>",
            queue.name,
            future,
            attr.real_capability,
        )
        return False
    preemptive, _ = future.less_equal_partly_with_dimension_zero_filtered(attr.deserved, requested)
    if preemptive or not (state.hierarchy and state.ancestor_reclaim_level > 0):
        return preemptive
    for level in range(1, state.ancestor_reclaim_level + 1):
        ancestor_name = ancestor_at_depth(attr, level)
        if ancestor_name is None or ancestor_name == ROOT_QUEUE:
            continue
        ancestor = state.queue_attributes.get(ancestor_name)
        if ancestor is None:
            continue
        future_ancestor = ancestor.allocated.clone().add(requested)
        preemptive, _ = future_ancestor.less_equal_partly_with_dimension_zero_filtered(
            ancestor.deserved, requested
        )
        if preemptive:
            return True
    return False


def queue_allocatable(state: CapacityState, attr: QueueAttributes, task: TaskInfo) -> bool:
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


def allocatable(state: CapacityState, queue: QueueInfo, task: TaskInfo) -> bool:
    if not queue.is_open:
        log_queue_not_open(log, "capacity", queue, "no allocation in it")
        return False
    if not state.ready:
        log.info("capacity: queue hierarchy is inconsistent; cannot allocate %s", task.key)
        return False
    attr = state.queue_attributes.get(queue.name)
    if attr is None:
        return True
    if state.hierarchy and not attr.is_leaf:
        log.info("capacity: queue %s is not a leaf queue: cannot allocate %s", queue.name, task.key)
        return False
    return all(queue_allocatable(state, level, task) for level in state.path(attr))


def job_enqueueable_fn(state: CapacityState, ssn: Session) -> VoteFn:
    def enqueueable(job: JobInfo) -> Vote:
        if not state.ready:
            log.info("capacity: queue hierarchy is inconsistent; job %s stays pending", job.uid)
            return Vote.REJECT
        attr = state.queue_attributes.get(job.queue)
        queue = ssn.queues.get(job.queue)
        if attr is None or queue is None:
            log.warning("capacity: job %s: queue %s unknown", job.uid, job.queue)
            return Vote.REJECT
        if state.hierarchy and not attr.is_leaf:
            return Vote.REJECT
        if not queue.is_open:
            log_queue_not_open(log, "capacity", queue, "its jobs stay pending")
            return Vote.REJECT
        if job.pod_group is None or job.pod_group.min_resources is None:
            return Vote.PERMIT
        minimum = job.min_resources()
        for level in state.path(attr):
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


def job_enqueued(state: CapacityState, job: JobInfo) -> None:
    if job.pod_group is None or job.pod_group.min_resources is None:
        return
    attr = state.queue_attributes.get(job.queue)
    if attr is None:
        return
    # Gated tasks will not be created soon; reserving for them would block other jobs.
    reserved = job.deduct_sch_gated_resources(job.min_resources())
    for level in state.path(attr):
        level.inqueue.add(reserved)
