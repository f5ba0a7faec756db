"""The dry run of gangpreempt and gangreclaim (``actions/utils/simulate.go``): with a chosen set
of victims gone, can the starving job's pending tasks all be placed inside one HyperNode
domain, enough for the job to be pipelined?

Every step happens in statements that are undone at the end: the evictions, then one
placement trial per sub-job. On success the caller gets the saved operations (the *plan*) and
replays them into the job's own statement, so a failed domain or victim set leaves no trace.

The job's sub-jobs are tried in allocate's worksheet order (``sub_job_worksheet``), each inside
one HyperNode of its own gradient (for a job with a hard topology) or the domain itself, each
trial kept applied so the next sees it, until the job is pipelined (or, for a job already ready,
after one sub-job). The HyperNode each sub-job took is returned for allocate to honour.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from volcano_py.actions.sub_job_worksheet import organize
from volcano_py.api.job import JobInfo
from volcano_py.api.node_matrix import IntArray
from volcano_py.api.queue import QueueInfo
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.framework.node_selection import PredicateHelper, prioritize_nodes
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Operation, Statement, StatementError
from volcano_py.framework.topology import SearchPurpose

log = logging.getLogger(__name__)


def _gang_evictable(task: TaskInfo) -> bool:
    return not task.sch_gated and not task.resreq.is_empty()


def pending_tasks_for_gang_eviction(ssn: Session, job: JobInfo) -> list[TaskInfo]:
    """``CollectPendingTasksForGangEviction``: what the allocator would place next, in
    worksheet order (sub-job by sub-job, each in task order), Pending tasks that are not
    scheduling-gated and ask for something; for a job already ready only the first sub-job's
    (it grows one sub-group at a time)."""
    worksheet = organize(ssn, job, _gang_evictable)
    order = worksheet.sub_jobs.clone()
    tasks: list[TaskInfo] = []
    ready = ssn.job_ready(job)
    while not order.empty():
        sub_job = order.pop()
        mine = worksheet.tasks.get(sub_job.uid)
        if not mine:
            continue
        if ready:
            return list(mine)
        tasks.extend(mine)
    return tasks


@dataclass(frozen=True, slots=True)
class NominationPlan:
    operations: list[Operation]
    # Sub-job uid -> the HyperNode it was placed in (nominated for the next allocate).
    hyper_nodes: dict[str, str]


def build_nomination_plan(
    ssn: Session,
    queue: QueueInfo,
    job: JobInfo,
    domain: str,
    victims: Sequence[TaskInfo],
    reason: str,
    error_cache: bool,
) -> NominationPlan | None:
    """``BuildNominationPlanInDomain``: evict ``victims``, then place ``job``'s pending
    sub-jobs in ``domain``; the plan if the job ends up pipelined, else None. The session is
    left as found."""
    if len(ssn.hyper_node_rows(domain)) == 0:
        return None
    worksheet = organize(ssn, job, _gang_evictable)
    if worksheet.empty():
        return None
    was_ready = ssn.job_ready(job)
    chain: list[Statement] = []
    hyper_nodes: dict[str, str] = {}
    pipelined = False
    try:
        if victims:
            evictions = ssn.statement()
            for victim in victims:
                evictions.evict(victim, reason)
            chain.append(evictions)
        while not worksheet.empty():
            sub_job = worksheet.sub_jobs.pop()
            tasks = list(worksheet.tasks.get(sub_job.uid, ()))
            if not tasks:
                continue
            placed = _place_sub_job(
                ssn, queue, job, sub_job, domain, tasks, bool(victims), error_cache
            )
            if placed is None:
                return None
            trial, hyper_node = placed
            chain.append(trial)
            hyper_nodes[sub_job.uid] = hyper_node
            pipelined = ssn.job_pipelined(job)
            if was_ready or pipelined:
                break
        if not pipelined:
            return None
        operations = [op for statement in chain for op in statement.save_operations()]
        return NominationPlan(operations, hyper_nodes)
    finally:
        for statement in reversed(chain):
            statement.discard()


def _place_sub_job(
    ssn: Session,
    queue: QueueInfo,
    job: JobInfo,
    sub_job: SubJobInfo,
    domain: str,
    tasks: list[TaskInfo],
    victims_present: bool,
    error_cache: bool,
) -> tuple[Statement, str] | None:
    if job.contains_hard_topology():
        gradients = ssn.hyper_node_gradient_for_sub_job(sub_job, domain, SearchPurpose.EVICT)
        for gradient in gradients:
            for hyper_node in gradient:
                trial = _trial(
                    ssn, queue, job, sub_job, hyper_node, tasks, victims_present, error_cache
                )
                if trial is not None:
                    return trial, hyper_node
        return None
    trial = _trial(ssn, queue, job, sub_job, domain, tasks, victims_present, error_cache)
    return None if trial is None else (trial, domain)


def _trial(
    ssn: Session,
    queue: QueueInfo,
    job: JobInfo,
    sub_job: SubJobInfo,
    hyper_node: str,
    tasks: list[TaskInfo],
    victims_present: bool,
    error_cache: bool,
) -> Statement | None:
    """Pipeline every task on the best node of ``hyper_node`` that fits it once the victims
    are gone; None (and nothing left applied) if any task finds none or the sub-job is then
    neither ready nor pipelined."""
    rows = ssn.hyper_node_rows(hyper_node)
    if len(rows) == 0:
        return None
    trial = ssn.statement()
    helper = PredicateHelper(ssn, error_cache)
    for task in tasks:
        node = _simulated_node(ssn, helper, queue, job, task, rows)
        if node is None:
            trial.discard()
            return None
        try:
            trial.pipeline(task, node, victims_present)
        except StatementError as error:
            log.error("gang eviction dry run: %s", error)
            trial.discard()
            return None
    if not trial.operations or not (
        ssn.sub_job_ready(job, sub_job) or ssn.sub_job_pipelined(job, sub_job)
    ):
        trial.discard()
        return None
    return trial


def _simulated_node(
    ssn: Session,
    helper: PredicateHelper,
    queue: QueueInfo,
    job: JobInfo,
    task: TaskInfo,
    rows: IntArray,
) -> str | None:
    if not ssn.allocatable(queue, task):
        return None
    rows = _without_unresolvable(ssn, job, task, rows)
    if len(rows) == 0 or ssn.pre_predicate_fn(task) is not None:
        return None
    # Room once evictions finish (future idle), then the predicates, of which only the
    # unresolvable reasons reject here (as preemption does).
    feasible, _ = helper.predicate_nodes(task, rows, check_resources=True, for_preempt=True)
    node = prioritize_nodes(ssn, task, feasible)
    return None if node is None else node.name


def _without_unresolvable(ssn: Session, job: JobInfo, task: TaskInfo, rows: IntArray) -> IntArray:
    """Leave out the nodes allocate found unresolvable for the task (no eviction helps)."""
    errors = job.nodes_fit_errors.get(task.uid)
    skipped = errors.unresolvable_nodes() if errors is not None else None
    if not skipped:
        return rows
    keep = np.fromiter(
        (ssn.node_list[row].name not in skipped for row in rows.tolist()),
        dtype=np.bool_,
        count=len(rows),
    )
    return rows[keep]
