"""Every extension point a plugin can register, declared once.

Volcano spreads these over 38 maps and 37 hand-written tier loops (``session_plugins.go``),
each hiding its own way of combining the plugins' answers. Here each hook says, in one row,
the function type, the ``enableXxx`` flag that gates it (upstream spelling, quirks included) and
how answers combine across plugins and tiers; ``Session`` has one dispatcher per rule.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, Final, TypeAlias

from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray
from volcano_py.api.queue import QueueInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, ValidateResult, Vote

if TYPE_CHECKING:
    from volcano_py.api.sub_job import SubJobInfo
    from volcano_py.framework.event import Event
    from volcano_py.framework.topology import SearchPurpose


class Combine(Enum):
    """How the answers of several plugins (over tiers, in listed order) combine."""

    FIRST_NONZERO = "first non-zero answer wins; else the built-in fallback"
    ALL_PASS = "every plugin must pass; the first failure is returned"
    SUM = "answers are summed"
    FIRST_ANSWER = "the first plugin that answers decides"
    VOTE = "a Reject ends it false; a tier with a Permit ends it true; else true"
    INTERSECT_PER_TIER = "candidates intersected within a tier; first non-empty tier wins"
    ANY_TRUE = "true if any plugin says true"
    ALL_TRUE = "true if every plugin says true (none: true)"
    FIRST_TIER_AND = "the first tier with any function decides, by AND (none: false)"
    CALL_ALL = "every function is called"
    UNION_FIRST_TIER = "union within a tier; the first tier with a non-empty union wins"


@dataclass(frozen=True, slots=True)
class HookSpec:
    # The ``enableXxx`` flag(s) gating the hook: a tuple means any of them enables it.
    flag: str | tuple[str, ...] | None
    combine: Combine
    doc: str


# ------------------------------------------------------------------ function types

CompareFn: TypeAlias = Callable[[JobInfo, JobInfo], int]
QueueCompareFn: TypeAlias = Callable[[QueueInfo, QueueInfo], int]
VictimQueueCompareFn: TypeAlias = Callable[[QueueInfo, QueueInfo, QueueInfo], int]
TaskCompareFn: TypeAlias = Callable[[TaskInfo, TaskInfo], int]
# A plugin may report every failing reason (as upstream), hence the tuple.
PredicateFn: TypeAlias = Callable[[TaskInfo, NodeInfo], "Status | tuple[Status, ...] | None"]
PrePredicateFn: TypeAlias = Callable[[TaskInfo], "Status | None"]


@dataclass(frozen=True, slots=True)
class NodeMask:
    """A vectorised predicate's answer over all session nodes (row order).

    ``reason(row)`` explains a failing row; it is only called to build fit-error messages.
    """

    passed: BoolArray
    reason: Callable[[int], Status | tuple[Status, ...]]


PredicateMaskFn: TypeAlias = Callable[[TaskInfo], NodeMask | None]
# Per-node checks depend on what the session placed so far (ports, pod affinity); most tasks
# need none, and saying so once per task keeps the node loop vectorised.
TaskPredicateFn: TypeAlias = Callable[[TaskInfo], "PredicateFn | None"]
NodeOrderFn: TypeAlias = Callable[[TaskInfo, NodeInfo], float]
# Scores for the given session rows, aligned with them (Volcano's BatchNodeOrderFn, vectorised).
BatchNodeOrderFn: TypeAlias = Callable[[TaskInfo, IntArray], FloatArray]
BestNodeFn: TypeAlias = Callable[[TaskInfo, Mapping[float, Sequence[NodeInfo]]], "NodeInfo | None"]
# (victims, code): code 0 means the plugin abstains.
EvictableFn: TypeAlias = Callable[[TaskInfo, list[TaskInfo]], tuple[list[TaskInfo], int]]


class EvictionKind(Enum):
    """Who asks for victims: the gang-aware actions or the task-level ones."""

    GANG_PREEMPT = "gangpreempt"
    GANG_RECLAIM = "gangreclaim"
    TASK_PREEMPT = "preempt"
    TASK_RECLAIM = "reclaim"


@dataclass(frozen=True, slots=True)
class EvictionContext:
    """The initiator of a gang-aware eviction: the whole job (``task`` only for task-level
    kinds) and the HyperNode domain the victims are sought in."""

    kind: EvictionKind
    job: JobInfo
    hyper_node: str
    task: TaskInfo | None = None


UnifiedEvictableFn: TypeAlias = Callable[
    [EvictionContext, list[TaskInfo]], tuple[list[TaskInfo], int]
]
# A dry run's scratch space (Kubernetes' CycleState): each plugin keeps what it needs to answer
# "would it fit if these victims were gone" under its own key, cloned per candidate node.
SimulationState: TypeAlias = dict[str, Any]
SimulateAllocatableFn: TypeAlias = Callable[[SimulationState, QueueInfo, TaskInfo], bool]
SimulatePredicateFn: TypeAlias = Callable[
    [SimulationState, TaskInfo, NodeInfo], "Status | tuple[Status, ...] | None"
]
# (state, task to schedule, task added to / removed from the node, node) -> failure or None.
SimulateTaskChangeFn: TypeAlias = Callable[
    [SimulationState, TaskInfo, TaskInfo, NodeInfo], "Status | None"
]
QueueValidateFn: TypeAlias = Callable[[QueueInfo], bool]
PreemptiveFn: TypeAlias = Callable[[QueueInfo, list[TaskInfo]], bool]
AllocatableFn: TypeAlias = Callable[[QueueInfo, TaskInfo], bool]
JobValidateFn: TypeAlias = Callable[[JobInfo], bool]
VoteFn: TypeAlias = Callable[[JobInfo], Vote]
JobEnqueuedFn: TypeAlias = Callable[[JobInfo], None]
JobValidFn: TypeAlias = Callable[[JobInfo], "ValidateResult | None"]
TargetJobFn: TypeAlias = Callable[[list[JobInfo]], "JobInfo | None"]
ReservedNodesFn: TypeAlias = Callable[[], None]
VictimTasksFn: TypeAlias = Callable[[list[TaskInfo]], list[TaskInfo]]
EventCallback: TypeAlias = Callable[["Event"], None]
# Network topology: HyperNodes are named; a candidate's nodes are session rows.
SubJobValidateFn: TypeAlias = Callable[["SubJobInfo"], bool]
SubJobVoteFn: TypeAlias = Callable[["SubJobInfo"], int]
SubJobCompareFn: TypeAlias = Callable[["SubJobInfo", "SubJobInfo"], int]
HyperNodeOrderFn: TypeAlias = Callable[["SubJobInfo", Mapping[str, IntArray]], Mapping[str, float]]
HyperNodeGradientForJobFn: TypeAlias = Callable[
    [JobInfo, str, "SearchPurpose"], Sequence[Sequence[str]]
]
HyperNodeGradientForSubJobFn: TypeAlias = Callable[
    ["SubJobInfo", str, "SearchPurpose"], Sequence[Sequence[str]]
]


HOOKS: Final[dict[str, HookSpec]] = {
    "job_order": HookSpec(
        "enableJobOrder", Combine.FIRST_NONZERO, "cmp(job, job); fallback: creation time, then UID"
    ),
    "queue_order": HookSpec(
        "enableQueueOrder",
        Combine.FIRST_NONZERO,
        "cmp(queue, queue); fallback: creation time, then name",
    ),
    "victim_queue_order": HookSpec(
        None, Combine.FIRST_NONZERO, "cmp(queue, queue, preemptor queue); fallback: reverse order"
    ),
    "task_order": HookSpec(
        "enableTaskOrder",
        Combine.FIRST_NONZERO,
        "cmp(task, task); fallback: pod index, creation time, UID",
    ),
    "predicate": HookSpec("enablePredicate", Combine.ALL_PASS, "(task, node) -> Status"),
    "predicate_mask": HookSpec(
        "enablePredicate",
        Combine.ALL_PASS,
        "(task) -> NodeMask over all nodes (vectorised predicate)",
    ),
    "task_predicate": HookSpec(
        "enablePredicate",
        Combine.ALL_PASS,
        "(task) -> per-node predicate for this task, or None when it needs none",
    ),
    "pre_predicate": HookSpec("enablePredicate", Combine.ALL_PASS, "(task) -> Status"),
    "best_node": HookSpec("enableBestNode", Combine.FIRST_ANSWER, "(task, score -> nodes)"),
    "node_order": HookSpec("enableNodeOrder", Combine.SUM, "(task, node) -> score"),
    "batch_node_order": HookSpec("enableNodeOrder", Combine.SUM, "(task, rows) -> scores"),
    "preemptable": HookSpec(
        "enablePreemptable",
        Combine.INTERSECT_PER_TIER,
        "(preemptor, candidates) -> (victims, code)",
    ),
    "reclaimable": HookSpec(
        "enableReclaimable",
        Combine.INTERSECT_PER_TIER,
        "(reclaimer, candidates) -> (victims, code)",
    ),
    # Upstream registers and calls it without a flag.
    "unified_evictable": HookSpec(
        None,
        Combine.INTERSECT_PER_TIER,
        "(eviction context, candidates) -> (victims, code); gangpreempt and gangreclaim",
    ),
    "simulate_allocatable": HookSpec(
        "enabledAllocatable",
        Combine.ALL_TRUE,
        "(state, queue, task) -> bool; allocatable with the dry run's victims gone",
    ),
    "simulate_predicate": HookSpec(
        "enablePredicate",
        Combine.ALL_PASS,
        "(state, task, node) -> Status; predicates with the dry run's victims gone",
    ),
    "simulate_add_task": HookSpec(
        ("enablePreemptable", "enabledAllocatable"),
        Combine.ALL_PASS,
        "(state, task to schedule, task put back, node) -> Status",
    ),
    "simulate_remove_task": HookSpec(
        ("enablePreemptable", "enabledAllocatable"),
        Combine.ALL_PASS,
        "(state, task to schedule, task removed, node) -> Status",
    ),
    "overused": HookSpec("enabledOverused", Combine.ANY_TRUE, "(queue) -> bool"),
    "preemptive": HookSpec("enablePreemptive", Combine.ALL_TRUE, "(queue, tasks) -> bool"),
    "allocatable": HookSpec("enabledAllocatable", Combine.ALL_TRUE, "(queue, task) -> bool"),
    "job_ready": HookSpec("enableJobReady", Combine.ALL_TRUE, "(job) -> bool"),
    "job_pipelined": HookSpec("enableJobPipelined", Combine.VOTE, "(job) -> Vote"),
    # Upstream gates JobEnqueueable with the JobEnqueued flag; there is no flag of its own.
    "job_enqueueable": HookSpec("enableJobEnqueued", Combine.VOTE, "(job) -> Vote"),
    "job_enqueued": HookSpec("enableJobEnqueued", Combine.CALL_ALL, "(job) -> None"),
    "job_valid": HookSpec(None, Combine.ALL_PASS, "(job) -> ValidateResult"),
    "job_starving": HookSpec("enableJobStarving", Combine.FIRST_TIER_AND, "(job) -> bool"),
    "target_job": HookSpec("enableTargetJob", Combine.FIRST_ANSWER, "(jobs) -> job"),
    "reserved_nodes": HookSpec("enableReservedNodes", Combine.CALL_ALL, "() -> None"),
    "victim_tasks": HookSpec("enabledVictim", Combine.UNION_FIRST_TIER, "(tasks) -> tasks"),
    "sub_job_ready": HookSpec("enabledSubJobReady", Combine.ALL_TRUE, "(sub-job) -> bool"),
    "sub_job_pipelined": HookSpec("enabledSubJobPipelined", Combine.VOTE, "(sub-job) -> Vote"),
    "sub_job_order": HookSpec(
        "enabledSubJobOrder",
        Combine.FIRST_NONZERO,
        "cmp(sub-job, sub-job); fallback: match index, then UID",
    ),
    "hyper_node_order": HookSpec(
        "enabledHyperNodeOrder",
        Combine.SUM,
        "(sub-job, {hyper node: rows}) -> {hyper node: score}; summed per hyper node",
    ),
    "hyper_node_gradient_for_job": HookSpec(
        "enabledHyperNodeGradient",
        Combine.FIRST_ANSWER,
        "(job, hyper node, purpose) -> hyper nodes per tier; default [[hyper node]]",
    ),
    "hyper_node_gradient_for_sub_job": HookSpec(
        "enabledHyperNodeGradient",
        Combine.FIRST_ANSWER,
        "(sub-job, hyper node, purpose) -> hyper nodes per tier; default [[hyper node]]",
    ),
}

# The function type of each hook, by the name of its alias above (docs/plugins.md shows them;
# a test checks every hook has one).
HOOK_FUNCTION_TYPES: Final[dict[str, str]] = {
    "job_order": "CompareFn",
    "queue_order": "QueueCompareFn",
    "victim_queue_order": "VictimQueueCompareFn",
    "task_order": "TaskCompareFn",
    "predicate": "PredicateFn",
    "predicate_mask": "PredicateMaskFn",
    "task_predicate": "TaskPredicateFn",
    "pre_predicate": "PrePredicateFn",
    "best_node": "BestNodeFn",
    "node_order": "NodeOrderFn",
    "batch_node_order": "BatchNodeOrderFn",
    "preemptable": "EvictableFn",
    "reclaimable": "EvictableFn",
    "unified_evictable": "UnifiedEvictableFn",
    "simulate_allocatable": "SimulateAllocatableFn",
    "simulate_predicate": "SimulatePredicateFn",
    "simulate_add_task": "SimulateTaskChangeFn",
    "simulate_remove_task": "SimulateTaskChangeFn",
    "overused": "QueueValidateFn",
    "preemptive": "PreemptiveFn",
    "allocatable": "AllocatableFn",
    "job_ready": "JobValidateFn",
    "job_pipelined": "VoteFn",
    "job_enqueueable": "VoteFn",
    "job_enqueued": "JobEnqueuedFn",
    "job_valid": "JobValidFn",
    "job_starving": "JobValidateFn",
    "target_job": "TargetJobFn",
    "reserved_nodes": "ReservedNodesFn",
    "victim_tasks": "VictimTasksFn",
    "sub_job_ready": "SubJobValidateFn",
    "sub_job_pipelined": "SubJobVoteFn",
    "sub_job_order": "SubJobCompareFn",
    "hyper_node_order": "HyperNodeOrderFn",
    "hyper_node_gradient_for_job": "HyperNodeGradientForJobFn",
    "hyper_node_gradient_for_sub_job": "HyperNodeGradientForSubJobFn",
}
