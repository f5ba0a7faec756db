"""gangreclaim: across queues, a starving gang takes back room from reclaimable queues, whole
gangs at a time, inside one HyperNode domain (``actions/gangreclaim/gangreclaim.go``).

The shared procedure is in ``gang_eviction``. An overused queue does not reclaim, and a queue
reclaims for a job only if ``preemptive`` lets it take all of the job's pending tasks. Victims
here: Running, preemptable tasks of jobs in other, reclaimable queues, whose PodGroup does not
say ``volcano.sh/preemptable: false``; the plugins (capacity) then keep each victim queue at
its guarantee and deserved share. Victim bundles go in victim-queue order.
"""

from __future__ import annotations

from typing import Final

from volcano_py.actions.gang_eviction import GangEviction
from volcano_py.actions.victim_bundles import (
    Bundle,
    job_preemptable_for_gang_eviction,
    sort_for_reclaim,
)
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.hooks import EvictionKind
from volcano_py.framework.session import Session


class GangReclaim(GangEviction):
    name = "gangreclaim"
    kind = EvictionKind.GANG_RECLAIM

    def may_act(self, ssn: Session, queue: QueueInfo) -> bool:
        return not ssn.overused(queue)

    def may_evict_for(self, ssn: Session, queue: QueueInfo, pending: list[TaskInfo]) -> bool:
        return ssn.preemptive(queue, pending)

    def task_may_be_victim(self, task: TaskInfo) -> bool:
        return task.status is TaskStatus.RUNNING and task.preemptable

    def job_may_be_victim(self, ssn: Session, preemptor: JobInfo, victim: JobInfo) -> bool:
        if victim.queue == preemptor.queue or not job_preemptable_for_gang_eviction(victim):
            return False
        queue = ssn.queues.get(victim.queue)
        return queue is not None and queue.reclaimable

    def sort_bundles(
        self, ssn: Session, preemptor: JobInfo, bundles: list[Bundle], need: Resource
    ) -> None:
        reclaimer = ssn.queues.get(preemptor.queue)

        def queues_before(left: QueueInfo, right: QueueInfo) -> bool:
            if reclaimer is None:
                return ssn.queue_order_fn(left, right)
            return ssn.victim_queue_order_fn(left, right, reclaimer)

        sort_for_reclaim(bundles, need, queues_before, ssn.queues)


# The keys of this action's `configurations` entry (upstream gangreclaim.go).
ARGUMENTS: Final[frozenset[str]] = frozenset({"maxDomains", "allowWholeBundle"})


def new() -> GangReclaim:
    return GangReclaim()
