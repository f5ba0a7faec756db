"""The job state machine (``pkg/controllers/job/state/*.go``) as data: for a phase and an
action, which procedure runs (sync the pods, kill the whole job, kill a target) and which
status function then decides the next phase.

The procedures themselves live in ``job_actions``; nothing here touches pods.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum
from typing import Final

from volcano_py.controllers.job_podgroup import task_min_available, tasks_of
from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.raw import Raw, integer, optional_int, spec, text
from volcano_py.controllers.vocabulary import (
    FINISHED_JOB_PHASES,
    POD_FAILED,
    POD_SUCCEEDED,
    Action,
    JobPhase,
)

UpdateStatus = Callable[[JobStatus], bool]

# Which pod phases a kill keeps: "Soft" keeps finished pods (their logs and exit codes).
RETAIN_NONE: Final[frozenset[str]] = frozenset()
RETAIN_SOFT: Final[frozenset[str]] = frozenset({POD_SUCCEEDED, POD_FAILED})

_TARGETED_RESTARTS: Final = frozenset(
    {Action.RESTART_TASK, Action.RESTART_POD, Action.RESTART_PARTITION}
)


class Procedure(StrEnum):
    SYNC = "SyncJob"
    KILL_JOB = "KillJob"
    KILL_TARGET = "KillTarget"


@dataclass(frozen=True, slots=True)
class Step:
    """What ``state.Execute(action)`` does: a procedure, the pods a whole-job kill keeps, and
    the status function (None: the phase stays)."""

    procedure: Procedure
    update: UpdateStatus | None
    retain: frozenset[str] = RETAIN_NONE


def total_replicas(job: Raw) -> int:
    return sum(integer(task.get("replicas")) for task in tasks_of(job))


def to_phase(phase: JobPhase, *, retry: bool = False) -> UpdateStatus:
    def update(status: JobStatus) -> bool:
        status.phase = phase
        if retry:
            status.retry_count += 1
        return True

    return update


def drain_to(phase: JobPhase) -> UpdateStatus:
    """Reach ``phase`` once no pod is alive (terminating, pending or running)."""

    def update(status: JobStatus) -> bool:
        if status.terminating or status.pending or status.running:
            return False
        status.phase = phase
        return True

    return update


def pending_update(job: Raw) -> UpdateStatus:
    """Pending -> Running once minAvailable pods run or ran."""

    def update(status: JobStatus) -> bool:
        if (
            integer(spec(job).get("minAvailable"))
            <= status.running + status.succeeded + status.failed
        ):
            status.phase = JobPhase.RUNNING
            return True
        return False

    return update


def running_update(job: Raw) -> UpdateStatus:
    """Running -> Completed / Failed when every replica finished (or minSuccess succeeded),
    back to Pending when too many pods wait to be scheduled again."""
    job_spec = spec(job)

    def update(status: JobStatus) -> bool:
        replicas = total_replicas(job)
        if replicas == 0:
            return False  # scaled to zero: keep the phase
        min_available = integer(job_spec.get("minAvailable"))
        min_success = optional_int(job_spec.get("minSuccess"))
        if min_success is not None and status.succeeded >= min_success:
            status.phase = JobPhase.COMPLETED
            return True
        if status.succeeded + status.failed == replicas:
            status.phase = _finished_phase(job, status, min_available, min_success)
            return True
        if status.pending > replicas - min_available:
            status.phase = JobPhase.PENDING
            return True
        return False

    return update


def _finished_phase(
    job: Raw, status: JobStatus, min_available: int, min_success: int | None
) -> JobPhase:
    total_task_min = sum(task_min_available(task) for task in tasks_of(job))
    if min_available >= total_task_min:
        # Every task with an explicit minAvailable must have had that many successes.
        for task in tasks_of(job):
            task_min = optional_int(task.get("minAvailable"))
            counts = status.task_status_count.get(text(task.get("name")))
            if task_min is None or counts is None:
                continue
            if counts.get(POD_SUCCEEDED, 0) < task_min:
                return JobPhase.FAILED
    if min_success is not None and status.succeeded < min_success:
        return JobPhase.FAILED
    if status.succeeded >= min_available:
        return JobPhase.COMPLETED
    return JobPhase.FAILED


def restarting_update(job: Raw) -> UpdateStatus:
    """Restarting -> Failed past maxRetry, else -> Pending once enough pods are gone."""

    def update(status: JobStatus) -> bool:
        if status.retry_count >= integer(spec(job).get("maxRetry")):
            status.phase = JobPhase.FAILED
            return True
        if total_replicas(job) - status.terminating >= status.min_available:
            status.phase = JobPhase.PENDING
            return True
        return False

    return update


def _kill_or_restart(action: str) -> Step | None:
    """The rows Pending and Running share."""
    if action == Action.RESTART_JOB:
        return Step(Procedure.KILL_JOB, to_phase(JobPhase.RESTARTING, retry=True), RETAIN_NONE)
    if action in _TARGETED_RESTARTS:
        return Step(Procedure.KILL_TARGET, to_phase(JobPhase.RESTARTING, retry=True))
    if action == Action.ABORT_JOB:
        return Step(Procedure.KILL_JOB, to_phase(JobPhase.ABORTING), RETAIN_SOFT)
    if action == Action.COMPLETE_JOB:
        return Step(Procedure.KILL_JOB, to_phase(JobPhase.COMPLETING), RETAIN_SOFT)
    if action == Action.TERMINATE_JOB:
        return Step(Procedure.KILL_JOB, to_phase(JobPhase.TERMINATING), RETAIN_SOFT)
    return None


def plan(job: Raw, phase: str, action: str) -> Step:
    """``NewState(job).Execute(action)``; an empty or unknown phase behaves as Pending."""
    if phase == JobPhase.RUNNING:
        return _kill_or_restart(action) or Step(Procedure.SYNC, running_update(job))
    if phase == JobPhase.RESTARTING:
        if action == Action.SYNC_JOB:
            return Step(Procedure.SYNC, restarting_update(job))
        if action in _TARGETED_RESTARTS:
            return Step(Procedure.KILL_TARGET, restarting_update(job))
        return Step(Procedure.KILL_JOB, restarting_update(job), RETAIN_NONE)
    if phase in (JobPhase.ABORTING, JobPhase.ABORTED):
        if action == Action.RESUME_JOB:
            return Step(Procedure.KILL_JOB, to_phase(JobPhase.RESTARTING, retry=True), RETAIN_SOFT)
        if phase == JobPhase.ABORTING:
            return Step(Procedure.KILL_JOB, drain_to(JobPhase.ABORTED), RETAIN_SOFT)
        return Step(Procedure.KILL_JOB, None, RETAIN_SOFT)
    if phase == JobPhase.COMPLETING:
        return Step(Procedure.KILL_JOB, drain_to(JobPhase.COMPLETED), RETAIN_SOFT)
    if phase == JobPhase.TERMINATING:
        return Step(Procedure.KILL_JOB, drain_to(JobPhase.TERMINATED), RETAIN_SOFT)
    if phase in FINISHED_JOB_PHASES:
        # A finished job keeps its finished pods and lets nothing else run.
        return Step(Procedure.KILL_JOB, None, RETAIN_SOFT)
    return _kill_or_restart(action) or Step(Procedure.SYNC, pending_update(job))
