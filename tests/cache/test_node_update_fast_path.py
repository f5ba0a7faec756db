"""A Node update that leaves its allocatable, capacity and oversubscription annotations as they
were (a heartbeat, a condition, a label) keeps the node's accounting row instead of parsing
the quantities again and re-charging every task; the cache must end exactly as the full
``set_node`` leaves it."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from volcano_py.api import node as node_module
from volcano_py.api.node import OVERSUBSCRIPTION_CPU
from volcano_py.cache.cache import SchedulerCache


def node(name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}, "annotations": {}},
        "status": {
            "allocatable": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "capacity": {"cpu": "16", "memory": "64Gi", "pods": "110"},
            "conditions": [{"type": "Ready", "status": "True", "lastHeartbeatTime": "0"}],
            "images": [{"names": ["busybox:1"], "sizeBytes": 100}],
        },
    }


def pod(index: int, node_name: str) -> dict[str, Any]:
    return {
        "metadata": {"name": f"p{index}", "namespace": "ns", "uid": f"uid-{index}"},
        "spec": {
            "schedulerName": "volcano",
            "nodeName": node_name,
            "containers": [
                {"name": "c", "resources": {"requests": {"cpu": "500m", "memory": "1Gi"}}}
            ],
        },
        "status": {"phase": "Running"},
    }


def mutate(old: dict[str, Any], rng: random.Random, tick: int) -> dict[str, Any]:
    new = copy.deepcopy(old)
    change = rng.choice(["heartbeat", "heartbeat", "label", "allocatable", "oversub", "images"])
    if change == "heartbeat":
        new["status"]["conditions"][0]["lastHeartbeatTime"] = str(tick)
    elif change == "label":
        new["metadata"]["labels"]["tick"] = str(tick)
    elif change == "allocatable":
        new["status"]["allocatable"]["cpu"] = rng.choice(["16", "15", "8"])
    elif change == "oversub":
        new["metadata"]["annotations"][OVERSUBSCRIPTION_CPU] = rng.choice(["1000", "2000"])
    else:
        new["status"]["images"] = [{"names": [f"img:{tick}"], "sizeBytes": tick}]
    return new


def events(seed: int) -> list[tuple[str, str, dict[str, Any]]]:
    rng = random.Random(seed)
    nodes = {f"n{i}": node(f"n{i}") for i in range(3)}
    out: list[tuple[str, str, dict[str, Any]]] = []
    # A pod before its node: the node's first set_node charges it.
    out.append(("Pod", "ADDED", pod(0, "n0")))
    out += [("Node", "ADDED", copy.deepcopy(n)) for n in nodes.values()]
    for tick in range(1, 300):
        roll = rng.random()
        name = rng.choice(sorted(nodes))
        if roll < 0.3:
            out.append(("Pod", "ADDED", pod(tick, name)))
        elif roll < 0.35:
            out.append(("Node", "DELETED", copy.deepcopy(nodes[name])))
            out.append(("Node", "ADDED", copy.deepcopy(nodes[name])))
        else:
            nodes[name] = mutate(nodes[name], rng, tick)
            out.append(("Node", "MODIFIED", copy.deepcopy(nodes[name])))
    return out


def state(cache: SchedulerCache) -> dict[str, Any]:
    m = cache.matrix
    return {
        "nodes": {
            name: (
                n.row,
                n.phase,
                n.phase_reason,
                n.node,
                dict(n.images),
                n.defined_scalars,
                list(n.tasks),
            )
            for name, n in cache.nodes.items()
        },
        "node_list": list(cache.node_list),
        "matrix": [
            a[: m.size].tobytes() for a in (m.allocatable, m.capacity, m.idle, m.used, m.releasing)
        ],
    }


@pytest.mark.parametrize("seed", range(8))
def test_a_node_update_keeping_the_capacity_leaves_the_cache_as_set_node_does(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    fast, slow = SchedulerCache(), SchedulerCache()
    same_capacity = node_module._same_capacity
    kept = 0

    def switch(old: Any, new: Any) -> bool:
        nonlocal kept
        if not use_fast:
            return False
        answer = same_capacity(old, new)
        kept += answer
        return answer

    monkeypatch.setattr(node_module, "_same_capacity", switch)
    for kind, event_type, obj in events(seed):
        use_fast = True
        fast.apply_event(kind, event_type, obj)
        use_fast = False
        slow.apply_event(kind, event_type, copy.deepcopy(obj))
        assert state(fast) == state(slow)
    assert kept > 50  # the stream did exercise the kept row


def test_a_heartbeat_writes_no_row() -> None:
    cache = SchedulerCache()
    cache.apply_event("Node", "ADDED", node("n0"))
    cache.apply_event("Pod", "ADDED", pod(1, "n0"))
    generation = cache.matrix.generation
    beat = node("n0")
    beat["status"]["conditions"][0]["lastHeartbeatTime"] = "1"
    cache.apply_event("Node", "MODIFIED", beat)
    assert cache.matrix.generation == generation
    assert cache.nodes["n0"].node is beat
    assert str(cache.nodes["n0"].idle).startswith("cpu 15500.00")
