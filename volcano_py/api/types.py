"""Statuses, fit errors and the vocabulary shared by the whole scheduler.

Ported from Volcano's ``pkg/scheduler/api/types.go``, ``helpers.go`` and ``unschedule_info.go``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final


class TaskStatus(IntEnum):
    """Where a task (one pod) stands in the scheduler. Values are upstream's bit flags."""

    PENDING = 1 << 0
    ALLOCATED = 1 << 1
    PIPELINED = 1 << 2
    BINDING = 1 << 3
    BOUND = 1 << 4
    RUNNING = 1 << 5
    RELEASING = 1 << 6
    SUCCEEDED = 1 << 7
    FAILED = 1 << 8
    UNKNOWN = 1 << 9

    def __str__(self) -> str:
        return self.name.capitalize()


ALLOCATED_STATUSES: Final = frozenset(
    {TaskStatus.BOUND, TaskStatus.BINDING, TaskStatus.RUNNING, TaskStatus.ALLOCATED}
)
SCHEDULED_STATUSES: Final = frozenset(
    {TaskStatus.RUNNING, TaskStatus.BOUND, TaskStatus.FAILED, TaskStatus.SUCCEEDED}
)
COMPLETED_STATUSES: Final = frozenset({TaskStatus.FAILED, TaskStatus.SUCCEEDED})
PREEMPTABLE_STATUSES: Final = frozenset({TaskStatus.BOUND, TaskStatus.RUNNING})

# The moves the session makes: the transitions seed 001 §9.2 draws, plus Releasing -> Running,
# which the seed does not draw but Statement.Discard makes when it undoes an eviction (upstream
# ``statement.go`` ``unevict``). The cache's re-sync from a watch event is not bound by this
# table: it moves a task to whatever the API server says.
LEGAL_TRANSITIONS: Final[dict[TaskStatus, frozenset[TaskStatus]]] = {
    TaskStatus.PENDING: frozenset({TaskStatus.ALLOCATED, TaskStatus.PIPELINED}),
    TaskStatus.ALLOCATED: frozenset({TaskStatus.BINDING, TaskStatus.PENDING}),
    TaskStatus.PIPELINED: frozenset({TaskStatus.ALLOCATED, TaskStatus.PENDING}),
    TaskStatus.BINDING: frozenset({TaskStatus.BOUND, TaskStatus.PENDING}),
    TaskStatus.BOUND: frozenset({TaskStatus.RUNNING, TaskStatus.RELEASING}),
    TaskStatus.RUNNING: frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED, TaskStatus.RELEASING}),
    TaskStatus.RELEASING: frozenset({TaskStatus.PENDING, TaskStatus.RUNNING}),
    TaskStatus.SUCCEEDED: frozenset(),
    TaskStatus.FAILED: frozenset(),
    TaskStatus.UNKNOWN: frozenset(),
}


def is_legal_transition(old: TaskStatus, new: TaskStatus) -> bool:
    return new in LEGAL_TRANSITIONS[old]


class NodePhase(IntEnum):
    READY = 1
    NOT_READY = 2


class StatusCode(IntEnum):
    """A plugin's verdict on a (task, node) pair, as kube-scheduler codes it."""

    SUCCESS = 0
    ERROR = 1
    UNSCHEDULABLE = 2
    UNSCHEDULABLE_AND_UNRESOLVABLE = 3
    WAIT = 4
    SKIP = 5


@dataclass(slots=True, frozen=True)
class Status:
    code: StatusCode
    reason: str
    plugin: str = ""


def unschedulable(reason: str, plugin: str = "") -> Status:
    return Status(StatusCode.UNSCHEDULABLE, reason, plugin)


def unresolvable(reason: str, plugin: str = "") -> Status:
    return Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, reason, plugin)


class Vote(IntEnum):
    """Plugins vote on enqueue and pipelined decisions."""

    REJECT = -1
    ABSTAIN = 0
    PERMIT = 1


@dataclass(slots=True, frozen=True)
class ValidateResult:
    passed: bool
    reason: str = ""
    message: str = ""


# Fit-error texts users read (kube-scheduler's and Volcano's spellings).
NODE_POD_NUMBER_EXCEEDED: Final = "node(s) pod number exceeded"
NODE_RESOURCE_FIT_FAILED: Final = "node(s) resource fit failed"
ALL_NODES_UNAVAILABLE: Final = "all nodes are unavailable"

POD_REASON_UNSCHEDULABLE: Final = "Unschedulable"
POD_REASON_SCHEDULABLE: Final = "Schedulable"
POD_REASON_SCHEDULER_ERROR: Final = "SchedulerError"


@dataclass(slots=True)
class FitError:
    """Why one task does not fit one node: the statuses of the plugins that said no."""

    node_name: str
    statuses: list[Status] = field(default_factory=list)

    def reasons(self) -> list[str]:
        return [status.reason for status in self.statuses if status.reason]

    def has_unresolvable(self) -> bool:
        return any(s.code is StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE for s in self.statuses)

    def __str__(self) -> str:
        return ", ".join(self.reasons())


@dataclass(slots=True)
class FitErrors:
    """Why one task fits no node: the per-node errors, summarised as a histogram.

    The summary follows kube-scheduler's "0/3 nodes are available: 3 Insufficient cpu." (Volcano
    says "unavailable"; ours is the spelling `kubectl describe` users know from kube-scheduler).
    """

    nodes: dict[str, FitError] = field(default_factory=dict)
    hyper_node: str = ""
    error: str = ""

    def set_node_error(self, node_name: str, fit_error: FitError) -> None:
        fit_error.node_name = node_name
        self.nodes[node_name] = fit_error

    def unresolvable_nodes(self) -> set[str]:
        # Errors are often shared between nodes (one per reason): ask each error once.
        verdicts: dict[int, bool] = {}
        found = set()
        for name, fit in self.nodes.items():
            verdict = verdicts.get(id(fit))
            if verdict is None:
                verdict = verdicts[id(fit)] = fit.has_unresolvable()
            if verdict:
                found.add(name)
        return found

    def message(self) -> str:
        header = self.error or f"0/{len(self.nodes)} nodes are available"
        if not self.nodes:
            return header
        # Nodes short of the same resource share one error (``_record_failures``): count the
        # nodes per error, then each error's reasons once. A pending task on 2k nodes built its
        # message node by node, most of a session with a backlog that fits nowhere (py-spy,
        # ``bench watch-load``).
        fits = list(self.nodes.values())
        keys = list(map(id, fits))
        errors = dict(zip(keys, fits, strict=True))
        histogram: Counter[str] = Counter()
        for key, nodes in Counter(keys).items():
            for reason in errors[key].reasons():
                histogram[reason] += nodes
        body = ", ".join(sorted(f"{count} {reason}" for reason, count in histogram.items()))
        text = f"{header}: {body}."
        if self.hyper_node:
            text = f"In hyperNode {self.hyper_node}: {text}"
        return text

    def __str__(self) -> str:
        return self.message()


@dataclass(slots=True)
class TransactionContext:
    """Where a task was last placed in a session (for the "why pending" messages)."""

    node_name: str = ""
    eviction_occurred: bool = False
    job_allocated_hyper_node: str = ""
    status: TaskStatus = TaskStatus.PENDING


# ---------------------------------------------------------------- well-known keys

GROUP_NAME_ANNOTATION: Final = "scheduling.k8s.io/group-name"
VOLCANO_GROUP_NAME_ANNOTATION: Final = "scheduling.volcano.sh/group-name"
QUEUE_NAME_ANNOTATION: Final = "scheduling.volcano.sh/queue-name"
GROUP_MIN_MEMBER_ANNOTATION: Final = "scheduling.volcano.sh/group-min-member"
TASK_SPEC_KEY: Final = "volcano.sh/task-spec"
TASK_INDEX_KEY: Final = "volcano.sh/task-index"
JOB_NAME_KEY: Final = "volcano.sh/job-name"
JOB_NAMESPACE_KEY: Final = "volcano.sh/job-namespace"
JOB_VERSION_KEY: Final = "volcano.sh/job-version"
JOB_RETRY_COUNT_KEY: Final = "volcano.sh/job-retry-count"
TEMPLATE_UID_KEY: Final = "volcano.sh/template-uid"
QUEUE_NAME_KEY: Final = "volcano.sh/queue-name"
PREEMPTABLE_KEY: Final = "volcano.sh/preemptable"
TASK_PRIORITY_ANNOTATION: Final = "volcano.sh/task-priority"
REVOCABLE_ZONE_KEY: Final = "volcano.sh/revocable-zone"
HIERARCHY_ANNOTATION: Final = "volcano.sh/hierarchy"
HIERARCHY_WEIGHTS_ANNOTATION: Final = "volcano.sh/hierarchy-weights"
QUEUE_ALLOCATION_GATE: Final = "scheduling.volcano.sh/queue-allocation-gate"
NETWORK_TOPOLOGY_MODE_ANNOTATION: Final = "volcano.sh/network-topology-mode"
NETWORK_TOPOLOGY_HIGHEST_TIER_ANNOTATION: Final = "volcano.sh/network-topology-highest-tier"
SIM_RUN_CYCLES_ANNOTATION: Final = "volcano-py.sim/run-cycles"

DEFAULT_QUEUE: Final = "default"
ROOT_QUEUE: Final = "root"
DEFAULT_SCHEDULER_NAME: Final = "volcano"
# What the API server writes into a pod created without spec.schedulerName (kube-scheduler's).
KUBE_DEFAULT_SCHEDULER_NAME: Final = "default-scheduler"
