"""Session: one scheduling cycle over a snapshot (``framework/session.go``, ``framework.go``).

``open_session`` builds the configured plugins, which register typed hooks; the actions call
the dispatchers below; ``close_session`` lets plugins finish, then writes PodGroup and Queue
status back through the sink, but only what changed.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import operator
import random
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Protocol

from volcano_py.api.dra import KUBE_GATE_DEFAULTS, QueueDraUsage
from volcano_py.api.hypernode import HyperNodeTree
from volcano_py.api.job import (
    EXACT_INTEGERS,
    PG_COMPLETED,
    PG_INQUEUE,
    PG_PENDING,
    PG_RUNNING,
    PG_UNKNOWN,
    JobInfo,
    PodGroupInfo,
)
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import FitCache, FloatArray, IntArray, NodeMatrix
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo, compare_tasks, compare_tasks_key
from volcano_py.api.types import (
    ALL_NODES_UNAVAILABLE,
    ALLOCATED_STATUSES,
    COMPLETED_STATUSES,
    ROOT_QUEUE,
    Status,
    StatusCode,
    TaskStatus,
    ValidateResult,
    Vote,
)
from volcano_py.cache.snapshot import ClusterSnapshot
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf
from volcano_py.framework.event import EventHandler
from volcano_py.framework.feasibility import FeasibilityOptions
from volcano_py.framework.hooks import HOOKS, EvictionContext, NodeMask, SimulationState
from volcano_py.framework.statement import BindEvictSink, Statement
from volcano_py.framework.topology import (
    HyperNodeOrderPredictor,
    PlannedSubJob,
    SearchPurpose,
    SessionTopology,
    normalise_network_topologies,
    recover_allocated_hyper_nodes,
)

log = logging.getLogger(__name__)

PredicateResult = Status | tuple[Status, ...] | None

# Statuses that make a node unusable for preemption (plain Unschedulable, such as a lack of
# resources, is what preemption is there to fix).
_PREEMPT_REJECT = frozenset(
    {StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, StatusCode.ERROR, StatusCode.SKIP, StatusCode.WAIT}
)


# A queue's allocated total at close from its jobs' kept sums when that is exact (False: task
# by task, the tests' reference).
_SUM_BY_JOB = True

# A job's PodGroup status at close compared field by field against facts taken at open, its
# phase and task counts kept per (tasks version, what else the phase reads) in the job's memo
# shared with the cache, and its status story skipped when it would tell nothing (False: the
# status dicts built and compared, every count taken again, the tests' reference).
_QUIET_CLOSE = True

# A PodGroup's conditions taken at session open with the fields a change of which alone is
# no change already blanked, and compared at close in one list comparison (False: copied at
# open, each blanked again at close by ``_same_condition``, the tests' reference).
_BLANKED_FACTS = True

# ``_close_facts`` kept in one flat tuple with its key (False: a (key, facts) pair of
# tuples, the tests' reference).
_FLAT_CLOSE_FACTS = True

# Session open's scan for jobs with a network topology in C (``map``, ``list.count``,
# ``filter``), not a generator asking each of 5k jobs (False: the tests' reference).
_TOPOLOGY_SCAN_IN_C = True

# The hooks whose answers a batched run of like tasks reuses (``Session.batch_safe``).
_BATCH_GUARDED_HOOKS = (
    "predicate",
    "predicate_mask",
    "task_predicate",
    "node_order",
    "batch_node_order",
    "best_node",
)


class SessionSink(BindEvictSink, Protocol):
    """Where a session's decisions go: the scheduler cache."""

    def update_pod_group_status(self, job: JobInfo) -> None: ...

    def update_queue_status(self, queue: str, allocated: Resource) -> None: ...

    def update_job_info(self, job: JobInfo) -> None: ...

    def update_pod_condition(
        self, task: TaskInfo, condition: Mapping[str, Any], nominated_node: str
    ) -> None: ...

    def record_event(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None: ...


class Plugin(Protocol):
    """Registers hooks on the session in ``on_session_open``; drops its state on close.

    Declared here, next to the session that calls it, so that the session needs nothing above
    it; ``volcano_py.framework.plugin`` is the public place to import it from."""

    name: str

    def on_session_open(self, ssn: Session) -> None: ...

    def on_session_close(self, ssn: Session) -> None: ...


PluginBuilder = Callable[[Arguments], Plugin]


@dataclass
class SchedulingState:
    """What outlives a session: the rotating node start index (Volcano keeps it process-wide),
    the session counter, and the seed of the tie-breaking random generator. Keeping it here
    rather than in globals makes runs reproducible."""

    next_start_index: int = 0
    sessions: int = 0
    seed: int = 0
    clock: Callable[[], float] = field(default=lambda: 0.0)
    # How many feasible nodes a task's search stops at (the scheduler's command line).
    feasibility: FeasibilityOptions = field(default_factory=FeasibilityOptions)
    # What a plugin remembers from one session to the next, under its own name (tdm's time
    # of its last eviction round, rescheduling's last run). Upstream keeps such things in
    # package globals.
    plugin_memory: dict[str, Any] = field(default_factory=dict)
    # Set, session uids are UUIDs drawn from it, as upstream's are random: a simulation of an
    # earlier run's output must not take that run's transitionIDs for its own sessions'.
    uid_salt: str = ""
    # Kubernetes feature gates the plugins read (DRA's), as ``--feature-gates`` left them.
    kube_feature_gates: Mapping[str, bool] = field(default_factory=lambda: dict(KUBE_GATE_DEFAULTS))

    def session_uid(self) -> str:
        if not self.uid_salt:
            return f"session-{self.sessions}"
        digest = hashlib.sha256(f"{self.uid_salt}\0{self.sessions}".encode()).digest()
        return str(uuid.UUID(bytes=digest[:16], version=4))


def as_statuses(result: PredicateResult) -> tuple[Status, ...]:
    if result is None:
        return ()
    if isinstance(result, Status):
        return (result,) if result.code is not StatusCode.SUCCESS else ()
    return tuple(s for s in result if s.code is not StatusCode.SUCCESS)


class Session:
    def __init__(
        self,
        snapshot: ClusterSnapshot,
        conf: SchedulerConf,
        sink: SessionSink,
        state: SchedulingState | None = None,
    ) -> None:
        self.state = state if state is not None else SchedulingState()
        self.state.sessions += 1
        self.uid = self.state.session_uid()
        self.rng = random.Random(self.state.seed * 1_000_003 + self.state.sessions)
        self.now = self.state.clock()
        self.conf = conf
        self.sink = sink
        self.jobs: dict[str, JobInfo] = snapshot.jobs
        self.nodes: dict[str, NodeInfo] = snapshot.nodes
        self.node_list: list[NodeInfo] = [snapshot.nodes[name] for name in snapshot.node_list]
        self.matrix: NodeMatrix = snapshot.matrix
        # Per request shape, which nodes it fits (refreshed only where placements wrote).
        self.fits = FitCache(self.matrix)
        self.queues: dict[str, QueueInfo] = snapshot.queues
        self.priority_classes = snapshot.priority_classes
        # Real load of the nodes with metrics, by name (``NodeInfo.ResourceUsage``).
        self.node_usage = snapshot.node_usage
        self.hyper_nodes = snapshot.hyper_nodes
        # The HyperNode tree over the session's nodes; None when the cluster has none, and the
        # bare virtual root is then only made if something asks for ``topology``.
        self.hyper_node_tree: HyperNodeTree | None = snapshot.hyper_node_tree
        self._node_names = snapshot.node_list
        self._topology: SessionTopology | None = None
        self.pod_disruption_budgets = snapshot.pod_disruption_budgets
        self.namespace_info = snapshot.namespace_info
        # Each node's Numatopology, by node name (nodes without one are absent).
        self.numa_info = snapshot.numa_info
        self.device_configs = snapshot.device_configs
        self.mindcluster_config_maps = snapshot.mindcluster_config_maps
        # DRA devices, classes and claims (None: the cluster has none).
        self.dra = snapshot.dra
        # One vectorised sum over the session's rows, converted once (not a Resource per node).
        self.total_resource = self.matrix.index.resource(
            self.matrix.allocatable.sum(axis=0),
            {name for node in self.node_list[:1] for name in node.defined_scalars},
        )
        self.plugins: dict[str, Plugin] = {}
        # State plugins share through a helper module (plugins never import each other), by
        # the helper's key: one view of the pods on the nodes for every plugin that follows
        # them, told once per event.
        self.shared: dict[str, Any] = {}
        self.event_handlers: list[EventHandler] = []
        self.dirty_jobs: set[str] = set()
        self.enabled_actions: set[str] = set(conf.actions)
        # Per hook, per tier: (plugin name, function) in listed order, flag already checked.
        self._hooks: dict[str, list[list[tuple[str, Any]]]] = {
            name: [[] for _ in conf.tiers] for name in HOOKS
        }
        self._flattened: dict[str, tuple[Any, ...]] = {}
        self._plugin_slot: dict[str, tuple[int, PluginOption]] = {}
        # Each PodGroup's status as the session found it, to write at close only what changed.
        self._old_pod_group_status: dict[str, dict[str, Any]] = {}
        self._old_status_facts: dict[str, StatusFacts] = {}
        # Whether ``_old_status_facts`` hold the conditions blanked (``_BLANKED_FACTS``).
        self._facts_blanked = _QUIET_CLOSE and _BLANKED_FACTS
        if self._facts_blanked:
            blank = _IGNORED_AS_ONE
            self._old_status_facts = {
                uid: (
                    pod_group.phase,
                    [condition | blank for condition in pod_group.conditions],
                    pod_group.running,
                    pod_group.succeeded,
                    pod_group.failed,
                )
                for uid, job in self.jobs.items()
                if (pod_group := job.pod_group) is not None
            }
        elif _QUIET_CLOSE:
            self._old_status_facts = {
                uid: status_facts(job.pod_group)
                for uid, job in self.jobs.items()
                if job.pod_group is not None
            }
        else:
            self._old_pod_group_status = {
                uid: job.pod_group.status_dict()
                for uid, job in self.jobs.items()
                if job.pod_group is not None
            }
        self._vectors: dict[tuple[Any, ...], tuple[FloatArray, IntArray]] = {}

    def release(self) -> None:
        """Drop everything the session holds, once nothing will read it again. Its plugins'
        closures and event handlers refer back to it (and to its jobs and nodes), so without
        this its copies of the cluster would wait for the cyclic collector (the simulator
        keeps that off between collections it chooses). The snapshot's containers are the
        session's own: emptied in place, as plugin state in such cycles shares them. Any
        later use of the session fails loudly."""
        self.jobs.clear()
        self.nodes.clear()
        self.node_list.clear()
        vars(self).clear()

    # ------------------------------------------------------------------ registration

    def register(self, hook: str, plugin: str, fn: Any) -> None:
        """Register ``fn`` for ``hook`` on behalf of ``plugin``, if its flag enables it."""
        spec = HOOKS[hook]
        slot = self._plugin_slot.get(plugin)
        if slot is None:
            # A plugin not listed in the tiers (a test registering by hand): last tier, on.
            tier, enabled = len(self.conf.tiers) - 1, True
        else:
            tier, option = slot
            flags = (spec.flag,) if isinstance(spec.flag, str) else spec.flag
            enabled = flags is None or any(option.enabled(flag) for flag in flags)
        if enabled and tier >= 0:
            self._hooks[hook][tier].append((plugin, fn))
            self._flattened.pop(hook, None)

    def add_job_order_fn(self, plugin: str, fn: Any) -> None:
        self.register("job_order", plugin, fn)

    def add_queue_order_fn(self, plugin: str, fn: Any) -> None:
        self.register("queue_order", plugin, fn)

    def add_victim_queue_order_fn(self, plugin: str, fn: Any) -> None:
        self.register("victim_queue_order", plugin, fn)

    def add_task_order_fn(self, plugin: str, fn: Any) -> None:
        self.register("task_order", plugin, fn)

    def add_predicate_fn(self, plugin: str, fn: Any) -> None:
        self.register("predicate", plugin, fn)

    def add_predicate_mask_fn(self, plugin: str, fn: Any) -> None:
        self.register("predicate_mask", plugin, fn)

    def add_task_predicate_fn(self, plugin: str, fn: Any) -> None:
        """``fn(task)`` returns the per-node predicate ``task`` needs, or None (vectorised path)."""
        self.register("task_predicate", plugin, fn)

    def add_pre_predicate_fn(self, plugin: str, fn: Any) -> None:
        self.register("pre_predicate", plugin, fn)

    def add_best_node_fn(self, plugin: str, fn: Any) -> None:
        self.register("best_node", plugin, fn)

    def add_node_order_fn(self, plugin: str, fn: Any) -> None:
        self.register("node_order", plugin, fn)

    def add_batch_node_order_fn(self, plugin: str, fn: Any) -> None:
        self.register("batch_node_order", plugin, fn)

    def add_preemptable_fn(self, plugin: str, fn: Any) -> None:
        self.register("preemptable", plugin, fn)

    def add_reclaimable_fn(self, plugin: str, fn: Any) -> None:
        self.register("reclaimable", plugin, fn)

    def add_unified_evictable_fn(self, plugin: str, fn: Any) -> None:
        self.register("unified_evictable", plugin, fn)

    def add_simulate_allocatable_fn(self, plugin: str, fn: Any) -> None:
        self.register("simulate_allocatable", plugin, fn)

    def add_simulate_predicate_fn(self, plugin: str, fn: Any) -> None:
        self.register("simulate_predicate", plugin, fn)

    def add_simulate_add_task_fn(self, plugin: str, fn: Any) -> None:
        self.register("simulate_add_task", plugin, fn)

    def add_simulate_remove_task_fn(self, plugin: str, fn: Any) -> None:
        self.register("simulate_remove_task", plugin, fn)

    def add_overused_fn(self, plugin: str, fn: Any) -> None:
        self.register("overused", plugin, fn)

    def add_preemptive_fn(self, plugin: str, fn: Any) -> None:
        self.register("preemptive", plugin, fn)

    def add_allocatable_fn(self, plugin: str, fn: Any) -> None:
        self.register("allocatable", plugin, fn)

    def add_job_ready_fn(self, plugin: str, fn: Any) -> None:
        self.register("job_ready", plugin, fn)

    def add_job_pipelined_fn(self, plugin: str, fn: Any) -> None:
        self.register("job_pipelined", plugin, fn)

    def add_job_enqueueable_fn(self, plugin: str, fn: Any) -> None:
        self.register("job_enqueueable", plugin, fn)

    def add_job_enqueued_fn(self, plugin: str, fn: Any) -> None:
        self.register("job_enqueued", plugin, fn)

    def add_job_valid_fn(self, plugin: str, fn: Any) -> None:
        self.register("job_valid", plugin, fn)

    def add_job_starving_fn(self, plugin: str, fn: Any) -> None:
        self.register("job_starving", plugin, fn)

    def add_target_job_fn(self, plugin: str, fn: Any) -> None:
        self.register("target_job", plugin, fn)

    def add_reserved_nodes_fn(self, plugin: str, fn: Any) -> None:
        self.register("reserved_nodes", plugin, fn)

    def add_victim_tasks_fn(self, plugin: str, fn: Any) -> None:
        self.register("victim_tasks", plugin, fn)

    def add_hyper_node_order_fn(self, plugin: str, fn: Any) -> None:
        self.register("hyper_node_order", plugin, fn)

    def add_hyper_node_gradient_for_job_fn(self, plugin: str, fn: Any) -> None:
        self.register("hyper_node_gradient_for_job", plugin, fn)

    def add_hyper_node_gradient_for_sub_job_fn(self, plugin: str, fn: Any) -> None:
        self.register("hyper_node_gradient_for_sub_job", plugin, fn)

    def add_sub_job_ready_fn(self, plugin: str, fn: Any) -> None:
        self.register("sub_job_ready", plugin, fn)

    def add_sub_job_pipelined_fn(self, plugin: str, fn: Any) -> None:
        self.register("sub_job_pipelined", plugin, fn)

    def add_sub_job_order_fn(self, plugin: str, fn: Any) -> None:
        self.register("sub_job_order", plugin, fn)

    def add_event_handler(self, handler: EventHandler) -> None:
        self.event_handlers.append(handler)

    def has_hook(self, hook: str) -> bool:
        return any(self._hooks[hook])

    def _flat(self, hook: str) -> tuple[Any, ...]:
        """The hook's functions over all tiers, in order (kept: asked several times a task)."""
        flat = self._flattened.get(hook)
        if flat is None:
            flat = self._flattened[hook] = tuple(fn for tier in self._hooks[hook] for _, fn in tier)
        return flat

    # ------------------------------------------------------------------ ordering

    def _compare(self, hook: str, left: Any, right: Any) -> int:
        """The first non-zero verdict of the ``hook`` plugins, tier by tier; 0 when all tie."""
        for fn in self._flat(hook):
            answer = fn(left, right)
            if answer != 0:
                return int(answer)
        return 0

    def job_order_fn(self, left: JobInfo, right: JobInfo) -> bool:
        """Does ``left`` go before ``right``? ``job_compare``'s verdict, its loop written out
        here: the job queues of a 10k-job session ask this a few hundred thousand times."""
        for fn in self._flat("job_order"):
            answer = fn(left, right)
            if answer != 0:
                verdict = int(answer)
                return verdict < 0 if verdict != 0 else _created_first(left, right)
        return _created_first(left, right)

    def sub_job_order_fn(self, left: SubJobInfo, right: SubJobInfo) -> bool:
        """Does sub-job ``left`` go before ``right``? Fallback: match index, then UID."""
        answer = self._compare("sub_job_order", left, right)
        if answer != 0:
            return answer < 0
        if left.match_index != right.match_index:
            return left.match_index < right.match_index
        return left.uid < right.uid

    def queue_order_fn(self, left: QueueInfo, right: QueueInfo) -> bool:
        answer = self._compare("queue_order", left, right)
        if answer != 0:
            return answer < 0
        return _created_first(left, right)

    def victim_queue_order_fn(
        self, left: QueueInfo, right: QueueInfo, preemptor: QueueInfo
    ) -> bool:
        for fn in self._flat("victim_queue_order"):
            answer = fn(left, right, preemptor)
            if answer != 0:
                return bool(answer < 0)
        return not self.queue_order_fn(left, right)

    def task_compare(self, left: TaskInfo, right: TaskInfo) -> int:
        return self._compare("task_order", left, right)

    def task_order_fn(self, left: TaskInfo, right: TaskInfo) -> bool:
        answer = self.task_compare(left, right)
        if answer != 0:
            return answer < 0
        return compare_tasks(left, right) < 0

    def task_order_key(
        self, tasks: Collection[TaskInfo]
    ) -> Callable[[TaskInfo], tuple[Any, ...]] | None:
        """A sort key that orders ``tasks`` (of one job) strictly as ``task_order_fn`` does,
        or None when there is none: every plugin that registered ``task_order`` must offer
        its function as a key (a method ``task_order_key(task)``: the function answers 0, <0
        or >0 as the two tasks' keys are equal, smaller or larger), and the fallback must
        have one over these tasks (``compare_tasks_key``)."""
        registered: dict[str, int] = {}
        entries = self._tier_entries("task_order")
        for name, _fn in entries:
            registered[name] = registered.get(name, 0) + 1
        parts: list[Callable[[TaskInfo], Any]] = []
        for name, _fn in entries:
            part = getattr(self.plugins.get(name), "task_order_key", None)
            if part is None or registered[name] != 1:
                return None
            parts.append(part)
        fallback = compare_tasks_key(tasks)
        if fallback is None:
            return None
        if not parts:
            return fallback
        if len(parts) == 1:
            (only,) = parts
            return lambda task: (only(task), *fallback(task))
        return lambda task: (*(part(task) for part in parts), *fallback(task))

    def job_compare(self, left: JobInfo, right: JobInfo) -> int:
        return self._compare("job_order", left, right)

    def job_order_key(self) -> Callable[[JobInfo], tuple[Any, ...]] | None:
        """A sort key that orders jobs strictly as ``job_order_fn`` does, or None when there
        is none: every plugin that registered ``job_order`` (once) must offer its function as
        a key (a method ``job_order_key(job)``: the function answers 0, -1 or 1 as the two
        jobs' keys are equal, smaller or larger). The fallback's key is (creation time, UID):
        strict, as a session's jobs have distinct UIDs.

        A plugin offering a key also promises that a job's key moves only when that job's own
        tasks are placed or unplaced (nothing it reads is shared between jobs or changes
        otherwise during a session): a queue keys a job when the job joins it, while the heap
        asks the function at every comparison, and the two agree only while the waiting jobs
        stay as they were."""
        entries = self._tier_entries("job_order")
        names = [name for name, _fn in entries]
        parts: list[Callable[[JobInfo], Any]] = []
        for name in names:
            part = getattr(self.plugins.get(name), "job_order_key", None)
            if part is None or names.count(name) != 1:
                return None
            parts.append(part)
        if not parts:
            return lambda job: (job.creation_timestamp, job.uid)
        if len(parts) == 1:
            (only,) = parts
            return lambda job: (only(job), job.creation_timestamp, job.uid)
        return lambda job: (*(part(job) for part in parts), job.creation_timestamp, job.uid)

    # ------------------------------------------------------------------ predicates

    def pre_predicate_fn(self, task: TaskInfo) -> Status | None:
        for fn in self._flat("pre_predicate"):
            statuses = as_statuses(fn(task))
            if statuses:
                return statuses[0]
        return None

    def predicate_fn(self, task: TaskInfo, node: NodeInfo) -> tuple[Status, ...]:
        """The failing statuses of the first plugin that rejects ``node`` (none: it passes),
        vectorised masks included."""
        for fn in self._flat("predicate_mask"):
            mask: NodeMask | None = fn(task)
            if mask is not None and not mask.passed[node.row]:
                return as_statuses(mask.reason(node.row))
        for fn in self.scalar_predicates(task):
            statuses = as_statuses(fn(task, node))
            if statuses:
                return statuses
        return ()

    def predicate_masks(self, task: TaskInfo) -> list[NodeMask]:
        masks = []
        for fn in self._flat("predicate_mask"):
            mask = fn(task)
            if mask is not None:
                masks.append(mask)
        return masks

    def scalar_predicates(
        self, task: TaskInfo
    ) -> list[Callable[[TaskInfo, NodeInfo], PredicateResult]]:
        """The per-node predicates ``task`` needs: every plain one, plus what task-predicate
        plugins return for it."""
        found = list(self._flat("predicate"))
        for factory in self._flat("task_predicate"):
            predicate = factory(task)
            if predicate is not None:
                found.append(predicate)
        return found

    @staticmethod
    def rejects_for_preempt(statuses: Iterable[Status]) -> bool:
        return any(status.code in _PREEMPT_REJECT for status in statuses)

    # ------------------------------------------------------------------ scoring

    def node_order_fn(self, task: TaskInfo, node: NodeInfo) -> float:
        return float(sum(fn(task, node) for fn in self._flat("node_order")))

    def node_scores(self, task: TaskInfo, rows: IntArray) -> FloatArray:
        """Every node-order plugin's score for the nodes at ``rows``, summed."""
        import numpy as np

        total: FloatArray = np.zeros(len(rows))
        for fn in self._flat("batch_node_order"):
            total += fn(task, rows)
        scalar = self._flat("node_order")
        if scalar:
            node_list = self.node_list
            for i, row in enumerate(rows):
                node = node_list[int(row)]
                total[i] += sum(fn(task, node) for fn in scalar)
        return total

    def batch_safe(self, task: TaskInfo, rows: IntArray | None = None) -> bool:
        """May allocate place ``task`` and the following tasks of its job that ask alike
        (``same_pod_template``) as one run, keeping the feasibility mask and the scores of
        every node across the run and refreshing only the row each placement wrote?

        Only when no plain per-node predicate, scalar node order or best-node choice is
        registered, ``task`` needs no per-node check, and every plugin that registered a
        predicate, mask, task-predicate or node-order hook says so for ``task`` (its
        ``batch_safe``, the contract in docs/plugins.md). A plugin without the method is
        never batch safe: the run then goes task by task. With ``rows`` (the run's search),
        a plugin may instead score every one of them alike (``run_uniform_scores``)."""
        return self.run_uniform_scores(task, rows) is not None

    def run_uniform_scores(
        self, task: TaskInfo, rows: IntArray | None = None
    ) -> dict[str, Callable[[TaskInfo], float]] | None:
        """The node-order plugins a run of tasks like ``task`` over ``rows`` adds as one number
        per member, the same on every row, each with that number's function; None when the
        run is not ``batch_safe``.

        A guarded plugin that is not ``batch_safe`` for ``task`` may still take part when its
        only guarded hook is one ``batch_node_order`` function and it offers
        ``batch_uniform_score(task, rows)`` (a network-topology task inside one lowest-tier
        HyperNode). Its number must come after every per-row score in the plugins' order: the
        run adds it to their cached sum, which is then the same operations in the same order
        as ``node_scores``."""
        if self._flat("predicate") or self._flat("node_order") or self._flat("best_node"):
            return None
        uniform: dict[str, Callable[[TaskInfo], float]] = {}
        for name in self._batch_guarded_plugins:
            plugin = self.plugins.get(name)
            answer = getattr(plugin, "batch_safe", None)
            if answer is not None and answer(task):
                continue
            score = self._uniform_score(name, task, rows) if rows is not None else None
            if score is None:
                return None
            uniform[name] = score
        if uniform:
            order = [name for name, _fn in self._tier_entries("batch_node_order")]
            last_per_row = max(
                (i for i, name in enumerate(order) if name not in uniform), default=-1
            )
            if any(order.index(name) < last_per_row for name in uniform):
                return None
            # In the plugins' order, as ``node_scores`` adds them.
            uniform = {name: uniform[name] for name in order if name in uniform}
        return None if self.scalar_predicates(task) else uniform

    def runs_across_jobs(self) -> bool:
        """May allocate carry a run of like tasks (``batch_safe``) on into the next job it
        places, when that job's tasks ask alike but for the group-name annotation
        (``same_pod_template_but_group``: one-pod jobs, bare pods)? Only when every plugin
        whose hooks the run reuses, and every one that answers a run's pre-predicates once
        (``batch_pre_predicate``), reads nothing of a task's job (its ``batch_ignores_job``)."""
        if self._flat("predicate") or self._flat("node_order") or self._flat("best_node"):
            return False
        names = set(self._batch_guarded_plugins)
        names.update(
            name
            for name, _fn in self._tier_entries("pre_predicate")
            if hasattr(self.plugins.get(name), "batch_pre_predicate")
        )
        return all(
            getattr(self.plugins.get(name), "batch_ignores_job", False) is True for name in names
        )

    def _uniform_score(
        self, name: str, task: TaskInfo, rows: IntArray
    ) -> Callable[[TaskInfo], float] | None:
        """``name``'s ``batch_uniform_score(task, rows)``, when its only guarded hook is one
        ``batch_node_order`` function; else None."""
        for hook in _BATCH_GUARDED_HOOKS:
            registered = sum(1 for owner, _fn in self._tier_entries(hook) if owner == name)
            if registered != (1 if hook == "batch_node_order" else 0):
                return None
        bind = getattr(self.plugins.get(name), "batch_uniform_score", None)
        if bind is None:
            return None
        score: Callable[[TaskInfo], float] | None = bind(task, rows)
        return score

    def run_node_scores(
        self, task: TaskInfo, skip: Iterable[str] = ()
    ) -> Callable[[IntArray], FloatArray]:
        """``node_scores`` for a run of tasks like ``task`` (``batch_safe``): each plugin's
        function bound to the run (its ``batch_scores``, when it registered one function and
        offers that), summed in the same order from zero; the plugins in ``skip`` (those the
        run adds as one number, ``run_uniform_scores``) left out."""
        import numpy as np

        left_out = frozenset(skip)
        registered: dict[str, int] = {}
        for name, _fn in self._tier_entries("batch_node_order"):
            registered[name] = registered.get(name, 0) + 1
        parts: list[Callable[[IntArray], FloatArray]] = []
        for name, fn in self._tier_entries("batch_node_order"):
            if name in left_out:
                continue
            bind = getattr(self.plugins.get(name), "batch_scores", None)
            bound = bind(task) if bind is not None and registered[name] == 1 else None
            parts.append(bound if bound is not None else functools.partial(fn, task))

        def scores(rows: IntArray) -> FloatArray:
            total: FloatArray = np.zeros(len(rows))
            for part in parts:
                total += part(rows)
            return total

        return scores

    def run_row_score(
        self, task: TaskInfo, skip: Iterable[str] = ()
    ) -> Callable[[int], float] | None:
        """``run_node_scores`` for one row in plain floats, when every plugin that registered
        ``batch_node_order`` (but those in ``skip``) registered one function and offers
        ``batch_row_score(task)`` (the same operations in the same order for that row); None
        otherwise."""
        left_out = frozenset(skip)
        entries = self._tier_entries("batch_node_order")
        names = [name for name, _fn in entries]
        parts: list[Callable[[int], float]] = []
        for name in names:
            if name in left_out:
                continue
            bind = getattr(self.plugins.get(name), "batch_row_score", None)
            bound = bind(task) if bind is not None and names.count(name) == 1 else None
            if bound is None:
                return None
            parts.append(bound)

        def score(row: int) -> float:
            total = 0.0
            for part in parts:
                total += part(row)
            return total

        return score

    def run_pre_predicate(self, task: TaskInfo) -> Callable[[TaskInfo], Status | None]:
        """``pre_predicate_fn`` for the members of a run of tasks like ``task`` (``batch_safe``):
        each plugin's function, or its ``batch_pre_predicate(task)`` when it registered one
        function and offers that (the answer of the pod template, looked up once), asked in
        the same order; the first failing status."""
        registered: dict[str, int] = {}
        for name, _fn in self._tier_entries("pre_predicate"):
            registered[name] = registered.get(name, 0) + 1
        parts: list[Callable[[TaskInfo], Any]] = []
        for name, fn in self._tier_entries("pre_predicate"):
            bind = getattr(self.plugins.get(name), "batch_pre_predicate", None)
            bound = bind(task) if bind is not None and registered[name] == 1 else None
            parts.append(bound if bound is not None else fn)

        def pre_predicate(member: TaskInfo) -> Status | None:
            for part in parts:
                answer = part(member)
                if answer is None:
                    continue  # passed (what every member of a run usually answers)
                statuses = as_statuses(answer)
                if statuses:
                    return statuses[0]
            return None

        return pre_predicate

    def _tier_entries(self, hook: str) -> list[tuple[str, Any]]:
        """(plugin name, function) of every registration of ``hook``, tier by tier."""
        return [entry for tier in self._hooks[hook] for entry in tier]

    @cached_property
    def _batch_guarded_plugins(self) -> tuple[str, ...]:
        """The plugins whose search or scoring hooks a batched run reuses across its tasks."""
        names: dict[str, None] = {}
        for hook in _BATCH_GUARDED_HOOKS:
            for tier in self._hooks[hook]:
                for name, _fn in tier:
                    names[name] = None
        return tuple(names)

    def best_node_fn(
        self, task: TaskInfo, scores: Mapping[float, list[NodeInfo]]
    ) -> NodeInfo | None:
        for fn in self._flat("best_node"):
            node = fn(task, scores)
            if node is not None:
                return node  # type: ignore[no-any-return]
        return None

    # ------------------------------------------------------------------ queues

    def overused(self, queue: QueueInfo) -> bool:
        return any(fn(queue) for fn in self._flat("overused"))

    def preemptive(self, queue: QueueInfo, tasks: list[TaskInfo]) -> bool:
        return all(fn(queue, tasks) for fn in self._flat("preemptive"))

    def allocatable(self, queue: QueueInfo, task: TaskInfo) -> bool:
        # A loop rather than ``all`` over a generator: asked for every task placed.
        for fn in self._flat("allocatable"):  # noqa: SIM110
            if not fn(queue, task):
                return False
        return True

    # ------------------------------------------------------------------ dry runs

    @cached_property
    def _simulation_states(self) -> dict[str, SimulationState]:
        # Task uid -> its dry-run state (upstream's cycleStatesMap), made on first use.
        return {}

    def simulation_state(self, task: TaskInfo) -> SimulationState:
        """``GetCycleState``: the task's dry-run state, which the plugins' PrePredicate seeds
        (each under its own key) and a dry run clones per candidate node; empty until then."""
        return self._simulation_states.setdefault(task.uid, {})

    def simulate_allocatable(
        self, state: SimulationState, queue: QueueInfo, task: TaskInfo
    ) -> bool:
        return all(fn(state, queue, task) for fn in self._flat("simulate_allocatable"))

    def simulate_predicate(
        self, state: SimulationState, task: TaskInfo, node: NodeInfo
    ) -> tuple[Status, ...]:
        """The first plugin's failing statuses for ``task`` on ``node`` in the dry run."""
        for fn in self._flat("simulate_predicate"):
            statuses = as_statuses(fn(state, task, node))
            if statuses:
                return statuses
        return ()

    def simulate_remove_task(
        self, state: SimulationState, to_schedule: TaskInfo, removed: TaskInfo, node: NodeInfo
    ) -> Status | None:
        return self._first_failure("simulate_remove_task", state, to_schedule, removed, node)

    def simulate_add_task(
        self, state: SimulationState, to_schedule: TaskInfo, added: TaskInfo, node: NodeInfo
    ) -> Status | None:
        return self._first_failure("simulate_add_task", state, to_schedule, added, node)

    def _first_failure(self, hook: str, *args: Any) -> Status | None:
        for fn in self._flat(hook):
            failure: Status | None = fn(*args)
            if failure is not None:
                return failure
        return None

    # ------------------------------------------------------------------ jobs

    def job_ready(self, job: JobInfo) -> bool:
        # A loop rather than ``all`` over a generator: asked after every task placed.
        for fn in self._flat("job_ready"):  # noqa: SIM110
            if not fn(job):
                return False
        return True

    def _vote(self, hook: str, subject: JobInfo | SubJobInfo) -> bool:
        for tier in self._hooks[hook]:
            permitted = False
            for _name, fn in tier:
                vote = fn(subject)
                if vote == Vote.REJECT:
                    return False
                if vote == Vote.PERMIT:
                    permitted = True
            if permitted:
                return True
        return True

    def job_pipelined(self, job: JobInfo) -> bool:
        return self._vote("job_pipelined", job)

    def sub_job_ready(self, job: JobInfo, sub_job: SubJobInfo) -> bool:
        """``SubJobReady``: a job without sub-group policies asks ``job_ready``."""
        if not job.contains_sub_job_policy():
            return self.job_ready(job)
        return all(fn(sub_job) for fn in self._flat("sub_job_ready"))

    def sub_job_pipelined(self, job: JobInfo, sub_job: SubJobInfo) -> bool:
        if not job.contains_sub_job_policy():
            return self.job_pipelined(job)
        return self._vote("sub_job_pipelined", sub_job)

    def job_enqueueable(self, job: JobInfo) -> bool:
        return self._vote("job_enqueueable", job)

    def job_enqueued(self, job: JobInfo) -> None:
        for fn in self._flat("job_enqueued"):
            fn(job)

    def job_valid(self, job: JobInfo) -> ValidateResult | None:
        for fn in self._flat("job_valid"):
            result: ValidateResult | None = fn(job)
            if result is not None and not result.passed:
                return result
        return None

    def admitted_queue(self, job: JobInfo) -> QueueInfo | None:
        """The queue of a job that backfill, preempt and reclaim may work on: admitted (not
        Pending), valid for the plugins, in a queue the session knows; else None."""
        if job.is_pending():
            return None
        result = self.job_valid(job)
        if result is not None and not result.passed:
            return None
        return self.queues.get(job.queue)

    def job_starving(self, job: JobInfo) -> bool:
        for tier in self._hooks["job_starving"]:
            if tier:
                return all(fn(job) for _name, fn in tier)
        return False

    def target_job(self, jobs: list[JobInfo]) -> JobInfo | None:
        for fn in self._flat("target_job"):
            return fn(jobs)  # type: ignore[no-any-return]
        return None

    def reserved_nodes(self) -> None:
        for fn in self._flat("reserved_nodes"):
            fn()

    # ------------------------------------------------------------------ victims

    def _intersect_victims(
        self, hook: str, actor: TaskInfo | EvictionContext, candidates: list[TaskInfo]
    ) -> list[TaskInfo]:
        for tier in self._hooks[hook]:
            victims: list[TaskInfo] | None = None
            for _name, fn in tier:
                chosen, code = fn(actor, candidates)
                if code == 0:
                    continue
                if not chosen:
                    victims = None
                    break
                if victims is None:
                    victims = list(chosen)
                elif chosen is not candidates:
                    # (A plugin handing back the candidates themselves permits them all.)
                    keep = {task.uid for task in chosen}
                    # An empty intersection starts over with the next plugin, as upstream.
                    victims = [task for task in victims if task.uid in keep] or None
            if victims:
                return victims
        return []

    def preemptable(self, preemptor: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
        return self._intersect_victims("preemptable", preemptor, candidates)

    def reclaimable(self, reclaimer: TaskInfo, candidates: list[TaskInfo]) -> list[TaskInfo]:
        return self._intersect_victims("reclaimable", reclaimer, candidates)

    def unified_evictable(
        self, context: EvictionContext, candidates: list[TaskInfo]
    ) -> list[TaskInfo]:
        """The candidates the gang-aware actions may evict (tiers intersect as Preemptable)."""
        return self._intersect_victims("unified_evictable", context, candidates)

    def victim_tasks(self, tasks: list[TaskInfo]) -> list[TaskInfo]:
        for tier in self._hooks["victim_tasks"]:
            union: dict[str, TaskInfo] = {}
            for _name, fn in tier:
                for victim in fn(tasks):
                    union.setdefault(victim.uid, victim)
            if union:
                return list(union.values())
        return []

    # ------------------------------------------------------------------ network topology

    @property
    def topology(self) -> SessionTopology:
        """The session's HyperNodes (the virtual root included), built on first use."""
        if self._topology is None:
            tree = self.hyper_node_tree
            self._topology = (
                SessionTopology.bare(self._node_names)
                if tree is None
                else SessionTopology(tree, self._node_names)
            )
        return self._topology

    @property
    def hyper_nodes_ready(self) -> bool:
        """Upstream ``HyperNodesReadyToSchedule``; jobs with a network topology wait while
        the HyperNodes have a cycle or a HyperNode with two parents."""
        return self.hyper_node_tree is None or self.hyper_node_tree.ready

    def hyper_node_rows(self, hyper_node: str) -> IntArray:
        """Session rows of the nodes under ``hyper_node`` (all rows for the virtual root)."""
        return self.topology.rows(hyper_node)

    def hyper_node_order(
        self, sub_job: SubJobInfo, candidates: Mapping[str, IntArray]
    ) -> dict[str, float]:
        """Each candidate HyperNode's score (candidate -> its rows), summed over plugins; a
        HyperNode no plugin scores gets 0."""
        total = dict.fromkeys(candidates, 0.0)
        for fn in self._flat("hyper_node_order"):
            for name, score in fn(sub_job, candidates).items():
                if name in total:
                    total[name] += float(score)
        return total

    def predict_hyper_node_order(
        self, sub_jobs: Sequence[PlannedSubJob], candidates: Sequence[str]
    ) -> dict[str, float] | None:
        """Per candidate HyperNode, the summed score a dry run placing ``sub_jobs`` inside it,
        one after the other and each whole, would collect from :meth:`hyper_node_order` (asked
        of that candidate alone), added up as the dry run adds it. None when a plugin that
        orders HyperNodes cannot predict its scores."""
        predictions: list[dict[str, list[float]]] = []
        for tier in self._hooks["hyper_node_order"]:
            for plugin_name, _fn in tier:
                plugin = self.plugins.get(plugin_name)
                if not isinstance(plugin, HyperNodeOrderPredictor):
                    return None
                predictions.append(plugin.predict_hyper_node_order(sub_jobs, candidates))
        totals: dict[str, float] = {}
        for name in candidates:
            score = 0.0
            for position in range(len(sub_jobs)):
                # One hyper_node_order answer: the plugins' scores summed from 0.
                answer = 0.0
                for predicted in predictions:
                    answer += float(predicted[name][position])
                score += answer
            totals[name] = score
        return totals

    def hyper_node_gradient_for_job(
        self, job: JobInfo, hyper_node: str, purpose: SearchPurpose
    ) -> list[list[str]]:
        """HyperNodes to try for ``job`` within ``hyper_node``, one list per tier, lowest
        first. The first registered function decides; without one, ``hyper_node`` itself."""
        for fn in self._flat("hyper_node_gradient_for_job"):
            return [list(gradient) for gradient in fn(job, hyper_node, purpose)]
        return [[hyper_node]]

    def hyper_node_gradient_for_sub_job(
        self, sub_job: SubJobInfo, hyper_node: str, purpose: SearchPurpose
    ) -> list[list[str]]:
        """As :meth:`hyper_node_gradient_for_job`, for a sub-job."""
        for fn in self._flat("hyper_node_gradient_for_sub_job"):
            return [list(gradient) for gradient in fn(sub_job, hyper_node, purpose)]
        return [[hyper_node]]

    # ------------------------------------------------------------------ transactions

    def statement(self) -> Statement:
        return Statement(self)

    def allocate(self, task: TaskInfo, node: NodeInfo) -> None:
        """Session-level allocate (backfill): once the job is ready, bind every allocated task
        of it at once."""
        statement = Statement(self)
        statement.allocate(task, node)
        statement.operations.clear()
        job = self.jobs.get(task.job)
        if job is not None and self.job_ready(job):
            for allocated in list(job.tasks_in(TaskStatus.ALLOCATED).values()):
                self.sink.add_bind_task(allocated)
                job.update_task_status(allocated, TaskStatus.BINDING)

    def evict(self, task: TaskInfo, reason: str) -> None:
        """Immediate eviction (shuffle)."""
        statement = Statement(self)
        statement.evict(task, reason)
        statement.commit()

    def task_vector(self, resource: Resource) -> tuple[FloatArray, IntArray]:
        """``resource`` as a matrix row and its checked columns, cached per resource value
        (the members of a gang ask the same, each with its own Resource object)."""
        key = (resource.milli_cpu, resource.memory, *resource.scalar_resources.items())
        cached = self._vectors.get(key)
        if cached is None:
            vector = self.matrix.vector(resource)
            columns = self.matrix.index.defined_columns(resource)
            self.matrix.fit_width()
            cached = self._vectors[key] = (vector, columns)
        return cached

    def action_arguments(self, action: str) -> Arguments:
        return Arguments(
            self.conf.action_arguments(action),
            owner=f"action {action}",
            report=self.conf.diagnostics.warn,
        )

    def record_job_event(self, job: JobInfo, event_type: str, reason: str, message: str) -> None:
        self.sink.record_event("PodGroup", job.namespace, job.name, event_type, reason, message)


# ---------------------------------------------------------------------- open / close


def open_session(
    snapshot: ClusterSnapshot,
    conf: SchedulerConf,
    builders: Mapping[str, PluginBuilder],
    sink: SessionSink,
    state: SchedulingState | None = None,
) -> Session:
    """Build the session and let every configured plugin register its hooks, tier by tier."""
    ssn = Session(snapshot, conf, sink, state)
    _open_topology(ssn)
    for tier_index, tier in enumerate(conf.tiers):
        for option in tier.plugins:
            builder = builders.get(option.name)
            if builder is None:
                # Only a conf built in code gets here: a loaded conf's names are checked.
                log.error("failed to get plugin %s", option.name)
                continue
            ssn._plugin_slot[option.name] = (tier_index, option)
            arguments = Arguments(
                option.arguments, owner=f"plugin {option.name}", report=conf.diagnostics.warn
            )
            plugin = builder(arguments)
            ssn.plugins[option.name] = plugin
            plugin.on_session_open(ssn)
    return ssn


def _open_topology(ssn: Session) -> None:
    """Session-open steps 5-6 (normalise network topologies, recover allocated HyperNodes),
    before plugins open as upstream; a session without such jobs only pays for this scan."""
    if not _any_network_topology(ssn.jobs):
        return
    normalise_network_topologies(ssn)
    if ssn.hyper_nodes_ready:
        recover_allocated_hyper_nodes(ssn)


_NETWORK_TOPOLOGY = operator.attrgetter("network_topology")
_SUB_JOBS = operator.attrgetter("sub_jobs")


def _any_network_topology(jobs: Mapping[str, JobInfo]) -> bool:
    """Any job ``contains_network_topology``. With ``_TOPOLOGY_SCAN_IN_C`` the jobs' own
    constraints are read by ``map`` and counted by ``list.count``, and only jobs that have
    sub-jobs are asked about theirs (a job without sub-jobs contains a network topology
    exactly when its own is not None)."""
    if not _TOPOLOGY_SCAN_IN_C:
        return any(job.contains_network_topology() for job in jobs.values())
    listed = list(jobs.values())
    if list(map(_NETWORK_TOPOLOGY, listed)).count(None) != len(listed):
        return True
    return any(job.contains_network_topology() for job in filter(_SUB_JOBS, listed))


def pod_group_phase(job: JobInfo, unschedulable: bool) -> str:
    """The phase a PodGroup has after a session (``getPodGroupPhase``)."""
    assert job.pod_group is not None
    if job.tasks_in(TaskStatus.RUNNING) and unschedulable:
        return PG_UNKNOWN
    scheduled = job.scheduled_task_num() + job.releasing_scheduled_task_num()
    completed = sum(len(job.tasks_in(status)) for status in COMPLETED_STATUSES)
    if scheduled >= job.pod_group.min_member:
        return PG_COMPLETED if scheduled == completed else PG_RUNNING
    if job.pod_group.phase != PG_INQUEUE:
        return PG_PENDING
    return job.pod_group.phase


def _conditions_changed(new: list[dict[str, Any]], old: list[dict[str, Any]]) -> bool:
    if len(new) != len(old):
        return True
    ignored = ("lastTransitionTime", "transitionID")
    for new_condition, old_condition in zip(new, old, strict=True):
        left = {k: v for k, v in new_condition.items() if k not in ignored}
        right = {k: v for k, v in old_condition.items() if k not in ignored}
        if left != right:
            return True
    return False


# A PodGroup's status as a session found it: (phase, conditions, running, succeeded, failed),
# the conditions copied (a plugin may change one in place).
StatusFacts = tuple[str, list[dict[str, Any]], int, int, int]

# Condition fields a change of which alone is no change (``job_updater.go``).
_IGNORED_CONDITION_FIELDS = frozenset({"lastTransitionTime", "transitionID"})
# The phases ``_record_job_status_event`` tells an Unschedulable story for.
_UNSCHEDULABLE_PHASES = frozenset({PG_UNKNOWN, PG_PENDING, PG_INQUEUE})
_WAITING_STATUSES = (TaskStatus.ALLOCATED, TaskStatus.PENDING, TaskStatus.PIPELINED)


def status_facts(pod_group: PodGroupInfo) -> StatusFacts:
    """What ``PodGroupInfo.status_dict`` would show, without building it."""
    return (
        pod_group.phase,
        list(map(dict, pod_group.conditions)),
        pod_group.running,
        pod_group.succeeded,
        pod_group.failed,
    )


# Every ignored field at one value: a condition merged with it keeps only its other fields'
# differences (compared by the dicts' own equality, without a Python loop over the fields).
_IGNORED_AS_ONE = dict.fromkeys(_IGNORED_CONDITION_FIELDS)


def _same_condition(new: dict[str, Any], old: dict[str, Any]) -> bool:
    """``new`` and ``old`` without their ignored fields compare equal."""
    return new | _IGNORED_AS_ONE == old | _IGNORED_AS_ONE


def _unschedulable_in(conditions: list[dict[str, Any]], uid: str) -> bool:
    """A condition of the session ``uid`` says the PodGroup is Unschedulable."""
    for condition in conditions:
        if (
            condition.get("type") == "Unschedulable"
            and condition.get("status") == "True"
            and condition.get("transitionID") == uid
        ):
            return True
    return False


def _status_changed(pod_group: PodGroupInfo, old: StatusFacts | None) -> bool:
    """``_update_job_status``'s comparison of the status dicts, field by field: a count
    ``status_dict`` leaves out is 0, and absent conditions an empty list."""
    if old is None:
        return True
    phase, conditions, running, succeeded, failed = old
    if (
        pod_group.phase != phase
        or pod_group.running != running
        or pod_group.succeeded != succeeded
        or pod_group.failed != failed
    ):
        return True
    new = pod_group.conditions
    if len(new) != len(conditions):
        return True
    return not all(map(_same_condition, new, conditions))


def _close_facts_now(job: JobInfo, unschedulable: bool) -> tuple[str, int, int, int, bool]:
    """(phase, running, failed, succeeded, any task waiting) of the job as it is now."""
    index = job.task_status_index
    return (
        pod_group_phase(job, unschedulable),
        len(index.get(TaskStatus.RUNNING, ())),
        len(index.get(TaskStatus.FAILED, ())),
        len(index.get(TaskStatus.SUCCEEDED, ())),
        any(index.get(status) for status in _WAITING_STATUSES),
    )


def _close_facts(job: JobInfo, unschedulable: bool) -> tuple[str, int, int, int, bool]:
    """(phase, running, failed, succeeded, any task waiting) after the session: worked out
    once per job change, kept in the job's memo under every fact it reads (the tasks by
    their version; the PodGroup's minMember and phase as the session left them)."""
    pod_group = job.pod_group
    assert pod_group is not None
    key = (job.tasks_version, unschedulable, pod_group.min_member, pod_group.phase)
    kept = job.memo.close_facts
    if kept is not None and kept[0] == key:
        return kept[1]
    facts = _close_facts_now(job, unschedulable)
    job.memo.close_facts = (key, facts)
    return facts


def _flat_close_facts(job: JobInfo, unschedulable: bool) -> tuple[str, int, int, int, bool]:
    """``_close_facts`` kept flat, in one tuple with its key (tasks version, Unschedulable
    mark, minMember, phase): a close reads one kept object per job rather than three."""
    pod_group = job.pod_group
    assert pod_group is not None
    kept = job.memo.flat_close_facts
    if (
        kept is not None
        and kept[0] == job.tasks_version
        and kept[1] is unschedulable
        and kept[2] == pod_group.min_member
        and kept[3] == pod_group.phase
    ):
        return kept[4], kept[5], kept[6], kept[7], kept[8]
    key = (job.tasks_version, unschedulable, pod_group.min_member, pod_group.phase)
    facts = _close_facts_now(job, unschedulable)
    job.memo.flat_close_facts = (*key, *facts)
    return facts


def _update_job_status(ssn: Session, job: JobInfo) -> None:
    pod_group = job.pod_group
    assert pod_group is not None
    if _QUIET_CLOSE:
        unschedulable = _unschedulable_in(pod_group.conditions, ssn.uid)
        if _FLAT_CLOSE_FACTS:
            phase, running, failed, succeeded, waiting = _flat_close_facts(job, unschedulable)
        else:
            phase, running, failed, succeeded, waiting = _close_facts(job, unschedulable)
        pod_group.phase = phase
        pod_group.running = running
        pod_group.failed = failed
        pod_group.succeeded = succeeded
        facts = ssn._old_status_facts.get(job.uid)
        if not ssn._facts_blanked:
            changed = _status_changed(pod_group, facts)
        elif facts is None:
            changed = True
        else:
            # ``_status_changed`` against conditions blanked at open: each condition now,
            # blanked, against its blanked counterpart (the lists' lengths first).
            blank = _IGNORED_AS_ONE
            changed = (
                phase != facts[0]
                or running != facts[2]
                or succeeded != facts[3]
                or failed != facts[4]
                or [condition | blank for condition in pod_group.conditions] != facts[1]
            )
        if changed:
            ssn.sink.update_pod_group_status(job)
        # Nothing written, no task waiting and a phase with no story: nothing to tell.
        if changed or waiting or phase in _UNSCHEDULABLE_PHASES:
            _record_job_status_event(ssn, job, changed)
        return
    unschedulable = any(
        c.get("type") == "Unschedulable"
        and c.get("status") == "True"
        and c.get("transitionID") == ssn.uid
        for c in pod_group.conditions
    )
    pod_group.phase = pod_group_phase(job, unschedulable)
    pod_group.running = len(job.tasks_in(TaskStatus.RUNNING))
    pod_group.failed = len(job.tasks_in(TaskStatus.FAILED))
    pod_group.succeeded = len(job.tasks_in(TaskStatus.SUCCEEDED))
    new = pod_group.status_dict()
    old = ssn._old_pod_group_status.get(job.uid)
    changed = old is None or (
        {k: v for k, v in new.items() if k != "conditions"}
        != {k: v for k, v in old.items() if k != "conditions"}
        or _conditions_changed(new.get("conditions", []), old.get("conditions", []))
    )
    if changed:
        ssn.sink.update_pod_group_status(job)
    _record_job_status_event(ssn, job, changed)


def _pod_condition_changed(task: TaskInfo, condition: Mapping[str, str]) -> bool:
    for existing in (task.pod.get("status") or {}).get("conditions") or []:
        if existing.get("type") == condition["type"]:
            return any(
                existing.get(key) != condition[key] for key in ("status", "reason", "message")
            )
    return True


def _record_job_status_event(ssn: Session, job: JobInfo, pod_group_written: bool) -> None:
    """The "why" a person reads: a PodGroup event, and the PodScheduled condition of each pod
    still waiting (written only when it changed), as ``RecordJobStatusEvent`` does."""
    pod_group = job.pod_group
    assert pod_group is not None
    waiting = (TaskStatus.ALLOCATED, TaskStatus.PENDING, TaskStatus.PIPELINED)
    unschedulable = pod_group.phase in (PG_UNKNOWN, PG_PENDING, PG_INQUEUE)
    # The story is only told for a job still waiting: most jobs of a large cluster run, and
    # telling it costs a pass over their tasks.
    told = unschedulable or any(job.tasks_in(status) for status in waiting)
    fit_error = job.fit_error() if told else ""
    if unschedulable:
        pending = len(job.tasks_in(TaskStatus.PENDING))
        ssn.record_job_event(
            job,
            "Warning",
            "Unschedulable",
            f"{pending}/{len(job.tasks)} tasks in gang unschedulable: {fit_error}",
        )
    elif pod_group_written:
        ssn.record_job_event(job, "Normal", "Scheduled", "pod group is ready")
    for status in waiting:
        for task in sorted(job.tasks_in(status).values(), key=lambda t: t.key):
            if task.sch_gated:
                continue
            reason, message, nominated = job.task_scheduling_reason(task.uid)
            condition = {
                "type": "PodScheduled",
                "status": "False",
                "reason": reason,
                "message": message or fit_error or ALL_NODES_UNAVAILABLE,
            }
            current_nominated = task.nominated_node_name
            if _pod_condition_changed(task, condition) or (
                nominated and nominated != current_nominated
            ):
                ssn.sink.update_pod_condition(task, condition, nominated)


def _update_queue_status(ssn: Session) -> None:
    allocated: dict[str, Resource] = {name: Resource() for name in ssn.queues}
    # DRA: ``deviceclass/<class>`` and ``<dim>.deviceclass/<class>`` in status.allocated, a
    # shared claim once per queue (upstream's session_dra_queue_status.go).
    gates = ssn.state.kube_feature_gates
    dra_usage = (
        QueueDraUsage(ssn.dra, gates.get("DRAConsumableCapacity", True))
        if ssn.dra is not None and gates.get("DynamicResourceAllocation", True)
        else None
    )
    has_root = ROOT_QUEUE in ssn.queues
    if dra_usage is not None or not (_SUM_BY_JOB and _sum_by_job(ssn, allocated, has_root)):
        _sum_by_task(ssn, allocated, has_root, dra_usage)
    if dra_usage is not None:
        dra_usage.write_into(allocated)
    for name, total in allocated.items():
        listed = total.to_list()
        previous = ssn.queues[name].allocated_status
        # Compared as quantities: "1000m" written by someone else is the same as "1".
        if previous is not None and Resource.from_list(previous).to_list() == listed:
            continue
        ssn.queues[name].allocated_status = listed
        ssn.sink.update_queue_status(name, total)


def _sum_by_job(ssn: Session, allocated: dict[str, Resource], has_root: bool) -> bool:
    """``_sum_by_task``'s totals from each job's kept sum (``JobInfo.task_sums``), when that
    gives the same floats: every request summed is a non-negative integer and every total
    stays within ``EXACT_INTEGERS``, so each addition either way is exact. False, with the
    totals left at zero, otherwise."""
    by_queue: dict[str, list[Resource]] = {}
    for job in ssn.jobs.values():
        if job.queue not in allocated:
            continue
        sums = job.task_sums()
        if not sums.exact:
            break
        listed = by_queue.get(job.queue)
        if listed is None:
            listed = by_queue[job.queue] = []
        listed.append(sums.allocated)
    else:
        # Exact sums: each queue's jobs added in one ``add_all`` per total it counts in.
        for queue, listed in by_queue.items():
            for total in _usage_chain(ssn, queue, allocated, has_root):
                total.add_all(listed)
        if all(_within_exact_integers(total) for total in allocated.values()):
            return True
    for name in allocated:
        allocated[name] = Resource()
    return False


def _within_exact_integers(total: Resource) -> bool:
    return (
        total.milli_cpu <= EXACT_INTEGERS
        and total.memory <= EXACT_INTEGERS
        and all(value <= EXACT_INTEGERS for value in total.scalar_resources.values())
    )


def _sum_by_task(
    ssn: Session,
    allocated: dict[str, Resource],
    has_root: bool,
    dra_usage: QueueDraUsage | None,
) -> None:
    """Each queue's (and with a root queue each ancestor's) total of its jobs' allocated
    tasks' requests, task by task."""
    chains: dict[str, list[Resource]] = {}
    for job in ssn.jobs.values():
        if job.queue not in allocated:
            continue
        chain = chains.get(job.queue)
        if chain is None:
            chain = chains[job.queue] = _usage_chain(ssn, job.queue, allocated, has_root)
        for status, tasks in job.task_status_index.items():
            if status not in ALLOCATED_STATUSES:
                continue
            for total in chain:
                total.add_all(task.resreq for task in tasks.values())
            if dra_usage is None:
                continue
            for task in tasks.values():
                if task.pod.get("spec", {}).get("resourceClaims"):
                    dra_usage.add(task, _queue_chain_names(ssn, job.queue, has_root))


def _queue_chain_names(ssn: Session, queue: str, has_root: bool) -> list[str]:
    """The queue and its ancestors up to root (root only when the session has it)."""
    names = [queue]
    seen = {queue}
    current = ssn.queues.get(queue)
    while has_root and current is not None and current.name != ROOT_QUEUE:
        parent = current.parent or ROOT_QUEUE
        if parent in seen or parent not in ssn.queues:
            break
        names.append(parent)
        seen.add(parent)
        current = ssn.queues.get(parent)
    return names


def _usage_chain(
    ssn: Session, queue_name: str, allocated: dict[str, Resource], has_root: bool
) -> list[Resource]:
    """The sums a task of ``queue_name`` counts in: its queue's and, with a root queue, every
    ancestor's up to it (walked once per queue, not once per task)."""
    chain = [allocated[queue_name]]
    queue = ssn.queues[queue_name]
    seen = {queue.name}
    while has_root and queue.name != ROOT_QUEUE:
        parent = queue.parent_name
        if parent not in allocated or parent in seen:
            break
        chain.append(allocated[parent])
        seen.add(parent)
        queue = ssn.queues[parent]
    return chain


def close_session(ssn: Session) -> None:
    """Plugins close first (gang sets the PodGroup conditions), then status is written."""
    for plugin in ssn.plugins.values():
        plugin.on_session_close(ssn)
    for job in ssn.jobs.values():
        if job.pod_group is not None:
            _update_job_status(ssn, job)
        if job.uid in ssn.dirty_jobs:
            # ``updateJobInfo``: the HyperNodes the job and its sub-jobs occupy outlive the
            # session on the cache's job.
            ssn.sink.update_job_info(job)
    _update_queue_status(ssn)


def victims_queue(ssn: Session, victims: list[TaskInfo], preemptor: TaskInfo) -> Any:
    """Victims ordered most-evictable first (``BuildVictimsPriorityQueue``): within a job the
    reverse task order; across jobs of one queue the job that would be scheduled last; across
    queues the victim-queue order; a task whose job vanished goes first."""
    from volcano_py.framework.priority_queue import PriorityQueue

    def job_then_task(
        left_job: JobInfo, right_job: JobInfo, left: TaskInfo, right: TaskInfo
    ) -> bool:
        compared = ssn.job_compare(left_job, right_job)
        if compared != 0:
            return compared > 0
        return not ssn.task_order_fn(left, right)

    def before(left: TaskInfo, right: TaskInfo) -> bool:
        if left.job == right.job:
            return not ssn.task_order_fn(left, right)
        left_job, right_job = ssn.jobs.get(left.job), ssn.jobs.get(right.job)
        if left_job is None or right_job is None:
            if left_job is None and right_job is None:
                return not ssn.task_order_fn(left, right)
            return left_job is None
        preemptor_job = ssn.jobs.get(preemptor.job)
        if preemptor_job is None:
            return job_then_task(left_job, right_job, left, right)
        if left_job.queue != right_job.queue:
            return ssn.victim_queue_order_fn(
                ssn.queues[left_job.queue],
                ssn.queues[right_job.queue],
                ssn.queues[preemptor_job.queue],
            )
        return job_then_task(left_job, right_job, left, right)

    return PriorityQueue(before, victims)


def _created_first(left: JobInfo | QueueInfo, right: JobInfo | QueueInfo) -> bool:
    """The order when every plugin ties: the older first, then by UID."""
    if left.creation_timestamp == right.creation_timestamp:
        return left.uid < right.uid
    return left.creation_timestamp < right.creation_timestamp
