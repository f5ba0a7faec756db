"""tdm plugin (``pkg/scheduler/plugins/tdm``).

Transcribed from upstream ``tdm_test.go``: the nine cases of ``Test_parseRevocableZone``, the
three of ``Test_TDM`` (predicate and node order of each task on each node) and the nine of
``Test_TDM_victimsFn``. Upstream reads the wall clock (its "0:00-0:01" window is closed unless
the test runs in the first minute of the day); here the session clock is fixed at noon, local
time. Then the other hooks, and scenarios through whole sessions: allocate sends revocable work
to an open revocable node and keeps other work off it; shuffle empties a zone whose window
closed, within each job's disruption budget and at most once per evict period.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import numpy as np
import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case
from tests.plugins.clocked import run_case_at
from volcano_py.api.types import StatusCode, TaskStatus, Vote
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, Session, open_session
from volcano_py.plugins import tdm

REVOCABLE_ZONE = "volcano.sh/revocable-zone"
PREEMPTABLE = "volcano.sh/preemptable"
JDB_MAX_UNAVAILABLE = "volcano.sh/jdb-max-unavailable"
JDB_MIN_AVAILABLE = "volcano.sh/jdb-min-available"
NOON = datetime(2026, 3, 10, 12, 0)  # local time, as the plugin reads it
NOW = NOON.timestamp()


def make_session(
    objects: list[tuple[str, dict[str, Any]]],
    arguments: dict[str, Any],
    flags: tuple[str, ...],
    state: SchedulingState | None = None,
) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("tdm", *flags, arguments=arguments)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    state = state or SchedulingState(clock=lambda: NOW)
    return open_session(cache.snapshot(), conf, {"tdm": tdm.new}, cache, state)


# ---------------------------------------------------------------------- Test_parseRevocableZone


@pytest.mark.parametrize(
    ("raw", "delta", "error"),
    [
        ("00:00_01:00", 0, True),
        ("00:00-01:00", 60 * 60, False),
        ("0:00-23:59", 23 * 60 * 60 + 59 * 60, False),
        ("0:00", 0, True),
        ("1:00-0:00", 23 * 60 * 60, False),
        ("1:0-0:0", 0, True),
        ("   1:00-0:00    ", 23 * 60 * 60, False),
        ("23:59-23:59", 24 * 60 * 60, False),
        ("63:59-23:59", 0, True),
    ],
)
def test_parse_revocable_zone_upstream(raw: str, delta: int, error: bool) -> None:
    if error:
        with pytest.raises(ValueError, match="format error"):
            tdm.parse_revocable_zone(raw, NOON)
        return
    start, end = tdm.parse_revocable_zone(raw, NOON)
    assert int(end.timestamp() - start.timestamp()) == delta


def test_window_open_and_closed() -> None:
    windows = {"day": "8:00-18:00", "night": "22:00-06:00", "bad": "8-18"}
    at = {hour: datetime(2026, 3, 10, hour, 0).timestamp() for hour in (3, 7, 8, 12, 18, 23)}
    assert tdm.window_closed_reason("day", windows, at[12]) is None
    assert tdm.window_closed_reason("day", windows, at[8]) is None  # both ends included
    assert tdm.window_closed_reason("day", windows, at[18]) is None
    assert tdm.window_closed_reason("day", windows, at[7]) == (
        "current time beyond revocable zone day:8:00-18:00"
    )
    assert tdm.window_closed_reason("night", windows, at[23]) is None
    # Divergence from upstream (see the module note): still open after midnight.
    assert tdm.window_closed_reason("night", windows, at[3]) is None
    assert tdm.window_closed_reason("night", windows, at[12]) is not None
    assert tdm.window_closed_reason("other", windows, at[12]) == "revocable zone other not support"
    assert "format error" in (tdm.window_closed_reason("bad", windows, at[12]) or "")


# ---------------------------------------------------------------------- Test_TDM


def _test_tdm_objects(pod: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    node_resources = resource_list("16", "64Gi", pods="10")
    return [
        ("Node", build_node("n1", node_resources, {REVOCABLE_ZONE: "rz1"})),
        ("Node", build_node("n2", node_resources, {REVOCABLE_ZONE: "rz1"})),
        ("Node", build_node("n3", node_resources)),
        ("Node", build_node("n4", node_resources)),
        ("Node", build_node("n5", node_resources, {REVOCABLE_ZONE: "rz2"})),
        ("Queue", build_queue("c1")),
        ("PodGroup", build_pod_group("pg1", "c1", "c1", 0, None, "")),
        ("Pod", pod),
    ]


def _pod(name: str, annotations: dict[str, str]) -> dict[str, Any]:
    return build_pod(
        "c1", name, "", "Pending", resource_list("1", "1Gi"), "pg1", annotations=annotations
    )


@pytest.mark.parametrize(
    ("pod", "passing", "scores"),
    [
        pytest.param(
            _pod("p1", {REVOCABLE_ZONE: "*"}),
            {"n1", "n2", "n3", "n4"},
            {"n1": 100, "n2": 100, "n3": 0, "n4": 0},
            id="preemptable task rz available",
        ),
        pytest.param(_pod("p2", {}), {"n3", "n4"}, {"n3": 0, "n4": 0}, id="not preemptable task"),
        pytest.param(
            _pod("p3", {REVOCABLE_ZONE: "*"}),
            {"n1", "n2", "n3", "n4"},
            {"n1": 100, "n2": 100, "n3": 0, "n4": 0},
            id="preemptable task and multiple rz",
        ),
    ],
)
def test_tdm_upstream(pod: dict[str, Any], passing: set[str], scores: dict[str, float]) -> None:
    ssn = make_session(
        _test_tdm_objects(pod),
        {"tdm.revocable-zone.rz1": "0:00-0:00", "tdm.revocable-zone.rz2": "0:00-0:01"},
        ("enableNodeOrder", "enablePredicate"),
    )
    (task,) = ssn.jobs["c1/pg1"].tasks.values()
    passed = [node for node in ssn.node_list if not ssn.predicate_fn(task, node)]
    assert {node.name for node in passed} == passing
    rows = np.array([node.row for node in passed], dtype=np.intp)
    got = dict(zip([n.name for n in passed], ssn.node_scores(task, rows).tolist(), strict=True))
    assert got == scores
    for node in ssn.node_list:
        for status in ssn.predicate_fn(task, node):
            assert status.code is StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE
    reasons = {
        n.name: ssn.predicate_fn(task, n)[0].reason for n in ssn.node_list if n not in passed
    }
    assert reasons["n5"] == "current time beyond revocable zone rz2:0:00-0:01"
    if "n1" not in passing:
        assert reasons["n1"] == "not allow to dispatch to revocable node"


# ---------------------------------------------------------------------- Test_TDM_victimsFn


def _running(namespace: str, name: str, node: str, group: str, preemptable: str) -> dict[str, Any]:
    return build_pod(
        namespace,
        name,
        node,
        "Running",
        resource_list("1", "1Gi"),
        group,
        annotations={PREEMPTABLE: preemptable},
    )


_C1_PODS = [_running("c1", f"p{i}", "n1", "pg1", "true") for i in (1, 2, 3)] + [
    _running("c1", f"p{i}", "n1", "pg1", "false") for i in (4, 5)
]
_C2_PODS = [_running("c2", f"p{i}", "n2", "pg2", "true") for i in (6, 7, 8, 9, 10)]
_N1 = build_node("n1", resource_list("16", "64Gi", pods="10"), {REVOCABLE_ZONE: "rz1"})
_N2 = build_node("n2", resource_list("16", "64Gi", pods="10"), {REVOCABLE_ZONE: "rz1"})
_Q1, _Q2 = build_queue("c1"), build_queue("c2")


def _pg(name: str, namespace: str, budget: dict[str, str]) -> dict[str, Any]:
    return build_pod_group(name, namespace, namespace, 0, None, "", annotations=budget)


CLOSED = {"tdm.revocable-zone.rz1": "0:00-0:01", "tdm.evict.period": "1s"}
OPEN = {"tdm.revocable-zone.rz1": "0:00-0:00", "tdm.evict.period": "100ms"}


@pytest.mark.parametrize(
    ("pod_groups", "queues", "pods", "nodes", "arguments", "want"),
    [
        pytest.param(
            [_pg("pg1", "c1", {JDB_MAX_UNAVAILABLE: "30%"})],
            [_Q1],
            _C1_PODS,
            [_N1],
            {**CLOSED, "tdm.evict.period": "100ms"},
            2,
            id="case 0",
        ),
        pytest.param(
            [_pg("pg1", "c1", {JDB_MAX_UNAVAILABLE: "30%"})],
            [_Q1],
            _C1_PODS,
            [_N1],
            OPEN,
            0,
            id="case 1",
        ),
        pytest.param(
            [_pg("pg1", "c1", {JDB_MAX_UNAVAILABLE: "99%"})],
            [_Q1],
            _C1_PODS,
            [_N1],
            CLOSED,
            3,
            id="case 2",
        ),
        pytest.param(
            [_pg("pg2", "c2", {JDB_MAX_UNAVAILABLE: "50%"})],
            [_Q2],
            _C2_PODS,
            [_N2],
            CLOSED,
            3,
            id="case 3",
        ),
        pytest.param(
            [
                _pg("pg2", "c2", {JDB_MAX_UNAVAILABLE: "50%"}),
                _pg("pg1", "c1", {JDB_MAX_UNAVAILABLE: "90%"}),
            ],
            [_Q1, _Q2],
            _C1_PODS + _C2_PODS,
            [_N1, _N2],
            CLOSED,
            6,
            id="case 4",
        ),
        pytest.param(
            [_pg("pg2", "c2", {JDB_MAX_UNAVAILABLE: "3"})],
            [_Q2],
            _C2_PODS,
            [_N2],
            CLOSED,
            3,
            id="case 5",
        ),
        pytest.param(
            [_pg("pg2", "c2", {JDB_MIN_AVAILABLE: "3"})],
            [_Q2],
            _C2_PODS,
            [_N2],
            CLOSED,
            2,
            id="case 6",
        ),
        pytest.param(
            [_pg("pg2", "c2", {JDB_MIN_AVAILABLE: "30%"})],
            [_Q2],
            _C2_PODS,
            [_N2],
            CLOSED,
            3,
            id="case 7",
        ),
        pytest.param(
            [
                _pg("pg2", "c2", {JDB_MIN_AVAILABLE: "2"}),
                _pg("pg1", "c1", {JDB_MAX_UNAVAILABLE: "3"}),
            ],
            [_Q1, _Q2],
            _C1_PODS + _C2_PODS,
            [_N1, _N2],
            CLOSED,
            6,
            id="case 8",
        ),
    ],
)
def test_tdm_victims_fn_upstream(
    pod_groups: list[dict[str, Any]],
    queues: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    arguments: dict[str, str],
    want: int,
) -> None:
    objects = (
        [("PodGroup", pg) for pg in pod_groups]
        + [("Queue", q) for q in queues]
        + [("Pod", p) for p in pods]
        + [("Node", n) for n in nodes]
    )
    ssn = make_session(objects, arguments, ("enabledVictim",))
    assert len(ssn.victim_tasks([])) == want


def test_victims_at_most_once_per_evict_period() -> None:
    """Upstream keeps the last round's time in a package global; here in the scheduling state,
    which outlives the session."""
    objects = [("PodGroup", _pg("pg2", "c2", {})), ("Queue", _Q2), ("Node", _N2)] + [
        ("Pod", p) for p in _C2_PODS
    ]
    clock = {"now": NOW}
    state = SchedulingState(clock=lambda: clock["now"])
    arguments = {"tdm.revocable-zone.rz1": "0:00-0:01", "tdm.evict.period": "1m"}
    first = make_session(objects, arguments, ("enabledVictim",), state)
    assert len(first.victim_tasks([])) == 1  # no budget: one pod per job
    clock["now"] = NOW + 30
    assert make_session(objects, arguments, ("enabledVictim",), state).victim_tasks([]) == []
    clock["now"] = NOW + 61
    assert len(make_session(objects, arguments, ("enabledVictim",), state).victim_tasks([])) == 1


# ---------------------------------------------------------------------- the other hooks


def test_budget_arithmetic() -> None:
    assert tdm._int_or_string("3", 10) == 3
    assert tdm._int_or_string("25%", 10) == 3  # rounded up
    assert tdm._int_or_string("many", 10) == 0


def test_preemptable_victims_and_rejection() -> None:
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", _N1),
        ("Node", build_node("n9", resource_list("16", "64Gi", pods="10"))),
        ("Queue", _Q1),
        ("PodGroup", _pg("pg1", "c1", {JDB_MAX_UNAVAILABLE: "2"})),
        ("Pod", _running("c1", "on-revocable", "n1", "pg1", "true")),
        ("Pod", _running("c1", "a", "n9", "pg1", "true")),
        ("Pod", _running("c1", "b", "n9", "pg1", "true")),
        ("Pod", _running("c1", "c", "n9", "pg1", "true")),
        ("Pod", _running("c1", "kept", "n9", "pg1", "false")),
        ("PodGroup", build_pod_group("pg9", "c1", "c1", 0)),
        (
            "Pod",
            build_pod(
                "c1",
                "steady",
                "",
                "Pending",
                resource_list("1", "1Gi"),
                "pg9",
                annotations={PREEMPTABLE: "false"},
            ),
        ),
        (
            "Pod",
            build_pod(
                "c1",
                "elastic",
                "",
                "Pending",
                resource_list("1", "1Gi"),
                "pg9",
                annotations={PREEMPTABLE: "true"},
            ),
        ),
    ]
    ssn = make_session(objects, dict(CLOSED), ("enablePreemptable",))
    victims_job = ssn.jobs["c1/pg1"]
    candidates = sorted(victims_job.tasks.values(), key=lambda t: t.name)
    tasks = {t.name: t for t in ssn.jobs["c1/pg9"].tasks.values()}
    # Preemptable Running tasks on ordinary nodes, at most the budget (2) per job.
    victims = ssn.preemptable(tasks["steady"], candidates)
    assert [t.name for t in victims] == ["a", "b"]
    # A preemptable preemptor preempts nobody (Reject with no victims decides nothing).
    assert ssn.preemptable(tasks["elastic"], candidates) == []


def test_job_order_pipelined_and_starving() -> None:
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Queue", _Q1),
        ("PodGroup", _pg("steady", "c1", {})),
        (
            "PodGroup",
            build_pod_group(
                "elastic", "c1", "c1", 0, None, "Inqueue", annotations={PREEMPTABLE: "true"}
            ),
        ),
        ("Pod", build_pod("c1", "s", "", "Pending", resource_list("1", "1Gi"), "steady")),
        ("Pod", build_pod("c1", "e", "", "Pending", resource_list("1", "1Gi"), "elastic")),
    ]
    ssn = make_session(objects, {}, ("enableJobOrder", "enableJobPipelined", "enableJobStarving"))
    steady, elastic = ssn.jobs["c1/steady"], ssn.jobs["c1/elastic"]
    assert ssn.job_compare(steady, elastic) == -1 and ssn.job_compare(elastic, steady) == 1
    assert ssn.job_starving(steady) and not ssn.job_starving(elastic)
    assert tdm.job_pipelined(steady) is Vote.PERMIT  # minMember 0: pipelined already
    steady.min_available = 1
    assert tdm.job_pipelined(steady) is Vote.REJECT


# ---------------------------------------------------------------------- scenarios


def test_allocate_uses_open_revocable_nodes_for_revocable_work_only() -> None:
    """Two revocable-zone pods and one ordinary pod, one ordinary node with room for one pod
    and one revocable node in an open window: the revocable pods go to the revocable node (it
    scores 100), the ordinary pod to the ordinary node. With the window closed the revocable
    node takes nobody."""
    small = resource_list("1", "1Gi", pods="10")

    def case(window: str) -> Case:
        return Case(
            name="tdm allocate",
            plugins={
                "gang": ["enableJobReady", "enableJobPipelined"],
                "predicates": ["enablePredicate"],
                "tdm": ["enablePredicate", "enableNodeOrder"],
            },
            arguments={"tdm": {"tdm.revocable-zone.rz1": window}},
            nodes=[
                build_node("ordinary", small),
                build_node("lent", resource_list("4", "4Gi", pods="10"), {REVOCABLE_ZONE: "rz1"}),
            ],
            queues=[_Q1],
            pod_groups=[
                build_pod_group("pg1", "c1", "c1", 0),
                build_pod_group("pg2", "c1", "c1", 0),
            ],
            pods=[
                _pod("r1", {REVOCABLE_ZONE: "*"}),
                build_pod(
                    "c1",
                    "r2",
                    "",
                    "Pending",
                    resource_list("1", "1Gi"),
                    "pg1",
                    annotations={REVOCABLE_ZONE: "*"},
                ),
                build_pod("c1", "plain", "", "Pending", resource_list("1", "1Gi"), "pg2"),
            ],
        )

    opened = run_case_at(case("8:00-20:00"), ["allocate"], NOW)
    assert opened.binder.binds == {"c1/r1": "lent", "c1/r2": "lent", "c1/plain": "ordinary"}
    closed = run_case_at(case("20:00-23:00"), ["allocate"], NOW)
    assert "lent" not in closed.binder.binds.values()
    assert len(closed.binder.binds) == 1


def test_shuffle_empties_a_closed_zone_within_the_budget() -> None:
    """rz1 closed at noon: shuffle evicts pg1's preemptable pods on n1 within its budget
    (max-unavailable 30% of 5 = 2); the non-preemptable ones stay."""
    case = Case(
        name="tdm shuffle",
        plugins={"tdm": ["enabledVictim"]},
        arguments={"tdm": {"tdm.revocable-zone.rz1": "8:00-11:00"}},
        nodes=[_N1],
        queues=[_Q1],
        pod_groups=[_pg("pg1", "c1", {JDB_MAX_UNAVAILABLE: "30%"})],
        pods=_C1_PODS,
    )
    outcome = run_case_at(case, ["shuffle"], NOW)
    assert len(outcome.evictor.evicted) == 2
    assert set(outcome.evictor.evicted) <= {"c1/p1", "c1/p2", "c1/p3"}
    job = outcome.session.jobs["c1/pg1"]
    assert len(job.tasks_in(TaskStatus.RELEASING)) == 2
