"""``JobInfo.task_sums`` worked out two ways gives the same bits (issue 14, "Session": the
100 gangs a session places are summed again at its close and at the next open):

* ``job._ONE_PASS_SUMS``: one Python pass adding each request to both sums it counts in and
  asking whether it is whole;
* off: the reference, one ``Resource.add_all`` per sum and status, then ``_whole``.

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

from tests.framework.test_job_task_sums import STATUSES
from volcano_py.api import job as job_module
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus

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


def _sums(job: JobInfo, one_pass: bool) -> Any:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(job_module, "_KEEP_TASK_SUMS", False)
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
def test_both_ways_give_the_same_sums(
    drawn: list[tuple[TaskStatus, float, float, dict[str, float]]], same_request: bool
) -> None:
    job = JobInfo(uid="ns/j")
    for number, (status, cpu, memory, named) in enumerate(drawn):
        if same_request and number:
            # A gang's members: equal requests, each its own object.
            status, cpu, memory, named = drawn[0][0], drawn[0][1], drawn[0][2], drawn[0][3]
        request = Resource(cpu, memory, dict(named))
        job.add_task(
            TaskInfo(f"t{number}", job.uid, f"t{number}", "ns", {}, request, request, status)
        )
    assert _sums(job, one_pass=True) == _sums(job, one_pass=False)
