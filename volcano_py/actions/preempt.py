"""preempt: inside a queue, starving jobs take room from lower-priority work
(``actions/preempt/preempt.go``).

For each queue, its starving jobs in job order: each pending task looks for a node where
evicting victims (chosen by the plugins' ``preemptable`` hooks, most evictable first) makes it
fit, evicts no more than needed, and is pipelined there. A job's evictions are committed only
if the job is then pipelined (its gang can start); otherwise all are undone. Then, within each
starving job, pending tasks may preempt lower-priority tasks of the same job.

How a task finds its node depends on ``enableTopologyAwarePreemption``. Normal mode (the
default, here) walks the nodes best score first and evicts on the first one where the task
comes to fit. The topology-aware mode (``preempt_dry_run``) dry-runs the eviction on several
nodes and picks the node whose victims cost least.

Jobs with a network topology are left out, as upstream does.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Final

import numpy as np

from volcano_py import metrics
from volcano_py.actions.eviction import (
    commit_counting_evictions,
    preemption_candidate_nodes,
    victims_can_make_room,
)
from volcano_py.actions.preempt_dry_run import DryRunSettings, pod_priority, topology_aware_preempt
from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import PREEMPTABLE_STATUSES, TaskStatus
from volcano_py.framework.node_selection import PredicateHelper
from volcano_py.framework.priority_queue import PriorityQueue
from volcano_py.framework.session import Session, victims_queue
from volcano_py.framework.statement import Statement, StatementError

log = logging.getLogger(__name__)

VictimFilter = Callable[[TaskInfo], bool]

ENABLE_TOPOLOGY_AWARE_PREEMPTION_KEY = "enableTopologyAwarePreemption"


class Preempt:
    name = "preempt"

    def execute(self, ssn: Session) -> None:
        arguments = ssn.action_arguments(self.name)
        self.dry_run: DryRunSettings | None = None
        if arguments.get_bool(ENABLE_TOPOLOGY_AWARE_PREEMPTION_KEY, False):
            self.dry_run = DryRunSettings.from_arguments(arguments)
        self.ssn = ssn
        self.helper = PredicateHelper(ssn, arguments.get_bool("predicateErrorCacheEnable", True))

        preemptors: dict[str, PriorityQueue[JobInfo]] = {}
        tasks: dict[str, PriorityQueue[TaskInfo]] = {}
        under_request: dict[str, list[JobInfo]] = {}
        for job in ssn.jobs.values():
            if ssn.admitted_queue(job) is None or not ssn.job_starving(job):
                continue
            if job.with_network_topology():
                continue
            preemptors.setdefault(job.queue, PriorityQueue(ssn.job_order_fn)).push(job)
            under_request.setdefault(job.queue, []).append(job)
            tasks[job.uid] = self._pending(job)

        queues = PriorityQueue(ssn.queue_order_fn, [ssn.queues[name] for name in preemptors])
        while not queues.empty():
            queue = queues.pop()
            self._between_jobs(queue, preemptors[queue.name], tasks)
            for job in under_request.get(queue.name, []):
                self._within_job(queue, job)

    def _pending(self, job: JobInfo) -> PriorityQueue[TaskInfo]:
        return PriorityQueue(
            self.ssn.task_order_fn,
            [t for t in job.tasks_in(TaskStatus.PENDING).values() if not t.sch_gated],
        )

    def _between_jobs(
        self,
        queue: QueueInfo,
        jobs: PriorityQueue[JobInfo],
        tasks: dict[str, PriorityQueue[TaskInfo]],
    ) -> None:
        ssn = self.ssn
        while not jobs.empty():
            job = jobs.pop()
            statement = ssn.statement()
            while ssn.job_starving(job) and not tasks[job.uid].empty():
                preemptor = tasks[job.uid].pop()

                def other_job(
                    task: TaskInfo, preemptor: TaskInfo = preemptor, queue_name: str = job.queue
                ) -> bool:
                    victim_job = ssn.jobs.get(task.job)
                    return (
                        _basic_victim(task, preemptor)
                        and victim_job is not None
                        and victim_job.queue == queue_name
                        and preemptor.job != task.job
                    )

                self._preempt(statement, queue, preemptor, other_job)
            if ssn.job_pipelined(job):
                commit_counting_evictions(statement, self.name)
            else:
                statement.discard()

    def _within_job(self, queue: QueueInfo, job: JobInfo) -> None:
        pending = self._pending(job)
        while not pending.empty():
            preemptor = pending.pop()
            statement = self.ssn.statement()

            def same_job(task: TaskInfo, preemptor: TaskInfo = preemptor) -> bool:
                return _basic_victim(task, preemptor) and preemptor.job == task.job

            if not self._preempt(statement, queue, preemptor, same_job):
                statement.discard()
                break
            commit_counting_evictions(statement, self.name)

    def _eligible(self, preemptor: TaskInfo) -> bool:
        """``taskEligibleToPreempt``: not with preemptionPolicy Never; a pod already nominated
        to a node waits while lower-priority pods there are still being preempted."""
        if preemptor.preemption_policy_never:
            return False
        nominated = preemptor.nominated_node_name
        if not nominated:
            return True
        node = self.ssn.nodes.get(nominated)
        if node is None:
            return False
        statuses = self.ssn.predicate_fn(preemptor, node)
        if not statuses:
            return False
        if any(s.code.name == "UNSCHEDULABLE_AND_UNRESOLVABLE" for s in statuses):
            return True
        priority = pod_priority(preemptor)
        for task in node.tasks.values():
            if pod_priority(task) < priority and _terminating_by_preemption(task):
                return False
        return True

    def _preempt(
        self,
        statement: Statement,
        queue: QueueInfo,
        preemptor: TaskInfo,
        victim_filter: VictimFilter,
    ) -> bool:
        ssn = self.ssn
        if not self._eligible(preemptor):
            return False
        if ssn.pre_predicate_fn(preemptor) is not None:
            return False
        candidates = preemption_candidate_nodes(ssn, preemptor, self.helper)
        if not candidates:
            return False
        if self.dry_run is not None:
            return topology_aware_preempt(
                ssn, statement, preemptor, victim_filter, candidates, self.dry_run
            )
        rows = np.fromiter((n.row for n in candidates), dtype=np.intp, count=len(candidates))
        scores = ssn.node_scores(preemptor, rows)
        # Highest score first; equal scores keep node-list order.
        ordered = [candidates[i] for i in sorted(range(len(candidates)), key=lambda i: -scores[i])]
        for node in ordered:
            if self._preempt_on_node(statement, queue, preemptor, node, victim_filter):
                return True
        return False

    def _preempt_on_node(
        self,
        statement: Statement,
        queue: QueueInfo,
        preemptor: TaskInfo,
        node: NodeInfo,
        victim_filter: VictimFilter,
    ) -> bool:
        ssn = self.ssn
        candidates = [task.clone() for task in node.tasks.values() if victim_filter(task)]
        victims = ssn.preemptable(preemptor, candidates)
        metrics.POD_PREEMPTION_VICTIMS.set(len(victims))
        if not victims_can_make_room(preemptor, node, victims):
            return False
        node_statement = ssn.statement()
        ordered = victims_queue(ssn, victims, preemptor)
        preempted = Resource()
        fits = self._fits(queue, preemptor, node)
        while not ordered.empty() and not fits:
            victim = ordered.pop()
            node_statement.evict(victim, "preempt")
            preempted.add(victim.resreq)
            fits = self._fits(queue, preemptor, node)
        metrics.PREEMPTION_ATTEMPTS.inc()
        if fits:
            try:
                node_statement.pipeline(preemptor, node.name, not preempted.is_empty())
            except StatementError as error:
                log.error("%s", error)
                node_statement.discard()
                return False
            statement.merge(node_statement)
            return True
        node_statement.discard()
        return False

    def _fits(self, queue: QueueInfo, preemptor: TaskInfo, node: NodeInfo) -> bool:
        ssn = self.ssn
        return (
            ssn.allocatable(queue, preemptor)
            and preemptor.init_resreq.less_equal(node.future_idle(), DimensionDefault.ZERO)
            and not ssn.predicate_fn(preemptor, node)
        )


def _basic_victim(task: TaskInfo, preemptor: TaskInfo) -> bool:
    """Bound or running, preemptable, and best-effort only when the preemptor is."""
    if task.status not in PREEMPTABLE_STATUSES or not task.preemptable:
        return False
    return not (preemptor.best_effort and not task.best_effort)


def _terminating_by_preemption(task: TaskInfo) -> bool:
    if not (task.pod.get("metadata") or {}).get("deletionTimestamp"):
        return False
    for condition in (task.pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "DisruptionTarget":
            return bool(
                condition.get("status") == "True"
                and condition.get("reason") == "PreemptionByScheduler"
            )
    return False


# The keys of this action's `configurations` entry (upstream preempt.go).
ARGUMENTS: Final[frozenset[str]] = frozenset(
    {
        "predicateErrorCacheEnable",
        "enableTopologyAwarePreemption",
        "topologyAwarePreemptWorkerNum",
        "minCandidateNodesPercentage",
        "minCandidateNodesAbsolute",
        "maxCandidateNodesAbsolute",
    }
)


def new() -> Preempt:
    return Preempt()
