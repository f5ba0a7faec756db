"""``JobInfo.refile_task``, a status move in one call, keeps the books ``_unfile_task`` then
``add_task`` keep (issue 14: a placed task moves status twice in the session and once in the
cache): random moves over every status, best-effort and role tasks, fractional requests whose
sums round; the task dict and status index orders, the sums' bits and the counters must match
(reference: ``job._ONE_CALL_MOVES = False``)."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.builders import build_pod
from volcano_py.api import job as job_module
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus


def _books(job: JobInfo) -> Any:
    def sums(resource: Resource) -> Any:
        return (resource.milli_cpu, resource.memory, sorted(resource.scalar_resources.items()))

    return (
        [(uid, task.status) for uid, task in job.tasks.items()],
        [(status, list(tasks)) for status, tasks in job.task_status_index.items()],
        sums(job.total_request),
        sums(job.allocated),
        sorted((key, count) for key, count in job.role_counts.items()),
        sorted(job.best_effort_pending.items()),
    )


def _run(seed: int, one_call: bool) -> list[Any]:
    rng = random.Random(seed)
    job = JobInfo(uid="ns/j", name="j", namespace="ns", queue="q")
    tasks: list[TaskInfo] = []
    for index in range(12):
        request = (
            Resource()
            if rng.random() < 0.2  # best effort
            else Resource(milli_cpu=rng.choice((0.1, 100.0, 333.3)), memory=rng.random() * 1e9)
        )
        if rng.random() < 0.3:
            request.scalar_resources["nvidia.com/gpu"] = 0.7
        pod = build_pod("ns", f"p{index}", "", "Pending", {"cpu": "1"}, "j")
        task = TaskInfo.from_pod(pod, request)
        task.task_role = rng.choice(("", "ps", "worker"))
        job.add_task(task)
        tasks.append(task)
    books = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(job_module, "_ONE_CALL_MOVES", one_call)
        for _ in range(300):
            task = rng.choice(tasks)
            if rng.random() < 0.2:
                # Another object for the same task (the cache's bind files a new copy).
                copy = task.clone()
                tasks[tasks.index(task)] = copy
                task = copy
            job.update_task_status(task, rng.choice(list(TaskStatus)))
            books.append(_books(job))
    return books


@pytest.mark.parametrize("seed", range(10))
def test_a_move_in_one_call_keeps_the_books_of_unfile_then_add(seed: int) -> None:
    assert _run(seed, one_call=True) == _run(seed, one_call=False)
