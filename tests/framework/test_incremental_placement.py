"""The incremental placement path decides exactly as the reference path does.

A gang's members ask the same, and each placement writes one node's row; the fit masks
(``FitCache``), nodeorder's row scores and the combined predicate masks are therefore kept per
request shape and refreshed only where a placement wrote (issue "Scale"). These properties
prove that this changes no decision: the fit masks equal a fresh computation after any
sequence of row writes, and whole sessions over random clusters bind, pipeline and set
PodGroup phases identically with the incremental path on and off (DESIGN.md "Hot path").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py.api import node_matrix
from volcano_py.api.node_matrix import FitCache, NodeMatrix, ResourceIndex, fit_mask
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework import node_selection
from volcano_py.framework.conf import SchedulerConf, parse_conf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.plugins import nodeorder
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action

# ---------------------------------------------------------------- FitCache


@st.composite
def matrices_and_writes(draw: st.DrawFn) -> tuple[NodeMatrix, list[tuple[int, list[float]]]]:
    rows = draw(st.integers(1, 12))
    matrix = NodeMatrix(ResourceIndex(), rows)
    values = st.sampled_from([0.0, 0.05, 0.5, 1.0, 1.95, 2.0, 3.0, 4.0, 8.0])
    for name in ("allocatable", "idle", "releasing", "pipelined"):
        array = getattr(matrix, name)
        for row in range(rows):
            array[row] = [draw(values) for _ in range(array.shape[1])]
    writes = draw(
        st.lists(
            st.tuples(st.integers(0, rows - 1), st.lists(values, min_size=3, max_size=3)),
            max_size=10,
        )
    )
    return matrix, writes


@settings(max_examples=200, deadline=None)
@given(
    matrices_and_writes(),
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.9]), min_size=3, max_size=3),
    st.sampled_from([[0, 1], [0, 1, 2], [1], [2]]),
)
def test_fit_cache_equals_a_fresh_fit_after_any_row_writes(
    case: tuple[NodeMatrix, list[tuple[int, list[float]]]],
    request: list[float],
    column_list: list[int],
) -> None:
    matrix, writes = case
    cache = FitCache(matrix)
    vector = np.array(request)
    columns = np.array(column_list, dtype=np.intp)

    def agree() -> None:
        assert cache.idle_fits(vector, columns).tolist() == (
            fit_mask(vector, columns, matrix.idle).tolist()
        )
        assert cache.future_fits(vector, columns).tolist() == (
            matrix.fit_future_idle(vector, columns).tolist()
        )

    agree()
    for row, idle in writes:
        # As NodeInfo charges a task: the row changes and is stamped.
        matrix.idle[row] = idle
        matrix.pipelined[row, 0] += 0.5
        matrix.touch(row)
        agree()


@settings(max_examples=200, deadline=None)
@given(
    matrices_and_writes(),
    st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.9]), min_size=3, max_size=3),
    st.sampled_from([[0, 1], [0, 1, 2], [1], [2]]),
)
def test_one_pass_over_a_row_answers_as_the_two_row_fits(
    case: tuple[NodeMatrix, list[tuple[int, list[float]]]],
    request: list[float],
    column_list: list[int],
) -> None:
    """``FitCache.row_fits_now_and_later`` (a run's refresh of a written row,
    ``node_selection._FITS_IN_ONE_PASS``) equals ``row_fits`` on idle and on future idle."""
    matrix, writes = case
    cache = FitCache(matrix)
    columns = np.array(column_list, dtype=np.intp)
    wanted = np.array(request)[columns]
    for row, idle in [(0, None), *writes]:
        if idle is not None:
            matrix.idle[row] = idle
            matrix.pipelined[row, 0] += 0.5
            matrix.touch(row)
        for each in range(matrix.size):
            assert cache.row_fits_now_and_later(wanted.tolist(), column_list, each) == (
                cache.row_fits(False, wanted, columns, each),
                cache.row_fits(True, wanted, columns, each),
            )


def test_fit_cache_sees_a_write_to_many_rows_at_once() -> None:
    matrix = NodeMatrix(ResourceIndex(), 10)
    matrix.idle[:] = 1.0
    cache = FitCache(matrix)
    vector, columns = np.array([1.0, 1.0, 0.0]), np.array([0, 1], dtype=np.intp)
    assert cache.idle_fits(vector, columns).all()
    for row in range(10):
        matrix.idle[row] = 0.0
        matrix.touch(row)
    assert not cache.idle_fits(vector, columns).any()


# ---------------------------------------------------------------- whole sessions

NODE_SHAPES = [("2", "4Gi"), ("4", "8Gi"), ("8", "16Gi"), ("16", "32Gi"), ("4", "32Gi")]
REQUESTS = [("1", "1Gi"), ("2", "2Gi"), ("500m", "3Gi"), ("3", "1Gi")]
ZONES = ["a", "b", "c"]


@st.composite
def clusters(draw: st.DrawFn, min_nodes: int, max_nodes: int) -> dict[str, list[dict[str, Any]]]:
    """Nodes of mixed sizes and zones (some tainted), pods already running on them, and
    gangs in two queues, some with a zone selector, a toleration or a ranged minMember."""
    nodes, pods, groups = [], [], []
    count = draw(st.integers(min_nodes, max_nodes))
    for i in range(count):
        cpu, memory = draw(st.sampled_from(NODE_SHAPES))
        zone = draw(st.sampled_from(ZONES))
        taints = None
        if draw(st.integers(0, 9)) == 0:
            effect = draw(st.sampled_from(["NoSchedule", "PreferNoSchedule"]))
            taints = [{"key": "dedicated", "value": "x", "effect": effect}]
        name = f"n{i:03d}"
        nodes.append(
            build_node(name, resource_list(cpu, memory, pods="110"), {"zone": zone}, taints=taints)
        )
        for j in range(draw(st.integers(0, 2))):
            want_cpu, want_memory = draw(st.sampled_from(REQUESTS))
            group = f"run-{i}-{j}"
            groups.append(build_pod_group(group, "ns", "q1", 1, phase="Running"))
            pods.append(
                build_pod("ns", group, name, "Running", resource_list(want_cpu, want_memory), group)
            )
    for g in range(draw(st.integers(1, 6))):
        size = draw(st.integers(1, 12))
        min_member = draw(st.integers(1, size))
        queue = draw(st.sampled_from(["q1", "q2"]))
        group = f"gang-{g}"
        groups.append(build_pod_group(group, "ns", queue, min_member))
        want_cpu, want_memory = draw(st.sampled_from(REQUESTS))
        selector = {"zone": draw(st.sampled_from(ZONES))} if draw(st.booleans()) else None
        tolerations = [{"key": "dedicated", "operator": "Exists"}] if draw(st.booleans()) else None
        for t in range(size):
            # Mostly one shape per gang (a run), sometimes a member that differs.
            if draw(st.integers(0, 5)) == 0:
                want_cpu, want_memory = draw(st.sampled_from(REQUESTS))
            pods.append(
                build_pod(
                    "ns",
                    f"{group}-{t}",
                    "",
                    "Pending",
                    resource_list(want_cpu, want_memory),
                    group,
                    node_selector=selector,
                    tolerations=tolerations,
                )
            )
    queues = [build_queue("q1", 1), build_queue("q2", 2)]
    return {"nodes": nodes, "pods": pods, "groups": groups, "queues": queues}


def conf_for(binpack: bool, most_requested: bool) -> SchedulerConf:
    """The default conf (flags defaulted as a conf file's are), plus binpack or nodeorder's
    most-requested scorer when drawn."""
    nodeorder_arguments = (
        "\n    arguments:\n      mostrequested.weight: 2" if most_requested else ""
    )
    text = f"""\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder{nodeorder_arguments}
"""
    if binpack:
        text += "  - name: binpack\n"
    return parse_conf(text, BUILTIN_ACTIONS)


def run_session(
    cluster: dict[str, list[dict[str, Any]]], conf: SchedulerConf, incremental: bool, seed: int
) -> tuple[dict[str, str], dict[str, str], dict[str, str], int]:
    """(binds, pipelined task -> node, PodGroup phases, next start index) of one session."""
    binder = RecordingBinder()
    cache = SchedulerCache(binder=binder)
    for queue in cluster["queues"]:
        cache.apply_event("Queue", "ADDED", queue)
    for node in cluster["nodes"]:
        cache.apply_event("Node", "ADDED", node)
    for group in cluster["groups"]:
        cache.apply_event("PodGroup", "ADDED", group)
    for pod in cluster["pods"]:
        cache.apply_event("Pod", "ADDED", pod)
    state = SchedulingState(seed=seed)
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
    ssn.fits.incremental = incremental
    for name in conf.actions:
        new_action(name).execute(ssn)
    close_session(ssn)
    pipelined = {
        task.key: task.node_name
        for job in ssn.jobs.values()
        for task in job.tasks.values()
        if task.status.name == "PIPELINED"
    }
    phases = {
        job.name: job.pod_group.phase for job in ssn.jobs.values() if job.pod_group is not None
    }
    return dict(binder.binds), pipelined, phases, state.next_start_index


def reference(monkeypatch: pytest.MonkeyPatch) -> None:
    """Switch every shortcut off: full fit recomputation, per-mask gathers, vectorised
    scoring of every stale row, node-uniform scores added as vectors, the node list rotated
    before every search."""
    monkeypatch.setattr(node_selection, "_COMBINE_SHARE", 0)
    monkeypatch.setattr(node_selection, "_UNROTATED", False)
    monkeypatch.setattr(nodeorder, "_SCALAR_ROWS", 0)
    monkeypatch.setattr(node_matrix, "_SCALAR_ROWS", 0)
    monkeypatch.setattr(nodeorder, "_UNIFORM_SCORES", False)
    monkeypatch.setattr(nodeorder, "_BOUND_ROW_SCORE", False)
    monkeypatch.setattr(node_selection, "_FITS_IN_ONE_PASS", False)
    monkeypatch.setattr(node_selection, "_ROW_SCORED_STALE", 1)


def assert_same_decisions(
    cluster: dict[str, list[dict[str, Any]]], conf: SchedulerConf, seed: int
) -> None:
    fast = run_session(cluster, conf, incremental=True, seed=seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        reference(monkeypatch)
        slow = run_session(cluster, conf, incremental=False, seed=seed)
    assert fast == slow


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(clusters(1, 30), st.booleans(), st.booleans(), st.integers(0, 3))
def test_small_clusters_place_alike_on_both_paths(
    cluster: dict[str, list[dict[str, Any]]], binpack: bool, most_requested: bool, seed: int
) -> None:
    assert_same_decisions(cluster, conf_for(binpack, most_requested), seed)


@settings(
    max_examples=6,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(clusters(210, 260), st.booleans(), st.integers(0, 3))
def test_clusters_past_the_feasible_node_limit_place_alike_on_both_paths(
    cluster: dict[str, list[dict[str, Any]]], binpack: bool, seed: int
) -> None:
    """Above 200 nodes only the first feasible nodes from a rotating start are scored, so
    the window moves between tasks: the cached masks must follow it."""
    assert_same_decisions(cluster, conf_for(binpack, False), seed)


# ---------------------------------------------------------------- the unrotated search


@settings(max_examples=300, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=40), st.integers(0, 100), st.integers(1, 45))
def test_first_in_rotation_equals_the_rotated_scan(
    passed: list[bool], start: int, wanted: int
) -> None:
    """The rows found and the count examined, from the passing rows in node order, equal
    those of rotating the node list to the start and scanning it."""
    total = len(passed)
    shift = start % total
    rows = np.arange(total, dtype=np.intp)
    order = np.concatenate((rows[shift:], rows[:shift]))
    rotated = np.array(passed)[order]
    positions = np.flatnonzero(rotated)
    if len(positions) >= wanted:
        examined = int(positions[wanted - 1]) + 1
        positions = positions[:wanted]
    else:
        examined = total
    found = node_selection._first_in_rotation(
        np.flatnonzero(np.array(passed)), shift, wanted, total
    )
    if not len(positions):
        assert found is None
        return
    assert found is not None
    assert found[0].tolist() == order[positions].tolist()
    assert found[1] == examined
