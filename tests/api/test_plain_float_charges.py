"""``NodeInfo._charge`` in plain Python floats column by column keeps the bits of the numpy
row arithmetic it replaced (``node._PLAIN_FLOAT_CHARGES = False``, the reference): any
sequence of adds, removes and status updates, by every status, with fractional amounts,
zeros, scalar columns first seen mid-sequence and negative idle, leaves the same matrix
bytes, column order and held tasks (DESIGN.md "Hot path": the reference stays, a property
test proves the two agree)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api import node as node_module
from volcano_py.api.node import NodeFitError, NodeInfo
from volcano_py.api.node_matrix import FIELDS, NodeMatrix
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus

SCALARS = ("nvidia.com/gpu", "example.com/fpga", "pods")
amounts = st.one_of(
    st.sampled_from([0.0, -0.0, 0.1, 0.3, 1.0, 999.95, 1000.0, 2.0**40]),
    st.floats(min_value=0.0, max_value=1e12, allow_nan=False, allow_infinity=False),
)
resources = st.tuples(amounts, amounts, st.dictionaries(st.sampled_from(SCALARS), amounts))
operations = st.lists(
    st.tuples(
        st.sampled_from(["add", "add", "remove", "update"]),
        st.sampled_from(list(TaskStatus)),
        resources,
        st.integers(0, 7),
    ),
    max_size=30,
)


def _task(index: int, status: TaskStatus, request: tuple[float, float, dict[str, float]]) -> Any:
    resreq = Resource(milli_cpu=request[0], memory=request[1])
    resreq.scalar_resources.update(request[2])
    return TaskInfo(f"uid-{index}", "ns/job", f"t{index}", "ns", {}, resreq, resreq, status)


def _play(
    allocatable: tuple[float, float, dict[str, float]],
    steps: list[tuple[str, TaskStatus, tuple[float, float, dict[str, float]], int]],
) -> Any:
    matrix = NodeMatrix()
    node = NodeInfo("n", matrix, matrix.add_row())
    other = NodeInfo("m", matrix, matrix.add_row())  # a neighbour row that must not move
    total = Resource(milli_cpu=allocatable[0], memory=allocatable[1])
    total.scalar_resources.update(allocatable[2])
    node.node = {"metadata": {"name": "n"}}
    matrix.set_allocatable(node.row, total, total)
    held: list[TaskInfo] = []
    log: list[str] = []
    for index, (what, status, request, pick) in enumerate(steps):
        try:
            if what == "add" or not held:
                task = _task(index, status, request)
                node.add_task(task)
                held.append(task)
            elif what == "remove":
                node.remove_task(held.pop(pick % len(held)))
            else:
                task = held[pick % len(held)].clone()
                task.status = status
                node.update_task(task)
            log.append("ok")
        except NodeFitError as error:
            log.append(str(error))
    assert not other.tasks
    return (
        log,
        list(matrix.index.names),
        [getattr(matrix, name).tobytes() for name in FIELDS],
        [(t.key, t.status, t.node_name) for t in node.tasks.values()],
    )


@settings(max_examples=300, deadline=None)
@given(resources, operations)
def test_plain_float_charges_keep_the_bits_of_numpy_rows(
    allocatable: tuple[float, float, dict[str, float]],
    steps: list[tuple[str, TaskStatus, tuple[float, float, dict[str, float]], int]],
) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(node_module, "_PLAIN_FLOAT_CHARGES", False)
        reference = _play(allocatable, steps)
    assert _play(allocatable, steps) == reference


def test_a_negative_zero_cell_moves_as_in_numpy() -> None:
    """x - 0.0 keeps -0.0 and x + 0.0 does not: columns a request leaves at zero are still
    operated on, as the row arithmetic did."""
    results = []
    for plain in (False, True):
        with pytest.MonkeyPatch.context() as monkeypatch:
            monkeypatch.setattr(node_module, "_PLAIN_FLOAT_CHARGES", plain)
            matrix = NodeMatrix()
            node = NodeInfo("n", matrix, matrix.add_row())
            node.node = {"metadata": {"name": "n"}}
            matrix.idle[node.row] = -0.0
            matrix.used[node.row] = -0.0
            task = _task(0, TaskStatus.RUNNING, (0.0, 0.0, {}))
            node.add_task(task)
            node.remove_task(task)
            results.append([np.signbit(getattr(matrix, name)).tolist() for name in FIELDS])
    assert results[0] == results[1]
