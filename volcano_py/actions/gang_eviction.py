"""What gangpreempt and gangreclaim share (``actions/gangpreempt``, ``actions/gangreclaim``).

The task-level preempt and reclaim free room one task at a time, node by node, and may leave
both sides broken: a preemptor gang half pipelined, victim gangs below their minimum. The
gang-aware actions work per starving job, over HyperNode domains:

1. the job's *need* is what all its pending tasks ask for;
2. candidate domains come from the HyperNode gradient for eviction (widest first, capped by
   the topology plugin), at most ``maxDomains``; a job without a hard topology may also use
   the whole cluster;
3. in each domain the victims are grouped into bundles per victim job (safe ones that keep the
   victim gang ready, whole ones that break it; see ``victim_bundles``), ordered, filtered by
   the plugins' ``UnifiedEvictable`` hooks and taken greedily until the domain's idle and
   releasing room plus the victims covers the need;
4. a dry run (``nomination_plan``) must then place the whole job with those victims gone; the
   first domain and victim set that works is replayed into the job's statement, which is
   committed only if the job ends up pipelined.

The two actions differ in which tasks may be victims, how victim bundles are ordered, and
which queues may act; each subclass says so.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Callable
from functools import cmp_to_key
from typing import ClassVar

from volcano_py import metrics
from volcano_py.actions.eviction import queues_and_starving_jobs
from volcano_py.actions.nomination_plan import (
    build_nomination_plan,
    pending_tasks_for_gang_eviction,
)
from volcano_py.actions.victim_bundles import (
    Bundle,
    BundleType,
    create_job_bundles,
    flatten,
    keep_allowed,
)
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.framework.hooks import EvictionContext, EvictionKind
from volcano_py.framework.session import Session
from volcano_py.framework.statement import Op, Statement, StatementError
from volcano_py.framework.topology import SearchPurpose

log = logging.getLogger(__name__)

MAX_DOMAINS_KEY = "maxDomains"
ALLOW_WHOLE_BUNDLE_KEY = "allowWholeBundle"
DEFAULT_MAX_DOMAINS = 8


def apply_nominations(ssn: Session, job: JobInfo, nominations: dict[str, str]) -> None:
    """``ApplySubJobNominations``: each placed sub-job remembers the HyperNode its tasks were
    pipelined into; allocate tries it first (``nomination_fast_path``). Kept on the cache's
    job past this session (upstream keeps it on the session's job only, where no later
    allocate sees it once the tasks are Pending again)."""
    for uid, hyper_node in nominations.items():
        sub_job = job.sub_jobs.get(uid)
        if sub_job is None and uid == job.uid:
            sub_job = job.default_sub_job()
        if sub_job is not None and hyper_node:
            sub_job.nominated_hyper_node = hyper_node
            ssn.dirty_jobs.add(job.uid)


class GangEviction(ABC):
    name: ClassVar[str]
    kind: ClassVar[EvictionKind]

    def __init__(self) -> None:
        self.max_domains = DEFAULT_MAX_DOMAINS
        self.allow_whole_bundle = True
        self.error_cache = True
        # Sub-job uid -> HyperNode of the plan last applied (``evict_for_job``).
        self.nominations: dict[str, str] = {}

    # ------------------------------------------------------------------ what differs

    def may_act(self, ssn: Session, queue: QueueInfo) -> bool:
        """May the queue's starving jobs evict at all this session?"""
        return True

    def may_evict_for(self, ssn: Session, queue: QueueInfo, pending: list[TaskInfo]) -> bool:
        """May the queue take room for these pending tasks?"""
        return True

    @abstractmethod
    def task_may_be_victim(self, task: TaskInfo) -> bool:
        """The part of the victim rule that depends on the task alone (status, pod
        annotation): the same for every preemptor, so it is indexed once per action run."""

    @abstractmethod
    def job_may_be_victim(self, ssn: Session, preemptor: JobInfo, victim: JobInfo) -> bool:
        """The part that depends on the victim's job and the preemptor."""

    @abstractmethod
    def sort_bundles(
        self, ssn: Session, preemptor: JobInfo, bundles: list[Bundle], need: Resource
    ) -> None:
        """Order ``bundles`` in place, the first to take first."""

    # ------------------------------------------------------------------ the action

    def parse_arguments(self, ssn: Session) -> None:
        arguments = ssn.action_arguments(self.name)
        self.max_domains = arguments.get_int(MAX_DOMAINS_KEY, DEFAULT_MAX_DOMAINS)
        if self.max_domains <= 0:
            log.warning(
                "%s: invalid %s %d; using %d",
                self.name,
                MAX_DOMAINS_KEY,
                self.max_domains,
                DEFAULT_MAX_DOMAINS,
            )
            self.max_domains = DEFAULT_MAX_DOMAINS
        self.allow_whole_bundle = arguments.get_bool(ALLOW_WHOLE_BUNDLE_KEY, True)
        # The dry run places tasks as allocate does, with allocate's predicate error cache.
        self.error_cache = ssn.action_arguments("allocate").get_bool(
            "predicateErrorCacheEnable", True
        )

    def begin(self, ssn: Session) -> None:
        """Set up one run over ``ssn`` (after the arguments): the victim index and the
        subclass's own per-run state (``prepare``)."""
        self.victims = VictimIndex(ssn, self.task_may_be_victim)
        self.prepare(ssn)

    def execute(self, ssn: Session) -> None:
        self.parse_arguments(ssn)
        self.begin(ssn)
        queues, starving = queues_and_starving_jobs(ssn)
        while not queues.empty():
            queue = queues.pop()
            if not self.may_act(ssn, queue):
                continue
            jobs = starving.get(queue.name)
            while jobs is not None and not jobs.empty():
                job = jobs.pop()
                statement = ssn.statement()
                self.nominations = {}
                self.evict_for_job(ssn, statement, queue, job)
                if ssn.job_pipelined(job):
                    evicted = any(op.op is Op.EVICT for op in statement.operations)
                    changed = {operation.task.job for operation in statement.operations}
                    statement.commit()
                    self.jobs_changed(ssn, changed)
                    apply_nominations(ssn, job, self.nominations)
                    if evicted:
                        metrics.eviction_committed(self.name)
                else:
                    statement.discard()

    def prepare(self, ssn: Session) -> None:  # noqa: B027 - a hook; most runs need none
        """Per-run state of a subclass, before the first job."""

    def jobs_changed(self, ssn: Session, jobs: set[str]) -> None:
        """A commit evicted or placed tasks of ``jobs``: what was indexed about them is stale."""
        self.victims.forget(jobs)

    def evict_for_job(
        self, ssn: Session, statement: Statement, queue: QueueInfo, job: JobInfo
    ) -> bool:
        """Find the first domain and victim set that lets ``job`` be pipelined and apply it
        to ``statement``; False (nothing applied) when there is none."""
        pending = pending_tasks_for_gang_eviction(ssn, job)
        if not pending or not self.may_evict_for(ssn, queue, pending):
            return False
        need = Resource()
        for task in pending:
            need.add(task.init_resreq)
        for domain in candidate_domains(ssn, job, self.max_domains):
            rows = ssn.hyper_node_rows(domain)
            if len(rows) == 0:
                continue
            bundles = self.domain_bundles(ssn, job, need, domain)
            if not bundles:
                continue
            matrix = ssn.matrix
            available = matrix.index.resource(
                matrix.idle[rows].sum(axis=0) + matrix.releasing[rows].sum(axis=0)
            )
            victims: list[TaskInfo] = []
            for bundle in bundles:
                victims.extend(bundle.tasks)
                for task in bundle.tasks:
                    available.add(task.resreq)
                if not need.less_equal(available, DimensionDefault.ZERO):
                    continue
                if self._try_plan(ssn, statement, queue, job, domain, victims):
                    return True
        return False

    def _try_plan(
        self,
        ssn: Session,
        statement: Statement,
        queue: QueueInfo,
        job: JobInfo,
        domain: str,
        victims: list[TaskInfo],
    ) -> bool:
        plan = build_nomination_plan(ssn, queue, job, domain, victims, self.name, self.error_cache)
        if plan is None:
            return False
        replay = ssn.statement()
        try:
            replay.recover_operations(plan.operations)
        except StatementError as error:
            # The dry run just succeeded on this very state; a failure here is a bug, and
            # half a plan must not stay applied.
            log.error("%s: replaying the plan for job %s failed: %s", self.name, job.uid, error)
            replay.discard()
            return False
        statement.merge(replay)
        self.nominations = dict(plan.hyper_nodes)
        log.debug(
            "%s: job %s placed in %s after evicting %d task(s)",
            self.name,
            job.uid,
            plan.hyper_nodes,
            len(victims),
        )
        return True

    def domain_bundles(
        self, ssn: Session, preemptor: JobInfo, need: Resource, domain: str
    ) -> list[Bundle]:
        """The victim bundles of ``domain`` that may be taken, in the order to take them."""
        bundles = [
            bundle
            for job in self.victims.jobs_in(domain)
            if job.uid != preemptor.uid and self.job_may_be_victim(ssn, preemptor, job)
            for bundle in self.victims.bundles(domain, job)
        ]
        if not bundles:
            return []
        self.sort_bundles(ssn, preemptor, bundles, need)
        context = EvictionContext(self.kind, preemptor, domain)
        allowed = ssn.unified_evictable(context, flatten(bundles))
        if not allowed:
            return []
        kept = keep_allowed(bundles, {task.uid for task in allowed})
        # Upstream sorts again here. Filtering only shrinks safe bundles, whose return on
        # investment stays infinite (they cost the victim nothing), and drops whole ones, so
        # the order of what is kept cannot change.
        return [b for b in kept if self.allow_whole_bundle or b.type is BundleType.SAFE]


class VictimIndex:
    """Per HyperNode domain, the tasks that may be victims (by the task-level rule) grouped
    by job, and each job's bundles: built on first use and kept for the whole action run,
    except for the jobs a commit changed. Without it every starving job would walk every
    task of the domain and re-split every victim job again."""

    def __init__(self, ssn: Session, task_may_be_victim: Callable[[TaskInfo], bool]) -> None:
        self.ssn = ssn
        self.task_may_be_victim = task_may_be_victim
        self._nodes: dict[str, frozenset[str]] = {}
        self._tasks: dict[str, dict[str, list[TaskInfo]]] = {}
        self._bundles: dict[tuple[str, str], list[Bundle]] = {}

    def jobs_in(self, domain: str) -> list[JobInfo]:
        jobs = self.ssn.jobs
        return [jobs[uid] for uid in self._domain_tasks(domain) if uid in jobs]

    def bundles(self, domain: str, job: JobInfo) -> list[Bundle]:
        key = (domain, job.uid)
        found = self._bundles.get(key)
        if found is None:
            tasks = self._domain_tasks(domain).get(job.uid, [])
            found = self._bundles[key] = create_job_bundles(job, tasks)
        return found

    def forget(self, jobs: set[str]) -> None:
        """Re-read ``jobs``' tasks (a commit replaced or moved them) in every indexed domain."""
        for domain, by_job in self._tasks.items():
            nodes = self._nodes[domain]
            for uid in jobs:
                self._bundles.pop((domain, uid), None)
                job = self.ssn.jobs.get(uid)
                tasks = (
                    []
                    if job is None
                    else [
                        task
                        for task in job.tasks.values()
                        if task.node_name in nodes and self.task_may_be_victim(task)
                    ]
                )
                if tasks:
                    by_job[uid] = tasks
                else:
                    by_job.pop(uid, None)

    def _domain_tasks(self, domain: str) -> dict[str, list[TaskInfo]]:
        found = self._tasks.get(domain)
        if found is not None:
            return found
        by_job: dict[str, list[TaskInfo]] = {}
        names = []
        for row in self.ssn.hyper_node_rows(domain).tolist():
            node = self.ssn.node_list[row]
            names.append(node.name)
            for task in node.tasks.values():
                if self.task_may_be_victim(task):
                    by_job.setdefault(task.job, []).append(task)
        self._nodes[domain] = frozenset(names)
        self._tasks[domain] = by_job
        return by_job


def candidate_domains(ssn: Session, job: JobInfo, max_domains: int) -> list[str]:
    """HyperNodes to look for victims in, from the job's eviction gradient, each once, at
    most ``max_domains``; a job without a hard topology falls back to the whole cluster."""
    gradients = ssn.hyper_node_gradient_for_job(job, CLUSTER_TOP_HYPER_NODE, SearchPurpose.EVICT)
    hard = job.network_topology is not None and job.hard_topology()[0]
    return pick_domains(gradients, max_domains, "" if hard else CLUSTER_TOP_HYPER_NODE)


def pick_domains(gradients: list[list[str]], max_domains: int, fallback: str) -> list[str]:
    """The gradients' HyperNodes in order, without repeats, at most ``max_domains`` (none
    means no cap); ``fallback`` alone when they name none."""
    domains: list[str] = []
    for gradient in gradients:
        for name in gradient:
            if not name or name in domains:
                continue
            domains.append(name)
            if 0 < max_domains <= len(domains):
                return domains
    if not domains and fallback:
        domains.append(fallback)
    return domains


class JobOrderIndex:
    """Every session job's position in job order, kept for a whole action run.

    Sorting victim bundles by job order asks the plugins' job-order chain once per pair of
    bundles; asked for a thousand victim jobs per starving job, that dominates the action.
    A job's place only moves when the job itself changes (its tasks evicted or placed): the
    order plugins compare a job's own state (priority, gang readiness, its share of a fixed
    total), so a commit re-places just the jobs it touched.
    """

    def __init__(self, ssn: Session) -> None:
        self.ssn = ssn
        self._order: list[JobInfo] = sorted(ssn.jobs.values(), key=cmp_to_key(self._compare))
        self.position: dict[str, int] = {}
        self._renumber()

    def _compare(self, left: JobInfo, right: JobInfo) -> int:
        if self.ssn.job_order_fn(left, right):
            return -1
        return 1 if self.ssn.job_order_fn(right, left) else 0

    def _renumber(self) -> None:
        self.position = {job.uid: index for index, job in enumerate(self._order)}

    def refresh(self, jobs: set[str]) -> None:
        moved = [job for job in self._order if job.uid in jobs]
        if not moved:
            return
        self._order = [job for job in self._order if job.uid not in jobs]
        for job in moved:
            low, high = 0, len(self._order)
            while low < high:
                middle = (low + high) // 2
                if self.ssn.job_order_fn(self._order[middle], job):
                    low = middle + 1
                else:
                    high = middle
            self._order.insert(low, job)
        self._renumber()
