"""The watch's echo of a bind (the pod's spec gaining ``nodeName``) keeps the pod's parsed
request (``resource._BIND_KEEPS_REQUEST``), so the cache swaps the task in place instead of
removing it and adding it again; the books must end exactly as the general path leaves them.

The random histories of ``test_bind_in_place`` (pods on known, unknown and placeholder nodes,
binds with and without room, pods gone, PodGroups replaced), with each accepted bind echoed by
the watch at once or a few steps later (after other binds, deletions and node updates), and
some bound pods then reported Running.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from tests.cache.test_bind_in_place import Step, _books, _steps, bind_copy
from volcano_py.api import resource as resource_module
from volcano_py.cache.cache import CacheBindError, SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.testing.objects import build_node, build_pod, build_pod_group, resource_list


def _run_with_echoes(steps: list[Step], seed: int) -> tuple[SchedulerCache, list[str]]:
    rng = random.Random(seed)
    cache = SchedulerCache(binder=RecordingBinder())
    outcomes: list[str] = []
    echoes: list[dict[str, Any]] = []

    def echo_some() -> None:
        while echoes and rng.random() < 0.6:
            pod = echoes.pop(rng.randrange(len(echoes)))
            cache.apply_event("Pod", "MODIFIED", pod)
            outcomes.append(f"echoed {pod['metadata']['name']}")
            if rng.random() < 0.4:
                running = copy.deepcopy(pod)
                running["status"] = {"phase": "Running"}
                cache.apply_event("Pod", "MODIFIED", running)

    for kind, what in steps:
        echo_some()
        if kind == "event":
            cache.apply_event(*what)
            continue
        pending = [t for t in cache.tasks.values() if t.status.name == "PENDING"]
        if not pending:
            continue
        task = bind_copy(pending, kind, what)
        try:
            cache.add_bind_task(task)
        except CacheBindError as error:
            outcomes.append(f"refused: {error}")
            continue
        outcomes.append(f"bound {task.key}")
        # What the API server sends back: the pod as stored, its spec with nodeName set and
        # the PodScheduled condition in its status.
        bound = copy.deepcopy(task.pod)
        bound["spec"]["nodeName"] = task.node_name
        bound["status"] = {
            "phase": "Pending",
            "conditions": [{"type": "PodScheduled", "status": "True"}],
        }
        echoes.append(bound)
    while echoes:
        cache.apply_event("Pod", "MODIFIED", echoes.pop())
    return cache, outcomes


def _books_with(steps: list[Step], seed: int, keep: bool) -> Any:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(resource_module, "_BIND_KEEPS_REQUEST", keep)
        return _books(*_run_with_echoes(steps, seed))


@pytest.mark.parametrize("seed", range(16))
def test_a_bind_echo_keeps_the_books_of_a_removal_and_an_add(seed: int) -> None:
    steps = _steps(seed)
    reference = _books_with(steps, seed, keep=False)
    assert any(o.startswith("echoed") for o in reference[0])
    assert _books_with(steps, seed, keep=True) == reference


def test_a_bind_echo_is_swapped_in_place() -> None:
    """No row of the matrix is written: the node already holds the task (Binding → Bound)."""
    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event("PodGroup", "ADDED", build_pod_group("g", "ns", "q", 1))
    cache.apply_event("Node", "ADDED", build_node("n0", resource_list("4", "8Gi", pods="110")))
    pod = build_pod("ns", "p", "", "Pending", resource_list("1", "1Gi"), "g")
    cache.apply_event("Pod", "ADDED", pod)
    task = cache.tasks["ns/p"].clone()
    task.node_name = "n0"
    cache.add_bind_task(task)
    assumed = cache.tasks["ns/p"]
    generation = cache.matrix.generation
    echo = copy.deepcopy(pod)
    echo["spec"]["nodeName"] = "n0"
    cache.apply_event("Pod", "MODIFIED", echo)
    bound = cache.tasks["ns/p"]
    assert bound.status.name == "BOUND" and bound.resreq is assumed.resreq
    assert cache.matrix.generation == generation
