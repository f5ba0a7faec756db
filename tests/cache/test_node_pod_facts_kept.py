"""The per-node sums of pod facts (``api.pod_facts``) the cache keeps in its matrix rows, and
the sessions' copies of them, answer as a fresh computation over each node's pods would:

* in the scheduler cache, after any run of pod adds, updates (status only, or a new spec),
  deletions, evictions, binds, node deletions and returns, pods that name a node before it
  is known, and a load under ``charges_batched``; and in every snapshot taken of it;
* in a session (``SessionPods``, which nodeorder's requested amounts and the inter-pod
  affinity tracker read), after any run of statement operations (allocate, pipeline,
  evict, discard, commit);
* and a planted bug (a removal forgotten, in the cache or in the session) is caught.

Fresh sums start at 0.0 and add each pod's ``non_zero_request`` minus its request in the
node's order, which is what nodeorder computed per node before the sums were kept; they are
compared with ``==``, bit for bit.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.builders import resource_list as rl
from tests.statement_ops import apply_operation, operations, pending_tasks
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.pod_facts import has_pod_affinity, non_zero_request
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import CacheBindError, SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.framework.statement import Statement
from volcano_py.plugins._kube_scheduling import affinity_tracker, session_pods
from volcano_py.plugins._kube_scheduling.affinity_tracker import AffinityTracker
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods
from volcano_py.plugins.nodeorder import RequestedTracker
from volcano_py.scheduler.registry import PluginRegistry

NS = "ns"
NODES = ("n0", "n1", "n2", "n3")
# The cache starts with the first three; n3 is first named by pods (a placeholder).
KNOWN_AT_START = 3
PODS = 12


def _affinity(kind: str) -> dict[str, Any]:
    term = {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "zone"}
    return {kind: {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}


def _shape(pod: dict[str, Any], shape: int) -> dict[str, Any]:
    """One of a few pod shapes: what ``non_zero_request`` and ``has_pod_affinity`` read."""
    spec = pod["spec"]
    main = spec["containers"][0]
    if shape == 0:  # cpu and memory named: nothing to add
        main["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
    elif shape == 1:  # best effort: both defaults
        main["resources"] = {}
    elif shape == 2:  # cpu only
        main["resources"] = {"requests": {"cpu": "250m"}}
    elif shape == 3:  # limits stand in for requests
        main["resources"] = {"limits": {"cpu": "2", "memory": "512Mi"}}
    elif shape == 4:  # an init container without memory, larger than the container
        main["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
        spec["initContainers"] = [{"name": "init", "resources": {"requests": {"cpu": "3"}}}]
    elif shape == 5:  # a sidecar with memory only, a container with cpu only
        main["resources"] = {"requests": {"cpu": "500m"}}
        spec["initContainers"] = [
            {
                "name": "side",
                "restartPolicy": "Always",
                "resources": {"requests": {"memory": "64Mi"}},
            }
        ]
    elif shape == 6:  # overhead on a container without memory
        main["resources"] = {"requests": {"cpu": "1"}}
        spec["overhead"] = {"cpu": "100m", "memory": "10Mi"}
    elif shape == 7:  # pod-level requests over an empty container
        main["resources"] = {}
        spec["resources"] = {"requests": {"cpu": "2"}}
    elif shape == 8:  # inter-pod affinity, requests named
        main["resources"] = {"requests": {"cpu": "1", "memory": "1Gi"}}
        spec["affinity"] = _affinity("podAffinity")
    else:  # anti-affinity on a best-effort pod
        main["resources"] = {}
        spec["affinity"] = _affinity("podAntiAffinity")
    return pod


SHAPES = 10


def _pod(index: int, node: str, shape: int, label: str = "a") -> dict[str, Any]:
    phase = "Running" if node else "Pending"
    group = "run" if node else "gang"
    pod = build_pod(NS, f"p{index}", node, phase, {}, group, {"app": "x", "mark": label})
    return _shape(pod, shape)


def _node(name: str) -> dict[str, Any]:
    node = build_node(name, rl("64", "256Gi", pods="110"))
    node["metadata"]["labels"] = {"zone": "z" + name[-1], "kubernetes.io/hostname": name}
    return node


def _cache() -> SchedulerCache:
    cache = SchedulerCache()
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1, None))
    for group in ("run", "gang"):
        pod_group = build_pod_group(group, NS, "q1", 1)
        pod_group["status"] = {"phase": "Running" if group == "run" else "Inqueue"}
        cache.apply_event("PodGroup", "ADDED", pod_group)
    for name in NODES[:KNOWN_AT_START]:
        cache.apply_event("Node", "ADDED", _node(name))
    return cache


# ---------------------------------------------------------------------- fresh computation


def _fresh(tasks: Iterator[TaskInfo]) -> tuple[list[float], int]:
    """Non-zero minus real requests (milli cpu, memory) and the pods with inter-pod affinity,
    computed from the pods themselves (no memo), summed as nodeorder summed them."""
    extra_cpu = extra_memory = 0.0
    with_affinity = 0
    for task in tasks:
        cpu, memory = non_zero_request(task.pod, task.resreq.milli_cpu, task.resreq.memory)
        extra_cpu += cpu - task.resreq.milli_cpu
        extra_memory += memory - task.resreq.memory
        with_affinity += has_pod_affinity(task.pod)
    return [extra_cpu, extra_memory], with_affinity


def _check_rows(nodes: list[NodeInfo], matrix: NodeMatrix) -> None:
    for node in nodes:
        extra, with_affinity = _fresh(iter(node.tasks.values()))
        assert matrix.non_zero_extra[node.row].tolist() == extra, node.name
        assert int(matrix.pod_affinity[node.row]) == with_affinity, node.name


def check_cache(cache: SchedulerCache) -> None:
    """Every node whose object is known (its books are valid), then a snapshot's rows."""
    _check_rows([node for node in cache.nodes.values() if node.node is not None], cache.matrix)
    snapshot = cache.snapshot()
    cache.forget_series_of_jobs_gone_during_session()
    _check_rows(list(snapshot.nodes.values()), snapshot.matrix)


def check_session(ssn: Session) -> None:
    """Each ``SessionPods`` (nodeorder's, predicates') against its own view of the pods, and
    the readers of the kept sums against what they computed before the sums were kept."""
    views = [
        handler.allocate.__self__
        for handler in ssn.event_handlers
        if isinstance(getattr(handler.allocate, "__self__", None), SessionPods)
    ]
    # One shared by nodeorder and predicates, or each its own (``session_pods._SHARED``).
    assert len(views) == (1 if session_pods._SHARED else 2)
    for pods in views:
        for row in range(len(pods.node_list)):
            extra, with_affinity = _fresh(pods.pods(row))
            assert pods.non_zero_extra[row].tolist() == extra, row
            assert int(pods.with_pod_affinity[row]) == with_affinity, row
        for listener in pods._listeners:
            owner = getattr(listener, "__self__", None)
            if isinstance(owner, RequestedTracker):
                rows = np.arange(len(pods.node_list), dtype=np.intp)
                expected = owner.requested[:, :2] + np.array(
                    [_fresh(pods.pods(row))[0] for row in rows.tolist()]
                ).reshape(-1, 2)
                assert owner.non_zero_requested(rows).tolist() == expected.tolist()
            if isinstance(owner, AffinityTracker):
                _check_affinity_tracker(owner)


def _scan_with_affinity(tracker: AffinityTracker) -> list[tuple[int, list[str]]]:
    """What ``with_affinity`` found by visiting every pod of every node."""
    rows: dict[int, list[str]] = {}
    for row, task in tracker.pods.all_pods():
        if has_pod_affinity(task.pod):
            rows.setdefault(row, []).append(task.key)
    return list(rows.items())


def _check_affinity_tracker(tracker: AffinityTracker) -> None:
    scanned = _scan_with_affinity(tracker)
    if tracker._with_affinity is None:
        # Built now from the kept counts: the same rows and pods, in the same order.
        built = tracker.with_affinity()
        assert [(row, list(held)) for row, held in built.items()] == scanned
        return
    # Kept by events since: the same pods per row (events append, so order may differ).
    kept = {row: set(held) for row, held in tracker._with_affinity.items() if held}
    assert kept == {row: set(keys) for row, keys in scanned}


# ---------------------------------------------------------------------- the cache

CACHE_OPERATIONS = st.lists(
    st.tuples(
        st.sampled_from(
            ["add", "add", "relabel", "reshape", "delete", "evict", "bind", "node-out", "node-in"]
        ),
        st.integers(0, PODS - 1),
        # len(NODES) means "no node" (a pending pod).
        st.integers(0, len(NODES)),
        st.integers(0, SHAPES - 1),
    ),
    max_size=30,
)


def _apply(cache: SchedulerCache, operation: tuple[str, int, int, int]) -> None:
    kind, index, node_index, shape = operation
    node = NODES[node_index] if node_index < len(NODES) else ""
    key = f"{NS}/p{index}"
    task = cache.tasks.get(key)
    if kind == "add" and task is None:
        cache.apply_event("Pod", "ADDED", _pod(index, node, shape))
    elif kind == "relabel" and task is not None:
        # Status-only in what the books read: the cache swaps the task in place.
        label = "b" if task.pod["metadata"]["labels"].get("mark") == "a" else "a"
        pod = dict(task.pod)
        pod["metadata"] = {**task.pod["metadata"], "labels": {"app": "x", "mark": label}}
        cache.apply_event("Pod", "MODIFIED", pod)
    elif kind == "reshape" and task is not None:
        cache.apply_event("Pod", "MODIFIED", _pod(index, task.node_name, shape))
    elif kind == "delete" and task is not None:
        cache.apply_event("Pod", "DELETED", task.pod)
    elif kind == "evict" and task is not None and task.node_name:
        cache.evict(task, "test")
    elif kind == "bind" and task is not None and not task.node_name and node:
        bound = task.clone()
        bound.node_name = node
        with contextlib.suppress(CacheBindError):
            cache.add_bind_task(bound)
    elif kind == "node-out" and node:
        cache.apply_event("Node", "DELETED", _node(node))
    elif kind == "node-in" and node:
        cache.apply_event("Node", "ADDED", _node(node))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=CACHE_OPERATIONS, batched=st.booleans())
def test_cache_rows_equal_a_fresh_sum(
    operations: list[tuple[str, int, int, int]], batched: bool
) -> None:
    cache = _cache()
    if batched:
        # A dump's load: new pods held uncharged, each node charged once at the end.
        with cache.charges_batched():
            for operation in operations:
                _apply(cache, operation)
        check_cache(cache)
        return
    for operation in operations:
        _apply(cache, operation)
        check_cache(cache)


def test_a_status_update_of_a_pod_whose_spec_changed_in_place_follows_the_new_spec() -> None:
    """``swap_task`` (the cache's shortcut for an update that leaves the books) takes the old
    pod's facts out and the new pod's in, should they differ."""
    cache = _cache()
    cache.apply_event("Pod", "ADDED", _pod(0, "n0", 1))
    node = cache.nodes["n0"]
    task = cache.tasks[f"{NS}/p0"]
    replacement = TaskInfo.from_pod(_pod(0, "n0", 9), task.resreq)
    node.swap_task(replacement)
    check_cache(cache)
    assert int(cache.matrix.pod_affinity[node.row]) == 1


# ---------------------------------------------------------------------- a session


def _session_cache() -> SchedulerCache:
    """Four known nodes with running pods of every shape, and pending pods of every shape."""
    cache = _cache()
    cache.apply_event("Node", "ADDED", _node(NODES[3]))
    for index in range(PODS):
        cache.apply_event("Pod", "ADDED", _pod(index, NODES[index % len(NODES)], index % SHAPES))
    for index in range(PODS, PODS + SHAPES):
        cache.apply_event("Pod", "ADDED", _pod(index, "", index % SHAPES))
    return cache


def _open(cache: SchedulerCache) -> Session:
    conf = SchedulerConf(
        actions=["allocate"],
        tiers=[Tier([PluginOption("predicates"), PluginOption("nodeorder")])],
    )
    return open_session(cache.snapshot(), conf, PluginRegistry(), cache)


SESSION_OPERATIONS = operations(len(NODES), 40, extra_kinds=("build",))


@pytest.mark.parametrize("shared", [True, False])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=SESSION_OPERATIONS)
def test_session_view_equals_a_fresh_sum(
    shared: bool, operations: list[tuple[str, int, int]]
) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(session_pods, "_SHARED", shared)
        monkeypatch.setattr(affinity_tracker, "_SHARED", shared)
        _session_view_equals_a_fresh_sum(operations)


def _session_view_equals_a_fresh_sum(operations: list[tuple[str, int, int]]) -> None:
    cache = _session_cache()
    ssn = _open(cache)
    statements: list[Statement] = [ssn.statement()]
    for kind, which, node_index in operations:
        if kind != "build":
            apply_operation(ssn, statements, kind, which, NODES[node_index])
        elif pending := pending_tasks(ssn):
            # Filter and score a pending task: the trackers build their states now.
            task = pending[which % len(pending)]
            ssn.predicate_masks(task)
            ssn.node_scores(task, np.arange(len(NODES), dtype=np.intp))
        check_session(ssn)
    # What the commits sent to the cache (binds, evictions) left its rows right too.
    check_cache(cache)


# ---------------------------------------------------------------------- planted bugs


def test_a_forgotten_removal_in_the_cache_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    count_facts = NodeInfo._count_facts

    def forgetful(self: NodeInfo, task: TaskInfo, sign: int) -> None:
        if sign > 0:
            count_facts(self, task, sign)

    monkeypatch.setattr(NodeInfo, "_count_facts", forgetful)
    cache = _cache()
    cache.apply_event("Pod", "ADDED", _pod(0, "n0", 1))
    check_cache(cache)  # additions alone are still right
    cache.apply_event("Pod", "DELETED", _pod(0, "n0", 1))
    with pytest.raises(AssertionError):
        check_cache(cache)


def test_a_forgotten_session_event_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(session_pods, "count_node_facts", lambda *facts_at_row: None)
    cache = _session_cache()
    ssn = _open(cache)
    check_session(ssn)  # the copy taken at open is still right
    # The pending pod of shape 1 (best effort): it adds to both non-zero sums.
    name = next(f"p{i}" for i in range(PODS, PODS + SHAPES) if i % SHAPES == 1)
    best_effort = next(
        task for job in ssn.jobs.values() for task in job.tasks.values() if task.name == name
    )
    ssn.statement().allocate(best_effort, ssn.nodes["n0"])
    with pytest.raises(AssertionError):
        check_session(ssn)
