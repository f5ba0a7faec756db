"""nodegroup plugin (``pkg/scheduler/plugins/nodegroup``).

Transcribed from upstream ``nodegroup_test.go``: the seven cases of ``TestNodeGroup`` (score and
predicate code of each task on each node), the six of ``TestNodeGroupResourceLimits`` and
``TestNodeGroupResourceLimitAllocationEvent``. Then a scenario through allocate: a queue's jobs
fill its required group up to the group's resource limit, then spill to its preferred group,
never to an unlabelled node.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case, run_case
from volcano_py.api.types import StatusCode
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import nodegroup

GROUP_KEY = "volcano.sh/nodegroup-name"
LIMITS_KEY = "volcano.sh/nodegroup-resource-limits"
OK = StatusCode.SUCCESS
NO = StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE


def make_session(
    objects: list[tuple[str, dict[str, Any]]],
    arguments: dict[str, Any] | None = None,
    hierarchy: bool = False,
) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    flags = ["enableNodeOrder", "enablePredicate"] + (["enableHierarchy"] if hierarchy else [])
    option = PluginOption.with_flags("nodegroup", *flags, arguments=arguments or {})
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"nodegroup": nodegroup.new}, cache)


def queue(
    name: str,
    affinity: dict[str, Any] | None,
    parent: str = "",
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    """``util.MakeQueue(name).Affinity(...).Parent(...).Annotations(...).Obj()``."""
    obj = build_queue(name, parent=parent, annotations=annotations)
    if affinity is not None:
        obj["spec"]["affinity"] = affinity
    return obj


def affinity(
    required: list[str] | None = None,
    preferred: list[str] | None = None,
    anti_required: list[str] | None = None,
    anti_preferred: list[str] | None = None,
) -> dict[str, Any]:
    result: dict[str, Any] = {}
    if required is not None or preferred is not None:
        result["nodeGroupAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": required or [],
            "preferredDuringSchedulingIgnoredDuringExecution": preferred or [],
        }
    if anti_required is not None or anti_preferred is not None:
        result["nodeGroupAntiAffinity"] = {
            "requiredDuringSchedulingIgnoredDuringExecution": anti_required or [],
            "preferredDuringSchedulingIgnoredDuringExecution": anti_preferred or [],
        }
    return result


def code_of(ssn: Session, task_name: str, node_name: str) -> StatusCode:
    task = next(t for j in ssn.jobs.values() for t in j.tasks.values() if t.name == task_name)
    statuses = ssn.predicate_fn(task, ssn.nodes[node_name])
    return statuses[0].code if statuses else OK


# ---------------------------------------------------------------------- TestNodeGroup

_NODES = [
    build_node("n1", resource_list("2", "4Gi"), {GROUP_KEY: "group1"}),
    build_node("n2", resource_list("4", "16Gi"), {GROUP_KEY: "group2"}),
    build_node("n3", resource_list("4", "16Gi"), {GROUP_KEY: "group3"}),
    build_node("n4", resource_list("4", "16Gi"), {GROUP_KEY: "group4"}),
    build_node("n5", resource_list("4", "16Gi")),
]
_FULL = affinity(["group1", "group3"], ["group3"], ["group2", "group4"], ["group4"])
_ROOT_Q = queue("root", _FULL)
_NO_AFFINITY_ROOT_Q = queue("root-no-affinity", None)
_Q1 = queue("q1", _FULL, parent="root")
_Q2 = queue("q2", affinity(["group1"], ["group3"], ["group2"], ["group4"]), parent="root")
_Q3 = queue("q3", affinity(preferred=["group1", "group3"]))
_NO_AFFINITY_Q = queue("q-no-affinity", None, parent="root")
_Q1_CHILD = queue("q1-child", None, parent="q1")
_NO_AFFINITY_Q_CHILD = queue("q-no-affinity-child", None, parent="q-no-affinity")

_EXPECT_FULL = (
    {"n1": 100, "n2": 0, "n3": 150, "n4": -1, "n5": 0},
    {"n1": OK, "n2": NO, "n3": OK, "n4": OK, "n5": NO},
)


@pytest.mark.parametrize(
    ("pg_queue", "queues", "arguments", "hierarchy", "scores", "codes"),
    [
        pytest.param(
            "q1",
            [_Q1],
            {},
            False,
            *_EXPECT_FULL,
            id="soft constraints is subset of hard constraints",
        ),
        pytest.param(
            "q2",
            [_Q2],
            {},
            False,
            {"n1": 100, "n2": 0, "n3": 50, "n4": -1, "n5": 0},
            {"n1": OK, "n2": NO, "n3": OK, "n4": OK, "n5": NO},
            id="soft constraints is not subset of hard constraints",
        ),
        pytest.param(
            "root-no-affinity",
            [_NO_AFFINITY_ROOT_Q],
            {"strict": False},
            False,
            {"n1": 0, "n2": 0, "n3": 0, "n4": 0, "n5": 0},
            {"n1": NO, "n2": NO, "n3": NO, "n4": NO, "n5": OK},
            id="affinity is not set for the queue, pods still cannot be scheduled to nodes with "
            "the nodegroup label when strict=false",
        ),
        pytest.param(
            "q1-child",
            [_ROOT_Q, _Q1, _Q1_CHILD],
            {},
            True,
            *_EXPECT_FULL,
            id="affinity inherits from parent queue",
        ),
        pytest.param(
            "q-no-affinity-child",
            [_ROOT_Q, _NO_AFFINITY_Q, _NO_AFFINITY_Q_CHILD],
            {},
            True,
            *_EXPECT_FULL,
            id="affinity inherits from ancestor queue if parent queue has no affinity",
        ),
        pytest.param(
            "q-no-affinity",
            [_NO_AFFINITY_Q],
            {},
            False,
            {"n1": 0, "n2": 0, "n3": 0, "n4": 0, "n5": 0},
            {"n1": NO, "n2": NO, "n3": NO, "n4": NO, "n5": NO},
            id="queue without affinity",
        ),
        pytest.param(
            "q3",
            [_Q3],
            {"enablePreferredOrder": True},
            False,
            {"n1": 50, "n2": 0, "n3": 25, "n4": 0, "n5": 0},
            {"n1": OK, "n2": NO, "n3": OK, "n4": NO, "n5": NO},
            id="preferred nodegroup priority ordering",
        ),
    ],
)
def test_node_group_upstream(
    pg_queue: str,
    queues: list[dict[str, Any]],
    arguments: dict[str, Any],
    hierarchy: bool,
    scores: dict[str, float],
    codes: dict[str, StatusCode],
) -> None:
    objects = (
        [("Node", n) for n in _NODES]
        + [("Queue", q) for q in queues]
        + [
            ("PodGroup", build_pod_group("pg", "c1", pg_queue, 0, None, "")),
            ("Pod", build_pod("c1", "p", "", "Pending", resource_list("2", "4Gi"), "pg")),
        ]
    )
    ssn = make_session(objects, arguments, hierarchy)
    (task,) = ssn.jobs["c1/pg"].tasks.values()
    rows = np.arange(len(ssn.node_list), dtype=np.intp)
    got = dict(zip([n.name for n in ssn.node_list], ssn.node_scores(task, rows), strict=True))
    assert got == scores
    assert {name: code_of(ssn, "p", name) for name in scores} == codes


def test_predicate_reasons() -> None:
    objects = [("Node", n) for n in _NODES] + [
        ("Queue", _Q2),
        ("PodGroup", build_pod_group("pg", "c1", "q2", 0, None, "")),
        ("Pod", build_pod("c1", "p", "", "Pending", resource_list("2", "4Gi"), "pg")),
    ]
    ssn = make_session(objects)
    (task,) = ssn.jobs["c1/pg"].tasks.values()
    reasons = {n.name: [s.reason for s in ssn.predicate_fn(task, n)] for n in ssn.node_list}
    assert reasons["n2"] == ["node does not satisfy the node group affinity"]
    assert reasons["n5"] == ["node group label not found"]
    assert reasons["n1"] == []


# ---------------------------------------------------------------------- resource limits

_LIMIT_AFFINITY = affinity(["group1", "group2"], ["group1"])
_BIG = resource_list("16", "64Gi", pods="32")
_LIMIT_NODES = [
    build_node("n1", _BIG, {GROUP_KEY: "group1"}),
    build_node("n2", _BIG, {GROUP_KEY: "group2"}),
]


def _limit_queue(name: str, limits: str | None) -> dict[str, Any]:
    return queue(name, _LIMIT_AFFINITY, annotations={LIMITS_KEY: limits} if limits else None)


def _pending(queue_name: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("PodGroup", build_pod_group("pg-pending", "limit", queue_name, 0, None, "")),
        (
            "Pod",
            build_pod("limit", "pending", "", "Pending", resource_list("2", "4Gi"), "pg-pending"),
        ),
    ]


@pytest.mark.parametrize(
    ("queue_name", "limits", "extra", "codes"),
    [
        pytest.param(
            "q-no-limit", None, [], {"n1": OK, "n2": OK}, id="no annotation keeps existing behavior"
        ),
        pytest.param(
            "q-under-limit",
            '{"group1":{"cpu":"3","memory":"8Gi"}}',
            [],
            {"n1": OK, "n2": OK},
            id="under nodegroup limit permits preferred nodegroup",
        ),
        pytest.param(
            "q-cpu-only-limit",
            '{"group1":{"cpu":"3"}}',
            [],
            {"n1": OK, "n2": OK},
            id="omitted resource dimension is unlimited",
        ),
        pytest.param(
            "q-cpu-only-over-limit",
            '{"group1":{"cpu":"1"}}',
            [],
            {"n1": NO, "n2": OK},
            id="specified resource dimension is enforced",
        ),
        pytest.param(
            "q-over-limit",
            '{"group1":{"cpu":"3","memory":"8Gi"}}',
            [
                (
                    "PodGroup",
                    build_pod_group("pg-used", "limit", "q-over-limit", 0, None, "Running"),
                ),
                (
                    "Pod",
                    build_pod(
                        "limit", "used", "n1", "Running", resource_list("2", "4Gi"), "pg-used"
                    ),
                ),
            ],
            {"n1": NO, "n2": OK},
            id="over nodegroup limit rejects preferred nodegroup and permits fallback",
        ),
        pytest.param(
            "q-invalid-limit",
            '{"group1":{"cpu":',
            [],
            {"n1": NO, "n2": NO},
            id="invalid annotation rejects queue tasks",
        ),
    ],
)
def test_node_group_resource_limits_upstream(
    queue_name: str,
    limits: str | None,
    extra: list[tuple[str, dict[str, Any]]],
    codes: dict[str, StatusCode],
) -> None:
    objects = (
        [("Node", n) for n in _LIMIT_NODES]
        + [("Queue", _limit_queue(queue_name, limits))]
        + extra
        + _pending(queue_name)
    )
    ssn = make_session(objects)
    assert {name: code_of(ssn, "pending", name) for name in codes} == codes


def test_limit_reasons() -> None:
    ssn = make_session(
        [("Node", n) for n in _LIMIT_NODES]
        + [("Queue", _limit_queue("q", '{"group1":{"cpu":"1"}}'))]
        + _pending("q")
    )
    (task,) = ssn.jobs["limit/pg-pending"].tasks.values()
    assert ssn.predicate_fn(task, ssn.nodes["n1"])[0].reason == "node group resource limit exceeded"
    bad = make_session(
        [("Node", n) for n in _LIMIT_NODES]
        + [("Queue", _limit_queue("q", '{"group1":{"cpu":"lots"}}'))]
        + _pending("q")
    )
    (task,) = bad.jobs["limit/pg-pending"].tasks.values()
    assert bad.predicate_fn(task, bad.nodes["n2"])[0].reason == (
        "node group resource limit annotation invalid"
    )


def test_node_group_resource_limit_allocation_event_upstream() -> None:
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", build_node("n1", _BIG, {GROUP_KEY: "group1"})),
        (
            "Queue",
            queue(
                "q-event-limit",
                affinity(["group1"]),
                annotations={LIMITS_KEY: '{"group1":{"cpu":"3","memory":"8Gi"}}'},
            ),
        ),
        ("PodGroup", build_pod_group("pg-1", "limit", "q-event-limit", 0, None, "")),
        ("PodGroup", build_pod_group("pg-2", "limit", "q-event-limit", 0, None, "")),
        ("Pod", build_pod("limit", "pending-1", "", "Pending", resource_list("2", "4Gi"), "pg-1")),
        ("Pod", build_pod("limit", "pending-2", "", "Pending", resource_list("2", "4Gi"), "pg-2")),
    ]
    ssn = make_session(objects)
    task1 = ssn.jobs["limit/pg-1"].tasks["limit-pending-1"]
    task2 = ssn.jobs["limit/pg-2"].tasks["limit-pending-2"]
    node = ssn.nodes["n1"]
    assert ssn.predicate_fn(task1, node) == ()
    ssn.allocate(task1, node)
    assert ssn.predicate_fn(task2, node) != ()


# ---------------------------------------------------------------------- scenario


def test_allocate_fills_the_required_group_up_to_its_limit_then_the_preferred() -> None:
    """Queue q1 requires group "train" and prefers "spare" (scores 100 and 50), may hold 2 cpu
    in "train"; three one-cpu jobs: two land in "train", the third spills to "spare"; the
    unlabelled node is never used (strict)."""
    node_resources = resource_list("8", "8Gi", pods="10")
    case = Case(
        name="nodegroup allocate",
        plugins={
            "gang": ["enableJobReady", "enableJobPipelined"],
            "predicates": ["enablePredicate"],
            "nodegroup": ["enablePredicate", "enableNodeOrder"],
        },
        nodes=[
            build_node("t1", node_resources, {GROUP_KEY: "train"}),
            build_node("s1", node_resources, {GROUP_KEY: "spare"}),
            build_node("plain", node_resources),
        ],
        queues=[
            queue(
                "q1",
                affinity(["train"], ["spare"]),
                annotations={LIMITS_KEY: '{"train":{"cpu":"2"}}'},
            )
        ],
        pod_groups=[build_pod_group(f"pg{i}", "ns", "q1", 1) for i in range(3)],
        pods=[
            build_pod("ns", f"p{i}", "", "Pending", resource_list("1", "1Gi"), f"pg{i}")
            for i in range(3)
        ],
    )
    outcome = run_case(case, ["allocate"])
    placed = sorted(outcome.binder.binds.values())
    assert placed == ["s1", "t1", "t1"]


# ---------------------------------------------------------------------- table == per-node rule

GROUPS = ["a", "b", "c", None]


def upstream_predicate(
    affinity: nodegroup.QueueGroupAffinity | None, strict: bool, group: str | None
) -> bool:
    """``predicateFn`` for one node, spelled out as upstream writes it."""
    unset = affinity is None or affinity.unset
    if group is None:
        return not strict and unset
    if unset or affinity is None:
        return False
    return affinity.allows(group)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.sampled_from(GROUPS), min_size=1, max_size=8),
    st.one_of(
        st.none(),
        st.fixed_dictionaries(
            {
                key: st.lists(st.sampled_from(["a", "b", "c"]), max_size=2)
                for key in ("required", "preferred", "anti_required", "anti_preferred")
            }
        ),
    ),
    st.booleans(),
    st.booleans(),
)
def test_mask_and_scores_equal_the_per_node_rule(
    node_groups: list[str | None],
    spec: dict[str, list[str]] | None,
    strict: bool,
    preferred_order: bool,
) -> None:
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", build_node(f"n{i}", resource_list("4", "4Gi"), {GROUP_KEY: g} if g else {}))
        for i, g in enumerate(node_groups)
    ]
    objects += [
        ("Queue", queue("q", None if spec is None else affinity(**spec))),
        ("PodGroup", build_pod_group("pg", "c1", "q", 0, None, "")),
        ("Pod", build_pod("c1", "p", "", "Pending", resource_list("1", "1Gi"), "pg")),
    ]
    ssn = make_session(objects, {"strict": strict, "enablePreferredOrder": preferred_order})
    (task,) = ssn.jobs["c1/pg"].tasks.values()
    rule = nodegroup.QueueGroupAffinity.of(ssn.queues["q"])
    rows = np.arange(len(ssn.node_list), dtype=np.intp)
    scores = ssn.node_scores(task, rows)
    for node, score in zip(ssn.node_list, scores, strict=True):
        group = node.labels.get(GROUP_KEY)
        assert (ssn.predicate_fn(task, node) == ()) is upstream_predicate(rule, strict, group)
        expected = 0.0 if group is None or rule is None else rule.score(group, preferred_order)
        assert score == expected
