"""A status write given to the cache as such (``SchedulerCache.apply_pod_status``) keeps the
old task's reading of the pod's metadata and spec (``cache._STATUS_WRITES_READ_LESS``); the
books must be those ``apply_event`` gives, step by step: the same tasks (every field), sums
and dict orders, bound (Binding) and evicted (Releasing) tasks included, and pods whose new
version changes more than its status taken the general way."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from tests.builders import build_pod
from tests.cache.test_status_update_in_place import NS, Event, _books, _restatus, _setup
from volcano_py.api import resource
from volcano_py.api.task import TaskInfo
from volcano_py.cache import cache as cache_module
from volcano_py.cache.cache import SchedulerCache


def _task_fields(task: TaskInfo) -> Any:
    fields = dataclasses.asdict(task)
    fields["pod"] = id(task.pod)
    # Memos of facts of the pod may differ in what was asked already; the node's sums read
    # the node facts (carried across a swap in place).
    fields["derived"] = task.derived.get("pod_facts.node")
    return fields


def _run(events: list[Event], read_less: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    steps = []
    with monkeypatch.context() as patch:
        patch.setattr(cache_module, "_STATUS_WRITES_READ_LESS", read_less)
        cache = SchedulerCache()
        last: dict[str, Any] = {}
        for kind, event_type, obj in events:
            key = f"{obj['metadata'].get('namespace')}/{obj['metadata']['name']}"
            if event_type == "BIND":
                task = cache.tasks[key].clone()
                task.node_name = obj["spec"]["nodeName"]
                cache.add_bind_task(task)
            elif event_type == "EVICT":
                cache.evict(cache.tasks[key], "test")
            elif kind == "Pod" and event_type == "MODIFIED" and key in last:
                cache.apply_pod_status(last[key], obj)
            else:
                cache.apply_event(kind, event_type, obj)
            if kind == "Pod" and event_type in ("ADDED", "MODIFIED"):
                last[key] = obj
            steps.append((_books(cache), [_task_fields(t) for t in cache.tasks.values()]))
    return steps


def _status_writes(events: list[Event]) -> list[Event]:
    pods = {e[2]["metadata"]["name"]: e[2] for e in events if e[0] == "Pod"}
    started = {"containerStatuses": [{"name": "c", "ready": True}], "podIP": "10.0.0.1"}
    writes: list[Event] = []
    for name in ("a-1", "a-0", "a-3", "b-0", "c-0", "d-0", "a-2"):
        pods[name] = _restatus(pods[name], **started)
        writes.append(("Pod", "MODIFIED", pods[name]))
    # e-0 bound by a session (Binding in the cache), then its bind written, then reported.
    writes.append(("Pod", "BIND", {**pods["e-0"], "spec": {"nodeName": "n2"}}))
    bound = dict(pods["e-0"])
    bound["spec"] = {**pods["e-0"]["spec"], "nodeName": "n2"}
    bound["metadata"] = {**pods["e-0"]["metadata"], "resourceVersion": "b1"}
    writes.append(("Pod", "MODIFIED", bound))
    writes.append(("Pod", "MODIFIED", _restatus(bound, phase="Running")))
    # a-2 evicted (Releasing in the cache), then a status write of it.
    writes.append(("Pod", "EVICT", pods["a-2"]))
    writes.append(("Pod", "MODIFIED", _restatus(pods["a-2"], podIP="10.0.0.3")))
    writes.append(("Pod", "MODIFIED", _restatus(pods["a-3"], phase="Running")))
    writes.append(("Pod", "MODIFIED", _restatus(pods["a-0"], phase="Succeeded")))
    # A resize reported in a container status: the request is read again.
    resized = [{"name": "c", "resources": {"requests": {"cpu": "2"}}}]
    writes.append(("Pod", "MODIFIED", _restatus(pods["a-1"], containerStatuses=resized)))
    # A new version with other annotations is no status write.
    relabelled = dict(pods["b-0"])
    relabelled["metadata"] = {**pods["b-0"]["metadata"], "annotations": {"x": "y"}}
    writes.append(("Pod", "MODIFIED", relabelled))
    return writes


def test_status_writes_keep_the_books_of_apply_event(monkeypatch: pytest.MonkeyPatch) -> None:
    events = _setup()
    events += _status_writes(events)
    assert _run(events, True, monkeypatch) == _run(events, False, monkeypatch)


def test_the_shortcut_is_taken(monkeypatch: pytest.MonkeyPatch) -> None:
    cache = SchedulerCache()
    events = _setup()
    for kind, event_type, obj in events:
        cache.apply_event(kind, event_type, obj)
    pod = next(e[2] for e in events if e[2]["metadata"]["name"] == "a-1")
    general: list[str] = []
    original = SchedulerCache.apply_event

    def spy(self: SchedulerCache, kind: str, event_type: str, obj: Any) -> None:
        general.append(kind)
        original(self, kind, event_type, obj)

    monkeypatch.setattr(SchedulerCache, "apply_event", spy)
    new = _restatus(pod, podIP="10.0.0.9")
    cache.apply_pod_status(pod, new)
    assert general == []
    assert cache.tasks[f"{NS}/a-1"].pod is new
    # Not the version the cache was given last: the general way.
    other = build_pod(NS, "a-1", "n1", "Running", {"cpu": "1"}, "j1")
    cache.apply_pod_status(other, _restatus(other, podIP="10.0.0.8"))
    assert general == ["Pod"]


def _binds(events: list[Event]) -> list[Event]:
    """Pending pods bound by a session (Binding in the cache), then the bind's new version
    of the pod (``spec.nodeName`` set, as the simulated cluster writes it), then started."""
    pending = [build_pod(NS, f"f-{i}", "", "Pending", {"cpu": "1"}, "j1") for i in range(3)]
    steps: list[Event] = [("Pod", "ADDED", pod) for pod in pending]
    for i, pod in enumerate(pending):
        node = "n1" if i % 2 else "n2"
        steps.append(("Pod", "BIND", {**pod, "spec": {**pod["spec"], "nodeName": node}}))
        bound = dict(pod)
        bound["spec"] = {**pod["spec"], "nodeName": node}
        bound["metadata"] = {**pod["metadata"], "resourceVersion": f"b{i}"}
        bound["status"] = {**pod["status"], "conditions": [{"type": "PodScheduled"}]}
        steps.append(("Pod", "MODIFIED", bound))
        steps.append(("Pod", "MODIFIED", _restatus(bound, phase="Running")))
    return steps


def test_binds_keep_the_books_of_a_parsed_request(monkeypatch: pytest.MonkeyPatch) -> None:
    """``resource._BIND_KEEPS_REQUEST``: the bind's version keeps the request, so the task
    goes from Binding to Bound in place; the books are those of a request parsed again."""
    events = _setup()
    events += _binds(events)
    runs = []
    for keeps in (True, False):
        with monkeypatch.context() as patch:
            patch.setattr(resource, "_BIND_KEEPS_REQUEST", keeps)
            runs.append(_run(events, True, monkeypatch))
    assert runs[0] == runs[1]
