"""priority: order and preempt by PriorityClass (``pkg/scheduler/plugins/priority/priority.go``).

Registers TaskOrderFn, JobOrderFn, SubJobOrderFn (the sub-job with the higher-priority task
first), PreemptableFn, UnifiedEvictableFn and JobStarvingFn. It has no ReclaimableFn, and its
UnifiedEvictableFn permits every gangreclaim victim: reclaim between queues is about fairness,
not priority.
"""

from __future__ import annotations

import logging
from typing import Final

from volcano_py.api.job import JobInfo
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.hooks import EvictionContext, EvictionKind, UnifiedEvictableFn
from volcano_py.framework.session import Session

log = logging.getLogger(__name__)

PLUGIN_NAME = "priority"


def task_order(left: TaskInfo, right: TaskInfo) -> int:
    if left.priority == right.priority:
        return 0
    return -1 if left.priority > right.priority else 1


def job_order(left: JobInfo, right: JobInfo) -> int:
    if left.priority == right.priority:
        return 0
    return -1 if left.priority > right.priority else 1


def job_starving(job: JobInfo) -> bool:
    """Any task not yet placed (or waiting for a placement) makes the job want more."""
    return job.ready_task_num() + job.waiting_task_num() < len(job.tasks)


def sub_job_order(left: SubJobInfo, right: SubJobInfo) -> int:
    """The sub-job holding the higher task priority first."""
    if left.priority == right.priority:
        return 0
    return -1 if left.priority > right.priority else 1


class PriorityPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    @staticmethod
    def task_order_key(task: TaskInfo) -> int:
        """``task_order`` as a sort key: the higher priority first, equal ones tie."""
        return -task.priority

    @staticmethod
    def job_order_key(job: JobInfo) -> int:
        """``job_order`` as a sort key: the higher priority first. A job's priority is fixed
        for the session (read from its PriorityClass when the snapshot is taken)."""
        return -job.priority

    def on_session_open(self, ssn: Session) -> None:
        def preemptable(
            preemptor: TaskInfo, candidates: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            preemptor_job = ssn.jobs.get(preemptor.job)
            if preemptor_job is None:
                log.warning(
                    "priority: skip preemption: job %s is not in the session", preemptor.job
                )
                return [], Vote.PERMIT
            victims: list[TaskInfo] = []
            for candidate in candidates:
                candidate_job = ssn.jobs.get(candidate.job)
                if candidate_job is None:
                    log.warning(
                        "priority: skip preemptee %s: job %s is not in the session",
                        candidate.key,
                        candidate.job,
                    )
                    continue
                # Between jobs the job priority decides; inside one job, the task priority.
                if candidate_job.uid != preemptor_job.uid:
                    if candidate_job.priority < preemptor_job.priority:
                        victims.append(candidate)
                elif candidate.priority < preemptor.priority:
                    victims.append(candidate)
            return victims, Vote.PERMIT

        ssn.add_task_order_fn(self.name, task_order)
        ssn.add_job_order_fn(self.name, job_order)
        ssn.add_sub_job_order_fn(self.name, sub_job_order)
        ssn.add_preemptable_fn(self.name, preemptable)
        ssn.add_unified_evictable_fn(self.name, self._gang_evictable(ssn))
        ssn.add_job_starving_fn(self.name, job_starving)

    @staticmethod
    def _gang_evictable(ssn: Session) -> UnifiedEvictableFn:
        def evictable(
            context: EvictionContext, candidates: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            # Reclaim settles fairness between queues; priority has no say there (as the
            # task-level reclaim, where priority registers no ReclaimableFn).
            if context.kind is EvictionKind.GANG_RECLAIM:
                return candidates, Vote.PERMIT
            # Victims come grouped by job (bundles): decide once per job.
            verdict: dict[str, bool] = {}
            victims = []
            for candidate in candidates:
                lower = verdict.get(candidate.job)
                if lower is None:
                    victim_job = ssn.jobs.get(candidate.job)
                    lower = victim_job is not None and victim_job.priority < context.job.priority
                    verdict[candidate.job] = lower
                if lower:
                    victims.append(candidate)
            return victims, Vote.PERMIT

        return evictable

    def on_session_close(self, ssn: Session) -> None:
        return None


# The arguments this plugin reads (upstream priority.go reads no argument).
ARGUMENTS: Final[frozenset[str]] = frozenset()


def new(arguments: Arguments) -> PriorityPlugin:
    return PriorityPlugin(arguments)
