"""``JobInfo.task_sums`` worked out three ways gives the same bits (issue 14, "Session": the
100 gangs a session places are summed again at its close and at the next open):

* ``job._COLUMN_SUMS``: each status's requests as columns, added in C by ``column_sums``
  where every value is whole, request by request otherwise;
* ``job._ONE_PASS_SUMS``: one Python pass adding each request to both sums;
* both off: the reference, one ``Resource.add_all`` per sum and status, then ``_whole``.

Requests with fractions, negative values and zeros, NaN, infinities, ints, values past 2**53
and scalars named in different orders must give the reference's floats, scalar order and
exactness.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api import job as job_module
from volcano_py.api.column_sums import all_whole, column_sum
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus

STATUSES = [
    TaskStatus.PENDING,
    TaskStatus.ALLOCATED,
    TaskStatus.PIPELINED,
    TaskStatus.BINDING,
    TaskStatus.RUNNING,
    TaskStatus.RELEASING,
    TaskStatus.SUCCEEDED,
]
amounts = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, 1000.0, 1073741824.0, 2.0**52, 2.0**53, 2.0**60]),
    st.integers(0, 10**6).map(float),
    st.integers(0, 10**6),  # an int where a float is expected
    st.sampled_from([0.1, 1 / 3, 2.5, -1.0, math.inf, -math.inf, math.nan]),
)
scalars = st.one_of(
    st.just({"pods": 1.0}),
    st.dictionaries(st.sampled_from(["pods", "nvidia.com/gpu", "hugepages-2Mi"]), amounts),
)


def _bits(value: Any) -> str:
    return float(value).hex() if isinstance(value, float) else repr(value)


def _resource_bits(resource: Resource) -> Any:
    return (
        _bits(resource.milli_cpu),
        _bits(resource.memory),
        [(name, _bits(value)) for name, value in resource.scalar_resources.items()],
    )


def _sums(job: JobInfo, columns: bool, one_pass: bool) -> Any:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(job_module, "_KEEP_TASK_SUMS", False)
        monkeypatch.setattr(job_module, "_COLUMN_SUMS", columns)
        monkeypatch.setattr(job_module, "_ONE_PASS_SUMS", one_pass)
        sums = job.task_sums()
    return _resource_bits(sums.allocated), _resource_bits(sums.requested), sums.exact


@settings(max_examples=500, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(STATUSES), amounts, amounts, scalars),
        max_size=40,
    ),
    st.booleans(),
)
def test_the_three_ways_give_the_same_sums(
    drawn: list[tuple[TaskStatus, float, float, dict[str, float]]], same_request: bool
) -> None:
    job = JobInfo(uid="ns/j")
    for number, (status, cpu, memory, named) in enumerate(drawn):
        if same_request and number:
            # A gang's members: equal requests, each its own object.
            status, cpu, memory, named = drawn[0][0], drawn[0][1], drawn[0][2], drawn[0][3]
        request = Resource(cpu, memory, dict(named))
        job.add_task(TaskInfo(f"t{number}", job.uid, f"t{number}", "ns", {}, request, request, status))
    reference = _sums(job, columns=False, one_pass=False)
    assert _sums(job, columns=False, one_pass=True) == reference
    assert _sums(job, columns=True, one_pass=False) == reference


def test_a_gang_is_summed_by_columns_in_c() -> None:
    """100 Binding members of 1 cpu, 1Gi and a pod: whole, exact, and the column path."""
    job = JobInfo(uid="ns/gang")
    for number in range(100):
        request = Resource(1000.0, 2.0**30, {"pods": 1.0})
        job.add_task(
            TaskInfo(f"t{number}", job.uid, f"t{number}", "ns", {}, request, request, TaskStatus.BINDING)
        )
    sums = job.task_sums()
    assert (sums.allocated.milli_cpu, sums.allocated.memory) == (100000.0, 100 * 2.0**30)
    assert sums.allocated.scalar_resources == {"pods": 100.0} and sums.exact


@pytest.mark.parametrize(
    ("values", "whole"),
    [
        ([], True),
        ([0.0, -0.0, 3.0], True),
        ([1.0, 2], True),  # an int: asked one by one
        ([1.0, 0.5], False),
        ([1.0, -1.0], False),
        ([math.nan], False),
        ([math.inf], False),
        ([2.0**60], True),
    ],
)
def test_all_whole(values: list[float], whole: bool) -> None:
    assert all_whole(values) is whole
    assert whole == all(value >= 0.0 and value % 1.0 == 0.0 for value in values)


@pytest.mark.parametrize(
    ("start", "values"),
    [
        (0.0, [-0.0, -0.0]),
        (-0.0, [-0.0]),  # -0.0 stays -0.0 left to right
        (-0.0, []),
        (0.0, [2.0**52, 2.0**52, 1.0]),  # past 2**53: rounds left to right
        (2.0**53 - 1.0, [1.0, 1.0]),
        (3.0, [0.1, 0.2]),
        (0.5, [1.0, 2.0]),
    ],
)
def test_column_sum_adds_left_to_right(start: float, values: list[float]) -> None:
    expected = start
    for value in values:
        expected += value
    assert column_sum(start, values, all_whole(values)).hex() == expected.hex()
