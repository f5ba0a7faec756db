"""What is left to place of a job, sub-job by sub-job: upstream ``organizeJobWorksheet``
(``actions/allocate/allocate.go``) and ``organizeEvictionWorksheet`` (``actions/utils``).

The sub-jobs not yet ready are sorted by the sub-job order; walking that order, the first ones of
each sub-group policy up to its ``minSubGroups`` (counting the already ready ones) are
*required* and go first, the others follow in sub-job order. Every sub-job with Pending tasks is
in the worksheet (a ready one may still grow), each with its tasks in task order.
"""

from __future__ import annotations

import functools
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass

from volcano_py.api.job import JobInfo
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.priority_queue import PriorityQueue
from volcano_py.framework.session import Session


@dataclass(slots=True)
class Worksheet:
    """The sub-jobs still to try, in order, and each one's Pending tasks in task order
    (upstream ``JobWorksheet``; cloned for every dry run)."""

    sub_jobs: PriorityQueue[SubJobInfo]
    tasks: dict[str, deque[TaskInfo]]

    def empty(self) -> bool:
        return self.sub_jobs.empty()

    def clone(self) -> Worksheet:
        return Worksheet(
            self.sub_jobs.clone(), {uid: deque(tasks) for uid, tasks in self.tasks.items()}
        )

    def take(self, other: Worksheet) -> None:
        """Continue from a dry run's leftovers (``ShallowCopyFrom``)."""
        self.sub_jobs = other.sub_jobs
        self.tasks = other.tasks

    def left(self) -> list[TaskInfo]:
        return [task for tasks in self.tasks.values() for task in tasks]


def organize(ssn: Session, job: JobInfo, keep: Callable[[TaskInfo], bool]) -> Worksheet:
    """The job's worksheet; ``keep`` says which Pending tasks the caller places."""
    sub_jobs = job.all_sub_jobs()
    counted: Counter[str] = Counter()
    unready: list[SubJobInfo] = []
    for sub_job in sub_jobs:
        if ssn.sub_job_ready(job, sub_job):
            counted[sub_job.gid] += 1
        else:
            unready.append(sub_job)

    def compare(left: SubJobInfo, right: SubJobInfo) -> int:
        return -1 if ssn.sub_job_order_fn(left, right) else 1

    unready.sort(key=functools.cmp_to_key(compare))
    required: set[str] = set()
    for sub_job in unready:
        if counted[sub_job.gid] < job.min_sub_jobs.get(sub_job.gid, 0):
            required.add(sub_job.uid)
            counted[sub_job.gid] += 1

    def before(left: SubJobInfo, right: SubJobInfo) -> bool:
        left_required, right_required = left.uid in required, right.uid in required
        if left_required != right_required:
            return left_required
        return ssn.sub_job_order_fn(left, right)

    queue: PriorityQueue[SubJobInfo] = PriorityQueue(before)
    tasks: dict[str, deque[TaskInfo]] = {}
    for sub_job in sub_jobs:
        pending = PriorityQueue(
            ssn.task_order_fn, [t for t in sub_job.tasks_in(TaskStatus.PENDING).values() if keep(t)]
        )
        if pending.empty():
            continue
        tasks[sub_job.uid] = deque(pending.pop() for _ in range(len(pending)))
        queue.push(sub_job)
    return Worksheet(queue, tasks)
