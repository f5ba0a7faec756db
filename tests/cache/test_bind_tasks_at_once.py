"""``SchedulerCache.add_bind_tasks``, a statement's consecutive binds in one call, keeps the
books ``add_bind_task`` one task at a time keeps, and hands back what each would have raised
(issue 14: a gang's commit, 100 binds, took one call and one hold of the lock per bind).

The random event sequences of ``test_bind_in_place`` (pods on known, unknown and placeholder
nodes, jobs with and without PodGroups, late scalar columns, Releasing pods, node updates),
with each stretch of binds handed over at once or one by one; binds go to nodes with and
without room, unknown nodes, for pods gone, twice for one pod, and the binder refuses some.
"""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.cache.test_bind_in_place import Step, _books, _steps, bind_copy
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder


class PickyBinder(RecordingBinder):
    """Refuses the pods whose name ends in 3 (the cache has already assumed them)."""

    def bind(self, task: TaskInfo, node_name: str) -> None:
        if task.name.endswith("3"):
            raise LookupError(f"pod {task.key} refused by the binder")
        super().bind(task, node_name)


def _stretches(steps: list[Step]) -> list[tuple[str, Any]]:
    """The steps with each run of consecutive binds as one ("binds", [...]) step."""
    grouped: list[tuple[str, Any]] = []
    for kind, what in steps:
        if kind in ("bind", "bind-gone"):
            if grouped and grouped[-1][0] == "binds":
                grouped[-1][1].append((kind, what))
            else:
                grouped.append(("binds", [(kind, what)]))
        else:
            grouped.append((kind, what))
    return grouped


def _tasks(
    cache: SchedulerCache, binds: list[tuple[str, Any]], rng: random.Random
) -> list[TaskInfo]:
    """The session copies a stretch of binds commits, chosen from the cache before any."""
    pending = [t for t in cache.tasks.values() if t.status.name == "PENDING"]
    tasks: list[TaskInfo] = []
    for kind, what in binds:
        if not pending:
            break
        task = bind_copy(pending, kind, what)
        tasks.append(task)
        if rng.random() < 0.1:
            tasks.append(task.clone())  # the same pod twice: the second bind is refused
    return tasks


def _run(steps: list[Step], at_once: bool, seed: int) -> tuple[SchedulerCache, list[str]]:
    cache = SchedulerCache(binder=PickyBinder())
    rng = random.Random(seed)
    outcomes: list[str] = []
    for kind, what in _stretches(steps):
        if kind == "event":
            cache.apply_event(*what)
            continue
        tasks = _tasks(cache, what, rng)
        if at_once:
            errors = cache.add_bind_tasks(tasks)
        else:
            errors = []
            for task in tasks:
                try:
                    cache.add_bind_task(task)
                except Exception as error:
                    errors.append(error)
                else:
                    errors.append(None)
        for task, error in zip(tasks, errors, strict=True):
            outcomes.append(
                f"bound {task.key}" if error is None else f"{type(error).__name__}: {error}"
            )
    return cache, outcomes


@pytest.mark.parametrize("seed", range(12))
def test_binds_at_once_keep_the_books_of_binds_one_by_one(seed: int) -> None:
    steps = _steps(seed)
    reference = _books(*_run(steps, at_once=False, seed=seed))
    outcomes = reference[0]
    assert any(o.startswith("bound") for o in outcomes)
    assert any(o.startswith("CacheBindError") for o in outcomes)
    assert _books(*_run(steps, at_once=True, seed=seed)) == reference


def test_the_binder_refusing_one_task_does_not_stop_the_others() -> None:
    steps = _steps(3)
    _, outcomes = _run(steps, at_once=True, seed=3)
    assert any(o.startswith("LookupError") for o in outcomes)
    assert any(o.startswith("bound") for o in outcomes)
