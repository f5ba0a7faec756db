"""Loading a dump, the scheduler cache charges each node once for all its new pods
(``SchedulerCache.charges_batched``, ``NodeInfo.charge_held``) instead of a numpy row update
per pod. The books must be those of charging one pod at a time, bit for bit: every event
sequence below runs both ways and compares the matrix's bytes, the column order and every
task, job and node."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from volcano_py.api.node_matrix import FIELDS
from volcano_py.cache.cache import SchedulerCache
from volcano_py.testing.objects import (
    build_node,
    build_pod,
    build_pod_group,
    build_queue,
    resource_list,
)

NS = "test"
Event = tuple[str, str, dict[str, Any]]
CPUS = ("100m", "333m", "1", "1.5", "2500m", "0.7")
MEMORIES = ("1Gi", "1.5Gi", "100M", "333Mi", "0.3Gi")


def _pod(rng: random.Random, index: int, node: str) -> dict[str, Any]:
    requests = resource_list(rng.choice(CPUS), rng.choice(MEMORIES))
    if rng.random() < 0.2:
        requests["nvidia.com/gpu"] = rng.choice(("1", "2"))
    if rng.random() < 0.05:
        # A resource name first seen late: a column added while charges are pending.
        requests[f"example.com/dev-{index % 3}"] = "1"
    phase = rng.choice(("Running", "Running", "Running", "Pending", "Succeeded", "Failed"))
    group = rng.choice(("g0", "g1", "g2", ""))
    pod = build_pod(NS, f"p-{index}", node, phase, requests, group)
    if phase == "Running" and rng.random() < 0.1:
        pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"  # Releasing
    return pod


def _node(name: str, rng: random.Random) -> dict[str, Any]:
    allocatable = resource_list(rng.choice(("160", "75.5", "640")), "64Gi", pods="110")
    if rng.random() < 0.5:
        allocatable["nvidia.com/gpu"] = "80"
    return build_node(name, allocatable)


def _events(seed: int) -> list[Event]:
    rng = random.Random(seed)
    nodes = [f"n{i}" for i in range(6)]
    events: list[Event] = [("PodGroup", "ADDED", build_pod_group(g, NS, "q", 1)) for g in ("g0",)]
    events += [("Node", "ADDED", _node(name, rng)) for name in nodes[:4]]
    pods: list[dict[str, Any]] = []
    for index in range(300):
        roll = rng.random()
        if roll < 0.85 or not pods:
            # Mostly known nodes; n4 and n5 are named before they exist (placeholders).
            node = rng.choice([*nodes, ""])
            pods.append(_pod(rng, index, node))
            events.append(("Pod", "ADDED", pods[-1]))
        elif roll < 0.9:
            events.append(("Pod", "ADDED", rng.choice(pods)))  # again: not a new pod
        elif roll < 0.93:
            events.append(("Pod", "DELETED", rng.choice(pods)))
        elif roll < 0.95:
            name = rng.choice(nodes)
            events.append(("Node", "ADDED", _node(name, rng)))  # new, or its update
        elif roll < 0.97:
            # Events away from the nodes: what waits goes on waiting across them.
            group = rng.choice(("g0", "g1", "g2"))
            events.append(("PodGroup", "ADDED", build_pod_group(group, NS, "q", 2)))
            events.append(("Queue", "ADDED", build_queue(f"q{index}", 1)))
        else:
            pod = dict(rng.choice(pods))
            pod["status"] = {**pod.get("status", {}), "podIP": f"10.0.0.{index % 250}"}
            events.append(("Pod", "MODIFIED", pod))
    return events


def _books(cache: SchedulerCache) -> Any:
    matrix = cache.matrix
    rows = sorted(node.row for node in cache.nodes.values())
    arrays = [getattr(matrix, name)[rows].tobytes() for name in FIELDS]

    def facts(task: Any) -> Any:
        return (task.key, task.status, task.node_name, task.resreq.to_list(), id(task.pod))

    return (
        list(matrix.index.names),
        matrix.allocatable.shape,
        arrays,
        [facts(task) for task in cache.tasks.values()],
        {
            uid: ([facts(t) for t in job.tasks.values()], job.allocated.to_list())
            for uid, job in cache.jobs.items()
        },
        {
            name: (node.row, [facts(t) for t in node.tasks.values()])
            for name, node in cache.nodes.items()
        },
    )


def _apply(events: list[Event], batched: bool) -> SchedulerCache:
    cache = SchedulerCache()
    if batched:
        with cache.charges_batched():
            cache.apply_events(events)
    else:
        cache.apply_events(events)
    return cache


@pytest.mark.parametrize("seed", range(12))
def test_batched_charges_give_the_books_of_one_at_a_time(seed: int) -> None:
    events = _events(seed)
    assert _books(_apply(events, batched=True)) == _books(_apply(events, batched=False))


def test_a_snapshot_inside_the_batch_sees_every_charge() -> None:
    events = _events(99)
    events.append(("Pod", "ADDED", _pod(random.Random(1), 1000, "n0")))  # left waiting
    one_at_a_time = _apply(events, batched=False).snapshot()
    cache = SchedulerCache()
    with cache.charges_batched():
        cache.apply_events(events)
        assert cache._uncharged  # the shortcut was taken
        inside = cache.snapshot()
    assert inside.node_list == one_at_a_time.node_list
    for name in FIELDS:
        assert np.array_equal(getattr(inside.matrix, name), getattr(one_at_a_time.matrix, name))


def test_only_new_pods_on_known_nodes_wait() -> None:
    cache = SchedulerCache()
    node = build_node("n1", resource_list("4", "8Gi", pods="10"))
    with cache.charges_batched():
        cache.apply_event("Node", "ADDED", node)
        first = build_pod(NS, "a", "n1", "Running", resource_list("1", "1Gi"), "")
        cache.apply_event("Pod", "ADDED", first)
        cache.apply_event("Pod", "ADDED", build_pod(NS, "b", "n2", "Running", {"cpu": "1"}, ""))
        assert [t.key for t in cache._uncharged["n1"]] == [f"{NS}/a"]
        assert "n2" not in cache._uncharged  # a placeholder node charges nothing
        assert cache.nodes["n1"].used.milli_cpu == 0
        cache.apply_event("PodGroup", "ADDED", build_pod_group("g", NS, "q", 1))
        assert cache._uncharged  # a PodGroup does not touch the nodes
        cache.apply_event("Pod", "ADDED", first)  # not new: what waits is charged first
        assert not cache._uncharged
        assert cache.nodes["n1"].used.milli_cpu == 1000
    assert cache._uncharged is None
