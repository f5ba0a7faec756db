"""backfill: place best-effort tasks (no resource requests) on any node that passes the
predicates (``actions/backfill/backfill.go``). There is no resource check: such pods use
only what is left over. A best-effort task pipelined earlier in the session is taken back and
placed for real."""

from __future__ import annotations

from typing import Final

import numpy as np

from volcano_py.actions.task_placement import record_job_scheduled
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import FitError, FitErrors, TaskStatus
from volcano_py.framework.node_selection import PredicateHelper, select_best_node
from volcano_py.framework.priority_queue import PriorityQueue
from volcano_py.framework.session import Session
from volcano_py.framework.statement import StatementError


class Backfill:
    name = "backfill"

    def execute(self, ssn: Session) -> None:
        error_cache = ssn.action_arguments(self.name).get_bool("predicateErrorCacheEnable", True)
        rows = np.arange(len(ssn.node_list), dtype=np.intp)
        for task in self._pending_best_effort_tasks(ssn):
            job = ssn.jobs[task.job]
            status = ssn.pre_predicate_fn(task)
            if status is not None:
                errors = FitErrors()
                for node in ssn.node_list:
                    errors.set_node_error(node.name, FitError("", [status]))
                job.nodes_fit_errors[task.uid] = errors
                continue
            helper = PredicateHelper(ssn, error_cache)
            candidates, fit_errors = helper.predicate_nodes(task, rows, check_resources=False)
            if len(candidates) == 0:
                job.nodes_fit_errors[task.uid] = fit_errors
                continue
            node = select_best_node(ssn, task, candidates)
            try:
                ssn.allocate(task, node)
            except StatementError as error:
                errors = FitErrors()
                errors.set_node_error(node.name, FitError("", []))
                errors.error = str(error)
                job.nodes_fit_errors[task.uid] = errors
                continue
            record_job_scheduled(ssn, job)

    @staticmethod
    def _pending_best_effort_tasks(ssn: Session) -> list[TaskInfo]:
        queues: PriorityQueue[QueueInfo] = PriorityQueue(ssn.queue_order_fn)
        jobs: dict[str, PriorityQueue[JobInfo]] = {}
        tasks: dict[str, PriorityQueue[TaskInfo]] = {}
        for job in ssn.jobs.values():
            queue = ssn.admitted_queue(job)
            if queue is None:
                continue
            chosen: list[TaskInfo] = [
                task
                for task in job.tasks_in(TaskStatus.PENDING).values()
                if task.best_effort and not task.sch_gated
            ]
            for task in list(job.tasks_in(TaskStatus.PIPELINED).values()):
                if task.best_effort:
                    statement = ssn.statement()
                    statement.unpipeline(task)
                    chosen.append(task)
            if not chosen:
                continue
            tasks[job.uid] = PriorityQueue(ssn.task_order_fn, chosen)
            if queue.name not in jobs:
                queues.push(queue)
                jobs[queue.name] = PriorityQueue(ssn.job_order_fn)
            jobs[queue.name].push(job)
        ordered: list[TaskInfo] = []
        while not queues.empty():
            queue = queues.pop()
            while not jobs[queue.name].empty():
                job = jobs[queue.name].pop()
                while not tasks[job.uid].empty():
                    ordered.append(tasks[job.uid].pop())
        return ordered


# The keys of this action's `configurations` entry (upstream backfill.go).
ARGUMENTS: Final[frozenset[str]] = frozenset({"predicateErrorCacheEnable"})


def new() -> Backfill:
    return Backfill()
