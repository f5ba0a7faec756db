"""allocate: place pending tasks, a gang at a time (``actions/allocate/allocate.go``).

Queue by queue (re-ordered after every job attempt), job by job, task by task: the queue must
have room (``allocatable``), the task passes pre-predicates, the predicates pick feasible
nodes, scoring picks the best, and the task is allocated there (or pipelined onto a node's
future idle). When the gang is ready the statement is committed (binds go out); when it is
only pipelined it is kept in the session without binding; otherwise it is discarded.

Jobs with a hard network topology (after session open, every job or sub-job with a
``networkTopology`` and a tier) or with sub-group policies are placed sub-job by sub-job by a
search over HyperNodes, in ``allocate_topology``; while the HyperNodes are broken (a cycle, a
HyperNode with two parents) jobs with a network topology wait. A job placed over all nodes whose
HyperNode gangpreempt/gangreclaim nominated first tries that nomination
(``nomination_fast_path``).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator
from typing import Final

import numpy as np

from volcano_py.actions.allocate_topology import TopologyAllocator
from volcano_py.actions.nomination_fast_path import allocate_from_nomination
from volcano_py.actions.sub_job_worksheet import Worksheet, organize
from volcano_py.actions.task_placement import RunCarry, allocate_tasks
from volcano_py.api.job import PG_INQUEUE, JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.node_selection import PredicateHelper
from volcano_py.framework.priority_queue import OrderedQueue, PriorityQueue, SortedQueue
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Statement

# A job's pending tasks sorted once by the task order's key, when it has one (False: always
# the heap over ``task_order_fn``, the tests' reference).
_SORTED_TASKS = True
# A queue's jobs sorted by the job order's key, when it has one (False: always the heap over
# ``job_order_fn``, the tests' reference). Sound as allocate changes only the job it popped,
# which rejoins its queue (keyed anew) after its placement.
_SORTED_JOBS = True
# A job without a Pending task is left out before its tasks are sorted or organised by
# sub-job (False: it goes through them and comes out empty; the tests' reference).
_SKIP_NOTHING_PENDING = True


class Allocate:
    name = "allocate"

    def execute(self, ssn: Session) -> None:
        arguments = ssn.action_arguments(self.name)
        self.error_cache = arguments.get_bool("predicateErrorCacheEnable", True)
        self.ssn = ssn
        self.all_rows = np.arange(len(ssn.node_list), dtype=np.intp)
        # One-pod jobs in a row each go on with the run of like tasks the last one left.
        self.carry = RunCarry(ssn.runs_across_jobs())
        topology = TopologyAllocator(ssn, self.error_cache)

        queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
        waiting: dict[str, list[JobInfo]] = {}
        tasks_by_job: dict[str, OrderedQueue[TaskInfo]] = {}
        worksheets: dict[str, Worksheet] = {}
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
            if not ssn.hyper_nodes_ready and job.contains_network_topology():
                continue
            if _SKIP_NOTHING_PENDING and TaskStatus.PENDING not in job.task_status_index:
                # Nothing to place, by either path (a worksheet lists Pending tasks too):
                # most jobs of a busy cluster, whose pods all run.
                continue
            if topology.handles(job):
                organized = organize(ssn, job, self._schedulable)
                if organized.empty():
                    continue
                worksheets[job.uid] = organized
            else:
                tasks = self._pending_tasks(job)
                if tasks.empty():
                    continue
                tasks_by_job[job.uid] = tasks
            if queue.name not in waiting:
                waiting[queue.name] = []
                queues.push(queue)
            waiting[queue.name].append(job)
        jobs_by_queue = self._job_queues(waiting)

        while not queues.empty():
            queue = queues.pop()
            if ssn.overused(queue):
                continue
            jobs = jobs_by_queue.get(queue.name)
            if jobs is None or jobs.empty():
                continue
            job = jobs.pop()
            worksheet = worksheets.get(job.uid)
            if worksheet is not None:
                self.carry.clear()
                if topology.allocate(job, queue, worksheet):
                    jobs.push(job)
                queues.push(queue)
                continue
            tasks = tasks_by_job[job.uid]
            sub_job = job.default_sub_job()
            statement = None
            if sub_job.nominated_hyper_node:
                self.carry.clear()
                statement = self._allocate_nominated(job, queue, tasks)
            if statement is None:
                statement = self._allocate_tasks(job, queue, tasks)
            # A pipelined-only statement stays in the session uncommitted: a soft reservation.
            if statement is not None and ssn.job_ready(job):
                statement.commit()
                if sub_job.nominated_hyper_node:
                    # The nomination is used up.
                    sub_job.nominated_hyper_node = ""
                    ssn.dirty_jobs.add(job.uid)
                if not tasks.empty():
                    jobs.push(job)
            queues.push(queue)

    def _job_queues(self, waiting: dict[str, list[JobInfo]]) -> dict[str, OrderedQueue[JobInfo]]:
        """Each queue's jobs in job order: sorted once by the job order's key when it has one
        (a placement changes only the job placed, which rejoins its queue afterwards), else
        in a heap asking ``job_order_fn``, the jobs pushed in the order they came."""
        key = self.ssn.job_order_key() if _SORTED_JOBS else None
        queues: dict[str, OrderedQueue[JobInfo]] = {}
        for name, jobs in waiting.items():
            if key is not None:
                queues[name] = SortedQueue(key, jobs)
                continue
            heap = PriorityQueue(self.ssn.job_order_fn)
            for job in jobs:
                heap.push(job)
            queues[name] = heap
        return queues

    @staticmethod
    def _schedulable(task: TaskInfo) -> bool:
        """Allocate's Pending tasks: not best-effort ones (backfill's), nor ones held by a
        scheduling gate other than Volcano's own queue gate."""
        if task.sch_gated and not task.only_volcano_gated:
            return False
        return not task.resreq.is_empty()

    def _pending_tasks(self, job: JobInfo) -> OrderedQueue[TaskInfo]:
        """The job's Pending tasks allocate places, in task order: sorted once by the task
        order's key when it has one (nothing a placement does changes that order), else in
        a heap asking ``task_order_fn``."""
        schedulable = self._schedulable
        tasks = [task for task in job.tasks_in(TaskStatus.PENDING).values() if schedulable(task)]
        if _SORTED_TASKS:
            key = self.ssn.task_order_key(tasks)
            if key is not None:
                return SortedQueue(key, tasks)
        return PriorityQueue(self.ssn.task_order_fn, tasks)

    def _allocate_nominated(
        self, job: JobInfo, queue: QueueInfo, tasks: OrderedQueue[TaskInfo]
    ) -> Statement | None:
        """The flat path's nomination fast path: all of the job's tasks onto their nominated
        nodes, or nothing (``tasks`` left as they were)."""
        ordered = deque(tasks.pop() for _ in range(len(tasks)))
        helper = PredicateHelper(self.ssn, self.error_cache)
        sub_job = job.default_sub_job()
        statement = allocate_from_nomination(self.ssn, helper, job, queue, sub_job, ordered)
        for task in ordered:
            tasks.push(task)
        return statement

    def _allocate_tasks(
        self, job: JobInfo, queue: QueueInfo, tasks: OrderedQueue[TaskInfo]
    ) -> Statement | None:
        helper = PredicateHelper(self.ssn, self.error_cache)
        return allocate_tasks(
            self.ssn, helper, job, queue, _drain(tasks), self.all_rows, carry=self.carry
        )


def _drain(tasks: OrderedQueue[TaskInfo]) -> Iterator[TaskInfo]:
    """Pop lazily: the tasks a gang did not need stay queued for the job's next turn."""
    while not tasks.empty():
        yield tasks.pop()


# The keys of this action's `configurations` entry (upstream allocate.go; gangpreempt and
# gangreclaim read allocate's entry too).
ARGUMENTS: Final[frozenset[str]] = frozenset({"predicateErrorCacheEnable"})


def new() -> Allocate:
    return Allocate()
