"""Feasible nodes and the best node (``util/predicate_helper.go``, ``util/scheduler_helper.go``,
``allocate.go`` ``prioritizeNodes``; spec §3.8 and pitfall 22).

Node choice depends on history: the rotating start index (kept in ``SchedulingState``, which
outlives a session as upstream's process-wide ``lastProcessedNodeIndex`` does), the per-helper
(job, role) predicate-error cache, and a seeded random tie-break.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import numpy as np
import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.framework.fake_plugins import PluginSpec, cache_of, open_fake_session, plugin
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.framework.hooks import NodeMask
from volcano_py.framework.node_selection import (
    FeasibilityOptions,
    PredicateHelper,
    feasible_nodes_to_find,
    prioritize_nodes,
    select_best_node,
    select_best_row,
)
from volcano_py.framework.session import SchedulingState, Session

TWO_OF_FIVE = FeasibilityOptions(minimum_feasible_nodes=2)
WORKER = {"volcano.sh/task-spec": "worker"}


def cluster(
    cpus: list[str],
    pods: list[dict[str, Any]] | None = None,
) -> list[tuple[str, dict[str, Any]]]:
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", build_node(f"n{i}", resource_list(cpu, "8Gi", pods="10")))
        for i, cpu in enumerate(cpus)
    ]
    objects += [
        ("Queue", build_queue("q1")),
        ("PodGroup", build_pod_group("pg1", "ns1", "q1", 1)),
    ]
    objects += [("Pod", pod) for pod in pods or []]
    return objects


def pending(name: str, cpu: str = "1", labels: dict[str, str] | None = None) -> dict[str, Any]:
    return build_pod("ns1", name, "", "Pending", resource_list(cpu, "1Gi"), "pg1", labels)


def make_session(
    objects: list[tuple[str, dict[str, Any]]],
    tiers: list[list[PluginSpec]] | None = None,
    state: SchedulingState | None = None,
) -> Session:
    return open_fake_session(tiers or [], cache_of(objects).snapshot(), state=state)


def task_of(ssn: Session, name: str) -> TaskInfo:
    return next(t for j in ssn.jobs.values() for t in j.tasks.values() if t.name == name)


def node_names(ssn: Session, rows: Any) -> list[str]:
    return [ssn.node_list[int(row)].name for row in rows]


def all_rows(ssn: Session) -> Any:
    return np.arange(len(ssn.node_list))


# ---------------------------------------------------------------------------- how many


@pytest.mark.parametrize(
    ("total", "options", "expected"),
    [
        (0, FeasibilityOptions(), 0),
        (100, FeasibilityOptions(), 100),
        (101, FeasibilityOptions(), 100),  # 50% of 101 = 50, raised to the minimum 100
        (1000, FeasibilityOptions(), 420),  # 50 - 1000/125 = 42%
        (5000, FeasibilityOptions(), 500),  # 50 - 40 = 10%
        (6000, FeasibilityOptions(), 300),  # 50 - 48 = 2% -> minimum percentage 5%
        (10000, FeasibilityOptions(), 500),  # negative -> 5%
        (1000, FeasibilityOptions(percentage=20), 200),
        (1000, FeasibilityOptions(percentage=5), 100),  # 50 nodes, raised to the minimum
        (1000, FeasibilityOptions(percentage=100), 1000),
        (1000, FeasibilityOptions(percentage=150), 1000),
        (5, TWO_OF_FIVE, 2),
        (300, FeasibilityOptions(minimum_feasible_nodes=10, minimum_percentage=30), 144),
    ],
)
def test_feasible_nodes_to_find(total, options, expected):
    """``CalculateNumOfFeasibleNodesToFind`` with kube-scheduler's adaptive percentage."""
    assert feasible_nodes_to_find(total, options) == expected


# ---------------------------------------------------------------------------- rotation


def test_rotating_start_index_vectorised_path():
    state = SchedulingState()
    ssn = make_session(cluster(["4"] * 5, [pending("t")]), state=state)
    helper = PredicateHelper(ssn)
    task = task_of(ssn, "t")
    seen = []
    for _ in range(4):
        rows, errors = helper.predicate_nodes(task, all_rows(ssn), options=TWO_OF_FIVE)
        seen.append((node_names(ssn, rows), state.next_start_index))
        assert errors.nodes == {}
    assert seen == [
        (["n0", "n1"], 2),
        (["n2", "n3"], 4),
        (["n4", "n0"], 1),
        (["n1", "n2"], 3),
    ]


def test_rotating_start_index_with_per_node_predicates():
    calls: list[str] = []

    def predicate(task: TaskInfo, node: Any) -> Status | None:
        calls.append(node.name)
        return Status(StatusCode.UNSCHEDULABLE, "no n1") if node.name == "n1" else None

    state = SchedulingState()
    ssn = make_session(
        cluster(["4"] * 5, [pending("t")]),
        [[plugin("p", "enablePredicate", predicate=predicate)]],
        state,
    )
    task = task_of(ssn, "t")
    rows, _ = PredicateHelper(ssn, error_cache=False).predicate_nodes(
        task, all_rows(ssn), options=TWO_OF_FIVE
    )
    assert node_names(ssn, rows) == ["n0", "n2"]
    assert calls == ["n0", "n1", "n2"]
    # three nodes examined: the next search starts at n3
    assert state.next_start_index == 3
    rows, _ = PredicateHelper(ssn, error_cache=False).predicate_nodes(
        task, all_rows(ssn), options=TWO_OF_FIVE
    )
    assert node_names(ssn, rows) == ["n3", "n4"]
    assert state.next_start_index == 0


def test_all_nodes_wanted_keeps_rotated_order_and_start():
    state = SchedulingState(next_start_index=3)
    ssn = make_session(cluster(["4"] * 5, [pending("t")]), state=state)
    rows, _ = PredicateHelper(ssn).predicate_nodes(task_of(ssn, "t"), all_rows(ssn))
    assert node_names(ssn, rows) == ["n3", "n4", "n0", "n1", "n2"]
    assert state.next_start_index == 3


def test_start_index_outlives_the_session():
    state = SchedulingState()
    objects = cluster(["4"] * 5, [pending("t")])
    first = make_session(objects, state=state)
    PredicateHelper(first).predicate_nodes(
        task_of(first, "t"), all_rows(first), options=TWO_OF_FIVE
    )
    second = make_session(objects, state=state)
    rows, _ = PredicateHelper(second).predicate_nodes(
        task_of(second, "t"), all_rows(second), options=TWO_OF_FIVE
    )
    assert node_names(second, rows) == ["n2", "n3"]
    assert state.sessions == 2


def test_candidate_subset_keeps_given_rows():
    ssn = make_session(cluster(["4"] * 5, [pending("t")]))
    rows, _ = PredicateHelper(ssn).predicate_nodes(task_of(ssn, "t"), np.array([4, 1, 3]))
    assert node_names(ssn, rows) == ["n4", "n1", "n3"]


def test_no_rows_no_nodes():
    ssn = make_session(cluster(["4"], [pending("t")]))
    rows, errors = PredicateHelper(ssn).predicate_nodes(task_of(ssn, "t"), np.array([], dtype=int))
    assert len(rows) == 0 and errors.nodes == {}


# ---------------------------------------------------------------------------- resources


def test_resource_fit_uses_future_idle_and_explains_when_nothing_fits():
    running = build_pod("ns1", "r", "n0", "Running", resource_list("3", "1Gi"), "pg1")
    ssn = make_session(cluster(["4", "2"], [pending("t", "3"), pending("u", "3"), running]))
    task = task_of(ssn, "t")
    rows, errors = PredicateHelper(ssn).predicate_nodes(task, all_rows(ssn))
    assert len(rows) == 0
    assert set(errors.nodes) == {"n0", "n1"}
    assert errors.message() == "0/2 nodes are available: 2 Insufficient cpu."
    # without the resource check both nodes pass
    rows, _ = PredicateHelper(ssn).predicate_nodes(task, all_rows(ssn), check_resources=False)
    assert node_names(ssn, rows) == ["n0", "n1"]
    # releasing capacity counts as future idle ...
    statement = ssn.statement()
    statement.evict(task_of(ssn, "r"), "preempt")
    rows, _ = PredicateHelper(ssn).predicate_nodes(task, all_rows(ssn))
    assert node_names(ssn, rows) == ["n0"]
    # ... and pipelined capacity is taken from it
    statement.pipeline(task, "n0", True)
    rows, _ = PredicateHelper(ssn).predicate_nodes(task_of(ssn, "u"), all_rows(ssn))
    assert len(rows) == 0


def test_fit_errors_name_the_failing_predicate():
    no = Status(
        StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, "node(s) didn't match Pod's node selector"
    )
    ssn = make_session(
        cluster(["4", "4"], [pending("t")]),
        [[plugin("p", "enablePredicate", predicate=lambda t, n: no)]],
    )
    rows, errors = PredicateHelper(ssn).predicate_nodes(task_of(ssn, "t"), all_rows(ssn))
    assert len(rows) == 0
    assert errors.unresolvable_nodes() == {"n0", "n1"}
    assert "2 node(s) didn't match Pod's node selector" in errors.message()


# ---------------------------------------------------------------------------- role error cache


def counting_predicate(calls: list[tuple[str, str]], bad: str):
    def predicate(task: TaskInfo, node: Any) -> Status | None:
        calls.append((task.name, node.name))
        if node.name == bad:
            return Status(StatusCode.UNSCHEDULABLE, f"{node.name} refuses")
        return None

    return predicate


@pytest.mark.parametrize(
    ("labels", "error_cache", "second_checks_n1"),
    [
        (WORKER, True, False),
        (WORKER, False, True),
        (None, True, True),  # no role, no cache (upstream: empty TaskRole disables it)
    ],
    ids=["same-role-cached", "cache-disabled", "no-role"],
)
def test_role_error_cache(labels, error_cache, second_checks_n1):
    calls: list[tuple[str, str]] = []
    ssn = make_session(
        cluster(["4"] * 3, [pending("a", labels=labels), pending("b", labels=labels)]),
        [[plugin("p", "enablePredicate", predicate=counting_predicate(calls, "n1"))]],
        SchedulingState(),
    )
    helper = PredicateHelper(ssn, error_cache=error_cache)
    first, _ = helper.predicate_nodes(task_of(ssn, "a"), all_rows(ssn))
    assert node_names(ssn, first) == ["n0", "n2"]
    second, _ = helper.predicate_nodes(task_of(ssn, "b"), all_rows(ssn))
    assert node_names(ssn, second) == ["n0", "n2"]
    assert (("b", "n1") in calls) is second_checks_n1


def test_role_error_cache_is_per_role_and_per_helper():
    calls: list[tuple[str, str]] = []
    ssn = make_session(
        cluster(
            ["4"] * 3,
            [
                pending("a", labels=WORKER),
                pending("b", labels={"volcano.sh/task-spec": "ps"}),
                pending("c", labels=WORKER),
            ],
        ),
        [[plugin("p", "enablePredicate", predicate=counting_predicate(calls, "n1"))]],
    )
    helper = PredicateHelper(ssn)
    helper.predicate_nodes(task_of(ssn, "a"), all_rows(ssn))
    helper.predicate_nodes(task_of(ssn, "b"), all_rows(ssn))
    assert ("b", "n1") in calls
    PredicateHelper(ssn).predicate_nodes(task_of(ssn, "c"), all_rows(ssn))
    assert ("c", "n1") in calls


def test_role_error_cache_reports_the_cached_reason_when_nothing_fits():
    calls: list[tuple[str, str]] = []
    ssn = make_session(
        cluster(["4", "4"], [pending("a", "4", WORKER), pending("b", "4", WORKER)]),
        [[plugin("p", "enablePredicate", predicate=counting_predicate(calls, "n0"))]],
    )
    helper = PredicateHelper(ssn)
    a, b = task_of(ssn, "a"), task_of(ssn, "b")
    rows, _ = helper.predicate_nodes(a, all_rows(ssn))
    assert node_names(ssn, rows) == ["n1"]
    ssn.statement().allocate(a, ssn.nodes["n1"])
    rows, errors = helper.predicate_nodes(b, all_rows(ssn))
    assert len(rows) == 0
    assert ("b", "n0") not in calls
    assert str(errors.nodes["n1"]) == "Insufficient cpu"


@pytest.mark.xfail(
    strict=True,
    reason="PredicateHelper.predicate_nodes only records a role's per-node reasons when the "
    "call finds no node; a node that failed an earlier task of the role in a call that found "
    "others is later reported as 'node(s) failed an earlier task of the role' instead of the "
    "cached error upstream reports",
)
def test_role_error_cache_keeps_the_reason_of_an_earlier_successful_search():
    calls: list[tuple[str, str]] = []
    ssn = make_session(
        cluster(["4", "4"], [pending("a", "4", WORKER), pending("b", "4", WORKER)]),
        [[plugin("p", "enablePredicate", predicate=counting_predicate(calls, "n0"))]],
    )
    helper = PredicateHelper(ssn)
    a, b = task_of(ssn, "a"), task_of(ssn, "b")
    helper.predicate_nodes(a, all_rows(ssn))
    ssn.statement().allocate(a, ssn.nodes["n1"])
    _, errors = helper.predicate_nodes(b, all_rows(ssn))
    assert str(errors.nodes["n0"]) == "n0 refuses"


# ---------------------------------------------------------------------------- preemption


def test_for_preempt_only_unresolvable_reasons_reject():
    resolvable = Status(StatusCode.UNSCHEDULABLE, "would fit after evictions")
    unresolvable = Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, "selector")

    def mask(task: TaskInfo) -> NodeMask:
        passed = np.array([False, False, True, True])
        return NodeMask(passed, lambda row: resolvable if row == 0 else unresolvable)

    def predicate(task: TaskInfo, node: Any) -> Status | None:
        return {"n2": resolvable, "n3": unresolvable}.get(node.name)

    ssn = make_session(
        cluster(["4"] * 4, [pending("t")]),
        [[plugin("m", "enablePredicate", predicate_mask=mask, predicate=predicate)]],
    )
    task = task_of(ssn, "t")
    rows, _ = PredicateHelper(ssn).predicate_nodes(
        task, all_rows(ssn), check_resources=False, for_preempt=True
    )
    assert node_names(ssn, rows) == ["n0", "n2"]
    rows, _ = PredicateHelper(ssn).predicate_nodes(task, all_rows(ssn), check_resources=False)
    assert len(rows) == 0


# ---------------------------------------------------------------------------- best node


def scored(scores: dict[str, float]) -> PluginSpec:
    return plugin("score", "enableNodeOrder", node_order=lambda t, n: scores.get(n.name, 0.0))


def test_select_best_row_highest_score():
    ssn = make_session(cluster(["4"] * 3, [pending("t")]), [[scored({"n1": 5.0, "n2": 3.0})]])
    assert select_best_node(ssn, task_of(ssn, "t"), all_rows(ssn)).name == "n1"


def test_select_best_row_single_candidate_is_not_scored():
    calls: list[str] = []
    ssn = make_session(
        cluster(["4"] * 2, [pending("t")]),
        [[plugin("s", "enableNodeOrder", node_order=lambda t, n: calls.append(n.name) or 0.0)]],
    )
    assert select_best_row(ssn, task_of(ssn, "t"), np.array([1])) == 1
    assert calls == []


def test_ties_are_broken_at_random_with_the_seeded_generator():
    objects = cluster(["4"] * 4, [pending("t")])
    tiers = [[scored({"n1": 1.0, "n2": 1.0, "n3": 1.0})]]

    def choose(seed: int) -> str:
        ssn = make_session(objects, tiers, SchedulingState(seed=seed))
        return select_best_node(ssn, task_of(ssn, "t"), all_rows(ssn)).name

    # reproducible for a seed
    assert [choose(7) for _ in range(3)] == [choose(7)] * 3
    # only the tied winners, and each of them for some seed
    picks = Counter(choose(seed) for seed in range(60))
    assert set(picks) == {"n1", "n2", "n3"}


def test_best_node_plugin_chooses_among_scores():
    seen: dict[float, list[str]] = {}

    def best(task: TaskInfo, scores: Any) -> Any:
        seen.update({score: [n.name for n in nodes] for score, nodes in scores.items()})
        return scores[min(scores)][0]

    ssn = make_session(
        cluster(["4"] * 3, [pending("t")]),
        [
            [
                scored({"n0": 2.0, "n1": 1.0, "n2": 2.0}),
                plugin("b", "enableBestNode", best_node=best),
            ]
        ],
    )
    assert select_best_node(ssn, task_of(ssn, "t"), all_rows(ssn)).name == "n1"
    assert seen == {2.0: ["n0", "n2"], 1.0: ["n1"]}


def test_prioritize_prefers_idle_fit_over_future_idle_fit():
    running = build_pod("ns1", "r", "n0", "Running", resource_list("3", "1Gi"), "pg1")
    ssn = make_session(
        cluster(["4", "4"], [pending("t", "2"), running]),
        [[scored({"n0": 100.0})]],
    )
    ssn.statement().evict(task_of(ssn, "r"), "preempt")
    task = task_of(ssn, "t")
    # n0 fits only once r is gone; n1 fits now and wins despite the lower score
    assert prioritize_nodes(ssn, task, all_rows(ssn)).name == "n1"
    # among future-idle fits only
    assert prioritize_nodes(ssn, task, np.array([0])).name == "n0"
    assert prioritize_nodes(ssn, task, np.array([], dtype=int)) is None


def test_prioritize_returns_none_when_nothing_fits():
    ssn = make_session(cluster(["1"], [pending("t", "2")]))
    assert prioritize_nodes(ssn, task_of(ssn, "t"), all_rows(ssn)) is None


# ---------------------------------------------------------------------------- may not help


def filter_case(
    pods: list[dict[str, Any]], node_labels: list[str], min_member: int = 1, roles: Any = None
) -> Session:
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", build_node(f"n{i + 1}", resource_list("2", "4Gi", pods="10"), {"nodeRole": role}))
        for i, role in enumerate(node_labels)
    ]
    objects += [
        ("Queue", build_queue("c1")),
        ("PodGroup", build_pod_group("pg1", "c1", "c1", min_member, roles)),
    ]
    objects += [("Pod", p) for p in pods]
    return make_session(objects)


def role_pod(name: str, role: str, selector: str | None = None) -> dict[str, Any]:
    return build_pod(
        "c1",
        name,
        "",
        "Pending",
        resource_list("1", "1G"),
        "pg1",
        {"volcano.sh/task-spec": role},
        {"nodeRole": selector} if selector else None,
    )


SELECTOR = "node(s) didn't match Pod's node selector"


@pytest.mark.parametrize(
    ("pods", "nodes", "min_member", "roles", "fit_errors", "want"),
    [
        (
            [role_pod("p1", "master"), role_pod("p2", "worker")],
            ["worker", "worker"],
            1,
            None,
            {},
            {"c1-p1": ["n1", "n2"], "c1-p2": ["n1", "n2"]},
        ),
        (
            [role_pod("p1", "master", "master"), role_pod("p2", "worker", "worker")],
            ["worker"],
            1,
            None,
            {"c1-p1": "n1"},
            {"c1-p1": [], "c1-p2": ["n1"]},
        ),
        (
            [
                role_pod("p0", "master", "master"),
                role_pod("p1", "master", "master"),
                role_pod("p2", "worker", "worker"),
                role_pod("p3", "worker", "worker"),
            ],
            ["master", "worker"],
            2,
            {"master": 1, "worker": 1},
            {"c1-p1": "n2", "c1-p3": "n1"},
            {"c1-p0": ["n1", "n2"], "c1-p1": ["n1"], "c1-p2": ["n1", "n2"], "c1-p3": ["n2"]},
        ),
    ],
    ids=[
        "all are helpful for preemption",
        "master predicate failed: node selector does not match",
        "p1,p3 has node fit error",
    ],
)
def test_filter_out_preempt_may_not_help_nodes_upstream(
    pods, nodes, min_member, roles, fit_errors, want
):
    """``session_plugins_test.go`` ``TestFilterOutPreemptMayNotHelpNodes``, on
    ``actions.eviction.preemption_candidate_nodes`` (no plugins: only the recorded
    unresolvable fit errors remove nodes)."""
    from volcano_py.actions.eviction import preemption_candidate_nodes
    from volcano_py.api.types import FitError, FitErrors

    ssn = filter_case(pods, nodes, min_member, roles)
    job = ssn.jobs["c1/pg1"]
    for uid, node_name in fit_errors.items():
        errors = FitErrors()
        errors.set_node_error(
            node_name, FitError("", [Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, SELECTOR)])
        )
        job.nodes_fit_errors[uid] = errors
    helper = PredicateHelper(ssn)
    got = {
        uid: [n.name for n in preemption_candidate_nodes(ssn, task, helper)]
        for uid, task in job.tasks.items()
    }
    assert got == want
