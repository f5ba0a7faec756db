"""sla: a job that waited past its service-level deadline goes first and is let in
(``pkg/scheduler/plugins/sla/sla.go``).

A job's waiting time is its PodGroup annotation ``volcano.sh/sla-waiting-time`` (or the bare
``sla-waiting-time``; read into ``JobInfo.waiting_time``), else the plugin argument
``sla-waiting-time`` (a Go duration such as ``1h30m``); without either the job has no SLA.

* JobOrderFn: jobs with an SLA before jobs without; between two with one, the earlier deadline
  (creation time + waiting time) first.
* JobEnqueueableFn and JobPipelinedFn: Permit once the deadline has passed (by the session
  clock), else Abstain. With sla in a tier before proportion or capacity, that Permit admits the
  job before their quota checks are consulted.
"""

from __future__ import annotations

import logging
from typing import Final

from volcano_py.api.job import JobInfo, parse_go_duration
from volcano_py.api.types import Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import epoch_seconds

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "sla"
JOB_WAITING_TIME: Final = "sla-waiting-time"

ARGUMENTS: Final[frozenset[str]] = frozenset({JOB_WAITING_TIME})


def global_waiting_time(arguments: Arguments) -> float | None:
    """The ``sla-waiting-time`` argument in seconds; None when absent or unusable (said so)."""
    if JOB_WAITING_TIME not in arguments:
        return None
    raw = arguments[JOB_WAITING_TIME]
    if not isinstance(raw, str):
        log.error(
            'sla: argument %s must be a Go duration string such as "1h30m", got %r; '
            "no global waiting time",
            JOB_WAITING_TIME,
            raw,
        )
        return None
    seconds = parse_go_duration(raw)
    if seconds is None:
        log.error(
            "sla: argument %s=%r is not a Go duration; no global waiting time",
            JOB_WAITING_TIME,
            raw,
        )
        return None
    if seconds <= 0:
        log.warning(
            "sla: argument %s=%r is not positive; no global waiting time", JOB_WAITING_TIME, raw
        )
        return None
    return seconds


class SlaPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.waiting_time = global_waiting_time(arguments)

    def job_waiting_time(self, job: JobInfo) -> float | None:
        """The job's own waiting time, else the global one."""
        return job.waiting_time if job.waiting_time is not None else self.waiting_time

    def deadline(self, job: JobInfo) -> float | None:
        waiting = self.job_waiting_time(job)
        if waiting is None:
            return None
        return epoch_seconds(job.creation_timestamp) + waiting

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        left_deadline, right_deadline = self.deadline(left), self.deadline(right)
        if left_deadline is None:
            return 0 if right_deadline is None else 1
        if right_deadline is None:
            return -1
        if left_deadline < right_deadline:
            return -1
        if left_deadline > right_deadline:
            return 1
        return 0

    def job_order_key(self, job: JobInfo) -> tuple[bool, float]:
        """``job_order`` as a sort key: jobs with a deadline (False) first, the earlier
        deadline first. A deadline is fixed for the session (creation time and waiting time)
        and never NaN (a finite time plus a positive whole number of nanoseconds), so the
        key compares as the function does."""
        deadline = self.deadline(job)
        return (True, 0.0) if deadline is None else (False, deadline)

    def on_session_open(self, ssn: Session) -> None:
        def permit_when_overdue(job: JobInfo) -> Vote:
            deadline = self.deadline(job)
            if deadline is None or ssn.now < deadline:
                return Vote.ABSTAIN
            return Vote.PERMIT

        ssn.add_job_order_fn(self.name, self.job_order)
        # Overdue: enqueue it now, and keep a partial allocation (pipelined) in allocate.
        ssn.add_job_enqueueable_fn(self.name, permit_when_overdue)
        ssn.add_job_pipelined_fn(self.name, permit_when_overdue)

    def on_session_close(self, ssn: Session) -> None:
        return None


def new(arguments: Arguments) -> SlaPlugin:
    return SlaPlugin(arguments)
