"""allocate: place pending tasks, a gang at a time (``actions/allocate/allocate.go``).

Queue by queue (re-ordered after every job attempt), job by job, task by task: the queue must
have room (``allocatable``), the task passes pre-predicates, the predicates pick feasible
nodes, scoring picks the best, and the task is allocated there (or pipelined onto a node's
future idle). When the gang is ready the statement is committed (binds go out); when it is
only pipelined it is kept in the session without binding; otherwise it is discarded.

Jobs with a hard network topology (after session open, every job with a ``networkTopology``
and a tier) are placed by a search over HyperNodes, in ``allocate_topology``; while the
HyperNodes are broken (a cycle, a HyperNode with two parents) such jobs wait. Not yet here:
sub-group policies; jobs that ask for them are scheduled as if they did not.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Final

import numpy as np

from volcano_py.actions.allocate_topology import TopologyAllocator
from volcano_py.actions.task_placement import allocate_tasks
from volcano_py.api.job import PG_INQUEUE, JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.node_selection import PredicateHelper
from volcano_py.framework.priority_queue import PriorityQueue
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Statement


class Allocate:
    name = "allocate"

    def execute(self, ssn: Session) -> None:
        arguments = ssn.action_arguments(self.name)
        self.error_cache = arguments.get_bool("predicateErrorCacheEnable", True)
        self.ssn = ssn
        self.all_rows = np.arange(len(ssn.node_list), dtype=np.intp)
        topology = TopologyAllocator(ssn, self.error_cache)

        queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
        jobs_by_queue: dict[str, PriorityQueue[JobInfo]] = {}
        tasks_by_job: dict[str, PriorityQueue[TaskInfo]] = {}
        for job in ssn.jobs.values():
            if job.is_pending():
                if "enqueue" in ssn.enabled_actions:
                    continue
                # Without an enqueue action, allocate admits jobs itself.
                assert job.pod_group is not None
                job.pod_group.phase = PG_INQUEUE
            result = ssn.job_valid(job)
            if result is not None and not result.passed:
                continue
            queue = ssn.queues.get(job.queue)
            if queue is None:
                continue
            if job.network_topology is not None and not ssn.hyper_nodes_ready:
                continue
            tasks = self._pending_tasks(job)
            if tasks.empty():
                continue
            if queue.name not in jobs_by_queue:
                jobs_by_queue[queue.name] = PriorityQueue(ssn.job_order_fn)
                queues.push(queue)
            jobs_by_queue[queue.name].push(job)
            tasks_by_job[job.uid] = tasks

        while not queues.empty():
            queue = queues.pop()
            if ssn.overused(queue):
                continue
            jobs = jobs_by_queue.get(queue.name)
            if jobs is None or jobs.empty():
                continue
            job = jobs.pop()
            tasks = tasks_by_job[job.uid]
            if topology.handles(job):
                if topology.allocate(job, queue, tasks):
                    jobs.push(job)
                queues.push(queue)
                continue
            statement = self._allocate_tasks(job, queue, tasks)
            # A pipelined-only statement stays in the session uncommitted: a soft reservation.
            if statement is not None and ssn.job_ready(job):
                statement.commit()
                if not tasks.empty():
                    jobs.push(job)
            queues.push(queue)

    def _pending_tasks(self, job: JobInfo) -> PriorityQueue[TaskInfo]:
        """The job's Pending tasks in task order, minus best-effort ones (backfill's) and
        ones held by a scheduling gate other than Volcano's own queue gate."""
        heap: PriorityQueue[TaskInfo] = PriorityQueue(self.ssn.task_order_fn)
        for task in job.tasks_in(TaskStatus.PENDING).values():
            if task.sch_gated and not task.only_volcano_gated:
                continue
            if task.resreq.is_empty():
                continue
            heap.push(task)
        return heap

    def _allocate_tasks(
        self, job: JobInfo, queue: QueueInfo, tasks: PriorityQueue[TaskInfo]
    ) -> Statement | None:
        helper = PredicateHelper(self.ssn, self.error_cache)
        return allocate_tasks(self.ssn, helper, job, queue, _drain(tasks), self.all_rows)


def _drain(tasks: PriorityQueue[TaskInfo]) -> Iterator[TaskInfo]:
    """Pop lazily: the tasks a gang did not need stay queued for the job's next turn."""
    while not tasks.empty():
        yield tasks.pop()


# The keys of this action's `configurations` entry (upstream allocate.go; gangpreempt and
# gangreclaim read allocate's entry too).
ARGUMENTS: Final[frozenset[str]] = frozenset({"predicateErrorCacheEnable"})


def new() -> Allocate:
    return Allocate()
