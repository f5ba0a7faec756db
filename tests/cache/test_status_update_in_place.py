"""A pod update that changes nothing the cache's books count (its kubelet reporting it
Running, a condition written) swaps the task in place (``SchedulerCache._replace_in_place``)
instead of taking it off its job and node and putting it back. The result must be what the
remove-and-add path gives: the same tasks, the same sums, the same dict orders (iteration
order feeds decisions). Each case runs both ways and compares everything."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, resource_list
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache

NS = "test"
Event = tuple[str, str, dict[str, Any]]


def _pod(name: str, node: str = "", phase: str = "Running", group: str = "j1") -> dict[str, Any]:
    return build_pod(NS, name, node, phase, resource_list("1000m", "1G"), group)


def _restatus(pod: dict[str, Any], **status: Any) -> dict[str, Any]:
    """A new version of ``pod`` as the simulated cluster writes one: the same ``spec``
    object, a new ``metadata`` (another resourceVersion) and a new ``status``."""
    new = dict(pod)
    new["metadata"] = {**pod["metadata"], "resourceVersion": str(id(new))}
    new["status"] = {**(pod.get("status") or {}), **status}
    return new


def _setup() -> list[Event]:
    pods = [
        _pod("a-0", "n1"),
        _pod("a-1", "n1"),
        _pod("a-2", "n2"),
        _pod("a-3", "n2", phase="Pending"),  # bound, not started
        _pod("b-0", "n1", group="j2"),  # its job has no PodGroup, and one task
        _pod("c-0", "n3", group="j1"),  # on a node the cache has not seen
        _pod("d-0", "n2", group=""),  # no group
        _pod("e-0", phase="Pending"),  # pending
    ]
    return [
        ("Node", "ADDED", build_node("n1", resource_list("8", "16G", pods="10"))),
        ("Node", "ADDED", build_node("n2", resource_list("8", "16G", pods="10"))),
        ("PodGroup", "ADDED", build_pod_group("j1", NS, "q1", 1)),
        *(("Pod", "ADDED", pod) for pod in pods),
    ]


def _updates(events: list[Event]) -> list[Event]:
    pods = {e[2]["metadata"]["name"]: e[2] for e in events if e[0] == "Pod"}
    started = {"containerStatuses": [{"name": "c", "ready": True}], "podIP": "10.0.0.1"}
    return [
        ("Pod", "MODIFIED", _restatus(pods[name], **started))
        for name in ("a-1", "a-0", "a-3", "b-0", "c-0", "d-0", "e-0", "a-2")
    ] + [
        ("Pod", "MODIFIED", _restatus(pods["a-3"], phase="Running")),
        ("Pod", "MODIFIED", _restatus(pods["a-0"], phase="Succeeded")),
        ("Pod", "MODIFIED", _restatus(pods["a-1"], podIP="10.0.0.2")),
    ]


def _books(cache: SchedulerCache) -> Any:
    def task_facts(task: Any) -> Any:
        return (
            task.key,
            task.uid,
            task.job,
            task.status,
            task.node_name,
            task.resreq.to_list(),
            id(task.pod),
            task.pod_annotations,
        )

    jobs = {
        uid: (
            [task_facts(t) for t in job.tasks.values()],
            [(status, list(bucket)) for status, bucket in job.task_status_index.items()],
            sorted(job.role_counts.items()),
            sorted(job.best_effort_pending.items()),
            job.total_request.to_list(),
            job.allocated.to_list(),
            all(job.tasks[uid] is cache.tasks[job.tasks[uid].key] for uid in job.tasks),
        )
        for uid, job in cache.jobs.items()
    }
    nodes = {
        name: (
            node.row,
            [task_facts(t) for t in node.tasks.values()],
            node.used.to_list(),
            node.idle.to_list(),
            node.releasing.to_list(),
        )
        for name, node in cache.nodes.items()
    }
    return [task_facts(t) for t in cache.tasks.values()], list(cache.jobs), jobs, nodes


def _run(events: list[Event], in_place: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    with monkeypatch.context() as patch:
        if not in_place:
            patch.setattr(SchedulerCache, "_replace_in_place", lambda *_: False)
        cache = SchedulerCache()
        steps = []
        for kind, event_type, obj in events:
            cache.apply_event(kind, event_type, obj)
            steps.append(_books(cache))
        return steps


def test_status_only_updates_keep_the_books_of_remove_and_add(monkeypatch):
    events = _setup()
    events += _updates(events)
    assert _run(events, True, monkeypatch) == _run(events, False, monkeypatch)


def test_in_place_swap_is_taken_for_a_running_pod_reported_running():
    cache = SchedulerCache()
    events = _setup()
    for kind, event_type, obj in events:
        cache.apply_event(kind, event_type, obj)
    pod = next(e[2] for e in events if e[2]["metadata"]["name"] == "a-1")
    before = cache.tasks[f"{NS}/a-1"]
    calls = []
    original = SchedulerCache._replace_in_place

    def spy(self: SchedulerCache, previous: Any, task: Any) -> bool:
        calls.append(original(self, previous, task))
        return calls[-1]

    SchedulerCache._replace_in_place = spy  # type: ignore[method-assign]
    try:
        cache.apply_event("Pod", "MODIFIED", _restatus(pod, podIP="10.0.0.9"))
    finally:
        SchedulerCache._replace_in_place = original  # type: ignore[method-assign]
    assert calls == [True]
    after = cache.tasks[f"{NS}/a-1"]
    assert after is not before and after.pod["status"]["podIP"] == "10.0.0.9"
    assert cache.nodes["n1"].tasks[f"{NS}/a-1"].pod is after.pod


def test_a_changed_spec_is_never_swapped_in_place(monkeypatch):
    events = _setup()
    pod = copy.deepcopy(next(e[2] for e in events if e[2]["metadata"]["name"] == "a-2"))
    pod["spec"]["containers"][0]["resources"]["requests"]["cpu"] = "2"
    events.append(("Pod", "MODIFIED", pod))
    assert _run(events, True, monkeypatch) == _run(events, False, monkeypatch)
    cache = SchedulerCache()
    for kind, event_type, obj in events:
        cache.apply_event(kind, event_type, obj)
    assert cache.nodes["n2"].used.milli_cpu == 4000  # a-2 (2), a-3 (1), d-0 (1)


def test_a_bound_pod_reported_running_is_swapped_in_place(monkeypatch):
    cache = SchedulerCache()
    events = _setup()
    for kind, event_type, obj in events:
        cache.apply_event(kind, event_type, obj)
    pod = next(e[2] for e in events if e[2]["metadata"]["name"] == "a-3")
    swapped = []
    original = SchedulerCache._replace_in_place

    def spy(self: SchedulerCache, previous: Any, task: Any) -> bool:
        swapped.append(original(self, previous, task))
        return swapped[-1]

    monkeypatch.setattr(SchedulerCache, "_replace_in_place", spy)
    cache.apply_event("Pod", "MODIFIED", _restatus(pod, phase="Running"))
    assert swapped == [True]
    job = cache.jobs[f"{NS}/j1"]
    assert job.role_counts[("", TaskStatus.BOUND)] == 0
    assert f"{NS}-a-3" not in job.task_status_index.get(TaskStatus.BOUND, {})
    assert cache.nodes["n2"].tasks[f"{NS}/a-3"].status is TaskStatus.RUNNING
