"""pdb plugin (``pkg/scheduler/plugins/pdb``).

``TestPreemptableAndReclaimableFn`` of upstream ``pdb_test.go`` is transcribed first (its three
cases, each checked through the Preemptable, Reclaimable and VictimTasks dispatchers, as
upstream does); the rest covers the selector rules upstream gets from
``LabelSelectorAsSelector`` and a reclaim run where a budget protects the victim.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case, check, run_case
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import pdb

LABEL = "volcano.sh/job-name"


def make_pod(name: str, labels: Mapping[str, str], namespace: str = "default") -> dict[str, Any]:
    """Upstream ``makePod``: one empty container, labels only."""
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"containers": [{}]},
        "status": {},
    }


def make_pdb(
    name: str,
    allowed: int,
    selector: Mapping[str, Any] | None,
    *,
    namespace: str = "default",
    disrupted: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {}
    if selector is not None:
        spec["selector"] = dict(selector)
    status: dict[str, Any] = {"disruptionsAllowed": allowed}
    if disrupted:
        status["disruptedPods"] = dict(disrupted)
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
        "status": status,
    }


def session_with(pdbs: list[dict[str, Any]]) -> Session:
    cache = SchedulerCache()
    for budget in pdbs:
        cache.apply_event("PodDisruptionBudget", "ADDED", budget)
    option = PluginOption.with_flags(
        "pdb", "enablePreemptable", "enableReclaimable", "enabledVictim"
    )
    conf = SchedulerConf(actions=["preempt", "reclaim", "shuffle"], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"pdb": pdb.new}, cache)


def uids(tasks: list[TaskInfo]) -> list[str]:
    return [task.uid for task in tasks]


# ------------------------------------------------------------------ TestPreemptableAndReclaimableFn

TASK1 = TaskInfo.from_pod(make_pod("test-pod1", {LABEL: "job-1"}))
TASK2 = TaskInfo.from_pod(make_pod("test-pod2", {LABEL: "job-1"}))
JOB1 = {"matchLabels": {LABEL: "job-1"}}

UPSTREAM_CASES = [
    ("test without pdbs", [], [TASK1, TASK2]),
    ("test with pdbs(can evict 0 pod)", [make_pdb("test-pdb", 0, JOB1)], []),
    ("test with pdbs(can evict 1 pod)", [make_pdb("test-pdb", 1, JOB1)], [TASK1]),
]


@pytest.mark.parametrize(
    ("pdbs", "expected"),
    [case[1:] for case in UPSTREAM_CASES],
    ids=[case[0] for case in UPSTREAM_CASES],
)
def test_preemptable_and_reclaimable_fn(
    pdbs: list[dict[str, Any]], expected: list[TaskInfo]
) -> None:
    """TestPreemptableAndReclaimableFn."""
    ssn = session_with(pdbs)
    preemptees = [TASK1, TASK2]
    preemptor = TaskInfo.from_pod(make_pod("preemptor", {}))
    assert uids(ssn.preemptable(preemptor, preemptees)) == uids(expected)
    assert uids(ssn.reclaimable(preemptor, preemptees)) == uids(expected)
    assert sorted(uids(ssn.victim_tasks(preemptees))) == sorted(uids(expected))


# ------------------------------------------------------------------ selector and budget rules


def victims(pdbs: list[dict[str, Any]], *pods: dict[str, Any]) -> list[str]:
    budgets = [pdb.parse_budget(raw) for raw in pdbs]
    return [task.name for task in pdb.filter_victims(budgets, [TaskInfo.from_pod(p) for p in pods])]


def test_label_less_pods_are_never_victims() -> None:
    assert victims([], make_pod("bare", {}), make_pod("labelled", {"a": "b"})) == ["labelled"]


def test_budget_in_another_namespace_does_not_apply() -> None:
    other = make_pdb("other", 0, JOB1, namespace="elsewhere")
    assert victims([other], make_pod("p", {LABEL: "job-1"})) == ["p"]


def test_already_disrupted_pod_does_not_spend_the_budget() -> None:
    budget = make_pdb("b", 1, JOB1, disrupted={"p1": "2024-01-01T00:00:00Z"})
    pods = (make_pod("p1", {LABEL: "job-1"}), make_pod("p2", {LABEL: "job-1"}))
    assert victims([budget], *pods) == ["p1", "p2"]


@pytest.mark.parametrize(
    "selector",
    [None, {}, {"matchLabels": {}}],
    ids=["nil selector", "empty selector", "empty matchLabels"],
)
def test_nil_or_empty_selector_selects_nothing(selector: Mapping[str, Any] | None) -> None:
    assert victims([make_pdb("b", 0, selector)], make_pod("p", {"a": "b"})) == ["p"]


def test_invalid_selector_protects_nothing(caplog: pytest.LogCaptureFixture) -> None:
    selector = {"matchExpressions": [{"key": "a", "operator": "Like", "values": ["b"]}]}
    assert victims([make_pdb("bad", 0, selector)], make_pod("p", {"a": "b"})) == ["p"]
    assert "default/bad" in caplog.text and "operator" in caplog.text


def test_match_expressions_select_pods() -> None:
    selector = {
        "matchExpressions": [
            {"key": "tier", "operator": "In", "values": ["db", "cache"]},
            {"key": "canary", "operator": "DoesNotExist"},
        ]
    }
    pods = (
        make_pod("db", {"tier": "db"}),
        make_pod("web", {"tier": "web"}),
        make_pod("canary", {"tier": "db", "canary": "yes"}),
    )
    assert victims([make_pdb("b", 0, selector)], *pods) == ["web", "canary"]


def test_a_pod_under_two_budgets_spends_both_and_fails_on_either() -> None:
    generous = make_pdb("generous", 5, {"matchLabels": {"app": "x"}})
    strict = make_pdb("strict", 1, {"matchLabels": {"team": "t"}})
    pods = (
        make_pod("a", {"app": "x", "team": "t"}),
        make_pod("b", {"app": "x", "team": "t"}),
        make_pod("c", {"app": "x"}),
    )
    # b breaks "strict"; c only needs "generous", which still has room after a and b.
    assert victims([generous, strict], *pods) == ["a", "c"]


def test_each_call_starts_from_the_published_budget() -> None:
    ssn = session_with([make_pdb("b", 1, JOB1)])
    preemptor = TaskInfo.from_pod(make_pod("preemptor", {}))
    assert uids(ssn.preemptable(preemptor, [TASK1])) == [TASK1.uid]
    assert uids(ssn.preemptable(preemptor, [TASK2])) == [TASK2.uid]


# ------------------------------------------------------------------ in a reclaim


@pytest.mark.parametrize(("allowed", "evicted"), [(0, []), (1, ["ns1/p6"])])
def test_budget_protects_reclaim_victim(allowed: int, evicted: list[str]) -> None:
    """capacity_test.go case2 ("Can reclaim from other queues when allocated < deserved") with
    a budget over the victim p6: with no disruption allowed the reclaim does not happen."""
    rl = resource_list
    selector = {"matchLabels": {"app": "victim"}}
    case = Case(
        name=f"reclaim with disruptionsAllowed={allowed}",
        plugins={
            "capacity": ["enablePreemptive", "enableReclaimable", "enableQueueOrder"],
            "pdb": ["enableReclaimable"],
            "gang": ["enableJobStarving"],
        },
        nodes=[
            build_node("n1", rl("2", "4Gi", pods="10")),
            build_node("n2", rl("2", "4Gi", pods="10")),
        ],
        pods=[
            build_pod(
                "ns1",
                "p5",
                "n1",
                "Running",
                rl("2", "4Gi"),
                "pg5",
                {"volcano.sh/preemptable": "false"},
            ),
            build_pod("ns1", "p6", "n2", "Running", rl("2", "4Gi"), "pg5", {"app": "victim"}),
            build_pod("ns1", "p7", "", "Pending", rl("2", "4Gi"), "pg6"),
        ],
        pod_groups=[
            build_pod_group("pg5", "ns1", "q3", 1, None, "Running"),
            build_pod_group("pg6", "ns1", "q4", 1, None, "Inqueue"),
        ],
        queues=[
            build_queue("q3", deserved=rl("2", "4Gi")),
            build_queue("q4", deserved=rl("2", "4Gi")),
        ],
        others=[("PodDisruptionBudget", make_pdb("protect", allowed, selector, namespace="ns1"))],
        expect_evicted=evicted,
        expect_evict_num=len(evicted),
    )
    check(case, run_case(case, ["reclaim"]))
