"""enqueue: admit Pending PodGroups to Inqueue (``actions/enqueue/enqueue.go``).

Admission lets the job controller create the job's pods and lets allocate consider it. A job
without ``minResources`` is always admitted; otherwise the plugins vote (``job_enqueueable``).
Queues are re-ordered after every decision so that admission interleaves fairly.
"""

from __future__ import annotations

from typing import Final

from volcano_py.api.job import PG_INQUEUE, JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.framework.priority_queue import PriorityQueue
from volcano_py.framework.session import Session


class Enqueue:
    name = "enqueue"

    def execute(self, ssn: Session) -> None:
        queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
        seen: set[str] = set()
        jobs_by_queue: dict[str, PriorityQueue[JobInfo]] = {}
        for job in ssn.jobs.values():
            if job.schedule_start_timestamp == 0.0:
                job.schedule_start_timestamp = ssn.now
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            if queue.name not in seen:
                seen.add(queue.name)
                queues.push(queue)
            if job.is_pending():
                jobs_by_queue.setdefault(queue.name, PriorityQueue(ssn.job_order_fn)).push(job)

        while not queues.empty():
            queue = queues.pop()
            jobs = jobs_by_queue.get(queue.name)
            if jobs is None or jobs.empty():
                continue
            job = jobs.pop()
            assert job.pod_group is not None
            if job.pod_group.min_resources is None or ssn.job_enqueueable(job):
                ssn.job_enqueued(job)
                job.pod_group.phase = PG_INQUEUE
            queues.push(queue)


# The keys of this action's `configurations` entry (upstream enqueue.go reads none).
ARGUMENTS: Final[frozenset[str]] = frozenset()


def new() -> Enqueue:
    return Enqueue()
