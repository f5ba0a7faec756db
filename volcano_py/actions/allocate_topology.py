"""allocate for jobs with a hard network topology or sub-group policies: ``allocateForJob`` /
``allocateForSubJob`` (``actions/allocate/allocate.go``, ``recorder.go``).

After session open every job (and sub-job) with a network topology is "hard, up to tier T" (soft
ones get the virtual root's tier, or their job's, see ``framework/topology.py``). Such a job is
placed by a search over HyperNodes instead of over all nodes:

* the gradient function (network-topology-aware plugin) lists candidate HyperNodes tier by tier,
  lowest first, never above T and, for a partly running job, only below the highest allowed
  ancestor of the HyperNode it already occupies; without the plugin the only candidate is the
  virtual root, i.e. no restriction;
* for each candidate the job's tasks are allocated on that HyperNode's nodes only, as a dry run:
  the operations are saved and discarded;
* of the candidates of the first tier where the job becomes ready or pipelined, the one the
  HyperNode order scores best (random among equals, with the session's seeded generator) is
  replayed, and the job remembers the HyperNode it now occupies (the lowest common ancestor of
  the old one and the chosen one).

The search runs twice nested, as upstream: per job over job-level gradients, and inside each
job-level candidate per sub-job (in worksheet order, see ``sub_job_worksheet``) over that
sub-job's gradients, each sub-job placed whole (its ``subGroupSize``) inside one HyperNode of its
own allowed tier, until the job is ready (``minAvailable`` and ``minSubGroups``). The score of a
job-level candidate is the sum of its sub-jobs' HyperNode scores. A sub-job that gangpreempt or
gangreclaim nominated a HyperNode for is first placed straight onto its tasks' nominated nodes
(``nomination_fast_path``).

Upstream dry-runs every candidate before choosing the best. When the outcome can be told before
the dry runs, the candidates are tried best score first instead, and the first that takes the
job is upstream's choice (equal scores broken at random, as upstream's map order breaks them):
for a job of one sub-job its score in each candidate now; for a job of several sub-jobs that
nothing is placed of yet, the summed score the HyperNode-ordering plugins predict for its
sub-jobs placed whole one after the other (``Session.predict_hyper_node_order``). A dry run
that departs from the prediction falls back to upstream's full search.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Literal

from volcano_py.actions.nomination_fast_path import allocate_from_nomination
from volcano_py.actions.sub_job_worksheet import Worksheet
from volcano_py.actions.task_placement import allocate_tasks
from volcano_py.actions.topology_reasons import no_hyper_node_reason
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.api.job import JobInfo
from volcano_py.api.node_matrix import IntArray
from volcano_py.api.queue import QueueInfo
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.framework.node_selection import PredicateHelper
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Operation, Statement, StatementError
from volcano_py.framework.topology import SearchPurpose

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Recorder:
    """The HyperNode decisions of one allocate run (``recorder.go``): applied to the job
    only when its statement is committed, and every sub-job's HyperNode put back after each
    job-level dry run."""

    job_decisions: dict[str, str] = field(default_factory=dict)
    # job -> HyperNode chosen for the job -> sub-job -> that sub-job's HyperNode
    sub_job_decisions: dict[str, dict[str, dict[str, str]]] = field(default_factory=dict)
    sub_job_snapshot: dict[str, dict[str, str]] = field(default_factory=dict)


class TopologyAllocator:
    """One per allocate run; allocate.py hands it the jobs :meth:`handles` says yes to."""

    def __init__(self, ssn: Session, error_cache: bool) -> None:
        self.ssn = ssn
        self.error_cache = error_cache
        self.recorder = _Recorder()

    @staticmethod
    def handles(job: JobInfo) -> bool:
        """``ContainsHardTopology() || ContainsSubJobPolicy()``: after session open, every
        job (or sub-job) with a network topology and a tier, and every job with sub-group
        policies."""
        return job.contains_sub_job_policy() or job.contains_hard_topology()

    # ------------------------------------------------------------------ entry point

    def allocate(self, job: JobInfo, queue: QueueInfo, worksheet: Worksheet) -> bool:
        """Try to place ``job`` from its ``worksheet``; commit when it is ready. Returns
        whether the job goes back into its queue's heap (it was committed and tasks are left);
        ``worksheet`` keeps whatever is left to place."""
        ssn = self.ssn
        statement = self.allocate_for_job(job, queue, worksheet, CLUSTER_TOP_HYPER_NODE)
        # A statement that only pipelines the job stays in the session uncommitted, as on the
        # flat path.
        if statement is not None and ssn.job_ready(job):
            statement.commit()
            ssn.dirty_jobs.add(job.uid)
            self._update_decision_to_job(job)
            return not worksheet.empty()
        return False

    # ------------------------------------------------------------------ job level

    def allocate_for_job(
        self, job: JobInfo, queue: QueueInfo, worksheet: Worksheet, hyper_node: str
    ) -> Statement | None:
        ssn = self.ssn
        if worksheet.empty():
            return None
        self.recorder.sub_job_snapshot[job.uid] = {
            uid: job.sub_jobs[uid].allocated_hyper_node
            for uid in worksheet.tasks
            if uid in job.sub_jobs
        }
        gradients = ssn.hyper_node_gradient_for_job(job, hyper_node, SearchPurpose.ALLOCATE)
        for gradient in gradients:
            chosen = self._score_first_job_search(job, queue, worksheet, gradient)
            if chosen is None:
                chosen = self._score_first_sub_groups_search(job, queue, worksheet, gradient)
            if chosen is None:
                chosen = self._full_job_search(job, queue, worksheet, gradient)
            if chosen is False:
                continue
            if chosen is None:
                return None
            best, final, left = chosen
            worksheet.take(left)
            self.recorder.job_decisions[job.uid] = best
            log.debug("job %s allocated to HyperNode %s", job.uid, best)
            return final
        if not job.job_fit_errors and (not job.nodes_fit_errors or job.contains_sub_job_policy()):
            # Upstream says nothing more than the last dry run's fit errors (none at all when
            # the resource pre-filter left no candidate); say what blocks the job and what would
            # let it run.
            reason = no_hyper_node_reason(ssn, job, worksheet)
            if reason:
                job.job_fit_errors = reason
        return None

    def _trial_in(
        self, job: JobInfo, queue: QueueInfo, worksheet: Worksheet, candidate: str
    ) -> tuple[list[Statement], Worksheet, float, bool]:
        """One job-level dry run in ``candidate``: sub-job by sub-job until the job is ready.
        Returns the statements (still applied), what is left, the summed sub-job scores, and
        whether the job is then ready or pipelined."""
        ssn = self.ssn
        # Each candidate starts from clean fit errors and its own copy of the tasks.
        job.reset_fit_errors()
        trial = worksheet.clone()
        statements: list[Statement] = []
        score = 0.0
        while not trial.sub_jobs.empty():
            sub_job = trial.sub_jobs.pop()
            statement, sub_score = self.allocate_for_sub_job(
                job, queue, sub_job, trial.tasks[sub_job.uid], candidate
            )
            if statement is None or not statement.operations:
                continue
            statements.append(statement)
            score += sub_score
            if trial.tasks[sub_job.uid]:
                trial.sub_jobs.push(sub_job)
            if ssn.job_ready(job):
                break
        self._recover_sub_jobs(job)
        solved = any(statement.operations for statement in statements) and (
            ssn.job_ready(job) or ssn.job_pipelined(job)
        )
        return statements, trial, score, solved

    def _score_first_job_search(
        self, job: JobInfo, queue: QueueInfo, worksheet: Worksheet, gradient: list[str]
    ) -> tuple[str, Statement, Worksheet] | Literal[False] | None:
        """The job-level search when its outcome can be known before any dry run: one
        sub-job to place, and in every candidate that sub-job's own search is the candidate
        alone. A candidate's score is then the sub-job's HyperNode score there in the current
        state, so the candidates are tried best score first (equals in random order, as
        upstream's map order) and the first that takes the job is upstream's choice: no need to
        dry-run the others. None: not applicable (or the prediction missed), do the full
        search; False: no candidate takes the job."""
        ssn = self.ssn
        if len(worksheet.tasks) != 1 or len(gradient) < 2:
            return None
        (uid,) = worksheet.tasks
        sub_job = job.sub_jobs.get(uid)
        if sub_job is None or sub_job.nominated_hyper_node:
            return None
        # The sub-job's own search inside a candidate is the candidate alone when the candidate
        # has no HyperNode below it (asked of the hook once; for the others the tree says it,
        # without a gradient per candidate). A candidate the sub-job does not fit gets no
        # gradient at all: its dry run below fails, as upstream's would.
        tree = ssn.topology.tree
        if any(tree.hyper_nodes[name].children for name in gradient if name in tree.hyper_nodes):
            return None
        first = gradient[0]
        inner = ssn.hyper_node_gradient_for_sub_job(sub_job, first, SearchPurpose.ALLOCATE)
        if inner not in ([[first]], []):
            return None
        predicted = ssn.hyper_node_order(sub_job, _CandidateRows(ssn, gradient))
        for candidate in self._best_first(predicted):
            statements, left, score, solved = self._trial_in(job, queue, worksheet, candidate)
            if not solved:
                _discard(statements)
                continue
            if score != predicted[candidate]:
                # The sub-job was placed in more than one step: not the case this path knows.
                _discard(statements)
                return None
            final = ssn.statement()
            final.merge(*statements)
            return candidate, final, left
        return False

    def _score_first_sub_groups_search(
        self, job: JobInfo, queue: QueueInfo, worksheet: Worksheet, gradient: list[str]
    ) -> tuple[str, Statement, Worksheet] | Literal[False] | None:
        """The job-level search for several sub-jobs, when the plugins can predict its
        outcome: no sub-job is placed yet, nominated, or has a HyperNode below each candidate
        to choose from (the candidates have no HyperNode below them). A candidate's summed
        score is then that of its sub-jobs placed whole, one after the other, which the
        HyperNode-ordering plugins predict (``Session.predict_hyper_node_order``); the
        candidates are tried best predicted score first (equals in random order) and the first
        that takes the job with the predicted score is upstream's choice, found without a dry
        run in every candidate. A dry run that departs from the prediction (a sub-job skipped,
        placed in steps, or the job ready before its last sub-job) falls back to the full
        search. None: not applicable (or the prediction missed); False: no candidate takes
        the job."""
        ssn = self.ssn
        if len(worksheet.tasks) < 2 or len(gradient) < 2:
            return None
        tree = ssn.topology.tree
        if any(tree.hyper_nodes[name].children for name in gradient if name in tree.hyper_nodes):
            return None
        # The sub-jobs in the order a dry run takes them, each with its tasks in task order.
        planned: list[tuple[SubJobInfo, list[TaskInfo]]] = []
        order = worksheet.sub_jobs.clone()
        while not order.empty():
            sub_job = order.pop()
            tasks = worksheet.tasks[sub_job.uid]
            if sub_job.nominated_hyper_node or len(tasks) != len(sub_job.tasks):
                return None
            planned.append((sub_job, list(tasks)))
        # Inside a candidate each sub-job's own search is the candidate alone, or nothing when
        # its resources do not fit (asked of the hook for the first candidate; the tree says it
        # for the others).
        first = gradient[0]
        for sub_job, _ in planned:
            inner = ssn.hyper_node_gradient_for_sub_job(sub_job, first, SearchPurpose.ALLOCATE)
            if inner not in ([[first]], []):
                return None
        predicted = ssn.predict_hyper_node_order(planned, gradient)
        if predicted is None:
            return None
        for candidate in self._best_first(predicted):
            statements, left, score, solved = self._trial_in(job, queue, worksheet, candidate)
            if not solved:
                _discard(statements)
                continue
            if score != predicted[candidate]:
                _discard(statements)
                return None
            final = ssn.statement()
            final.merge(*statements)
            return candidate, final, left
        return False

    def _full_job_search(
        self, job: JobInfo, queue: QueueInfo, worksheet: Worksheet, gradient: list[str]
    ) -> tuple[str, Statement, Worksheet] | Literal[False] | None:
        """Upstream's search: a dry run in every candidate, then the best summed score.
        False: no candidate takes the job; None: replaying the best failed."""
        ssn = self.ssn
        solutions: dict[str, tuple[list[Operation], Worksheet, float]] = {}
        # The last candidate's dry run stays applied until the best is known: when it is the
        # best, undoing and replaying it would only restore the same state.
        kept: tuple[str, list[Statement]] | None = None
        for position, candidate in enumerate(gradient):
            statements, trial, score, solved = self._trial_in(job, queue, worksheet, candidate)
            last = position == len(gradient) - 1
            if solved:
                # The last candidate is never replayed (kept, or dropped for another).
                saved = [] if last else _save(statements)
                solutions[candidate] = (saved, trial, score)
            if solved and last:
                kept = (candidate, statements)
            else:
                _discard(statements)
        if not solutions:
            return False
        # Scores were taken during the dry runs: choosing needs no session state.
        best = self._pick({name: solution[2] for name, solution in solutions.items()})
        if kept is not None and kept[0] == best:
            final = ssn.statement()
            final.merge(*kept[1])
        else:
            if kept is not None:
                _discard(kept[1])
            replayed = self._replay(solutions[best][0])
            if replayed is None:
                return None
            final = replayed
        return best, final, solutions[best][1]

    def _best_first(self, scores: dict[str, float]) -> list[str]:
        """Candidates by score, highest first; equals in random order (the session's seeded
        generator), so the first that works is a uniform pick among the best that work."""
        ranked: dict[float, list[str]] = {}
        for name, score in scores.items():
            ranked.setdefault(score, []).append(name)
        ordered: list[str] = []
        for score in sorted(ranked, reverse=True):
            group = ranked[score]
            self.ssn.rng.shuffle(group)
            ordered.extend(group)
        return ordered

    def _recover_sub_jobs(self, job: JobInfo) -> None:
        """Put every sub-job's HyperNode back as it was before the dry run."""
        for uid, allocated in self.recorder.sub_job_snapshot.get(job.uid, {}).items():
            sub_job = job.sub_jobs.get(uid)
            if sub_job is not None:
                sub_job.allocated_hyper_node = allocated

    def _update_decision_to_job(self, job: JobInfo) -> None:
        """On commit: the job and its sub-jobs now occupy (the LCA with) what was chosen, and
        the nominations of the placed sub-jobs are used up."""
        chosen = self.recorder.job_decisions.get(job.uid)
        if not chosen:
            return
        topology = self.ssn.topology
        job.allocated_hyper_node = topology.lca(job.allocated_hyper_node, chosen)
        decided = self.recorder.sub_job_decisions.get(job.uid, {}).get(chosen, {})
        for uid, hyper_node in decided.items():
            sub_job = job.sub_jobs.get(uid)
            if sub_job is not None:
                sub_job.allocated_hyper_node = topology.lca(
                    sub_job.allocated_hyper_node, hyper_node
                )
                sub_job.nominated_hyper_node = ""

    # ------------------------------------------------------------------ sub-job level

    def allocate_for_sub_job(
        self,
        job: JobInfo,
        queue: QueueInfo,
        sub_job: SubJobInfo,
        tasks: deque[TaskInfo],
        hyper_node_for_job: str,
    ) -> tuple[Statement | None, float]:
        ssn = self.ssn
        if not tasks:
            return None, 0.0
        if sub_job.nominated_hyper_node:
            helper = PredicateHelper(ssn, self.error_cache)
            pinned = sub_job.nominated_hyper_node
            nominated = allocate_from_nomination(ssn, helper, job, queue, sub_job, tasks)
            if nominated is not None:
                decisions = self.recorder.sub_job_decisions.setdefault(job.uid, {})
                decisions.setdefault(hyper_node_for_job, {})[sub_job.uid] = (
                    sub_job.allocated_hyper_node or pinned
                )
                return nominated, 0.0
        gradients = ssn.hyper_node_gradient_for_sub_job(
            sub_job, hyper_node_for_job, SearchPurpose.ALLOCATE
        )
        for gradient in gradients:
            # Upstream dry-runs every candidate, then scores those that worked in the state
            # before any of them (each dry run is undone): scoring first and trying the best
            # first, the first that works is that same choice, found without the other dry
            # runs; it stays applied instead of being undone and replayed.
            scores = ssn.hyper_node_order(sub_job, _CandidateRows(ssn, gradient))
            for candidate in self._best_first(scores):
                job.reset_sub_job_fit_errors(sub_job.uid)
                trial = deque(tasks)
                statement = self.allocate_tasks(job, queue, sub_job, trial, candidate)
                if statement is None or not statement.operations:
                    continue
                self._settle_sub_job(job, sub_job, tasks, trial, candidate, hyper_node_for_job)
                return statement, scores[candidate]
        return None, 0.0

    def _settle_sub_job(
        self,
        job: JobInfo,
        sub_job: SubJobInfo,
        tasks: deque[TaskInfo],
        left: deque[TaskInfo],
        best: str,
        hyper_node_for_job: str,
    ) -> None:
        """After a sub-job's placement in ``best``: its HyperNode, its tasks still to place,
        and the decision the job-level search commits if it keeps this placement."""
        allocated = self.ssn.topology.lca(sub_job.allocated_hyper_node, best)
        sub_job.allocated_hyper_node = allocated
        tasks.clear()
        tasks.extend(left)
        decisions = self.recorder.sub_job_decisions.setdefault(job.uid, {})
        decisions.setdefault(hyper_node_for_job, {})[sub_job.uid] = allocated

    def _best_for_sub_job(self, sub_job: SubJobInfo, candidates: list[str]) -> tuple[str, float]:
        scores = self.ssn.hyper_node_order(sub_job, _CandidateRows(self.ssn, candidates))
        best = self._pick(scores)
        return best, scores[best]

    def _pick(self, scores: dict[str, float]) -> str:
        """The highest score; equals are broken at random, as upstream (map order there)."""
        top = max(scores.values())
        ties = [name for name, score in scores.items() if score == top]
        return ties[0] if len(ties) == 1 else ties[self.ssn.rng.randrange(len(ties))]

    def _replay(self, saved: list[Operation]) -> Statement | None:
        """Apply a dry run's saved operations for real (``RecoverOperations``)."""
        statement = self.ssn.statement()
        try:
            statement.recover_operations(saved)
        except StatementError as error:
            # Upstream leaves what was replayed so far in the session; half a gang placed
            # would hold nodes no one commits, so it is undone.
            log.error("replaying a HyperNode placement failed: %s", error)
            statement.discard()
            return None
        jobs = self.ssn.jobs
        for operation in saved:
            # The replay works on the session's own task objects; they keep the HyperNode the
            # dry run gave them (the "why pending" context reads it).
            live = jobs[operation.task.job].tasks.get(operation.task.uid)
            if live is not None:
                live.job_allocated_hyper_node = operation.task.job_allocated_hyper_node
        return statement

    # ------------------------------------------------------------------ tasks

    def allocate_tasks(
        self,
        job: JobInfo,
        queue: QueueInfo,
        sub_job: SubJobInfo,
        tasks: deque[TaskInfo],
        hyper_node: str,
    ) -> Statement | None:
        """``allocateResourcesForTasks`` on the nodes of ``hyper_node`` only: the flat path's
        loop, plus the HyperNode the placed tasks span so far (fed to node scoring)."""
        rows = self.ssn.hyper_node_rows(hyper_node)
        if len(rows) == 0:
            return None
        helper = PredicateHelper(self.ssn, self.error_cache)
        return allocate_tasks(
            self.ssn, helper, job, queue, _drain(tasks), rows, hyper_node, sub_job
        )


class _CandidateRows(Mapping[str, IntArray]):
    """Candidate HyperNode -> its session rows, as the HyperNode order hook takes them, each
    looked up only when a plugin reads it (a gradient holds hundreds of candidates and the
    network-topology-aware plugin reads none)."""

    __slots__ = ("_names", "_ssn")

    def __init__(self, ssn: Session, names: list[str]) -> None:
        self._ssn = ssn
        self._names = dict.fromkeys(names)

    def __getitem__(self, name: str) -> IntArray:
        if name not in self._names:
            raise KeyError(name)
        return self._ssn.hyper_node_rows(name)

    def __contains__(self, name: object) -> bool:
        return name in self._names

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def _drain(tasks: deque[TaskInfo]) -> Iterator[TaskInfo]:
    """Pop lazily: a dry run's leftover tasks tell the caller what is still unplaced."""
    while tasks:
        yield tasks.popleft()


def _discard(statements: list[Statement]) -> None:
    """Undo a dry run's statements, the newest first."""
    for statement in reversed(statements):
        statement.discard()


def _save(statements: list[Statement]) -> list[Operation]:
    """A dry run's operations, copied so that it can be replayed after being undone."""
    return [operation for statement in statements for operation in statement.save_operations()]
