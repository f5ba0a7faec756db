"""preempt's topology-aware mode (``enableTopologyAwarePreemption: true``;
``topologyAwarePreempt`` and its helpers in ``actions/preempt/preempt.go``).

kube-scheduler's way of choosing victims. Rather than evicting on the best-scored node until
the preemptor fits, it dry-runs preemption on copies of the candidate nodes, starting at a
random node and stopping once enough nodes have offered a victim set. On each copy it takes
the plugins' preemptable victims away, most evictable first, until the preemptor fits (queue
allocatable, future idle, the Simulate predicates), then gives back, highest priority first,
every victim the preemptor can do without. Of the candidate nodes it picks the one whose
victims cost least, evicts them and pipelines the preemptor there.

The plugins follow the dry run in the preemptor's simulation state (kube-scheduler's
CycleState): their PrePredicate seeds it, each node gets its own clone, and their
SimulateRemoveTask / SimulateAddTask / SimulateAllocatable / SimulatePredicate hooks read and
change that clone only. Every state value is a ``SimulationData``.

Upstream has a TODO where victims that would violate a PodDisruptionBudget should be
reprieved first; there is nothing to port there.
"""

from __future__ import annotations

import logging
import math
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Final, Protocol

from volcano_py import metrics
from volcano_py.actions.eviction import victims_can_make_room
from volcano_py.api.node import NodeFitError, NodeInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import DimensionDefault
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.hooks import SimulationState
from volcano_py.framework.session import Session, victims_queue
from volcano_py.framework.statement import Statement, StatementError

log = logging.getLogger(__name__)

WORKER_NUM_KEY: Final = "topologyAwarePreemptWorkerNum"
MIN_CANDIDATE_NODES_PERCENTAGE_KEY: Final = "minCandidateNodesPercentage"
MIN_CANDIDATE_NODES_ABSOLUTE_KEY: Final = "minCandidateNodesAbsolute"
MAX_CANDIDATE_NODES_ABSOLUTE_KEY: Final = "maxCandidateNodesAbsolute"

# Added to every priority before summing, so that all terms are positive and more victims
# never make a smaller sum (kube-scheduler's MaxInt32 + 1).
_PRIORITY_OFFSET: Final = 2**31

VictimFilter = Callable[[TaskInfo], bool]


class SimulationData(Protocol):
    """What a plugin keeps under its key of a simulation state: each candidate node's dry
    run works on its own clone."""

    def clone(self) -> SimulationData: ...


def clone_state(state: SimulationState) -> SimulationState:
    """``CycleState.Clone``: a new dict holding a clone of every plugin's value."""
    values: dict[str, SimulationData] = state
    return {key: value.clone() for key, value in values.items()}


# ---------------------------------------------------------------------- settings


@dataclass(frozen=True, slots=True)
class DryRunSettings:
    """How many candidate nodes a dry run looks for (upstream's action arguments)."""

    # Upstream checks nodes on this many goroutines. The dry run here checks them one after
    # the other, which gives one of the outcomes the parallel run can give; the argument is
    # read and has no effect.
    worker_num: int = 16
    min_candidate_nodes_percentage: int = 10
    min_candidate_nodes_absolute: int = 1
    max_candidate_nodes_absolute: int = 100

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> DryRunSettings:
        default = cls()
        return cls(
            arguments.get_int(WORKER_NUM_KEY, default.worker_num),
            arguments.get_int(
                MIN_CANDIDATE_NODES_PERCENTAGE_KEY, default.min_candidate_nodes_percentage
            ),
            arguments.get_int(
                MIN_CANDIDATE_NODES_ABSOLUTE_KEY, default.min_candidate_nodes_absolute
            ),
            arguments.get_int(
                MAX_CANDIDATE_NODES_ABSOLUTE_KEY, default.max_candidate_nodes_absolute
            ),
        )

    def num_candidates(self, num_nodes: int) -> int:
        """``calculateNumCandidates``: the percentage of the nodes, raised to the absolute
        minimum, cut to the absolute maximum, and never more than there are nodes."""
        count = _go_div(num_nodes * self.min_candidate_nodes_percentage, 100)
        count = max(count, self.min_candidate_nodes_absolute)
        count = min(count, self.max_candidate_nodes_absolute)
        return min(count, num_nodes)

    def offset_and_num_candidates(self, num_nodes: int, rng: random.Random) -> tuple[int, int]:
        """``GetOffsetAndNumCandidates``: a random first node, so that the dry runs of
        successive preemptors do not all start on the same nodes."""
        return rng.randrange(num_nodes), self.num_candidates(num_nodes)


def _go_div(dividend: int, divisor: int) -> int:
    """Go's integer division, which truncates toward zero (Python's ``//`` floors)."""
    quotient = abs(dividend) // abs(divisor)
    return quotient if (dividend >= 0) == (divisor > 0) else -quotient


# ---------------------------------------------------------------------- the action's entry


@dataclass(frozen=True, slots=True)
class Candidate:
    """A node where evicting ``victims`` lets the preemptor fit; victims are listed highest
    priority first, the order the reprieve pass kept them in."""

    node: str
    victims: tuple[TaskInfo, ...]


def topology_aware_preempt(
    ssn: Session,
    statement: Statement,
    preemptor: TaskInfo,
    victim_filter: VictimFilter,
    nodes: Sequence[NodeInfo],
    settings: DryRunSettings,
) -> bool:
    """Dry-run the candidate nodes, then evict the best candidate's victims and pipeline
    the preemptor there, in ``statement``. False when no node can make room."""
    candidates, statuses = find_candidates(ssn, preemptor, victim_filter, nodes, settings)
    best = select_candidate(candidates)
    if best is None:
        log.debug("preempt: no candidate node for %s: %s", preemptor.key, statuses)
        return False
    # The evictions reach the caller's statement only with a successful pipeline.
    node_statement = ssn.statement()
    prepare_candidate(best, preemptor, node_statement)
    try:
        node_statement.pipeline(preemptor, best.node, True)
    except StatementError as error:
        log.error("preempt: %s", error)
        node_statement.discard()
        return False
    statement.merge(node_statement)
    return True


def find_candidates(
    ssn: Session,
    preemptor: TaskInfo,
    victim_filter: VictimFilter,
    nodes: Sequence[NodeInfo],
    settings: DryRunSettings,
) -> tuple[list[Candidate], dict[str, Status]]:
    """``findCandidates``: the candidates and, per node that is none, why."""
    if not nodes:
        return [], {}
    offset, count = settings.offset_and_num_candidates(len(nodes), ssn.rng)
    return dry_run_preemption(ssn, preemptor, nodes, offset, count, victim_filter)


def prepare_candidate(candidate: Candidate, preemptor: TaskInfo, statement: Statement) -> None:
    """``prepareCandidate``: evict the candidate's victims."""
    for victim in candidate.victims:
        log.debug("preempt: evict %s for %s", victim.key, preemptor.key)
        statement.evict(victim, "preempt")
    metrics.PREEMPTION_ATTEMPTS.inc()


# ---------------------------------------------------------------------- dry run


def dry_run_preemption(
    ssn: Session,
    preemptor: TaskInfo,
    nodes: Sequence[NodeInfo],
    offset: int,
    num_candidates: int,
    victim_filter: VictimFilter,
) -> tuple[list[Candidate], dict[str, Status]]:
    """``DryRunPreemption``: check the nodes from ``offset`` on, wrapping around, each on a
    copy with its own clone of the preemptor's simulation state, until ``num_candidates``
    nodes offered victims. Upstream stops its workers at that point too, so the nodes after
    it are never looked at."""
    job = ssn.jobs.get(preemptor.job)
    queue = ssn.queues.get(job.queue) if job is not None else None
    if queue is None:
        log.error("preempt: job or queue of %s not in the session", preemptor.key)
        return [], {}
    state = ssn.simulation_state(preemptor)
    candidates: list[Candidate] = []
    statuses: dict[str, Status] = {}
    for step in range(len(nodes)):
        node = node_copy(nodes[(offset + step) % len(nodes)])
        victims, status = select_victims_on_node(
            ssn, clone_state(state), preemptor, queue, node, victim_filter
        )
        if status is None and victims:
            if len(candidates) < num_candidates:
                candidates.append(Candidate(node.name, tuple(victims)))
            if len(candidates) >= num_candidates:
                break
            continue
        statuses[node.name] = status or _error(
            f"expected at least one victim pod on node {node.name}"
        )
    return candidates, statuses


def node_copy(node: NodeInfo) -> NodeInfo:
    """The node with its own one-row matrix, for a dry run to take tasks off and put back."""
    return node.clone_into(node.matrix.take([node.row]), 0)


def select_victims_on_node(
    ssn: Session,
    state: SimulationState,
    preemptor: TaskInfo,
    queue: QueueInfo,
    node: NodeInfo,
    victim_filter: VictimFilter,
) -> tuple[list[TaskInfo], Status | None]:
    """``SelectVictimsOnNode`` on a node copy: the fewest, lowest-priority victims whose
    eviction lets the preemptor fit, or why there are none. Changes ``node`` and ``state``."""
    preemptees = [task.clone() for task in node.tasks.values() if victim_filter(task)]
    preemptable = ssn.preemptable(preemptor, preemptees)
    metrics.POD_PREEMPTION_VICTIMS.set(len(preemptable))
    if not victims_can_make_room(preemptor, node, preemptable):
        return [], _error(f"no validated victims on node {node.name}")

    removed: list[TaskInfo] = []
    ordered = victims_queue(ssn, preemptable, preemptor)
    while not ordered.empty():
        victim: TaskInfo = ordered.pop()
        removed.append(victim)
        failure = _remove(ssn, state, preemptor, victim, node)
        if failure is not None:
            return [], failure
        if _fits(ssn, state, queue, preemptor, node):
            break
    if not removed:
        return [], _error("no preemption victims found for incoming pod")
    # As upstream, only the predicates are checked again here: victims that cannot make
    # room for the queue or the resources all stay victims in the reprieve pass below.
    if ssn.simulate_predicate(state, preemptor, node):
        return [], _error(f"failed to predicate {preemptor.key} on node {node.name}")
    return _reprieve(ssn, state, preemptor, queue, node, removed)


def _reprieve(
    ssn: Session,
    state: SimulationState,
    preemptor: TaskInfo,
    queue: QueueInfo,
    node: NodeInfo,
    removed: list[TaskInfo],
) -> tuple[list[TaskInfo], Status | None]:
    """Give back the removed tasks, highest priority (last removed) first, each one the
    preemptor still fits without; the others are the victims."""
    victims: list[TaskInfo] = []
    for task in reversed(removed):
        failure = _add(ssn, state, preemptor, task, node)
        if failure is not None:
            return [], failure
        if _fits(ssn, state, queue, preemptor, node):
            continue
        failure = _remove(ssn, state, preemptor, task, node)
        if failure is not None:
            return [], failure
        victims.append(task)
    return victims, None


def _fits(
    ssn: Session, state: SimulationState, queue: QueueInfo, preemptor: TaskInfo, node: NodeInfo
) -> bool:
    return (
        ssn.simulate_allocatable(state, queue, preemptor)
        and preemptor.init_resreq.less_equal(node.future_idle(), DimensionDefault.ZERO)
        and not ssn.simulate_predicate(state, preemptor, node)
    )


def _remove(
    ssn: Session, state: SimulationState, preemptor: TaskInfo, task: TaskInfo, node: NodeInfo
) -> Status | None:
    failure = ssn.simulate_remove_task(state, preemptor, task, node)
    if failure is None:
        node.remove_task(task)
    return failure


def _add(
    ssn: Session, state: SimulationState, preemptor: TaskInfo, task: TaskInfo, node: NodeInfo
) -> Status | None:
    failure = ssn.simulate_add_task(state, preemptor, task, node)
    if failure is not None:
        return failure
    try:
        node.add_task(task)
    except NodeFitError as error:
        return _error(str(error))
    return None


def _error(reason: str) -> Status:
    return Status(StatusCode.ERROR, reason, "preempt")


# ---------------------------------------------------------------------- choosing a candidate


def select_candidate(candidates: Sequence[Candidate]) -> Candidate | None:
    """``SelectCandidate``: the candidate ``pick_one_node_for_preemption`` prefers."""
    if len(candidates) <= 1:
        return candidates[0] if candidates else None
    by_node = {candidate.node: candidate for candidate in candidates}
    chosen = pick_one_node_for_preemption(
        {name: candidate.victims for name, candidate in by_node.items()}
    )
    return by_node[chosen]


def pick_one_node_for_preemption(victims_by_node: Mapping[str, Sequence[TaskInfo]]) -> str:
    """``pickOneNodeForPreemption``: each rule keeps the nodes it scores highest and the
    next rule breaks their tie. Victims are listed highest priority first.

    1. the lowest highest-victim priority; 2. the lowest sum of victim priorities; 3. the
    fewest victims; 4. the latest start among the highest-priority victims; 5. the first node
    (upstream takes its candidates from a Go map, so its "first" is arbitrary; here it is the
    first in dry-run order, which starts at a random node anyway).
    """
    if not victims_by_node:
        return ""
    rules: list[Callable[[Sequence[TaskInfo]], float]] = [
        lambda victims: -pod_priority(victims[0]),
        lambda victims: -sum(pod_priority(task) + _PRIORITY_OFFSET for task in victims),
        lambda victims: -len(victims),
        earliest_start_time,
    ]
    remaining = list(victims_by_node)
    for rule in rules:
        scores = {node: rule(victims_by_node[node]) for node in remaining}
        best = max(scores.values())
        remaining = [node for node in remaining if scores[node] == best]
        if len(remaining) == 1:
            break
    return remaining[0]


def pod_priority(task: TaskInfo) -> int:
    """``PodPriority``: the pod's ``spec.priority``; none means 0 (the pod predates priority
    classes), not the task's default."""
    priority = (task.pod.get("spec") or {}).get("priority")
    return int(priority) if priority is not None else 0


def earliest_start_time(victims: Sequence[TaskInfo]) -> float:
    """``GetEarliestPodStartTime``: the earliest start, in epoch seconds, among the victims
    of the highest priority."""
    if not victims:
        return -math.inf
    highest = max(pod_priority(task) for task in victims)
    return min(pod_start_time(task) for task in victims if pod_priority(task) == highest)


def pod_start_time(task: TaskInfo) -> float:
    """``GetPodStartTime``: ``status.startTime``; a pod not started yet counts as starting
    now, later than any pod that did (upstream reads the clock, infinity keeps the order)."""
    raw = (task.pod.get("status") or {}).get("startTime")
    if not raw:
        return math.inf
    try:
        return datetime.fromisoformat(str(raw)).timestamp()
    except ValueError:
        log.warning("preempt: %s has a malformed startTime %r", task.key, raw)
        return math.inf
