"""One task's resource fit and score over every node: NodeMatrix vs plain Python.

The hot path of allocate (DESIGN.md "Hot path"): for one pending task, which nodes have room
in their future idle (``NodeMatrix.fit_future_idle``, that is ``fit_mask`` over
``future_idle``) and how they score (``least_requested_scores``). Measured over 1k, 5k and 10k
nodes with six resource columns (cpu, memory, pods, a GPU, ephemeral-storage, hugepages) as
the median of repeated batches; the best batch is shown too, since a loaded machine inflates
medians.

Two plain-Python baselines: the ``*_reference`` twins over lists, and the upstream-shaped loop
over NodeInfo-like objects holding ``Resource`` values (``FutureIdle()``, ``LessEqual``, then
the score), which is what a straight port of Volcano does per node. All paths are checked to
give the same fits and scores before they are timed.

Goal (issue "Foundation"): the NodeMatrix path at most 0.3 ms at 5k nodes.

    python -m bench node_matrix [--quick]
"""

from __future__ import annotations

import argparse
import logging
import math
import statistics
import timeit
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from volcano_py.api.node_matrix import (
    NodeMatrix,
    ResourceIndex,
    fit_mask,
    fit_mask_reference,
    least_requested_scores,
    least_requested_scores_reference,
)
from volcano_py.api.resource import DimensionDefault, Resource

SIZES = (1_000, 5_000, 10_000)
GOAL_NODES, GOAL_MS = 5_000, 0.3
GI = 1024**3
RESOURCES = ("cpu", "memory", "pods", "nvidia.com/gpu", "ephemeral-storage", "hugepages-2Mi")
# The pending task: 2 cpu, 4Gi, one pod slot, one GPU (scalars in milli-units, pods whole).
REQUEST = Resource(2000.0, 4.0 * GI, {"pods": 1.0, "nvidia.com/gpu": 1000.0}, max_task_num=1)
SCORE_COLUMNS = np.array([0, 1], dtype=np.intp)  # LeastAllocated scores cpu and memory


def build_cluster(nodes: int, seed: int = 7) -> NodeMatrix:
    """A session matrix of ``nodes`` rows, filled the way a busy cluster looks."""
    rng = np.random.default_rng(seed)
    matrix = NodeMatrix(ResourceIndex(RESOURCES))
    for _ in range(nodes):
        matrix.add_row()
    allocatable = np.column_stack(
        [
            rng.choice([8_000.0, 16_000.0, 32_000.0, 64_000.0], nodes),
            rng.choice([32.0, 64.0, 128.0, 256.0], nodes) * GI,
            np.full(nodes, 110.0),
            rng.choice([0.0, 0.0, 4_000.0, 8_000.0], nodes),
            np.full(nodes, 100.0 * GI * 1000),
            rng.choice([0.0, 1000.0 * GI], nodes),
        ]
    )
    used = np.floor(allocatable * rng.uniform(0.0, 0.95, allocatable.shape))
    releasing = np.where(rng.random(allocatable.shape) < 0.05, used * 0.5, 0.0)
    pipelined = np.where(rng.random(allocatable.shape) < 0.05, (allocatable - used) * 0.5, 0.0)
    rows = slice(0, nodes)
    matrix.allocatable[rows] = allocatable
    matrix.capacity[rows] = allocatable
    matrix.used[rows] = used
    matrix.idle[rows] = allocatable - used
    matrix.releasing[rows] = releasing
    matrix.pipelined[rows] = pipelined
    return matrix.take(range(nodes))


@dataclass(slots=True)
class NodeLike:
    """What upstream's per-node loop touches on a NodeInfo."""

    allocatable: Resource
    idle: Resource
    used: Resource
    releasing: Resource
    pipelined: Resource


def node_objects(matrix: NodeMatrix) -> list[NodeLike]:
    index = matrix.index
    return [
        NodeLike(
            index.resource(matrix.allocatable[row]),
            index.resource(matrix.idle[row]),
            index.resource(matrix.used[row]),
            index.resource(matrix.releasing[row]),
            index.resource(matrix.pipelined[row]),
        )
        for row in range(matrix.size)
    ]


# ---------------------------------------------------------------- the three paths


def matrix_path(
    matrix: NodeMatrix, request: np.ndarray, columns: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """What allocate calls per task: the fused future-idle fit, then the score."""
    fits = matrix.fit_future_idle(request, columns)
    scores = least_requested_scores(request, matrix.used, matrix.allocatable, SCORE_COLUMNS)
    return fits, scores


def unfused_matrix_path(
    matrix: NodeMatrix, request: np.ndarray, columns: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The same through the whole ``future_idle()`` matrix (all columns summed)."""
    fits = fit_mask(request, columns, matrix.future_idle())
    scores = least_requested_scores(request, matrix.used, matrix.allocatable, SCORE_COLUMNS)
    return fits, scores


def reference_path(
    request: list[float],
    columns: list[int],
    future_idle: list[list[float]],
    used: list[list[float]],
    allocatable: list[list[float]],
) -> tuple[list[bool], list[float]]:
    fits = fit_mask_reference(request, columns, future_idle)
    scores = least_requested_scores_reference(request, used, allocatable, [0, 1])
    return fits, scores


def resource_path(request: Resource, nodes: list[NodeLike]) -> tuple[list[bool], list[float]]:
    fits: list[bool] = []
    scores: list[float] = []
    for node in nodes:
        future_idle = node.idle.clone().add(node.releasing).sub_without_assert(node.pipelined)
        fits.append(request.less_equal(future_idle, DimensionDefault.ZERO))
        total = 0.0
        for name in ("cpu", "memory"):
            capacity = node.allocatable.get(name)
            requested = node.used.get(name) + request.get(name)
            if capacity > 0 and requested <= capacity:
                total += math.floor((capacity - requested) * 100 / capacity)
        scores.append(float(math.floor(total / 2)))
    return fits, scores


# ---------------------------------------------------------------- timing


@dataclass(slots=True)
class Timing:
    median_ms: float
    best_ms: float


def time_ms(func: Callable[[], object], repeat: int, budget_s: float = 0.005) -> Timing:
    """Per-call time in ms over ``repeat`` batches of about ``budget_s`` each: the median (the
    figure we quote) and the best batch (what the code costs on an idle machine)."""
    once = min(timeit.repeat(func, number=1, repeat=3))
    number = max(1, int(budget_s / max(once, 1e-9)))
    batches = [
        elapsed / number * 1000.0 for elapsed in timeit.repeat(func, number=number, repeat=repeat)
    ]
    return Timing(statistics.median(batches), min(batches))


def median_ms(func: Callable[[], object], repeat: int) -> float:
    return time_ms(func, repeat).median_ms


@dataclass(slots=True)
class Row:
    nodes: int
    matrix: Timing
    fit_ms: float
    score_ms: float
    unfused_ms: float
    reference_ms: float
    resource_ms: float


def measure(nodes: int, repeat: int) -> Row:
    matrix = build_cluster(nodes)
    request = matrix.vector(REQUEST)
    columns = matrix.index.defined_columns(REQUEST)
    future_idle = matrix.future_idle()

    # The paths must agree before their times mean anything.
    fits, scores = matrix_path(matrix, request, columns)
    unfused = unfused_matrix_path(matrix, request, columns)
    assert fits.tolist() == unfused[0].tolist(), "fused and unfused fits disagree"
    lists = (
        request.tolist(),
        columns.tolist(),
        future_idle.tolist(),
        matrix.used.tolist(),
        matrix.allocatable.tolist(),
    )
    reference = reference_path(*lists)
    objects = node_objects(matrix)
    plain = resource_path(REQUEST, objects)
    assert fits.tolist() == reference[0] == plain[0], "fit masks disagree"
    assert scores.tolist() == reference[1] == plain[1], "scores disagree"

    slow_repeat = max(3, repeat // 5)
    return Row(
        nodes=nodes,
        matrix=time_ms(lambda: matrix_path(matrix, request, columns), repeat),
        fit_ms=median_ms(lambda: matrix.fit_future_idle(request, columns), repeat),
        score_ms=median_ms(
            lambda: least_requested_scores(request, matrix.used, matrix.allocatable, SCORE_COLUMNS),
            repeat,
        ),
        unfused_ms=median_ms(lambda: unfused_matrix_path(matrix, request, columns), repeat),
        reference_ms=time_ms(lambda: reference_path(*lists), slow_repeat, 0.05).median_ms,
        resource_ms=time_ms(lambda: resource_path(REQUEST, objects), slow_repeat, 0.05).median_ms,
    )


def run(quick: bool = False) -> None:
    repeat = 7 if quick else 41
    # Resource.sub_without_assert logs when pipelined exceeds idle + releasing; not news here.
    logging.getLogger("volcano_py").setLevel(logging.CRITICAL)
    print(
        "one task: fit over future idle (NodeMatrix.fit_future_idle; columns cpu, memory, pods,"
        " gpu)\n+ score (least_requested_scores; cpu, memory); "
        f"{len(RESOURCES)} resource columns; ms per task,\nmedian of {repeat} batches"
        f" ({max(3, repeat // 5)} for the plain-Python loops); speed-up = Resource loop /"
        " NodeMatrix\n"
    )
    header = (
        f"{'nodes':>6}  {'NodeMatrix':>10}  {'(best)':>7}  {'= fit':>7}  {'+ score':>8}"
        f"  {'via future_idle()':>17}  {'reference loop':>14}  {'Resource loop':>13}"
        f"  {'speed-up':>8}"
    )
    print(header)
    print("-" * len(header))
    rows = [measure(nodes, repeat) for nodes in SIZES]
    for row in rows:
        speed_up = row.resource_ms / row.matrix.median_ms
        print(
            f"{row.nodes:>6}  {row.matrix.median_ms:>10.3f}  {row.matrix.best_ms:>7.3f}"
            f"  {row.fit_ms:>7.3f}  {row.score_ms:>8.3f}"
            f"  {row.unfused_ms:>17.3f}  {row.reference_ms:>14.3f}  {row.resource_ms:>13.3f}"
            f"  {speed_up:>7.0f}x"
        )
    goal = next(row for row in rows if row.nodes == GOAL_NODES)
    verdict = "met" if goal.matrix.median_ms <= GOAL_MS else "MISSED"
    print(
        f"\ngoal: NodeMatrix path <= {GOAL_MS} ms at {GOAL_NODES} nodes:"
        f" median {goal.matrix.median_ms:.3f} ms (best {goal.matrix.best_ms:.3f} ms), {verdict}"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m bench node_matrix",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (smoke run)")
    args = parser.parse_args(argv)
    run(quick=args.quick)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
