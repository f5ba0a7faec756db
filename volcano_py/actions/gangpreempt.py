"""gangpreempt: inside a queue, a starving gang takes room from lower-priority jobs, whole
gangs at a time, inside one HyperNode domain (``actions/gangpreempt/gangpreempt.go``).

The shared procedure is in ``gang_eviction``. Victims here: Bound or Running, preemptable tasks
of other jobs in the same queue with a strictly lower job priority, whose PodGroup does not say
``volcano.sh/preemptable: false``. Victim bundles go lowest job order first.
"""

from __future__ import annotations

from typing import Final

from volcano_py.actions.gang_eviction import GangEviction, JobOrderIndex
from volcano_py.actions.victim_bundles import (
    Bundle,
    job_preemptable_for_gang_eviction,
    sort_for_preempt,
)
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import PREEMPTABLE_STATUSES
from volcano_py.framework.hooks import EvictionKind
from volcano_py.framework.session import Session


class GangPreempt(GangEviction):
    name = "gangpreempt"
    kind = EvictionKind.GANG_PREEMPT

    def task_may_be_victim(self, task: TaskInfo) -> bool:
        return task.status in PREEMPTABLE_STATUSES and task.preemptable

    def job_may_be_victim(self, ssn: Session, preemptor: JobInfo, victim: JobInfo) -> bool:
        return (
            victim.queue == preemptor.queue
            and victim.priority < preemptor.priority
            and job_preemptable_for_gang_eviction(victim)
        )

    def prepare(self, ssn: Session) -> None:
        self.job_order = JobOrderIndex(ssn)

    def jobs_changed(self, ssn: Session, jobs: set[str]) -> None:
        super().jobs_changed(ssn, jobs)
        self.job_order.refresh(jobs)

    def sort_bundles(
        self, ssn: Session, preemptor: JobInfo, bundles: list[Bundle], need: Resource
    ) -> None:
        # The job the scheduler would serve last is the one to evict first.
        position = self.job_order.position
        sort_for_preempt(
            bundles, need, lambda left, right: position[left.uid] > position[right.uid]
        )


# The keys of this action's `configurations` entry (upstream gangpreempt.go).
ARGUMENTS: Final[frozenset[str]] = frozenset({"maxDomains", "allowWholeBundle"})


def new() -> GangPreempt:
    return GangPreempt()
