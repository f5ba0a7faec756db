"""What the evicting actions share: their queues and starving jobs, which nodes a starving task
may take room on, and whether the victims a node offers could make room at all."""

from __future__ import annotations

import numpy as np

from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import DimensionDefault
from volcano_py.api.task import TaskInfo
from volcano_py.framework.node_selection import PredicateHelper
from volcano_py.framework.priority_queue import PriorityQueue
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Statement


def queues_and_starving_jobs(
    ssn: Session,
) -> tuple[PriorityQueue[QueueInfo], dict[str, PriorityQueue[JobInfo]]]:
    """Every queue with an admitted job, in queue order, and each queue's starving jobs in job
    order (reclaim, gangpreempt and gangreclaim walk them queue by queue)."""
    queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
    seen: set[str] = set()
    starving: dict[str, PriorityQueue[JobInfo]] = {}
    for job in ssn.jobs.values():
        queue = ssn.admitted_queue(job)
        if queue is None:
            continue
        if queue.name not in seen:
            seen.add(queue.name)
            queues.push(queue)
        if ssn.job_starving(job):
            starving.setdefault(job.queue, PriorityQueue(ssn.job_order_fn)).push(job)
    return queues, starving


def preemption_candidate_nodes(
    ssn: Session, task: TaskInfo, helper: PredicateHelper
) -> list[NodeInfo]:
    """Nodes the task could run on if room were made: all nodes except those allocate found
    unresolvable for it, filtered by the predicates with only unresolvable reasons rejecting
    (lack of resources is what eviction fixes), in node-list order."""
    rows = np.arange(len(ssn.node_list), dtype=np.intp)
    job = ssn.jobs.get(task.job)
    if job is not None and task.uid in job.nodes_fit_errors:
        skipped = job.nodes_fit_errors[task.uid].unresolvable_nodes()
        if skipped:
            keep = np.fromiter((node.name not in skipped for node in ssn.node_list), dtype=np.bool_)
            rows = rows[keep]
    found, _ = helper.predicate_nodes(task, rows, check_resources=False, for_preempt=True)
    return [ssn.node_list[row] for row in found.tolist()]


def victims_can_make_room(task: TaskInfo, node: NodeInfo, victims: list[TaskInfo]) -> bool:
    """``ValidateVictims``: future idle plus every victim's request covers the task."""
    future = node.future_idle()
    for victim in victims:
        future.add(victim.resreq)
    return task.init_resreq.less_equal(future, DimensionDefault.ZERO)


def commit_counting_evictions(statement: Statement, action: str) -> None:
    """Commit, counting the statement in ``eviction_transactions`` when it evicts."""
    evicts = any(op.op.value == "evict" for op in statement.operations)
    statement.commit()
    if evicts:
        metrics.eviction_committed(action)
