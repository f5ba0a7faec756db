"""numa-aware plugin (``pkg/scheduler/plugins/numaaware/numaaware.go``).

Transcribed from upstream ``numaaware_test.go``: the five cases of ``TestNuma_OnSessionClose``,
``TestNuma_OnSessionClose_MultipleTasksAccumulate`` and ``TestNuma_OnSessionClose_VerifiesContent``
(what a closing session leaves pre-occupied, per node; upstream keeps it in the cache's
``UnassignedNumaPods``, here in the plugin's memory that outlives the session). Then whole
sessions: the NUMA-aware user guide's practice (a 16-CPU best-effort pod goes to the node that
can hold it in one NUMA node), each policy's admission, the policy mismatch reasons, pods that
are not Guaranteed, CPUs taken by earlier placements of the same session and of earlier
sessions, and the score.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.harness import Case, check, run_case
from volcano_py.api.numa import PodMeta
from volcano_py.api.types import StatusCode
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, Session, close_session, open_session
from volcano_py.plugins import numa_aware
from volcano_py.scheduler.registry import new_action

POLICY = "volcano.sh/numa-topology-policy"


def numatopology(
    name: str,
    cpus_per_numa: int,
    numa_nodes: int = 2,
    *,
    topology_policy: str = "best-effort",
    cpu_policy: str = "static",
    allocatable: str | None = None,
    pods: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    """A node whose NUMA node i is socket i, with 2 threads per core."""
    total = cpus_per_numa * numa_nodes
    detail = {
        str(cpu): {"numa": cpu // cpus_per_numa, "socket": cpu // cpus_per_numa, "core": cpu // 2}
        for cpu in range(total)
    }
    spec: dict[str, Any] = {
        "policies": {"CPUManagerPolicy": cpu_policy, "TopologyManagerPolicy": topology_policy},
        "numares": {
            "cpu": {
                "allocatable": f"0-{total - 1}" if allocatable is None else allocatable,
                "capacity": total,
            },
        },
        "cpuDetail": detail,
    }
    if pods:
        spec["podAllocations"] = pods
    return {
        "apiVersion": "nodeinfo.volcano.sh/v1alpha1",
        "kind": "Numatopology",
        "metadata": {"name": name},
        "spec": spec,
    }


def guaranteed_pod(
    name: str, cpu: str, policy: str | None = "best-effort", **kw: Any
) -> dict[str, Any]:
    annotations = {POLICY: policy} if policy else {}
    pod = build_pod(
        "ns",
        name,
        "",
        "Pending",
        {"cpu": cpu, "memory": "1Gi"},
        "pg",
        annotations=annotations,
        **kw,
    )
    container = pod["spec"]["containers"][0]
    container["resources"]["limits"] = dict(container["resources"]["requests"])
    return pod


def case(
    name: str, pods: list[dict[str, Any]], *nodes_and_topologies: dict[str, Any], **kw: Any
) -> Case:
    nodes = [o for o in nodes_and_topologies if o["kind"] == "Node"]
    topologies = [("Numatopology", o) for o in nodes_and_topologies if o["kind"] == "Numatopology"]
    return Case(
        name=name,
        plugins={"gang": (), "numa-aware": ("enablePredicate", "enableNodeOrder")},
        nodes=nodes,
        pods=pods,
        pod_groups=[build_pod_group("pg", "ns", "q1", 1)],
        queues=[build_queue("q1")],
        others=topologies,
        arguments={"numa-aware": kw.pop("arguments", {})},
        **kw,
    )


def node(name: str, cpu: str = "64") -> dict[str, Any]:
    return build_node(name, {"cpu": cpu, "memory": "64Gi", "pods": "110"})


# ---------------------------------------------------------------------- TestNuma_OnSessionClose


def open_numa_session(state: SchedulingState, *pods: str) -> Session:
    cache = SchedulerCache()
    for node_name, cpu in (("n1", "2"), ("n2", "4")):
        cache.apply_event("Node", "ADDED", build_node(node_name, {"cpu": cpu, "memory": "4Gi"}))
    for pod in pods:
        cache.apply_event(
            "Pod",
            "ADDED",
            build_pod("c1", pod, "", "Pending", {"cpu": "2", "memory": "1Gi"}, "pg1"),
        )
    cache.apply_event("PodGroup", "ADDED", build_pod_group("pg1", "c1", "c1", 0))
    cache.apply_event("Queue", "ADDED", build_queue("c1"))
    option = PluginOption.with_flags("numa-aware", "enablePredicate")
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"numa-aware": numa_aware.new}, cache, state)


def plugin_of(ssn: Session) -> numa_aware.NumaAwarePlugin:
    plugin = ssn.plugins["numa-aware"]
    assert isinstance(plugin, numa_aware.NumaAwarePlugin)
    return plugin


P1 = PodMeta("c1-p1", "p1", "c1")
BOTH_NODES = {"n1": {"cpu": frozenset({0, 1})}, "n2": {"cpu": frozenset({2, 3})}}


@pytest.mark.parametrize(
    ("name", "bind", "assign", "meta", "expected"),
    [
        ("taskBindNodeMap is empty, no unassigned numa pods", None, None, False, {}),
        ("assignRes missing taskID, skip adding unassigned numa pods", "n2", None, False, {}),
        (
            "assignRes has taskID but missing nodeName, skip adding unassigned numa pods",
            "nonexistent node",
            BOTH_NODES,
            False,
            {},
        ),
        (
            "taskPodMetaMap missing taskID, skip adding unassigned numa pods",
            "n2",
            BOTH_NODES,
            False,
            {},
        ),
        (
            "normal case, successfully add unassigned numa pods",
            "n2",
            BOTH_NODES,
            True,
            {"n2": 1},
        ),
    ],
)
def test_on_session_close_upstream(
    name: str, bind: str | None, assign: Any, meta: bool, expected: dict[str, int]
) -> None:
    state = SchedulingState()
    ssn = open_numa_session(state, "p1")
    view = plugin_of(ssn).view
    assert view is not None
    if bind is not None:
        view.task_bind_node["c1-p1"] = bind
    if assign is not None:
        view.assign_res["c1-p1"] = assign
    if meta:
        view.task_pod_meta["c1-p1"] = P1
    close_session(ssn)
    unassigned = state.plugin_memory.get("numa-aware", {})
    assert {node: len(pods) for node, pods in unassigned.items()} == expected


def test_on_session_close_multiple_tasks_accumulate_upstream() -> None:
    state = SchedulingState()
    ssn = open_numa_session(state, "p1", "p2", "p3")
    view = plugin_of(ssn).view
    assert view is not None
    view.task_bind_node.update({"c1-p1": "n2", "c1-p2": "n1", "c1-p3": "n1"})
    view.assign_res["c1-p1"] = {"n2": {"cpu": frozenset({0, 1})}}
    view.assign_res["c1-p2"] = {"n1": {"cpu": frozenset({2, 3})}}
    view.assign_res["c1-p3"] = {"n1": {"cpu": frozenset({4, 5})}}
    view.task_pod_meta["c1-p1"] = P1
    view.task_pod_meta["c1-p2"] = PodMeta("c1-p2", "p2", "c1")
    # p3 has no pod meta: skipped
    close_session(ssn)
    unassigned = state.plugin_memory["numa-aware"]
    assert {node: len(pods) for node, pods in unassigned.items()} == {"n2": 1, "n1": 1}


def test_on_session_close_verifies_content_upstream() -> None:
    state = SchedulingState()
    ssn = open_numa_session(state, "p1")
    view = plugin_of(ssn).view
    assert view is not None
    view.task_bind_node["c1-p1"] = "n2"
    view.assign_res["c1-p1"] = {"n2": {"cpu": frozenset({7, 8})}}
    view.task_pod_meta["c1-p1"] = P1
    close_session(ssn)
    assert state.plugin_memory["numa-aware"]["n2"][P1] == {"cpu": {7, 8}}


# ---------------------------------------------------------------------- whole sessions


def test_user_guide_practice_prefers_the_node_that_fits_one_numa_node() -> None:
    """how_to_use_numa_aware.md, Practice: node-1 has 12 + 12 allocatable CPUs, node-2 20 +
    20; a best-effort 16-CPU pod goes to node-2, where one NUMA node holds it."""
    outcome = run_case(
        case(
            "user guide",
            [guaranteed_pod("p1", "16")],
            node("node-1", "24"),
            node("node-2", "40"),
            numatopology("node-1", 12),
            numatopology("node-2", 20),
            arguments={"weight": 10},
        ),
        ["allocate"],
    )
    assert outcome.binds == {"ns/p1": "node-2"}


@pytest.mark.parametrize(
    ("policy", "admitted"),
    [("best-effort", True), ("restricted", False), ("single-numa-node", False), ("none", True)],
)
def test_each_policy_admits_as_the_kubelet_would(policy: str, admitted: bool) -> None:
    """6 CPUs on a node with 4 free per NUMA node (two pinned on each): only the policies
    that accept a split admit the pod. With ``none`` the pod and node policies match."""
    pods = [guaranteed_pod("p1", "6", policy)]
    topology = numatopology("n1", 6, topology_policy=policy, allocatable="0-3,6-9")
    outcome = run_case(case(policy, pods, node("n1"), topology), ["allocate"])
    if policy == "none":
        # A pod with the none policy is not pinned by topology: the node is not checked.
        assert outcome.binds == {"ns/p1": "n1"}
        return
    assert outcome.binds == ({"ns/p1": "n1"} if admitted else {})


def test_restricted_admits_a_split_when_no_single_numa_node_could_ever_hold_it() -> None:
    """The preferred hint is the narrowest that could ever hold the request: 10 CPUs never fit
    one 8-CPU NUMA node, so both nodes together are preferred."""
    pods = [guaranteed_pod("p1", "10", "restricted")]
    topology = numatopology("n1", 8, topology_policy="restricted")
    outcome = run_case(case("restricted", pods, node("n1"), topology), ["allocate"])
    assert outcome.binds == {"ns/p1": "n1"}


def predicate_statuses(pods: list[dict[str, Any]], *objects: dict[str, Any]) -> dict[str, Any]:
    outcome = run_case(case("reasons", pods, *objects), [])
    ssn = outcome.session
    task = next(iter(ssn.jobs["ns/pg"].tasks.values()))
    return {n.name: ssn.predicate_fn(task, n) for n in ssn.node_list}


def test_policy_mismatch_reasons() -> None:
    statuses = predicate_statuses(
        [guaranteed_pod("p1", "2", "single-numa-node")],
        node("bare"),
        node("dynamic"),
        node("other"),
        node("empty"),
        node("ok"),
        numatopology("dynamic", 4, cpu_policy="none", topology_policy="single-numa-node"),
        numatopology("other", 4, topology_policy="best-effort"),
        numatopology("empty", 4, topology_policy="single-numa-node", allocatable=""),
        numatopology("ok", 4, topology_policy="single-numa-node"),
    )
    reasons = {name: [s.reason for s in found] for name, found in statuses.items()}
    assert reasons == {
        "bare": ["numa info is empty"],
        "dynamic": ["cpu manager policy isn't static"],
        "other": ["task topology policy[single-numa-node] is different with node[best-effort]"],
        "empty": ["cpu allocatable map is empty"],
        "ok": [],
    }
    assert all(s.code is StatusCode.ERROR for found in statuses.values() for s in found)


def test_a_container_the_policy_refuses_is_unresolvable() -> None:
    statuses = predicate_statuses(
        [guaranteed_pod("p1", "6", "single-numa-node")],
        node("n1"),
        numatopology("n1", 4, topology_policy="single-numa-node"),
    )
    (status,) = statuses["n1"]
    assert status.code is StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE
    assert status.reason == "container main cannot be assigned by numa"
    assert status.plugin == "numa-aware"


def test_guaranteed_pod_without_policy_is_still_checked_on_numa_managed_nodes() -> None:
    """The kubelet's policy applies to every Guaranteed pod: without an annotation the pod may
    go anywhere, but not where the node's single-numa-node policy would refuse it."""
    pods = [guaranteed_pod("p1", "6", None)]
    outcome = run_case(
        case(
            "no policy",
            pods,
            node("a-numa"),
            node("b-plain"),
            numatopology("a-numa", 4, topology_policy="single-numa-node"),
        ),
        ["allocate"],
    )
    assert outcome.binds == {"ns/p1": "b-plain"}


def test_pods_that_are_not_guaranteed_are_not_pinned() -> None:
    burstable = build_pod(
        "ns",
        "p1",
        "",
        "Pending",
        {"cpu": "6", "memory": "1Gi"},
        "pg",
        annotations={POLICY: "single-numa-node"},
    )
    outcome = run_case(
        case(
            "burstable",
            [burstable],
            node("n1"),
            numatopology("n1", 4, topology_policy="single-numa-node"),
        ),
        ["allocate"],
    )
    assert outcome.binds == {"ns/p1": "n1"}
    fractional = guaranteed_pod("p2", "1500m", None)
    outcome = run_case(
        case(
            "fractional",
            [fractional],
            node("n1"),
            numatopology("n1", 1, topology_policy="single-numa-node"),
        ),
        ["allocate"],
    )
    assert outcome.binds == {"ns/p2": "n1"}


def test_cpus_taken_in_the_session_are_not_offered_again() -> None:
    """Two NUMA nodes of 4 CPUs, single-numa-node: three 4-CPU pods, only two fit (the node's
    own cpu allocatable would take all three)."""
    pods = [guaranteed_pod(f"p{i}", "4", "single-numa-node") for i in range(3)]
    outcome = run_case(
        case(
            "session", pods, node("n1"), numatopology("n1", 4, topology_policy="single-numa-node")
        ),
        ["allocate"],
    )
    assert len(outcome.binds) == 2


def run_sessions(
    objects: list[tuple[str, dict[str, Any]]], sessions: int
) -> tuple[SchedulerCache, SchedulingState, list[dict[str, str]]]:
    from volcano_py.cache.interfaces import RecordingBinder

    binder = RecordingBinder()
    cache = SchedulerCache(binder=binder)
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("numa-aware", "enablePredicate", "enableNodeOrder")
    conf = SchedulerConf(actions=["allocate"], tiers=[Tier([option])])
    state = SchedulingState()
    binds = []
    for _ in range(sessions):
        before = dict(binder.binds)
        ssn = open_session(cache.snapshot(), conf, {"numa-aware": numa_aware.new}, cache, state)
        new_action("allocate").execute(ssn)
        close_session(ssn)
        binds.append({k: v for k, v in binder.binds.items() if k not in before})
    return cache, state, binds


def test_placed_pods_pre_occupy_their_cpus_until_the_node_reports_them() -> None:
    """Session 1 places p0 (4 CPUs of one NUMA node); the Numatopology still lists all CPUs
    free, so session 2 must not offer p0's CPUs again: p1 gets the other NUMA node and p2
    nothing. Once the exporter reports p0 pinned (and its CPUs gone), the memory is cleared."""
    topology = numatopology("n1", 4, topology_policy="single-numa-node")
    objects = [
        ("Node", node("n1")),
        ("Numatopology", topology),
        ("Queue", build_queue("q1")),
        ("Pod", guaranteed_pod("p0", "4", "single-numa-node")),
        ("PodGroup", build_pod_group("pg", "ns", "q1", 1)),
    ]
    cache, state, binds = run_sessions(objects, 1)
    assert binds == [{"ns/p0": "n1"}]
    held = state.plugin_memory["numa-aware"]["n1"]
    assert list(held.values()) == [{"cpu": frozenset({0, 1, 2, 3})}]
    for name in ("p1", "p2"):
        pod = _in_group(guaranteed_pod(name, "4", "single-numa-node"), name)
        cache.apply_event("Pod", "ADDED", pod)
        cache.apply_event("PodGroup", "ADDED", build_pod_group(name, "ns", "q1", 1))
    option = PluginOption.with_flags("numa-aware", "enablePredicate", "enableNodeOrder")
    conf = SchedulerConf(actions=["allocate"], tiers=[Tier([option])])
    ssn = open_session(cache.snapshot(), conf, {"numa-aware": numa_aware.new}, cache, state)
    new_action("allocate").execute(ssn)
    close_session(ssn)
    assert set(state.plugin_memory["numa-aware"]["n1"]) == {
        PodMeta("ns-p0", "p0", "ns"),
        PodMeta("ns-p1", "p1", "ns"),
    }
    assert state.plugin_memory["numa-aware"]["n1"][PodMeta("ns-p1", "p1", "ns")] == {
        "cpu": frozenset({4, 5, 6, 7})
    }
    # The exporter catches up: both pods pinned, no CPU left.
    reported = numatopology(
        "n1",
        4,
        topology_policy="single-numa-node",
        allocatable="",
        pods=[
            {"uid": "ns-p0", "name": "p0", "namespace": "ns"},
            {"uid": "ns-p1", "name": "p1", "namespace": "ns"},
        ],
    )
    cache.apply_event("Numatopology", "MODIFIED", reported)
    ssn = open_session(cache.snapshot(), conf, {"numa-aware": numa_aware.new}, cache, state)
    close_session(ssn)
    assert state.plugin_memory["numa-aware"].get("n1", {}) == {}


def _in_group(pod: dict[str, Any], group: str) -> dict[str, Any]:
    pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] = group
    return pod


def test_a_gone_pod_no_longer_pre_occupies() -> None:
    topology = numatopology("n1", 4, topology_policy="single-numa-node")
    objects = [
        ("Node", node("n1")),
        ("Numatopology", topology),
        ("Queue", build_queue("q1")),
        ("Pod", guaranteed_pod("p0", "4", "single-numa-node")),
        ("PodGroup", build_pod_group("pg", "ns", "q1", 1)),
    ]
    cache, state, _binds = run_sessions(objects, 1)
    assert state.plugin_memory["numa-aware"]["n1"]
    cache.apply_event("Pod", "DELETED", guaranteed_pod("p0", "4", "single-numa-node"))
    conf = SchedulerConf(
        actions=[], tiers=[Tier([PluginOption.with_flags("numa-aware", "enablePredicate")])]
    )
    ssn = open_session(cache.snapshot(), conf, {"numa-aware": numa_aware.new}, cache, state)
    close_session(ssn)
    assert "n1" not in state.plugin_memory["numa-aware"]


def test_batch_node_order_scores_fewer_numa_nodes_higher() -> None:
    """getNodeNumaNumForTask + NormalizeScore(100, reverse): 1 NUMA node scores 50 when the
    widest spans 2; times the weight."""
    pods = [guaranteed_pod("p1", "6", "best-effort")]
    outcome = run_case(
        case(
            "score",
            pods,
            node("narrow"),
            node("wide"),
            numatopology("narrow", 8),
            numatopology("wide", 4),
            arguments={"weight": 3},
        ),
        [],
    )
    ssn = outcome.session
    task = next(iter(ssn.jobs["ns/pg"].tasks.values()))
    for n in ssn.node_list:
        assert ssn.predicate_fn(task, n) == ()
    rows = np.array([n.row for n in ssn.node_list])
    scores = dict(
        zip([n.name for n in ssn.node_list], ssn.node_scores(task, rows).tolist(), strict=True)
    )
    assert scores == {"narrow": 150.0, "wide": 0.0}
    # Without a topology policy the plugin does not score.
    plain = guaranteed_pod("p2", "6", None)
    outcome = run_case(case("no score", [plain], node("narrow"), numatopology("narrow", 8)), [])
    ssn = outcome.session
    task = next(iter(ssn.jobs["ns/pg"].tasks.values()))
    assert ssn.node_scores(task, np.array([0])).tolist() == [0.0]


def test_case_helper_runs_through_check() -> None:
    """The harness's Case works for numa-aware as for any plugin."""
    c = case(
        "check",
        [guaranteed_pod("p1", "4", "single-numa-node")],
        node("n1"),
        numatopology("n1", 4, topology_policy="single-numa-node"),
        expect_bind_map={"ns/p1": "n1"},
    )
    check(c, run_case(c, ["allocate"]))


def test_nodes_built_alike_share_decisions_but_not_cpus() -> None:
    """Two identical nodes (one layout, one decision while their free CPUs are the same):
    four 4-CPU single-numa-node pods fill both NUMA nodes of both; a fifth waits."""
    pods = [guaranteed_pod(f"p{i}", "4", "single-numa-node") for i in range(5)]
    outcome = run_case(
        case(
            "alike",
            pods,
            node("n1"),
            node("n2"),
            numatopology("n1", 4, topology_policy="single-numa-node"),
            numatopology("n2", 4, topology_policy="single-numa-node"),
        ),
        ["allocate"],
    )
    placed = sorted(outcome.binds.values())
    assert placed == ["n1", "n1", "n2", "n2"]
    plugin = plugin_of(outcome.session)
    assert plugin.view is not None and len(plugin.view.layouts) == 1
    # Each pod holds a distinct NUMA node's CPUs.
    held = [
        tuple(sorted(sets["cpu"]))
        for sets in outcome.session.state.plugin_memory["numa-aware"]["n1"].values()
    ]
    assert sorted(held) == [(0, 1, 2, 3), (4, 5, 6, 7)]


def test_without_any_numatopology_a_policy_pod_fits_nowhere() -> None:
    statuses = predicate_statuses([guaranteed_pod("p1", "2", "best-effort")], node("n1"))
    assert [s.reason for s in statuses["n1"]] == ["numa info is empty"]
    plain = predicate_statuses([guaranteed_pod("p1", "2", None)], node("n1"))
    assert plain["n1"] == ()
