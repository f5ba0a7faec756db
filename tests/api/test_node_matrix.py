"""NodeMatrix: rows and columns, and the vectorised fit/score functions proven equal to their
plain-Python ``*_reference`` twins (DESIGN.md "Hot path")."""

from __future__ import annotations

import os

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.node_matrix import (
    FIELDS,
    NodeMatrix,
    ResourceIndex,
    fit_mask,
    fit_mask_reference,
    least_requested_scores,
    least_requested_scores_reference,
)
from volcano_py.api.resource import Resource

GPU = "nvidia.com/gpu"


def arrays(matrix: NodeMatrix) -> list[np.ndarray]:
    return [getattr(matrix, name) for name in FIELDS]


# ---------------------------------------------------------------- ResourceIndex


def test_index_starts_with_cpu_memory_pods():
    index = ResourceIndex()
    assert index.names == ["cpu", "memory", "pods"]
    assert index.width == 3
    assert index.column("memory") == 1


def test_index_registers_new_names_in_order():
    index = ResourceIndex()
    assert index.column(GPU) == 3
    assert index.column("example.com/foo") == 4
    assert index.column(GPU) == 3
    assert index.width == 5


def test_index_copy_is_independent():
    index = ResourceIndex()
    copy = index.copy()
    copy.column(GPU)
    assert index.width == 3
    assert copy.width == 4


def test_vector_and_back():
    index = ResourceIndex()
    resource = Resource(1500, 2e9, {GPU: 2000, "pods": 1}, max_task_num=1)
    vector = index.vector(resource)
    assert vector.tolist() == [1500, 2e9, 1, 2000]
    back = index.resource(vector)
    assert back == Resource(1500.0, 2e9, {"pods": 1.0, GPU: 2000.0}, max_task_num=1)


def test_resource_shows_zero_scalars_only_when_declared():
    index = ResourceIndex(["cpu", "memory", "pods", GPU])
    row = np.array([1.0, 2.0, 0.0, 0.0])
    assert index.resource(row).scalar_resources == {}
    assert index.resource(row, {GPU}).scalar_resources == {GPU: 0.0}


def test_resource_of_a_row_narrower_than_the_index():
    index = ResourceIndex()
    row = np.array([1.0, 2.0, 3.0])
    index.column(GPU)  # registered after the row was made
    assert index.resource(row).scalar_resources == {"pods": 3.0}


def test_defined_columns_are_cpu_memory_and_the_requests_scalars():
    index = ResourceIndex()
    request = Resource(100, 0, {"pods": 1, GPU: 1000})
    assert index.defined_columns(request).tolist() == [0, 1, 2, 3]
    assert index.defined_columns(Resource(100)).tolist() == [0, 1]


# ---------------------------------------------------------------- rows


def test_rows_are_handed_out_in_order_and_grow_the_arrays():
    matrix = NodeMatrix()
    rows = [matrix.add_row() for _ in range(40)]
    assert rows == list(range(40))
    assert matrix.size == 40
    for array in arrays(matrix):
        assert array.shape[0] >= 40
        assert array.shape[1] == 3
    matrix.idle[5] = [1, 2, 3]
    for _ in range(100):
        matrix.add_row()
    assert matrix.idle[5].tolist() == [1, 2, 3]  # growth keeps the data


def test_freed_rows_are_zeroed_and_recycled():
    matrix = NodeMatrix()
    first, second, third = (matrix.add_row() for _ in range(3))
    for array in arrays(matrix):
        array[second] = 7.0
    matrix.free_row(second)
    for array in arrays(matrix):
        assert array[second].tolist() == [0.0, 0.0, 0.0]
    assert matrix.add_row() == second
    assert matrix.add_row() == 3
    assert matrix.size == 4
    assert {first, third} == {0, 2}


def test_a_new_row_is_clean_even_if_its_slot_was_dirty():
    matrix = NodeMatrix(rows=0)
    row = matrix.add_row()
    matrix.free_row(row)
    matrix.used[row] = 5.0  # someone wrote into a freed row
    assert matrix.add_row() == row
    assert matrix.used[row].tolist() == [0.0, 0.0, 0.0]


def test_columns_grow_when_a_new_resource_appears():
    matrix = NodeMatrix()
    row = matrix.add_row()
    matrix.set_allocatable(row, Resource(4000, 8e9, {"pods": 110}), Resource(4000, 8e9))
    assert matrix.allocatable.shape[1] == 3
    vector = matrix.vector(Resource(0, 0, {GPU: 1000}))
    assert vector.shape == (4,)
    for array in arrays(matrix):
        assert array.shape[1] == 4
    assert matrix.allocatable[row].tolist() == [4000, 8e9, 110, 0]
    assert matrix.idle[row].tolist() == [4000, 8e9, 110, 0]


def test_set_allocatable_keeps_what_is_used():
    matrix = NodeMatrix()
    row = matrix.add_row()
    matrix.used[row] = [1000, 1e9, 2]
    matrix.set_allocatable(row, Resource(4000, 8e9, {"pods": 10, GPU: 4000}), Resource(8000, 16e9))
    assert matrix.idle[row].tolist() == [3000, 7e9, 8, 4000]
    assert matrix.capacity[row].tolist() == [8000, 16e9, 0, 0]


def test_take_compacts_rows_in_the_given_order():
    matrix = NodeMatrix()
    for value in range(5):
        row = matrix.add_row()
        for array in arrays(matrix):
            array[row] = value
    matrix.free_row(1)
    session = matrix.take([4, 0, 2])
    assert session.size == 3
    assert session.free_rows == []
    for array in arrays(session):
        assert array.shape == (3, 3)
        assert array[:, 0].tolist() == [4, 0, 2]
    session.idle[0] = -1
    session.index.column(GPU)
    assert matrix.idle[4].tolist() == [4, 4, 4]  # the copy is independent
    assert matrix.index.width == 3


def test_take_nothing():
    matrix = NodeMatrix()
    matrix.add_row()
    session = matrix.take([])
    assert session.size == 0
    assert session.future_idle().shape == (0, 3)


def test_take_after_the_index_grew_pads_the_source_first():
    matrix = NodeMatrix()
    matrix.add_row()
    matrix.index.column(GPU)  # registered, arrays not grown yet
    session = matrix.take([0])
    assert session.idle.shape == (1, 4)


def test_future_idle_is_idle_plus_releasing_minus_pipelined():
    matrix = NodeMatrix(rows=2)
    matrix.idle[:] = [[100, 0, 0], [-50, 10, 1]]
    matrix.releasing[:] = [[500, 0, 0], [50, 0, 0]]
    matrix.pipelined[:] = [[300, 0, 0], [0, 20, 1]]
    assert matrix.future_idle().tolist() == [[300, 0, 0], [0, -10, 0]]


# ---------------------------------------------------------------- fit and score, by example


def test_fit_mask_tolerates_a_tenth():
    available = np.array([[1000.0, 5.0], [999.95, 5.0], [999.9, 5.0], [2000.0, -0.2]])
    request = np.array([1000.0, 0.0])
    columns = np.array([0, 1], dtype=np.intp)
    assert fit_mask(request, columns, available).tolist() == [True, True, False, False]
    assert fit_mask_reference(request.tolist(), [0, 1], available.tolist()) == [
        True,
        True,
        False,
        False,
    ]


def test_fit_mask_looks_only_at_the_given_columns():
    available = np.array([[1000.0, -5.0, 0.0]])
    request = np.array([500.0, 0.0, 3.0])
    assert fit_mask(request, np.array([0], dtype=np.intp), available).tolist() == [True]
    assert fit_mask(request, np.array([0, 2], dtype=np.intp), available).tolist() == [False]


def test_fit_mask_on_no_rows():
    mask = fit_mask(np.zeros(3), np.array([0, 1], dtype=np.intp), np.zeros((0, 3)))
    assert mask.shape == (0,)


def test_least_requested_scores_by_example():
    # cpu: (4000 - 1000 - 1000) * 100 / 4000 = 50; memory: (8 - 0 - 2) * 100 / 8 = 75.
    allocatable = np.array([[4000.0, 8.0], [4000.0, 8.0], [0.0, 8.0], [3000.0, 8.0]])
    used = np.array([[1000.0, 0.0], [3500.0, 0.0], [0.0, 0.0], [1000.0, 3.0]])
    request = np.array([1000.0, 2.0])
    columns = np.array([0, 1], dtype=np.intp)
    scores = least_requested_scores(request, used, allocatable, columns)
    # row 1: cpu over capacity counts 0; row 2: no cpu at all counts 0;
    # row 3: cpu (3000-2000)*100/3000 = 33.3 -> 33, memory 37.5 -> 37, mean 35.
    assert scores.tolist() == [62.0, 37.0, 37.0, 35.0]
    assert least_requested_scores_reference(
        request.tolist(), used.tolist(), allocatable.tolist(), [0, 1]
    ) == [62.0, 37.0, 37.0, 35.0]


# ---------------------------------------------------------------- vectorised == reference

# NODE_MATRIX_EXAMPLES=10000 turns the equivalence properties below into a soak run.

# Values a node matrix holds: millicores, bytes, counts, milli-units; negative idle happens
# (a node shrank under its pods, or a task was charged past idle).
MAGNITUDE = st.one_of(
    st.integers(min_value=-4000, max_value=64_000).map(float),
    st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False),
    st.floats(min_value=-1e12, max_value=1e12, allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 0.1, -0.1, 0.3, 0.2, 1e-9, 1000.0, 2**31 * 1.0]),
)
# Offsets that sit on, just inside and just outside the 0.1 tolerance.
NEAR = st.one_of(
    st.sampled_from(
        [
            0.0,
            0.1,
            -0.1,
            0.05,
            -0.05,
            0.09999999999999999,
            -0.09999999999999999,
            0.10000000000000002,
            -0.10000000000000002,
            0.1 + 2**-40,
            0.1 - 2**-40,
        ]
    ),
    st.floats(min_value=-0.25, max_value=0.25, allow_nan=False),
)


@st.composite
def fit_cases(draw: st.DrawFn) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    width = draw(st.integers(min_value=1, max_value=6))
    rows = draw(st.integers(min_value=0, max_value=10))
    request = np.array(draw(st.lists(MAGNITUDE, min_size=width, max_size=width)))
    columns = draw(st.lists(st.integers(0, width - 1), min_size=1, max_size=width, unique=True))
    available = np.empty((rows, width))
    for row in range(rows):
        for column in range(width):
            if draw(st.booleans()):
                available[row, column] = request[column] + draw(NEAR)
            else:
                available[row, column] = draw(MAGNITUDE)
    return request, np.array(columns, dtype=np.intp), available


@settings(max_examples=int(os.environ.get("NODE_MATRIX_EXAMPLES", "300")), deadline=None)
@given(fit_cases())
def test_fit_mask_equals_reference(case: tuple[np.ndarray, np.ndarray, np.ndarray]):
    request, columns, available = case
    expected = fit_mask_reference(request.tolist(), columns.tolist(), available.tolist())
    assert fit_mask(request, columns, available).tolist() == expected


def test_fit_mask_equals_reference_at_float_rounding_edges():
    """Pairs where ``req - avail < 0.1`` and ``avail + 0.1 > req`` round differently."""
    pairs = [
        (0.30000000000000004, 0.2),
        (0.4, 0.3),
        (1.1, 1.0),
        (1000.1, 1000.0),
        (0.7999999999999999, 0.7),
        (3.3000000000000003, 3.2),
    ]
    for request_value, available_value in pairs:
        request = np.array([request_value])
        available = np.array([[available_value]])
        columns = np.array([0], dtype=np.intp)
        expected = fit_mask_reference([request_value], [0], [[available_value]])
        assert fit_mask(request, columns, available).tolist() == expected, (
            request_value,
            available_value,
        )


@st.composite
def score_cases(
    draw: st.DrawFn,
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    width = draw(st.integers(min_value=1, max_value=6))
    rows = draw(st.integers(min_value=0, max_value=10))
    request = np.array(draw(st.lists(MAGNITUDE, min_size=width, max_size=width)))
    columns = draw(st.lists(st.integers(0, width - 1), min_size=1, max_size=width, unique=True))
    allocatable = np.empty((rows, width))
    used = np.empty((rows, width))
    for row in range(rows):
        for column in range(width):
            capacity = draw(st.one_of(MAGNITUDE, st.just(0.0)))
            allocatable[row, column] = capacity
            if draw(st.booleans()):
                # Right at the edge: used + request within a tenth of capacity.
                used[row, column] = capacity - request[column] + draw(NEAR)
            else:
                used[row, column] = draw(MAGNITUDE)
    return request, used, allocatable, np.array(columns, dtype=np.intp)


@settings(max_examples=int(os.environ.get("NODE_MATRIX_EXAMPLES", "250")), deadline=None)
@given(score_cases())
def test_least_requested_scores_equals_reference(
    case: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray],
):
    request, used, allocatable, columns = case
    expected = least_requested_scores_reference(
        request.tolist(), used.tolist(), allocatable.tolist(), columns.tolist()
    )
    actual = least_requested_scores(request, used, allocatable, columns)
    assert actual.tolist() == expected


@settings(max_examples=int(os.environ.get("NODE_MATRIX_EXAMPLES", "200")), deadline=None)
@given(fit_cases(), st.data())
def test_fit_future_idle_equals_fit_mask_over_future_idle(
    case: tuple[np.ndarray, np.ndarray, np.ndarray], data: st.DataObject
):
    request, columns, available = case
    rows, width = available.shape
    matrix = NodeMatrix(ResourceIndex([f"r{i}" for i in range(width)]), rows=rows)
    # Split the drawn availability into idle + releasing - pipelined, negatives included.
    releasing = np.array(
        data.draw(st.lists(MAGNITUDE, min_size=rows * width, max_size=rows * width))
    ).reshape(rows, width)
    pipelined = np.array(
        data.draw(st.lists(MAGNITUDE, min_size=rows * width, max_size=rows * width))
    ).reshape(rows, width)
    matrix.idle[:] = available - releasing + pipelined
    matrix.releasing[:] = releasing
    matrix.pipelined[:] = pipelined
    expected = fit_mask_reference(request.tolist(), columns.tolist(), matrix.future_idle().tolist())
    assert matrix.fit_future_idle(request, columns).tolist() == expected
    assert fit_mask(request, columns, matrix.future_idle()).tolist() == expected


def test_arrays_stay_column_major_through_growth_and_take():
    matrix = NodeMatrix()
    for _ in range(20):
        matrix.add_row()
    matrix.vector(Resource(0, 0, {GPU: 1}))
    for array in arrays(matrix):
        assert array.flags["F_CONTIGUOUS"]
    for array in arrays(matrix.take([3, 1])):
        assert array.flags["F_CONTIGUOUS"]


@settings(max_examples=60, deadline=None)
@given(st.data())
def test_functions_accept_matrix_arrays_and_do_not_modify_them(data: st.DataObject):
    matrix = NodeMatrix()
    rows = data.draw(st.integers(min_value=1, max_value=8))
    for _ in range(rows):
        row = matrix.add_row()
        for name in FIELDS:
            getattr(matrix, name)[row] = data.draw(st.lists(MAGNITUDE, min_size=3, max_size=3))
    session = matrix.take(list(range(rows)))
    before = [array.copy() for array in arrays(session)]
    request = np.array(data.draw(st.lists(MAGNITUDE, min_size=3, max_size=3)))
    columns = np.array([0, 1, 2], dtype=np.intp)
    future_idle = session.future_idle()
    assert fit_mask(request, columns, future_idle).tolist() == fit_mask_reference(
        request.tolist(), [0, 1, 2], future_idle.tolist()
    )
    scores = least_requested_scores(request, session.used, session.allocatable, columns[:2])
    assert scores.shape == (rows,)
    for original, after in zip(before, arrays(session), strict=True):
        assert np.array_equal(original, after)


def test_columns_may_be_a_plain_sequence():
    matrix = NodeMatrix(rows=2)
    matrix.idle[:] = [[1000, 5, 1], [10, 5, 1]]
    matrix.used[:] = [[0, 0, 0], [0, 0, 0]]
    matrix.allocatable[:] = [[1000, 10, 1], [1000, 10, 1]]
    request = np.array([500.0, 5.0, 1.0])
    assert fit_mask(request, [0, 1], matrix.idle).tolist() == [True, False]
    assert matrix.fit_future_idle(request, (0, 2)).tolist() == [True, False]
    assert least_requested_scores(request, matrix.used, matrix.allocatable, [0, 1]).tolist() == [
        50.0,
        50.0,
    ]
