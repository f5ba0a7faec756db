"""Sums over a job's tasks kept across sessions, and the queues' allocated totals at close
summed job by job (issue 14, "Session": both were passes over every task of the cluster in
every session).

* ``JobInfo.task_sums`` is kept per tasks version, shared by the cache's job and the copies
  sessions take (reference: ``job._KEEP_TASK_SUMS = False``, summed at every call). Any
  sequence of task changes, copies and changes of copies must give the sums a fresh
  computation gives, bit for bit.
* ``close_session``'s queue totals come from each job's sum when every request summed is a
  non-negative integer and every total stays within 2**53 (reference:
  ``session._SUM_BY_JOB = False``, task by task). Requests with fractions, negative values
  and values past 2**53 must fall back; either way the totals' bits and the status writes are
  the reference's.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api import job as job_module
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework import session as session_module
from volcano_py.framework.conf import SchedulerConf, Tier
from volcano_py.framework.session import open_session
from volcano_py.testing.objects import build_pod_group, build_queue

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
    st.sampled_from([0.0, 1.0, 500.0, 1073741824.0, 2.0**52, 2.0**53, 2.0**60]),
    st.integers(0, 10**6).map(float),
    st.sampled_from([0.1, 1 / 3, 2.5, -1.0, -0.0]),
)
requests = st.tuples(amounts, amounts, st.dictionaries(st.sampled_from(["pods", "gpu"]), amounts))


def _resource(request: tuple[float, float, dict[str, float]]) -> Resource:
    resource = Resource(milli_cpu=request[0], memory=request[1])
    resource.scalar_resources.update(request[2])
    return resource


def _task(uid: str, job: str, status: TaskStatus, request: Any) -> TaskInfo:
    resreq = _resource(request)
    return TaskInfo(uid, job, uid, "ns", {}, resreq, resreq, status)


def _bits(resource: Resource) -> Any:
    return (
        resource.milli_cpu.hex(),
        resource.memory.hex(),
        [(name, float(value).hex()) for name, value in resource.scalar_resources.items()],
    )


def _fresh(job: JobInfo) -> Any:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(job_module, "_KEEP_TASK_SUMS", False)
        sums = job.task_sums()
    return _bits(sums.allocated), _bits(sums.requested), sums.exact


def _kept(job: JobInfo) -> Any:
    sums = job.task_sums()
    return _bits(sums.allocated), _bits(sums.requested), sums.exact


steps = st.lists(
    st.tuples(
        st.sampled_from(["add", "remove", "status", "copy", "use-copy", "sum"]),
        st.sampled_from(STATUSES),
        requests,
        st.integers(0, 9),
    ),
    max_size=40,
)


@settings(max_examples=300, deadline=None)
@given(steps)
def test_kept_sums_are_fresh_sums(
    plan: list[tuple[str, TaskStatus, tuple[float, float, dict[str, float]], int]],
) -> None:
    jobs = [JobInfo(uid="ns/j")]
    current = 0
    for number, (what, status, request, pick) in enumerate(plan):
        job = jobs[current]
        tasks = list(job.tasks.values())
        if what == "add" or (what in ("remove", "status") and not tasks):
            job.add_task(_task(f"t{number}", job.uid, status, request))
        elif what == "remove":
            job.delete_task(tasks[pick % len(tasks)])
        elif what == "status":
            task = tasks[pick % len(tasks)]
            if task.status is TaskStatus.PENDING:
                # A session moves its own copies of Pending tasks in place...
                job.update_task_status(task, status)
            else:
                # ...the cache replaces a task (others may be shared with copies).
                moved = task.clone()
                moved.status = status
                job.delete_task(task)
                job.add_task(moved)
        elif what == "copy":
            jobs.append(job.snapshot_copy() if pick % 2 else job.clone())
        elif what == "use-copy":
            current = pick % len(jobs)
        # Every job and copy, after every step: kept or not, the same sums.
        for each in jobs:
            assert _kept(each) == _fresh(each)


def _session_with(tasks: list[tuple[str, TaskStatus, Any]], hierarchy: bool) -> Any:
    cache = SchedulerCache()
    queues = ["q1", "q2"]
    if hierarchy:
        cache.apply_event("Queue", "ADDED", build_queue("root", 1))
        cache.apply_event("Queue", "ADDED", build_queue("parent", 1, parent="root"))
        cache.apply_event("Queue", "ADDED", build_queue("q1", 1, parent="parent"))
        cache.apply_event("Queue", "ADDED", build_queue("q2", 1, parent="root"))
    else:
        for name in queues:
            cache.apply_event("Queue", "ADDED", build_queue(name, 1))
    for group in ("g0", "g1", "g2"):
        queue = "q2" if group == "g2" else "q1"
        cache.apply_event("PodGroup", "ADDED", build_pod_group(group, "ns", queue, 1))
    conf = SchedulerConf(actions=[], tiers=[Tier([])])
    ssn = open_session(cache.snapshot(), conf, {}, cache)
    for uid, status, request in tasks:
        group = f"g{int(uid[1:]) % 3}"
        ssn.jobs[f"ns/{group}"].add_task(_task(uid, f"ns/{group}", status, request))
    return ssn


class _Writes:
    def __init__(self) -> None:
        self.queues: list[Any] = []

    def update_queue_status(self, name: str, allocated: Resource) -> None:
        self.queues.append((name, _bits(allocated), allocated.to_list()))


def _totals(tasks: list[tuple[str, TaskStatus, Any]], hierarchy: bool, by_job: bool) -> Any:
    ssn = _session_with(tasks, hierarchy)
    writes = _Writes()
    ssn.sink = writes
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(session_module, "_SUM_BY_JOB", by_job)
        session_module._update_queue_status(ssn)
    return writes.queues, {name: queue.allocated_status for name, queue in ssn.queues.items()}


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(STATUSES), requests), max_size=30), st.booleans())
def test_queue_totals_by_job_are_the_totals_by_task(
    drawn: list[tuple[TaskStatus, tuple[float, float, dict[str, float]]]], hierarchy: bool
) -> None:
    tasks = [(f"t{i}", status, request) for i, (status, request) in enumerate(drawn)]
    assert _totals(tasks, hierarchy, by_job=True) == _totals(tasks, hierarchy, by_job=False)


@pytest.mark.parametrize(
    ("request_values", "by_job"),
    [
        ((1000.0, 2.0**30, {"pods": 1.0}), True),
        ((0.5, 2.0**30, {}), False),  # a fraction
        ((1000.0, 2.0**52 + 2.0**51, {}), False),  # two of them pass 2**53
        ((-1000.0, 0.0, {}), False),  # negative
    ],
)
def test_the_job_sums_are_used_only_when_exact(
    request_values: tuple[float, float, dict[str, float]], by_job: bool
) -> None:
    tasks = [(f"t{i}", TaskStatus.RUNNING, request_values) for i in range(6)]
    ssn = _session_with(tasks, hierarchy=False)
    allocated = {name: Resource() for name in ssn.queues}
    assert session_module._sum_by_job(ssn, allocated, False) is by_job
    if not by_job:
        assert all(total == Resource() for total in allocated.values())


def test_a_copy_changed_in_a_session_is_summed_anew() -> None:
    """A session's copy shares its job's kept sums until it changes; then it takes another
    version and is summed again, and a new copy of the unchanged job is summed right."""
    rng = random.Random(5)
    job = JobInfo(uid="ns/j")
    for i in range(20):
        status = rng.choice([TaskStatus.RUNNING, TaskStatus.PENDING])
        job.add_task(_task(f"t{i}", job.uid, status, (1000.0, 2.0**30, {})))
    kept = job.task_sums()
    copy = job.snapshot_copy()
    assert copy.task_sums() is kept
    pending = next(iter(copy.tasks_in(TaskStatus.PENDING).values()))
    copy.update_task_status(pending, TaskStatus.ALLOCATED)
    assert copy.task_sums() is not kept
    assert copy.task_sums().allocated.milli_cpu == kept.allocated.milli_cpu + 1000.0
    assert job.snapshot_copy().task_sums() == kept
