"""A pod update that keeps the pod's node, status and request is applied without the node's
accounting (``SchedulerCache._replace_in_place``); the cache must end exactly as the full
remove-and-add leaves it: the same tasks in the same order, in the cache, the jobs and the
nodes, and the same matrix, bit for bit."""

from __future__ import annotations

import copy
import random
from typing import Any

import numpy as np
import pytest

from volcano_py.cache.cache import SchedulerCache

GROUP_ANNOTATION = "scheduling.k8s.io/group-name"


def node(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"}},
    }


def pod_group(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "ns", "uid": f"pg-{name}"},
        "spec": {"minMember": 1, "queue": "default"},
    }


def pod(index: int, rng: random.Random) -> dict[str, Any]:
    group = rng.choice(["g0", "g1", None])
    annotations = {GROUP_ANNOTATION: group} if group else {}
    return {
        "metadata": {
            "name": f"p{index}",
            "namespace": "ns",
            "uid": f"uid-{index}",
            "annotations": annotations,
            "labels": {"app": "a"},
        },
        "spec": {
            "schedulerName": "volcano",
            "nodeName": rng.choice(["n0", "n1", "n2", "ghost", ""]),
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "250m", "memory": "1Gi"}}}
            ],
        },
        "status": {"phase": rng.choice(["Pending", "Running"])},
    }


def mutate(old: dict[str, Any], rng: random.Random, tick: int) -> dict[str, Any]:
    """The next version of a pod, decoded afresh (a new dict, as a watch event is)."""
    new = copy.deepcopy(old)
    change = rng.choice(["annotation", "annotation", "label", "phase", "request", "node", "done"])
    if change == "annotation":
        new["metadata"]["annotations"]["tick"] = str(tick)
    elif change == "label":
        new["metadata"]["labels"]["tick"] = str(tick)
    elif change == "phase":
        new["status"]["phase"] = rng.choice(["Pending", "Running", "Failed"])
    elif change == "request":
        new["spec"]["containers"][0]["resources"]["requests"]["cpu"] = rng.choice(["250m", "1"])
    elif change == "node":
        new["spec"]["nodeName"] = rng.choice(["n0", "n1", "ghost", ""])
    else:
        new["status"]["phase"] = "Succeeded"
    if rng.random() < 0.1:
        new["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    return new


def events(seed: int, count: int = 400) -> list[tuple[str, str, dict[str, Any]]]:
    rng = random.Random(seed)
    out: list[tuple[str, str, dict[str, Any]]] = [
        ("Queue", "ADDED", {"metadata": {"name": "default"}, "spec": {"weight": 1}}),
        *(("Node", "ADDED", node(f"n{i}")) for i in range(3)),
        ("PodGroup", "ADDED", pod_group("g0")),
    ]
    live: dict[int, dict[str, Any]] = {}
    for tick in range(count):
        roll = rng.random()
        if not live or roll < 0.2:
            index = rng.randrange(40)
            live[index] = pod(index, rng)
            out.append(("Pod", "ADDED", copy.deepcopy(live[index])))
        elif roll < 0.27:
            index = rng.choice(sorted(live))
            out.append(("Pod", "DELETED", live.pop(index)))
        elif roll < 0.29:
            out.append(("PodGroup", "DELETED", pod_group("g0")))
            out.append(("PodGroup", "ADDED", pod_group("g0")))
        else:
            index = rng.choice(sorted(live))
            live[index] = mutate(live[index], rng, tick)
            out.append(("Pod", "MODIFIED", copy.deepcopy(live[index])))
    return out


def state(cache: SchedulerCache) -> dict[str, Any]:
    def task_view(task: Any) -> tuple[Any, ...]:
        return (task.key, task.uid, task.status, task.node_name, task.job, str(task.resreq))

    m = cache.matrix
    return {
        "tasks": [task_view(t) for t in cache.tasks.values()],
        "pods": [id(t.pod) for t in cache.tasks.values()],
        "jobs": {
            uid: (
                [task_view(t) for t in job.tasks.values()],
                {s: list(bucket) for s, bucket in job.task_status_index.items()},
                str(job.total_request),
                str(job.allocated),
                dict(job.role_counts),
                dict(job.best_effort_pending),
            )
            for uid, job in cache.jobs.items()
        },
        "nodes": {
            name: ([task_view(t) for t in n.tasks.values()], n.row, n.node is None)
            for name, n in cache.nodes.items()
        },
        "node_list": list(cache.node_list),
        "matrix": [a[: m.size].tobytes() for a in (m.idle, m.used, m.releasing, m.pipelined)],
    }


@pytest.mark.parametrize("seed", range(12))
def test_the_fast_path_leaves_the_cache_as_remove_and_add_does(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    stream = events(seed)
    fast, slow = SchedulerCache(), SchedulerCache()
    swaps = 0
    real = SchedulerCache._replace_in_place

    def counting(self: SchedulerCache, previous: Any, task: Any) -> bool:
        nonlocal swaps
        done = real(self, previous, task)
        swaps += done
        return done

    monkeypatch.setattr(slow, "_replace_in_place", lambda previous, task: False)
    monkeypatch.setattr(SchedulerCache, "_replace_in_place", counting)
    for kind, event_type, obj in stream:
        # Each cache gets its own copy: the objects must not be shared between them.
        fast.apply_event(kind, event_type, obj)
        slow.apply_event(kind, event_type, copy.deepcopy(obj))
        fast_state, slow_state = state(fast), state(slow)
        del fast_state["pods"], slow_state["pods"]
        assert fast_state == slow_state
    assert swaps > 20  # the stream did exercise the fast path


def test_an_annotation_patch_keeps_the_request_and_skips_the_accounting() -> None:
    cache = SchedulerCache()
    cache.apply_event("Node", "ADDED", node("n0"))
    rng = random.Random(0)
    first = pod(1, rng)
    first["spec"]["nodeName"], first["status"]["phase"] = "n0", "Running"
    first["metadata"]["annotations"] = {}  # no job: nothing else to keep
    cache.apply_event("Pod", "ADDED", first)
    before = cache.tasks["ns/p1"]
    generation = cache.matrix.generation
    patched = copy.deepcopy(first)
    patched["metadata"]["annotations"]["tick"] = "1"
    cache.apply_event("Pod", "MODIFIED", patched)
    after = cache.tasks["ns/p1"]
    assert after.pod is patched and after.resreq is before.resreq
    assert cache.nodes["n0"].tasks["ns/p1"].pod is patched
    assert cache.matrix.generation == generation  # no row written
    assert np.array_equal(cache.matrix.used[0][:2], [250.0, 1024.0**3])
