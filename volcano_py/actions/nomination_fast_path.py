"""allocate's fast path into the HyperNode gangpreempt/gangreclaim nominated for a sub-job
(``allocateFromNomination`` / ``validateNomination`` in ``actions/allocate/allocate.go``).

Those actions evict victims so that a starving sub-job fits in one HyperNode, pipeline its tasks
onto that HyperNode's nodes (each pod gets ``status.nominatedNodeName``) and nominate the
HyperNode. When allocate next meets the sub-job it places every Pending task straight onto its
nominated node, skipping the HyperNode search, provided every task still passes there: it has a
nominated node inside the HyperNode, its queue has room, and the pre-predicates and predicates
pass. On any miss the nomination is dropped and the normal search runs.
"""

from __future__ import annotations

import logging
from collections import deque

from volcano_py.actions.task_placement import place_task, record_job_scheduled
from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.framework.node_selection import PredicateHelper
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Statement

log = logging.getLogger(__name__)


def allocate_from_nomination(
    ssn: Session,
    helper: PredicateHelper,
    job: JobInfo,
    queue: QueueInfo,
    sub_job: SubJobInfo,
    tasks: deque[TaskInfo],
) -> Statement | None:
    """Place ``tasks`` (all of them, or none) on their nominated nodes; the statement, or
    None with the nomination dropped. ``tasks`` is emptied on success."""
    pinned = sub_job.nominated_hyper_node
    plan = _validate(ssn, helper, queue, sub_job, tasks)
    if plan is None:
        sub_job.nominated_hyper_node = ""
        ssn.dirty_jobs.add(job.uid)
        return None
    statement = ssn.statement()
    for task, node in plan:
        if sub_job.with_network_topology():
            task.job_allocated_hyper_node = pinned
        if not place_task(statement, task, node):
            log.info("%s: placing on the nominated node failed; searching again", sub_job.uid)
            statement.discard()
            sub_job.nominated_hyper_node = ""
            ssn.dirty_jobs.add(job.uid)
            return None
        record_job_scheduled(ssn, job)
    tasks.clear()
    sub_job.allocated_hyper_node = ssn.topology.lca(sub_job.allocated_hyper_node, pinned) or pinned
    return statement


def _validate(
    ssn: Session,
    helper: PredicateHelper,
    queue: QueueInfo,
    sub_job: SubJobInfo,
    tasks: deque[TaskInfo],
) -> list[tuple[TaskInfo, NodeInfo]] | None:
    """``validateNomination``: each task's nominated node, or None at the first miss."""
    pinned = sub_job.nominated_hyper_node
    rows = ssn.hyper_node_rows(pinned)
    if len(rows) == 0:
        log.info("%s: nominated HyperNode %s is gone; searching again", sub_job.uid, pinned)
        return None
    inside = set(rows.tolist())
    plan: list[tuple[TaskInfo, NodeInfo]] = []
    for task in tasks:
        node = ssn.nodes.get(task.nominated_node_name)
        why = ""
        if not ssn.allocatable(queue, task):
            why = "its queue has no room"
        elif node is None:
            why = "it has no nominated node in the session"
        elif node.row not in inside:
            why = f"its nominated node {node.name} is outside {pinned}"
        elif ssn.pre_predicate_fn(task) is not None:
            why = "its pre-predicates fail"
        else:
            found, _ = helper.predicate_nodes(task, rows[rows == node.row])
            if len(found) == 0:
                why = f"it no longer fits its nominated node {node.name}"
        if why:
            log.info("%s: task %s: %s; searching again", sub_job.uid, task.key, why)
            return None
        assert node is not None
        plan.append((task, node))
    return plan
