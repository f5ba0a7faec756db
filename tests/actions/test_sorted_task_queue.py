"""allocate sorts a job's pending tasks once by the task order's key instead of keeping them in
a heap that asks ``task_order_fn`` (issue 14, "Session"): the queue must pop the same tasks in
the same order, pushes included (the nomination fast path puts back what it did not place).

``Session.task_order_key`` offers a key only when every plugin that registered ``task_order``
offers one (``task_order_key``) and ``compare_tasks`` has one over the job's tasks (all with a
pod index, or none). The properties below draw tasks with priorities, pod indexes (some
missing, some repeated), creation times and UIDs, and compare the two queues; a key offered
when it should not be would show as another order. The sessions of ``bench.decisions``'
clusters run with the switch (``allocate._SORTED_TASKS``) on and off and every bind (in order),
status write, event and pod condition is compared (``bench.outputs``).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench import outputs
from volcano_py.actions import allocate
from volcano_py.api.task import TaskInfo, compare_tasks_key
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.priority_queue import PriorityQueue, SortedQueue
from volcano_py.framework.session import Session, open_session
from volcano_py.scheduler.registry import PluginRegistry

tasks_drawn = st.lists(
    st.tuples(
        st.sampled_from([1, 1, 10, -5]),  # priority
        st.one_of(st.none(), st.integers(0, 6)),  # pod index in the name, or none
        st.sampled_from(["", "2026-01-01T00:00:00Z", "2026-01-01T00:00:01Z"]),
    ),
    max_size=25,
)


def _session(plugins: list[str]) -> Session:
    conf = SchedulerConf(
        actions=["allocate"],
        tiers=[Tier([PluginOption.with_flags(name, "enableTaskOrder") for name in plugins])],
    )
    cache = SchedulerCache()
    return open_session(cache.snapshot(), conf, PluginRegistry(), cache)


def _tasks(drawn: list[tuple[int, int | None, str]]) -> list[TaskInfo]:
    tasks = []
    for number, (priority, index, created) in enumerate(drawn):
        name = f"job-worker-{index}" if index is not None else f"job-solo{number}"
        task = TaskInfo(f"uid-{number:02d}", "ns/job", name, "ns", {}, _none(), _none())
        task.priority = priority
        task.creation_timestamp = created
        tasks.append(task)
    return tasks


def _none() -> Any:
    from volcano_py.api.resource import Resource

    return Resource()


def _popped(queue: Any, pushes_back: int) -> list[str]:
    """Pop everything; after the first ``pushes_back`` pops, push those back once (as the
    nomination fast path does with what it did not place), then pop on."""
    first = [queue.pop() for _ in range(min(pushes_back, len(queue)))]
    for task in first:
        queue.push(task)
    order = []
    while not queue.empty():
        order.append(queue.pop().uid)
    return order


@settings(max_examples=300, deadline=None)
@given(tasks_drawn, st.sampled_from([[], ["priority"]]), st.booleans())
def test_the_sorted_queue_pops_as_the_heap(
    drawn: list[tuple[int, int | None, str]], plugins: list[str], keyless_plugin: bool
) -> None:
    ssn = _session(plugins)
    if keyless_plugin:
        # A task order without a key (registered by hand: no plugin object offers one).
        ssn.add_task_order_fn(
            "by-name-length", lambda left, right: len(left.name) - len(right.name)
        )
    tasks = _tasks(drawn)
    key = ssn.task_order_key(tasks)
    mixed = compare_tasks_key(tasks) is None
    if keyless_plugin or mixed:
        assert key is None
        return
    assert key is not None
    for pushes_back in (0, 3):
        heap = PriorityQueue(ssn.task_order_fn, tasks)
        assert _popped(SortedQueue(key, tasks), pushes_back) == _popped(heap, pushes_back)


def test_mixed_pod_indexes_have_no_key() -> None:
    """``compare_tasks`` is not transitive over such tasks: a worker-2 created first, a task
    without an index created second and a worker-1 created last go round in a circle."""
    tasks = _tasks([(1, 2, "a"), (1, None, "b"), (1, 1, "c")])
    assert compare_tasks_key(tasks) is None
    assert _session(["priority"]).task_order_key(tasks) is None


def test_an_empty_queue_refuses_to_pop() -> None:
    with pytest.raises(IndexError):
        SortedQueue(lambda task: 0, []).pop()


@pytest.mark.parametrize("seed", range(0, 60, 4))
def test_sessions_hand_out_the_same_with_the_heap(seed: int) -> None:
    sorted_once = outputs.outputs(seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(allocate, "_SORTED_TASKS", False)
        assert outputs.outputs(seed) == sorted_once
