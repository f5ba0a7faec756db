"""The task loop both allocate paths share: ``allocateResourcesForTasks``
(``actions/allocate/allocate.go``).

The flat path runs it over every node; the HyperNode search runs it, as a dry run, over one
HyperNode's nodes and also tracks the HyperNode the placed tasks span so far (node scoring
reads it). One loop serves both so that a fix to the gang rules lands in both at once.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

from volcano_py import metrics
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import IntArray
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import DimensionDefault
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo, same_pod_template, same_pod_template_but_group
from volcano_py.api.types import FitError, FitErrors
from volcano_py.framework.node_selection import (
    PredicateHelper,
    RunSearch,
    RunStages,
    prioritize_nodes,
)
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Statement, StatementError

log = logging.getLogger(__name__)

# Place a run of like tasks with one node search kept across the run (False: task by task,
# the tests' reference).
_BATCH_RUNS = True
# Let a run go on into the next job's like tasks when the plugins allow (False: a run ends
# with its job's attempt, the tests' reference).
_RUNS_ACROSS_JOBS = True
# A carried run compares the later like tasks of the next job with that job's first one
# found alike (``same_pod_template``) instead of with the run's template but for the group
# (False: every task with the template; the tests' reference).
_BRIDGED_TEMPLATES = True


class RunCarry:
    """A run of like tasks carried from one job's attempt into the next one's: one-pod jobs
    and bare pods each make a job of their own, and without the carry every one of them
    searched and scored the nodes afresh. Allocate keeps one for its flat attempts, in the
    order it makes them, and clears it when anything else places tasks in between; the run
    itself follows every row written since (``RunSearch``), so a discarded or committed
    statement between two attempts is seen as any other write.

    ``across_jobs``: whether the session's plugins allow it (``Session.runs_across_jobs``);
    without, nothing is carried."""

    __slots__ = ("_bridge", "across_jobs", "declined", "previous", "run")

    def __init__(self, across_jobs: bool) -> None:
        self.across_jobs = across_jobs and _RUNS_ACROSS_JOBS and _BATCH_RUNS
        self.run: RunSearch | None = None
        # The last task that reached the search, and the last one of a run the plugins
        # declined (``_allocate_tasks``' own two, as its loop left them).
        self.previous: TaskInfo | None = None
        self.declined: TaskInfo | None = None
        # (template, task): the last task of another job than the template's found alike
        # but for the group; the later tasks of that job are compared with it (below).
        self._bridge: tuple[TaskInfo, TaskInfo] | None = None

    def take(
        self, helper: PredicateHelper, stages: RunStages
    ) -> tuple[RunSearch | None, TaskInfo | None, TaskInfo | None]:
        run = self.run
        if run is not None:
            run.follow_into(helper, stages)
        return run, self.previous, self.declined

    def keep(
        self, run: RunSearch | None, previous: TaskInfo | None, declined: TaskInfo | None
    ) -> None:
        if not self.across_jobs:
            return
        self.run = run if run is not None and run.may_follow_into_another_job() else None
        self.previous, self.declined = previous, declined

    def clear(self) -> None:
        self.run = self.previous = self.declined = None
        self._bridge = None

    def alike(self, template: TaskInfo, task: TaskInfo) -> bool:
        """Does ``task`` ask as ``template`` does (``same_pod_template``), or, of another job,
        alike but for the group (``same_pod_template_but_group``) when runs may cross jobs?"""
        if template.job == task.job:
            return same_pod_template(template, task)
        if not self.across_jobs:
            return False
        bridge = self._bridge
        if (
            _BRIDGED_TEMPLATES
            and bridge is not None
            and bridge[0] is template
            and bridge[1].job == task.job
            and same_pod_template(bridge[1], task)
        ):
            # ``task`` asks exactly as a task already found alike to the template but for
            # the group: so does it (the group-free parts are the same), without building
            # the group-free annotations of both again. When this fails the full test
            # below still answers, so the result is always the full test's.
            return True
        if same_pod_template_but_group(template, task):
            self._bridge = (template, task)
            return True
        return False


def allocate_tasks(
    ssn: Session,
    helper: PredicateHelper,
    job: JobInfo,
    queue: QueueInfo,
    tasks: Iterator[TaskInfo],
    rows: IntArray,
    hyper_node: str = CLUSTER_TOP_HYPER_NODE,
    sub_job: SubJobInfo | None = None,
    carry: RunCarry | None = None,
) -> Statement | None:
    """Place ``tasks`` on the nodes at ``rows`` in one statement, stopping once the gang (the
    sub-job's, when given) is ready; the statement is returned when it is ready or pipelined,
    else discarded.

    ``tasks`` is consumed lazily: what the loop did not reach stays with the caller.
    ``hyper_node`` and ``sub_job`` are given by the HyperNode search only; ``carry`` by the
    flat path only (every node), the run the previous job's attempt left.
    """
    # The job's metric series, looked up once for all the tasks placed here, and the runs'
    # stage timings: their observations are handed to the histograms once, at the end.
    series = metrics.JobScheduledSeries(job.name, job.queue, job.namespace)
    stages = RunStages()
    try:
        return _allocate_tasks(
            ssn, helper, job, queue, tasks, rows, hyper_node, sub_job, series, stages, carry
        )
    finally:
        series.flush()
        stages.flush()


def _allocate_tasks(
    ssn: Session,
    helper: PredicateHelper,
    job: JobInfo,
    queue: QueueInfo,
    tasks: Iterator[TaskInfo],
    rows: IntArray,
    hyper_node: str,
    sub_job: SubJobInfo | None,
    series: metrics.JobScheduledSeries,
    stages: RunStages,
    carry: RunCarry | None,
) -> Statement | None:
    statement = ssn.statement()
    allocated = sub_job.allocated_hyper_node if sub_job is not None else ""
    with_topology = sub_job is not None and sub_job.with_network_topology()
    owner = sub_job.uid if sub_job is not None else None

    def ready() -> bool:
        return ssn.job_ready(job) if sub_job is None else ssn.sub_job_ready(job, sub_job)

    def pipelined() -> bool:
        if sub_job is None:
            return ssn.job_pipelined(job)
        return ssn.sub_job_pipelined(job, sub_job)

    # A run of like tasks (same job, same pod template) placed one after the other keeps its
    # node search across the run (RunSearch), over every node or over one HyperNode's.
    batch = _BATCH_RUNS
    run: RunSearch | None = None
    # The last task that reached the search, and the last one of a run the plugins declined.
    previous: TaskInfo | None = None
    declined: TaskInfo | None = None
    if carry is not None:
        run, previous, declined = carry.take(helper, stages)
    alike = carry.alike if carry is not None else same_pod_template
    for task in tasks:
        # A member of the run under way: asks as the run's first task did.
        member = run is not None and not task.nominated_node_name and alike(run.template, task)
        if not ssn.allocatable(queue, task):
            continue
        if task.sch_gated:
            continue
        if job.task_has_fit_errors(task, owner):
            job.nodes_fit_errors[task.uid] = FitErrors(
                error=f"Task {task.name} with role spec {task.task_role} has already"
                " predicated failed, skip"
            )
            continue
        status = (
            run.pre_predicate(task) if run is not None and member else ssn.pre_predicate_fn(task)
        )
        if status is not None:
            errors = FitErrors()
            node_list = ssn.node_list
            for row in rows.tolist():
                errors.set_node_error(node_list[row].name, FitError("", [status]))
            job.nodes_fit_errors[task.uid] = errors
            if job.need_continue_allocating(owner):
                continue
            break

        best: NodeInfo | None = None
        searched = False
        if not member:
            run = None
        if (
            run is None
            and previous is not None
            and not task.nominated_node_name
            and alike(previous, task)
        ):
            # The second like task in a row: keep the search across the run, when the
            # plugins allow (asked once per run of like tasks).
            uniform = ssn.run_uniform_scores(task, rows) if previous is not declined else None
            if uniform is not None:
                run = RunSearch(ssn, helper, task, rows, uniform, stages)
            else:
                declined = task
        previous = task if batch else None
        if run is not None:
            spanned_before = task.job_allocated_hyper_node
            if with_topology:
                # What node scoring reads: the HyperNode the placed tasks span so far.
                task.job_allocated_hyper_node = allocated
            searched, best = run.choose(task)
            if not searched:
                # As the per-task search leaves it when nothing passes.
                task.job_allocated_hyper_node = spanned_before
        if not searched:
            if run is not None:
                # Nothing passes: the per-task search explains why, from the same state; the
                # like tasks after it go task by task.
                run, declined = None, task
            candidates = _nominated_candidates(task, helper, rows)
            fit_errors: FitErrors | None = None
            if len(candidates) == 0:
                candidates, fit_errors = helper.predicate_nodes(task, rows)
            if len(candidates) == 0:
                if fit_errors is None:
                    fit_errors = FitErrors()
                elif hyper_node != CLUSTER_TOP_HYPER_NODE:
                    fit_errors.hyper_node = hyper_node
                job.nodes_fit_errors[task.uid] = fit_errors
                if job.need_continue_allocating(owner):
                    continue
                break

            if with_topology:
                task.job_allocated_hyper_node = allocated
            best = prioritize_nodes(ssn, task, candidates)
        if best is None:
            continue
        if run is not None:
            run.placed(best)
        if place_task(statement, task, best):
            record_job_scheduled(ssn, job, series)
            if with_topology:
                allocated = _spanned(ssn, best.name, allocated)
        if ready():
            break

    if carry is not None:
        carry.keep(run, previous, declined)
    if ready():
        if sub_job is not None and sub_job.soft_topology():
            sub_job.allocated_hyper_node = allocated
        return statement
    if pipelined():
        return statement
    statement.discard()
    return None


def _nominated_candidates(task: TaskInfo, helper: PredicateHelper, rows: IntArray) -> IntArray:
    """A pod nominated to a node (after evictions made room) tries that node first, when the
    node is among ``rows``."""
    nominated = helper.ssn.nodes.get(task.nominated_node_name)
    empty = rows[:0]
    if nominated is None:
        return empty
    mine = rows[rows == nominated.row]
    if len(mine) == 0:
        return empty
    if not task.init_resreq.less_equal(nominated.future_idle(), DimensionDefault.ZERO):
        return empty
    found, _ = helper.predicate_nodes(task, mine)
    return found


def place_task(statement: Statement, task: TaskInfo, node: NodeInfo) -> bool:
    """Allocate onto the node's idle, else pipeline onto its future idle."""
    try:
        if node.idle_holds(task.init_resreq):
            statement.allocate(task, node)
        elif node.future_idle_holds(task.init_resreq):
            statement.pipeline(task, node.name, eviction_occurred=False)
    except StatementError as error:
        log.error("%s", error)
        return False
    return True


def record_job_scheduled(
    ssn: Session, job: JobInfo, series: metrics.JobScheduledSeries | None = None
) -> None:
    """The job's end-to-end scheduling time so far and its last scheduling time, as upstream
    records them after every task it allocates or pipelines (dry runs included). The
    session's clock stands in for the moment of placement: a session lasts milliseconds,
    the metric counts from job creation. ``series``: the job's, kept across its tasks."""
    if not metrics.RECORDING.on:
        return
    created = metrics.epoch_seconds(job.creation_timestamp)
    if created is None:
        return
    if series is None:
        metrics.job_scheduled(job.name, job.queue, job.namespace, ssn.now, created)
    else:
        series.scheduled(ssn.now, created)


def _spanned(ssn: Session, node: str, allocated: str) -> str:
    """``getNewAllocatedHyperNode``: the LCA of what the placed tasks spanned and the
    lowest-tier HyperNode of the node just used."""
    topology = ssn.topology
    hyper_node = topology.tree.find_hyper_node_for_node(node)
    if not hyper_node:
        return allocated
    return topology.lca(hyper_node, allocated) if allocated else hyper_node
