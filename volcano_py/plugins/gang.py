"""gang: all-or-nothing scheduling of a job's ``minAvailable`` tasks
(``pkg/scheduler/plugins/gang/gang.go``).

Registers JobValidFn, PreemptableFn and ReclaimableFn (the same function), UnifiedEvictableFn
(permits all: gangpreempt and gangreclaim keep gangs whole themselves), JobOrderFn, JobReadyFn,
JobPipelinedFn and JobStarvingFn, and the sub-job variants (SubJobOrderFn: unready sub-jobs
first; SubJobReadyFn, SubJobPipelinedFn: the sub-job's ``subGroupSize``); the job functions also
ask for ``minSubGroups`` ready (pipelined, valid) sub-jobs of every sub-group policy. On close it
writes each job's ``Unschedulable`` or ``Scheduled`` PodGroup condition.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Final

from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import ALLOCATED_STATUSES, TaskStatus, ValidateResult, Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.hooks import EvictionContext
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import rfc3339

log = logging.getLogger(__name__)

PLUGIN_NAME = "gang"

# PodGroup condition vocabulary (volcano.sh/apis scheduling/v1beta1).
NOT_ENOUGH_PODS_OF_TASK_REASON = "NotEnoughPodsOfTask"
NOT_ENOUGH_PODS_REASON = "NotEnoughTasks"
NOT_ENOUGH_RESOURCES_REASON = "NotEnoughResources"
UNSCHEDULABLE_CONDITION = "Unschedulable"
SCHEDULED_CONDITION = "Scheduled"
SCHEDULED_REASON = "tasks in gang are ready to be scheduled"


def valid_job(job: JobInfo) -> ValidateResult | None:
    """Can the job ever form its gang from the tasks it has (failed ones do not count)?"""
    if not job.check_task_valid():
        return ValidateResult(
            False,
            NOT_ENOUGH_PODS_OF_TASK_REASON,
            "Not enough valid pods of each task for gang-scheduling",
        )
    if not job.check_sub_job_valid():
        return ValidateResult(
            False,
            NOT_ENOUGH_PODS_OF_TASK_REASON,
            "Not enough valid subGroups of each task for gang-scheduling",
        )
    valid = job.valid_task_num()
    if valid < job.min_available:
        return ValidateResult(
            False,
            NOT_ENOUGH_PODS_REASON,
            f"Not enough valid tasks for gang-scheduling, valid: {valid}, min: {job.min_available}",
        )
    return None


def job_order(left: JobInfo, right: JobInfo) -> int:
    """Jobs still forming their gang go first, so a half-placed gang is finished before a
    complete one grows."""
    left_ready, right_ready = left.is_ready(), right.is_ready()
    if left_ready == right_ready:
        return 0
    return 1 if left_ready else -1


def permit_all(_context: EvictionContext, candidates: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
    return candidates, Vote.PERMIT


def job_ready(job: JobInfo) -> bool:
    return job.check_task_ready() and job.check_sub_job_ready() and job.is_ready()


def job_pipelined(job: JobInfo) -> Vote:
    if job.check_task_pipelined() and job.check_sub_job_pipelined() and job.is_pipelined():
        return Vote.PERMIT
    return Vote.REJECT


def sub_job_order(left: SubJobInfo, right: SubJobInfo) -> int:
    """Sub-jobs still forming their sub-gang go first."""
    left_ready, right_ready = left.is_ready(), right.is_ready()
    if left_ready == right_ready:
        return 0
    return 1 if left_ready else -1


def sub_job_ready(sub_job: SubJobInfo) -> bool:
    return sub_job.is_ready()


def sub_job_pipelined(sub_job: SubJobInfo) -> Vote:
    return Vote.PERMIT if sub_job.is_pipelined() else Vote.REJECT


def job_starving(job: JobInfo) -> bool:
    # Preemption only cares about the job-level minimum, not the per-role ones (upstream).
    return job.is_starving()


def skip_unschedulable_for_releasing(job: JobInfo) -> bool:
    """An unready job whose only shortfall is tasks being released from their nodes (their
    pods still hold the gang's slots) gets no Unschedulable condition; a job that still has
    Pending or Pipelined tasks always does, so the waiting work stays visible."""
    releasing_on_nodes = job.releasing_scheduled_task_num()
    if releasing_on_nodes == 0:
        return False
    if job.tasks_in(TaskStatus.PENDING) or job.tasks_in(TaskStatus.PIPELINED):
        return False
    return job.scheduled_task_num() + releasing_on_nodes >= job.min_available


# A job's unscheduled-task count is not set again when its series holds it already: the last
# session of the same scheduler left it so and no such series was written or removed since
# (``HeldCounts``; False: set at every close, the tests' reference). Most jobs of a large
# cluster are ready, their count 0 session after session.
_SKIP_HELD_COUNTS = True


@dataclass(frozen=True, slots=True)
class HeldCounts:
    """What a session's close left in every unscheduled-task-count series it set, by job name
    (the series' one label), and the series token then (in ``plugin_memory``)."""

    token: metrics.SeriesToken
    counts: dict[str, int]


def _held_counts(ssn: Session, name: str) -> dict[str, int]:
    """The count each series holds as the last close left them, when no series was written
    or removed since; else nothing known. Taken out of the memory: this session's now."""
    if not _SKIP_HELD_COUNTS:
        return {}
    memory = ssn.state.plugin_memory.pop(name, None)
    if isinstance(memory, HeldCounts) and metrics.same_token(
        memory.token, metrics.unschedulable_tasks_token()
    ):
        return memory.counts
    return {}


def set_pod_group_condition(job: JobInfo, condition: dict[str, Any]) -> None:
    """Replace the condition of the same type, or append it (``UpdatePodGroupCondition``)."""
    if job.pod_group is None:
        return
    conditions = job.pod_group.conditions
    for index, existing in enumerate(conditions):
        if existing.get("type") == condition["type"]:
            conditions[index] = condition
            return
    conditions.append(condition)


def _schedulable_task_num(job: JobInfo) -> int:
    """Tasks placed, counting pending ones whose placement this session was only undone
    (their last transaction was an allocation): they are not the gang's problem."""
    count = job.ready_task_num()
    for task in job.tasks_in(TaskStatus.PENDING).values():
        context = task.last_transaction or task.transaction_context()
        if context.status in ALLOCATED_STATUSES:
            count += 1
    return count


class GangPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    @staticmethod
    def job_order_key(job: JobInfo) -> bool:
        """``job_order`` as a sort key: unready jobs (False) first. Readiness counts the job's
        own placed tasks only, so it moves only when this job is placed or unplaced."""
        return job.is_ready()

    def on_session_open(self, ssn: Session) -> None:
        ssn.add_job_valid_fn(self.name, valid_job)

        def preemptable(
            preemptor: TaskInfo, candidates: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            # A victim's job must keep at least minAvailable placed tasks; count down from its
            # ready tasks as candidates are taken.
            victims: list[TaskInfo] = []
            occupied: dict[str, int] = {}
            for candidate in candidates:
                job = ssn.jobs.get(candidate.job)
                if job is None:
                    log.warning(
                        "gang: skip preemptee %s: job %s is not in the session",
                        candidate.key,
                        candidate.job,
                    )
                    continue
                if job.uid not in occupied:
                    occupied[job.uid] = job.ready_task_num()
                if occupied[job.uid] > job.min_available:
                    occupied[job.uid] -= 1
                    victims.append(candidate)
            return victims, Vote.PERMIT

        ssn.add_reclaimable_fn(self.name, preemptable)
        ssn.add_preemptable_fn(self.name, preemptable)
        # gangpreempt/gangreclaim keep victim gangs whole through their safe/whole bundles,
        # so the task-count check above does not apply there.
        ssn.add_unified_evictable_fn(self.name, permit_all)
        ssn.add_job_order_fn(self.name, job_order)
        ssn.add_job_ready_fn(self.name, job_ready)
        ssn.add_job_pipelined_fn(self.name, job_pipelined)
        ssn.add_sub_job_order_fn(self.name, sub_job_order)
        ssn.add_sub_job_ready_fn(self.name, sub_job_ready)
        ssn.add_sub_job_pipelined_fn(self.name, sub_job_pipelined)
        ssn.add_job_starving_fn(self.name, job_starving)

    def on_session_close(self, ssn: Session) -> None:
        when = rfc3339(ssn.now)
        unschedulable_jobs = 0
        held = _held_counts(ssn, self.name)
        for job in ssn.jobs.values():
            if not job.tasks or job.pod_group is None:
                continue
            unready = 0
            if job.is_ready():
                condition = {
                    "type": SCHEDULED_CONDITION,
                    "status": "True",
                    "lastTransitionTime": when,
                    "transitionID": ssn.uid,
                    "reason": SCHEDULED_REASON,
                    "message": "",
                }
            elif skip_unschedulable_for_releasing(job):
                continue
            else:
                unready = job.min_available - _schedulable_task_num(job)
                unschedulable_jobs += 1
                metrics.job_retried(job.name)
                condition = {
                    "type": UNSCHEDULABLE_CONDITION,
                    "status": "True",
                    "lastTransitionTime": when,
                    "transitionID": ssn.uid,
                    "reason": NOT_ENOUGH_RESOURCES_REASON,
                    "message": f"{unready}/{len(job.tasks)} tasks in gang unschedulable:"
                    f" {job.fit_error()}",
                }
            set_pod_group_condition(job, condition)
            if _SKIP_HELD_COUNTS:
                kept = held.get(job.name)
                # (``metrics.holds`` of two ints: no zero of the other sign to tell apart.)
                if type(kept) is int and kept == unready:
                    continue
            metrics.unschedulable_tasks(job.name, unready)
            held[job.name] = unready
        metrics.UNSCHEDULE_JOB_COUNT.set(unschedulable_jobs)
        if _SKIP_HELD_COUNTS:
            ssn.state.plugin_memory[self.name] = HeldCounts(
                metrics.unschedulable_tasks_token(), held
            )


# The arguments this plugin reads (upstream gang.go reads no argument).
ARGUMENTS: Final[frozenset[str]] = frozenset()


def new(arguments: Arguments) -> GangPlugin:
    return GangPlugin(arguments)
