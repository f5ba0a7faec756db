"""reclaim: across queues, a starving job takes back room from queues using more than they
deserve (``actions/reclaim/reclaim.go``).

Queues in queue order (an overused queue may not reclaim); in each, starving jobs in job order;
each pending task that its queue may still take (``preemptive``) looks, node by node in
predicate order, for Running, preemptable tasks of other, reclaimable queues that the plugins'
``reclaimable`` hooks give up, evicts them most-evictable first until the task fits, and is
pipelined there. A job's evictions are committed only if the job is then pipelined.
"""

from __future__ import annotations

import logging
from typing import Final

from volcano_py.actions.eviction import (
    commit_counting_evictions,
    preemption_candidate_nodes,
    queues_and_starving_jobs,
    victims_can_make_room,
)
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import DimensionDefault
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.node_selection import PredicateHelper
from volcano_py.framework.priority_queue import PriorityQueue
from volcano_py.framework.session import Session, victims_queue
from volcano_py.framework.statement import Statement, StatementError

log = logging.getLogger(__name__)


class Reclaim:
    name = "reclaim"

    def execute(self, ssn: Session) -> None:
        error_cache = ssn.action_arguments(self.name).get_bool("predicateErrorCacheEnable", True)
        self.ssn, self.error_cache = ssn, error_cache
        queues, starving = queues_and_starving_jobs(ssn)

        while not queues.empty():
            queue = queues.pop()
            if ssn.overused(queue):
                continue
            jobs = starving.get(queue.name)
            while jobs is not None and not jobs.empty():
                job = jobs.pop()
                statement = ssn.statement()
                # Only this job's own turn changes its pending tasks: taking them now is
                # taking them when the action started.
                tasks = PriorityQueue(
                    ssn.task_order_fn,
                    [t for t in job.tasks_in(TaskStatus.PENDING).values() if not t.sch_gated],
                )
                while ssn.job_starving(job) and not tasks.empty():
                    task = tasks.pop()
                    if task.preemption_policy_never:
                        continue
                    if not ssn.preemptive(queue, [task]):
                        continue
                    if ssn.pre_predicate_fn(task) is not None:
                        continue
                    self._reclaim_for_task(statement, task, job)
                if ssn.job_pipelined(job):
                    commit_counting_evictions(statement, self.name)
                else:
                    statement.discard()
                if not jobs.empty():
                    queues.push(queue)

    def _reclaim_for_task(self, statement: Statement, task: TaskInfo, job: JobInfo) -> None:
        ssn = self.ssn
        helper = PredicateHelper(ssn, self.error_cache)
        for node in preemption_candidate_nodes(ssn, task, helper):
            reclaimees = []
            for held in node.tasks.values():
                if held.status is not TaskStatus.RUNNING or not held.preemptable:
                    continue
                victim_job = ssn.jobs.get(held.job)
                if victim_job is None or victim_job.queue == job.queue:
                    continue
                if not ssn.queues[victim_job.queue].reclaimable:
                    continue
                reclaimees.append(held.clone())
            if not reclaimees:
                continue
            victims = ssn.reclaimable(task, reclaimees)
            if not victims_can_make_room(task, node, victims):
                continue
            ordered = victims_queue(ssn, victims, task)
            available = node.future_idle()
            node_statement = ssn.statement()
            evicted = False
            while not ordered.empty() and not task.init_resreq.less_equal(
                available, DimensionDefault.ZERO
            ):
                victim = ordered.pop()
                node_statement.evict(victim, "reclaim")
                available.add(victim.resreq)
                evicted = True
            if not task.init_resreq.less_equal(available, DimensionDefault.ZERO):
                node_statement.discard()
                continue
            try:
                node_statement.pipeline(task, node.name, evicted)
            except StatementError as error:
                log.error("%s", error)
                node_statement.discard()
                continue
            statement.merge(node_statement)
            return


# The keys of this action's `configurations` entry (upstream reclaim.go).
ARGUMENTS: Final[frozenset[str]] = frozenset({"predicateErrorCacheEnable"})


def new() -> Reclaim:
    return Reclaim()
