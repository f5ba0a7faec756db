"""binpack: prefer the nodes a task fills most (``plugins/binpack/binpack.go``).

For each resource the task requests that has a weight::

    score += weight * (used + request) / allocatable     (0 if the node has none of it)

then ``score / sum(weights) * 100 * binpack.weight``. A node where any weighted resource
would overflow scores 0 altogether. ``pods`` carries no weight unless listed, so it is ignored.

Arguments: ``binpack.weight`` (1; 0 registers nothing), ``binpack.cpu`` (1),
``binpack.memory`` (1), ``binpack.resources`` (comma-separated extra names) and
``binpack.resources.<name>`` (1). Negative resource weights fall back to 1.

Upstream registers a per-node NodeOrderFn; here the same arithmetic runs over the session's
NodeMatrix for all candidate rows at once (a BatchNodeOrderFn, summed the same way), and
``binpack_score`` keeps the per-node rule as the reference.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import numpy as np

from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray, NodeMatrix
from volcano_py.api.resource import CPU, MEMORY, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "binpack"
BINPACK_WEIGHT: Final = "binpack.weight"
BINPACK_CPU: Final = "binpack.cpu"
BINPACK_MEMORY: Final = "binpack.memory"
BINPACK_RESOURCES: Final = "binpack.resources"
BINPACK_RESOURCES_PREFIX: Final = BINPACK_RESOURCES + "."
MAX_NODE_SCORE: Final = 100


@dataclass(frozen=True, slots=True)
class BinpackWeights:
    weight: int = 1
    cpu: int = 1
    memory: int = 1
    # Every weighted resource, cpu and memory included.
    resources: dict[str, int] = field(default_factory=lambda: {CPU: 1, MEMORY: 1})

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> BinpackWeights:
        weight = arguments.get_int(BINPACK_WEIGHT, 1)
        cpu = arguments.get_int(BINPACK_CPU, 1)
        cpu = 1 if cpu < 0 else cpu
        memory = arguments.get_int(BINPACK_MEMORY, 1)
        memory = 1 if memory < 0 else memory
        listed = arguments.get(BINPACK_RESOURCES)
        resources: dict[str, int] = {}
        for raw_name in (listed if isinstance(listed, str) else "").split(","):
            name = raw_name.strip()
            if not name:
                continue
            resource_weight = arguments.get_int(BINPACK_RESOURCES_PREFIX + name, 1)
            resources[name] = 1 if resource_weight < 0 else resource_weight
        resources[CPU] = cpu
        resources[MEMORY] = memory
        return cls(weight, cpu, memory, resources)


def binpack_score(
    request: Resource, allocatable: Resource, used: Resource, weights: BinpackWeights
) -> float:
    """``BinPackingScore`` for one node (the readable reference)."""
    score = 0.0
    weight_sum = 0
    for name in request.resource_names():
        wanted = request.get(name)
        if wanted == 0:
            continue
        resource_weight = weights.resources.get(name)
        if resource_weight is None:
            continue
        capacity = allocatable.get(name)
        if capacity == 0 or resource_weight == 0:
            resource_score = 0.0
        else:
            used_finally = wanted + used.get(name)
            if used_finally > capacity:
                return 0.0
            resource_score = used_finally * float(resource_weight) / capacity
        score += resource_score
        weight_sum += resource_weight
    if weight_sum > 0:
        score /= float(weight_sum)
    return score * float(MAX_NODE_SCORE * weights.weight)


def _scored_columns(
    request: Resource, matrix: NodeMatrix, weights: BinpackWeights
) -> tuple[list[tuple[int, float, float]], int]:
    """(column, wanted amount, weight) of each resource of ``request`` that adds to the
    score, in request order, and the weight sum, which also counts the weighted resources no
    node has (no column yet, or one registered after the arrays were sized)."""
    columns = matrix.index.columns
    width = matrix.allocatable.shape[1]
    parts: list[tuple[int, float, float]] = []
    weight_sum = 0
    for name in request.resource_names():
        wanted = request.get(name)
        resource_weight = weights.resources.get(name)
        if wanted == 0 or resource_weight is None:
            continue
        weight_sum += resource_weight
        column = columns.get(name)
        if resource_weight == 0 or column is None or column >= width:
            continue
        parts.append((column, wanted, float(resource_weight)))
    return parts, weight_sum


def binpack_scores(
    request: Resource, matrix: NodeMatrix, rows: IntArray, weights: BinpackWeights
) -> FloatArray:
    """``binpack_score`` for the nodes at ``rows``, over the matrix's allocatable and used.

    It runs once per task over the candidate nodes, often a HyperNode's few: numpy's per-call
    overhead, not the arithmetic, is the cost, so each step is one call (the division skips
    the nodes without the resource instead of silencing numpy's warnings around it). Each
    cell gets the reference's operations in the reference's order."""
    count = len(rows)
    score = np.zeros(count)
    overflow: BoolArray | None = None
    parts, weight_sum = _scored_columns(request, matrix, weights)
    for column, wanted, resource_weight in parts:
        capacity = matrix.allocatable[rows, column]
        used_finally = wanted + matrix.used[rows, column]
        has = capacity != 0
        over = has & (used_finally > capacity)
        overflow = over if overflow is None else overflow | over
        score += np.divide(used_finally * resource_weight, capacity, out=np.zeros(count), where=has)
    if weight_sum > 0:
        score /= float(weight_sum)
    score *= float(MAX_NODE_SCORE * weights.weight)
    if overflow is not None:
        score[overflow] = 0.0
    return score


def binpack_row_score(
    request: Resource, ssn: Session, weights: BinpackWeights
) -> Callable[[int], float]:
    """``binpack_scores`` for one row in plain floats, bound to ``request``: each cell gets the
    same operations in the same order, without numpy's per-call overhead (a run of like tasks
    rescores mostly the one row it placed on, ``Session.run_row_score``)."""
    width = ssn.matrix.allocatable.shape[1]
    parts, weight_sum = _scored_columns(request, ssn.matrix, weights)
    scale = float(MAX_NODE_SCORE * weights.weight)
    divisor = float(weight_sum)

    def score(row: int) -> float:
        current = ssn.matrix
        if current.allocatable.shape[1] != width:
            # A resource first seen mid-session widened the matrix: ask the vector form.
            return float(binpack_scores(request, current, np.array([row]), weights)[0])
        allocatable, used = current.allocatable, current.used
        total = 0.0
        for column, wanted, resource_weight in parts:
            capacity = float(allocatable[row, column])
            if capacity == 0:
                continue  # adds nothing (``np.divide``'s ``where``)
            used_finally = wanted + float(used[row, column])
            if used_finally > capacity:
                return 0.0  # the overflow the vector form zeroes at the end
            total += used_finally * resource_weight / capacity
        if weight_sum > 0:
            total /= divisor
        return total * scale

    return score


class BinpackPlugin:
    name = PLUGIN_NAME
    # A run's scores read the pod template and the nodes, nothing of the task's job: a run may
    # go on into the next job's like tasks (``Session.runs_across_jobs``).
    batch_ignores_job = True

    def __init__(self, arguments: Arguments) -> None:
        self.weights = BinpackWeights.from_arguments(arguments)
        self._ssn: Session | None = None

    def on_session_open(self, ssn: Session) -> None:
        weights = self.weights
        self._ssn = None
        if weights.weight == 0:
            log.info("binpack weight is zero, skip node order function")
            return
        self._ssn = ssn

        def batch_node_order(task: TaskInfo, rows: IntArray) -> FloatArray:
            return binpack_scores(task.resreq, ssn.matrix, rows, weights)

        ssn.add_batch_node_order_fn(self.name, batch_node_order)

    def batch_row_score(self, task: TaskInfo) -> Callable[[int], float] | None:
        """``batch_node_order`` for one row, in plain floats (``Session.run_row_score``)."""
        if self._ssn is None:
            return None
        return binpack_row_score(task.resreq, self._ssn, self.weights)

    def batch_safe(self, task: TaskInfo) -> bool:
        """A node's score reads only that node's row of the matrix (allocatable and used),
        cell by cell, and a placement writes only the placed node's row: allocate may keep the
        scores across a run of like tasks (``Session.batch_safe``)."""
        return True

    def on_session_close(self, ssn: Session) -> None:
        self._ssn = None


# The arguments this plugin reads (upstream binpack.go): one weight per resource listed in
# binpack.resources.
ARGUMENTS: Final[frozenset[str]] = frozenset(
    {BINPACK_WEIGHT, BINPACK_CPU, BINPACK_MEMORY, BINPACK_RESOURCES, BINPACK_RESOURCES_PREFIX + "*"}
)


def new(arguments: Arguments) -> BinpackPlugin:
    return BinpackPlugin(arguments)
