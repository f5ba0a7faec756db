"""network-topology-aware plugin (``pkg/scheduler/plugins/network-topology-aware``).

Transcribed from upstream ``network_topology_aware_test.go``: ``TestNew``,
``TestReverseAndCapEvictionGradients``, ``TestNetworkTopologyAwareNodeScore_Hard`` and ``_Soft``
(7 cases each), ``TestBatchNodeOrderFn`` (5), ``TestHyperNodeOrderFn`` (2),
``Test_initHyperNodeResourceCache``, ``TestHyperNodeGradientPreFiltering`` (10) and
``TestHyperNodeGradientForSubJobFn_NoSubJobPolicyRespectsHardTopology``; then the event
handler, width growth and the search root, which upstream tests only through allocate.

Reading the fixtures: upstream gives ``HyperNodesSetByTier``, ``HyperNodes`` (real-node sets) and
a ``HyperNodesMap`` of objects whose ``HyperNode`` members (and ``ParentOpt``) make the tree; we
build the HyperNode objects the map describes and go through the cache. ``TestHyperNodeOrderFn``
scores the sub-job of a sub-group policy holding every task of the job. Scores are compared
with upstream's tolerance, 0.1.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_queue,
    build_sub_group_policy,
)
from tests.builders import resource_list as rl
from tests.hypernode_fixtures import build_hyper_node
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.framework.topology import SearchPurpose
from volcano_py.plugins.network_topology_aware import (
    PLUGIN_NAME,
    NetworkTopologyAwarePlugin,
    NormalPodConfig,
    TopologyWeights,
    max_hyper_nodes_for_eviction,
    new,
    reverse_and_cap,
)
from volcano_py.scheduler.registry import PluginRegistry

EPS = 1e-1
ALL_FLAGS = ("enableNodeOrder", "enabledHyperNodeOrder", "enabledHyperNodeGradient")

# name -> (tier, [(member, "Node" | "HyperNode")], explicit parent or None)
UpstreamMap = Mapping[str, tuple[int, Sequence[tuple[str, str]], str | None]]


def hyper_nodes_from_upstream(
    tiers: Mapping[int, Sequence[str]],
    members: Mapping[str, Sequence[str]],
    upstream_map: UpstreamMap,
) -> list[dict[str, Any]]:
    """The HyperNode objects of an upstream fixture. A HyperNode of the map keeps its members
    (``ParentOpt`` adds it to its parent's); one only in the sets becomes a parentless HyperNode
    of its tier over its real nodes (upstream cannot find its ancestors either)."""
    tier_of = {name: tier for tier, names in tiers.items() for name in names}
    names = set(upstream_map) | set(members) | set(tier_of)
    node_members: dict[str, list[str]] = {}
    children: dict[str, list[str]] = {}
    tier_by_name: dict[str, int] = {}
    for name in names:
        if name in upstream_map:
            tier, listed, _ = upstream_map[name]
            node_members[name] = [m for m, kind in listed if kind == "Node"]
            children[name] = [m for m, kind in listed if kind == "HyperNode"]
        else:
            tier = tier_of[name]
            node_members[name] = list(members.get(name, ()))
            children[name] = []
        tier_by_name[name] = tier
    for name, (_, _, parent) in upstream_map.items():
        if parent and name not in children.setdefault(parent, []):
            children[parent].append(name)
    return [
        build_hyper_node(name, tier_by_name[name], node_members[name], children[name])
        for name in sorted(names)
    ]


def topology_pod_group(
    name: str, namespace: str, min_member: int, mode: str, tier: int, phase: str
) -> dict[str, Any]:
    """``util.BuildPodGroupWithNetWorkTopologies``."""
    return build_pod_group(
        name,
        namespace,
        "q1",
        min_member,
        None,
        phase,
        network_topology={"mode": mode, "highestTierAllowed": tier},
    )


def sub_grouped_pod_group() -> dict[str, Any]:
    """``util.BuildPodGroupWithSubGroupPolicy(..., "hard", 2, [BuildSubGroupPolicy("task1",
    ["volcano.sh/task-spec"], "", 0)])``: both pods (task-spec ``worker``) form one sub-job."""
    group = topology_pod_group("pg1", "ns1", 2, "hard", 2, "Inqueue")
    group["spec"]["subGroupPolicy"] = [build_sub_group_policy("task1", ["volcano.sh/task-spec"])]
    return group


@dataclass
class ScoreCase:
    name: str
    pod_groups: list[dict[str, Any]]
    pods: list[dict[str, Any]]
    nodes: list[dict[str, Any]]
    hyper_nodes: list[dict[str, Any]]
    expected: dict[str, float]
    # The PodGroup annotation upstream's parseTask copies onto the task.
    job_allocated_hyper_node: str = ""
    arguments: dict[str, Any] = field(default_factory=dict)
    # None: every session node.
    score_nodes: list[str] | None = None


def open_case(case: ScoreCase, flags: Sequence[str] = ALL_FLAGS) -> tuple[Session, SchedulerCache]:
    cache = SchedulerCache()
    for kind, objects in (
        ("Node", case.nodes),
        ("Pod", case.pods),
        ("PodGroup", case.pod_groups),
        ("Queue", [build_queue("q1", 1, None)]),
        ("HyperNode", case.hyper_nodes),
    ):
        for obj in objects:
            cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(
        actions=["allocate"],
        tiers=[Tier([PluginOption.with_flags(PLUGIN_NAME, *flags, arguments=case.arguments)])],
    )
    return open_session(cache.snapshot(), conf, PluginRegistry(), cache), cache


def pending_task(ssn: Session, case: ScoreCase) -> TaskInfo:
    """``parseTask``: the job's Pending task, with the job's HyperNode as the annotation says."""
    (job,) = ssn.jobs.values()
    (task,) = job.tasks_in(TaskStatus.PENDING).values()
    task.job_allocated_hyper_node = case.job_allocated_hyper_node
    return task


def node_scores(case: ScoreCase) -> dict[str, float]:
    ssn, _ = open_case(case)
    task = pending_task(ssn, case)
    names = case.score_nodes or [node.name for node in ssn.node_list]
    rows = np.array([ssn.nodes[name].row for name in names], dtype=np.intp)
    return dict(zip(names, ssn.node_scores(task, rows).tolist(), strict=True))


def assert_scores(actual: Mapping[str, float], expected: Mapping[str, float]) -> None:
    for name, score in expected.items():
        assert abs(actual[name] - score) <= EPS, f"{name}: {actual[name]} != {score}"


# ---------------------------------------------------------------------------- TestNew


@pytest.mark.parametrize(
    ("arguments", "weights", "normal_pod"),
    [
        pytest.param(
            {}, TopologyWeights(1, 1, 1, {}), NormalPodConfig(True, 0.8), id="no arguments"
        ),
        pytest.param(
            {
                "weight": 2,
                "hypernode.binpack.cpu": 3,
                "hypernode.binpack.memory": 4,
                "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
                "hypernode.binpack.resources.nvidia.com/gpuxxx": 5,
                "hypernode.binpack.resources.example.com/foo": 6,
                "hypernode.binpack.normal-pod.enable": False,
                "hypernode.binpack.normal-pod.fading": 0,
            },
            TopologyWeights(2, 3, 4, {"nvidia.com/gpu": 1, "example.com/foo": 6}),
            NormalPodConfig(False, 0.0),
            id="customized valid arguments",
        ),
        pytest.param(
            {
                "weight": -1,
                "hypernode.binpack.cpu": -1,
                "hypernode.binpack.memory": -1,
                "hypernode.binpack.resources": "nvidia.com/gpuxxx, example.com/foo",
                "hypernode.binpack.resources.nvidia.com/gpu": -1,
                "hypernode.binpack.resources.example.com/foo": -1,
                "hypernode.binpack.normal-pod.enable": "a",
                "hypernode.binpack.normal-pod.fading": -1,
            },
            TopologyWeights(1, 1, 1, {"nvidia.com/gpuxxx": 1, "example.com/foo": 1}),
            NormalPodConfig(True, 0.8),
            id="customized invalid arguments",
        ),
    ],
)
def test_new_upstream(
    arguments: dict[str, Any], weights: TopologyWeights, normal_pod: NormalPodConfig
) -> None:
    """``TestNew``."""
    plugin = new(Arguments(arguments))
    assert plugin.weights == weights
    assert plugin.normal_pod == normal_pod
    assert plugin.name == "network-topology-aware"


def test_eviction_cap_argument() -> None:
    assert max_hyper_nodes_for_eviction(Arguments({})) == 8
    assert max_hyper_nodes_for_eviction(Arguments({"hypernode.gradient.evict.max-hypernodes": 3}))
    assert max_hyper_nodes_for_eviction(Arguments({"hypernode.gradient.evict.max-hypernodes": 0}))
    assert (
        max_hyper_nodes_for_eviction(Arguments({"hypernode.gradient.evict.max-hypernodes": -2}))
        == 8
    )


def test_reverse_and_cap_eviction_gradients_upstream() -> None:
    """``TestReverseAndCapEvictionGradients``."""
    gradients = [["a", "b"], ["c", "d"]]
    assert reverse_and_cap(gradients, 3) == [["c", "d"], ["b"]]
    assert reverse_and_cap(gradients, 0) == gradients


def test_tier_weight_fades_and_guards_zero_to_a_negative_power() -> None:
    config = NormalPodConfig(True, 0.5)
    assert [config.tier_weight(tier) for tier in (1, 2, 3)] == [1.0, 0.5, 0.25]
    assert NormalPodConfig(True, 0.0).tier_weight(1) == 1.0
    assert NormalPodConfig(True, 0.0).tier_weight(0) == 0.0


# ---------------------------------------------------------------------------- upstream tables

# TestNetworkTopologyAwareNodeScore_Hard
NODE_SCORE_HARD = [
    ScoreCase(
        name="Tasks in job first scheduler, score all nodes zero",
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "hard", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1", "p4", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        arguments={"weight": 1},
        score_nodes=["s3-n1", "s4-n1", "s5-n1"],
        expected={"s3-n1": 0.0, "s4-n1": 0.0, "s5-n1": 0.0},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score zero when the hyperNode of node has empty LCA "
            "hyperNode with jobAllocatedHyperNode"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "hard", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s3-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1",
                "p2",
                "s3-n2",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1", "p3", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s3",
        arguments={"weight": 1},
        score_nodes=["s5-n1", "s6-n1"],
        expected={"s5-n1": 0.0, "s6-n1": 0.0},
    ),
    ScoreCase(
        name="Tasks in job rescheduled, score nodes according to node hypernode LCA hyperNode tier",
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "hard", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s3-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1",
                "p2",
                "s3-n2",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1", "p3", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s3",
        arguments={"weight": 1},
        score_nodes=["s3-n1", "s4-n1", "s5-n1"],
        expected={"s3-n1": 100.0, "s4-n1": 66.6, "s5-n1": 33.3},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier "
            "of the hyperNode and jobAllocatedHyperNode when hyperNodesInfo has two tier"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "hard", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s1-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1", "p2", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s1-n1", rl("2", "4Gi", pods="10")),
            build_node("s1-n2", rl("2", "4Gi", pods="10")),
            build_node("s2-n1", rl("2", "4Gi", pods="10")),
            build_node("s2-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s1", "s2"], 2: ["s0"]},
            {
                "s0": ["s1-n1", "s1-n2", "s2-n1", "s2-n2"],
                "s1": ["s1-n1", "s1-n2"],
                "s2": ["s2-n1", "s2-n2"],
            },
            {
                "s0": (2, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (1, [("s1-n1", "Node"), ("s1-n2", "Node")], None),
                "s2": (1, [("s2-n1", "Node"), ("s2-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s1",
        arguments={"weight": 1},
        score_nodes=["s1-n1", "s2-n1"],
        expected={"s1-n1": 100.0, "s2-n1": 50.0},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier "
            "of the hyperNode and jobAllocatedHyperNode when hyperNodesInfo has one tier"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "hard", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s1-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1", "p2", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s1-n1", rl("2", "4Gi", pods="10")),
            build_node("s1-n2", rl("2", "4Gi", pods="10")),
            build_node("s2-n1", rl("2", "4Gi", pods="10")),
            build_node("s2-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s1", "s2"]},
            {"s1": ["s1-n1", "s1-n2"], "s2": ["s2-n1", "s2-n2"]},
            {
                "s1": (1, [("s1-n1", "Node"), ("s1-n2", "Node")], None),
                "s2": (1, [("s2-n1", "Node"), ("s2-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s1",
        arguments={"weight": 1},
        score_nodes=["s1-n1", "s2-n1"],
        expected={"s1-n1": 100.0, "s2-n1": 0.0},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier "
            "of the hyperNode and jobAllocatedHyperNode with plugin weight 2"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "hard", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s3-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1",
                "p2",
                "s3-n2",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1", "p3", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s3",
        arguments={"weight": 2},
        score_nodes=["s3-n1", "s4-n1", "s5-n1"],
        expected={"s3-n1": 200.0, "s4-n1": 133.3, "s5-n1": 66.6},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier "
            "and task num of the hyperNode when there are at least two hyperNodes have max "
            "hyperNode tier score"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 3, "hard", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s3-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1",
                "p2",
                "s3-n2",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1",
                "p3",
                "s4-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1", "p4", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s1",
        arguments={"weight": 1},
        score_nodes=["s3-n1", "s4-n1", "s5-n1"],
        expected={"s3-n1": 116.6, "s4-n1": 91.6, "s5-n1": 33.3},
    ),
]


# TestNetworkTopologyAwareNodeScore_Soft
NODE_SCORE_SOFT = [
    ScoreCase(
        name="Tasks in job first scheduler, score all nodes zero",
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "soft", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1", "p4", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        arguments={"weight": 1},
        score_nodes=["s3-n1", "s4-n1", "s5-n1"],
        expected={"s3-n1": 0.0, "s4-n1": 0.0, "s5-n1": 0.0},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score zero when the hyperNode of node has empty LCA "
            "hyperNode with jobAllocatedHyperNode"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "soft", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s3-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1",
                "p2",
                "s3-n2",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1", "p3", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s3",
        arguments={"weight": 1},
        score_nodes=["s5-n1", "s6-n1"],
        expected={"s5-n1": 0.0, "s6-n1": 0.0},
    ),
    ScoreCase(
        name="Tasks in job rescheduled, score nodes according to node hypernode LCA hyperNode tier",
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "soft", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s3-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1",
                "p2",
                "s3-n2",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1", "p3", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s3",
        arguments={"weight": 1},
        score_nodes=["s3-n1", "s4-n1", "s5-n1"],
        expected={"s3-n1": 100.0, "s4-n1": 66.6, "s5-n1": 33.3},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier "
            "of the hyperNode and jobAllocatedHyperNode when hyperNodesInfo has two tier"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "soft", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s1-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1", "p2", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s1-n1", rl("2", "4Gi", pods="10")),
            build_node("s1-n2", rl("2", "4Gi", pods="10")),
            build_node("s2-n1", rl("2", "4Gi", pods="10")),
            build_node("s2-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s1", "s2"], 2: ["s0"]},
            {
                "s0": ["s1-n1", "s1-n2", "s2-n1", "s2-n2"],
                "s1": ["s1-n1", "s1-n2"],
                "s2": ["s2-n1", "s2-n2"],
            },
            {
                "s0": (2, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (1, [("s1-n1", "Node"), ("s1-n2", "Node")], None),
                "s2": (1, [("s2-n1", "Node"), ("s2-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s1",
        arguments={"weight": 1},
        score_nodes=["s1-n1", "s2-n1"],
        expected={"s1-n1": 100.0, "s2-n1": 50.0},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier "
            "of the hyperNode and jobAllocatedHyperNode when hyperNodesInfo has one tier"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "soft", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s1-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1", "p2", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s1-n1", rl("2", "4Gi", pods="10")),
            build_node("s1-n2", rl("2", "4Gi", pods="10")),
            build_node("s2-n1", rl("2", "4Gi", pods="10")),
            build_node("s2-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s1", "s2"]},
            {"s1": ["s1-n1", "s1-n2"], "s2": ["s2-n1", "s2-n2"]},
            {
                "s1": (1, [("s1-n1", "Node"), ("s1-n2", "Node")], None),
                "s2": (1, [("s2-n1", "Node"), ("s2-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s1",
        arguments={"weight": 1},
        score_nodes=["s1-n1", "s2-n1"],
        expected={"s1-n1": 100.0, "s2-n1": 0.0},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier "
            "of the hyperNode and jobAllocatedHyperNode with plugin weight 2"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 1, "soft", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s3-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1",
                "p2",
                "s3-n2",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1", "p3", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s3",
        arguments={"weight": 2},
        score_nodes=["s3-n1", "s4-n1", "s5-n1"],
        expected={"s3-n1": 200.0, "s4-n1": 133.3, "s5-n1": 66.6},
    ),
    ScoreCase(
        name=(
            "Tasks in job rescheduled, score hyperNodes according to node LCA hyperNode tier "
            "and task num of the hyperNode when there are at least two hyperNodes have max "
            "hyperNode tier score"
        ),
        pod_groups=[
            topology_pod_group("pg1", "c1", 3, "soft", 0, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "p1",
                "s3-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "master"},
            ),
            build_pod(
                "c1",
                "p2",
                "s3-n2",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1",
                "p3",
                "s4-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "c1", "p4", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4Gi", pods="10")),
            build_node("s3-n2", rl("2", "4Gi", pods="10")),
            build_node("s4-n1", rl("2", "4Gi", pods="10")),
            build_node("s4-n2", rl("2", "4Gi", pods="10")),
            build_node("s5-n1", rl("2", "4Gi", pods="10")),
            build_node("s5-n2", rl("2", "4Gi", pods="10")),
            build_node("s6-n1", rl("2", "4Gi", pods="10")),
            build_node("s6-n2", rl("2", "4Gi", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s1",
        arguments={"weight": 1},
        score_nodes=["s3-n1", "s4-n1", "s5-n1"],
        expected={"s3-n1": 116.6, "s4-n1": 91.6, "s5-n1": 33.3},
    ),
]


# TestBatchNodeOrderFn
BATCH_NODE_ORDER = [
    ScoreCase(
        name=(
            "score empty nodes for single task with no network topology and no hypernode-"
            "level binpacking"
        ),
        pod_groups=[
            build_pod_group("pg1", "ns1", "q1", 1, None, "Inqueue"),
        ],
        pods=[
            build_pod("ns1", "p1", "", "Pending", rl("2", "4G"), "pg1"),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4G", pods="10")),
            build_node("s3-n2", rl("2", "4G", pods="10")),
            build_node("s4-n1", rl("4", "4G", pods="10")),
            build_node("s4-n2", rl("4", "4G", pods="10")),
            build_node("s5-n1", rl("2", "8G", pods="10")),
            build_node("s5-n2", rl("2", "8G", pods="10")),
            build_node("s6-n1", rl("4", "8G", pods="10")),
            build_node("s6-n2", rl("4", "8G", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        arguments={"hypernode.binpack.normal-pod.enable": False},
        expected={},
    ),
    ScoreCase(
        name=(
            "score empty nodes for single task with no network topology and default plugin "
            "arguments"
        ),
        pod_groups=[
            build_pod_group("pg1", "ns1", "q1", 1, None, "Inqueue"),
        ],
        pods=[
            build_pod("ns1", "p1", "", "Pending", rl("2", "4G"), "pg1"),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4G", pods="10")),
            build_node("s3-n2", rl("2", "4G", pods="10")),
            build_node("s4-n1", rl("4", "4G", pods="10")),
            build_node("s4-n2", rl("4", "4G", pods="10")),
            build_node("s5-n1", rl("2", "8G", pods="10")),
            build_node("s5-n2", rl("2", "8G", pods="10")),
            build_node("s6-n1", rl("4", "8G", pods="10")),
            build_node("s6-n2", rl("4", "8G", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        expected={
            "s3-n1": 25.8,
            "s3-n2": 25.8,
            "s4-n1": 21.6,
            "s4-n2": 21.6,
            "s5-n1": 19.9,
            "s5-n2": 19.9,
            "s6-n1": 15.7,
            "s6-n2": 15.7,
        },
    ),
    ScoreCase(
        name=(
            "score empty nodes for single task with no network topology and customized plugin"
            " arguments"
        ),
        pod_groups=[
            build_pod_group("pg1", "ns1", "q1", 1, None, "Inqueue"),
        ],
        pods=[
            build_pod("ns1", "p1", "", "Pending", rl("2", "4G", **{"example.com/foo": "8"}), "pg1"),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s3-n2", rl("2", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s4-n1", rl("4", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s4-n2", rl("4", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s5-n1", rl("2", "8G", pods="10", **{"example.com/foo": "16"})),
            build_node("s5-n2", rl("2", "8G", pods="10", **{"example.com/foo": "16"})),
            build_node("s6-n1", rl("4", "8G", pods="10", **{"example.com/foo": "16"})),
            build_node("s6-n2", rl("4", "8G", pods="10", **{"example.com/foo": "16"})),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        arguments={
            "weight": 10,
            "hypernode.binpack.cpu": 1,
            "hypernode.binpack.memory": 4,
            "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
            "hypernode.binpack.resources.nvidia.com/gpu": 2,
            "hypernode.binpack.resources.example.com/foo": 3,
            "hypernode.binpack.normal-pod.enable": True,
            "hypernode.binpack.normal-pod.fading": 0,
        },
        expected={
            "s3-n1": 500.0,
            "s3-n2": 500.0,
            "s4-n1": 468.75,
            "s4-n2": 468.75,
            "s5-n1": 281.3,
            "s5-n2": 281.3,
            "s6-n1": 250.0,
            "s6-n2": 250.0,
        },
    ),
    ScoreCase(
        name=(
            "score non-empty nodes for single task with no network topology and customized "
            "plugin arguments"
        ),
        pod_groups=[
            build_pod_group("pg1", "ns1", "q1", 1, None, "Inqueue"),
        ],
        pods=[
            build_pod("ns1", "p1", "", "Pending", rl("2", "4G", **{"example.com/foo": "8"}), "pg1"),
            build_pod(
                "ns1", "p2", "s3-n1", "Running", rl("2", "4G", **{"example.com/foo": "8"}), "pg1"
            ),
            build_pod(
                "ns1", "p3", "s3-n2", "Running", rl("2", "4G", **{"example.com/foo": "8"}), "pg1"
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s3-n2", rl("2", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s4-n1", rl("4", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s4-n2", rl("4", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s5-n1", rl("2", "8G", pods="10", **{"example.com/foo": "16"})),
            build_node("s5-n2", rl("2", "8G", pods="10", **{"example.com/foo": "16"})),
            build_node("s6-n1", rl("4", "8G", pods="10", **{"example.com/foo": "16"})),
            build_node("s6-n2", rl("4", "8G", pods="10", **{"example.com/foo": "16"})),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        arguments={
            "weight": 10,
            "hypernode.binpack.cpu": 1,
            "hypernode.binpack.memory": 4,
            "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
            "hypernode.binpack.resources.nvidia.com/gpu": 2,
            "hypernode.binpack.resources.example.com/foo": 3,
            "hypernode.binpack.normal-pod.enable": True,
            "hypernode.binpack.normal-pod.fading": 0,
        },
        expected={
            "s3-n1": 0.0,
            "s3-n2": 0.0,
            "s4-n1": 468.8,
            "s4-n2": 468.8,
            "s5-n1": 281.3,
            "s5-n2": 281.3,
            "s6-n1": 250.0,
            "s6-n2": 250.0,
        },
    ),
    ScoreCase(
        name="score nodes for tasks with network topology",
        pod_groups=[
            topology_pod_group("pg1", "ns1", 2, "hard", 2, "Inqueue"),
        ],
        pods=[
            build_pod(
                "ns1", "p1", "", "Pending", rl("2", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
            build_pod(
                "ns1",
                "p2",
                "s4-n1",
                "Running",
                rl("2", "4G"),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4G", pods="10")),
            build_node("s3-n2", rl("2", "4G", pods="10")),
            build_node("s4-n1", rl("4", "4G", pods="10")),
            build_node("s4-n2", rl("4", "4G", pods="10")),
            build_node("s5-n1", rl("2", "8G", pods="10")),
            build_node("s5-n2", rl("2", "8G", pods="10")),
            build_node("s6-n1", rl("4", "8G", pods="10")),
            build_node("s6-n2", rl("4", "8G", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        job_allocated_hyper_node="s1",
        expected={
            "s3-n1": 66.7,
            "s3-n2": 66.7,
            "s4-n1": 116.7,
            "s4-n2": 116.7,
            "s5-n1": 33.3,
            "s5-n2": 33.3,
            "s6-n1": 33.3,
            "s6-n2": 33.3,
        },
    ),
]


# TestHyperNodeOrderFn
HYPER_NODE_ORDER = [
    ScoreCase(
        name="score hypernodes for a subjob with default plugin arguments",
        pod_groups=[
            sub_grouped_pod_group(),
        ],
        pods=[
            build_pod(
                "ns1", "p1", "", "Pending", rl("4", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
            build_pod(
                "ns1", "p2", "", "Pending", rl("4", "4G"), "pg1", {"volcano.sh/task-spec": "worker"}
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4G", pods="10")),
            build_node("s3-n2", rl("2", "4G", pods="10")),
            build_node("s4-n1", rl("4", "4G", pods="10")),
            build_node("s4-n2", rl("4", "4G", pods="10")),
            build_node("s5-n1", rl("2", "8G", pods="10")),
            build_node("s5-n2", rl("2", "8G", pods="10")),
            build_node("s6-n1", rl("4", "8G", pods="10")),
            build_node("s6-n2", rl("4", "8G", pods="10")),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        expected={
            "s0": 25.0,
            "s1": 58.3,
            "s2": 45.8,
            "s3": 0.0,
            "s4": 100.0,
            "s5": 0.0,
            "s6": 75.0,
            "<cluster-top-hypernode>": 25.0,
        },
    ),
    ScoreCase(
        name="score hypernodes for a subjob with customized plugin arguments",
        pod_groups=[
            sub_grouped_pod_group(),
        ],
        pods=[
            build_pod(
                "ns1",
                "p1",
                "",
                "Pending",
                rl("4", "4G", **{"example.com/foo": "8"}),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
            build_pod(
                "ns1",
                "p2",
                "",
                "Pending",
                rl("4", "4G", **{"example.com/foo": "8"}),
                "pg1",
                {"volcano.sh/task-spec": "worker"},
            ),
        ],
        nodes=[
            build_node("s3-n1", rl("2", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s3-n2", rl("2", "4G", pods="10", **{"example.com/foo": "0"})),
            build_node("s4-n1", rl("4", "4G", pods="10", **{"example.com/foo": "8"})),
            build_node("s4-n2", rl("4", "4G", pods="10", **{"example.com/foo": "0"})),
            build_node("s5-n1", rl("2", "8G", pods="10", **{"example.com/foo": "16"})),
            build_node("s5-n2", rl("2", "8G", pods="10", **{"example.com/foo": "0"})),
            build_node("s6-n1", rl("4", "8G", pods="10", **{"example.com/foo": "16"})),
            build_node("s6-n2", rl("4", "8G", pods="10", **{"example.com/foo": "0"})),
        ],
        hyper_nodes=hyper_nodes_from_upstream(
            {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
            {
                "s0": ["s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s1": ["s3-n1", "s3-n2", "s4-n1", "s4-n2"],
                "s2": ["s5-n1", "s5-n2", "s6-n1", "s6-n2"],
                "s3": ["s3-n1", "s3-n2"],
                "s4": ["s4-n1", "s4-n2"],
                "s5": ["s5-n1", "s5-n2"],
                "s6": ["s6-n1", "s6-n2"],
            },
            {
                "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
                "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
                "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
                "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
                "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
                "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
                "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
            },
        ),
        arguments={
            "weight": 10,
            "hypernode.binpack.cpu": 3,
            "hypernode.binpack.memory": 4,
            "hypernode.binpack.resources": "nvidia.com/gpu, example.com/foo",
            "hypernode.binpack.resources.nvidia.com/gpu": 2,
            "hypernode.binpack.resources.example.com/foo": 3,
            "hypernode.binpack.normal-pod.enable": True,
            "hypernode.binpack.normal-pod.fading": 0,
        },
        expected={
            "s0": 266.7,
            "s1": 700.0,
            "s2": 450.0,
            "s3": 0.0,
            "s4": 0.0,
            "s5": 0.0,
            "s6": 800.0,
            "<cluster-top-hypernode>": 266.7,
        },
    ),
]


@pytest.mark.parametrize(
    "case", [pytest.param(case, id=case.name) for case in NODE_SCORE_HARD + NODE_SCORE_SOFT]
)
def test_network_topology_aware_node_score_upstream(case: ScoreCase) -> None:
    """``TestNetworkTopologyAwareNodeScore_Hard`` and ``_Soft`` (a soft job is hard up to the
    virtual root's tier after session open, and is scored the same way)."""
    assert_scores(node_scores(case), case.expected)


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name) for case in BATCH_NODE_ORDER])
def test_batch_node_order_upstream(case: ScoreCase) -> None:
    """``TestBatchNodeOrderFn``: every session node scored (an empty expectation: all zero)."""
    scores = node_scores(case)
    if not case.expected:
        assert all(score == 0 for score in scores.values())
    assert_scores(scores, case.expected)


@pytest.mark.parametrize("case", [pytest.param(case, id=case.name) for case in HYPER_NODE_ORDER])
def test_hyper_node_order_upstream(case: ScoreCase) -> None:
    """``TestHyperNodeOrderFn``: every HyperNode (the virtual root included) as a candidate."""
    ssn, _ = open_case(case)
    (job,) = ssn.jobs.values()
    candidates = {name: ssn.hyper_node_rows(name) for name in ssn.topology.tree.hyper_nodes}
    # The sub-job of the policy holding both pods (upstream scores that one).
    sub_job = job.sub_jobs["ns1/pg1/task1-worker"]
    assert len(sub_job.tasks) == 2
    scores = ssn.hyper_node_order(sub_job, candidates)
    assert set(scores) == set(case.expected)
    assert_scores(scores, case.expected)


# ---------------------------------------------------------------------------- resources


def test_init_hyper_node_resource_cache_upstream() -> None:
    """``Test_initHyperNodeResourceCache``: 2000 nodes, tiers of 200, 40, 5 and 1 HyperNodes
    (node i in HyperNode i mod count of each tier), each node half used: every HyperNode's
    allocatable and used are its node count times a node's."""
    counts = (200, 40, 5, 1)
    node_count = 2000
    capacity = {"cpu": "100", "memory": "8000", "example.com/foo": "10"}
    half = {"cpu": "50", "memory": "4000", "example.com/foo": "5"}
    case = ScoreCase(
        name="large scale",
        pod_groups=[],
        pods=[
            build_pod("ns1", f"p{i}", f"node-{i}", "Running", half, "") for i in range(node_count)
        ],
        nodes=[build_node(f"node-{i}", capacity) for i in range(node_count)],
        hyper_nodes=[
            build_hyper_node(
                f"hypernode-tier-{tier}-index-{index}",
                tier,
                [f"node-{i}" for i in range(index, node_count, count)],
            )
            for tier, count in enumerate(counts, start=1)
            for index in range(count)
        ],
        expected={},
        arguments={
            "weight": 10,
            "hypernode.binpack.cpu": 5,
            "hypernode.binpack.memory": 5,
            "hypernode.binpack.resources": "example.com/foo",
            "hypernode.binpack.resources.example.com/foo": 5,
        },
    )
    # Upstream prints how long this takes; here speed is bench/'s business (bench topology),
    # never a timed assertion.
    ssn, _ = open_case(case)
    plugin = ssn.plugins[PLUGIN_NAME]
    assert isinstance(plugin, NetworkTopologyAwarePlugin)
    per_node_allocatable = ssn.matrix.allocatable[0]
    per_node_used = ssn.matrix.used[0]
    membership = plugin.membership
    for tier, count in enumerate(counts, start=1):
        for index in range(count):
            h = membership.index[f"hypernode-tier-{tier}-index-{index}"]
            nodes = node_count // count
            assert np.allclose(plugin.allocatable[h], nodes * per_node_allocatable)
            assert np.allclose(plugin.used[h], nodes * per_node_used)
    root = membership.index[CLUSTER_TOP_HYPER_NODE]
    assert np.allclose(plugin.used[root], node_count * per_node_used)


# ---------------------------------------------------------------------------- gradients

GIB = 1024**3


def _resource(milli_cpu: float, memory: float) -> Resource:
    return Resource(milli_cpu=milli_cpu, memory=memory)


PRE_FILTERING = [
    # (name, purpose, highest tier, min resource, idle, future idle, hn-1-0 kept)
    (
        "Job - idle sufficient, futureIdle sufficient",
        "allocate",
        2,
        (20000, 40),
        (30000, 60),
        (35000, 70),
        True,
    ),
    (
        "Job - idle sufficient, futureIdle insufficient",
        "allocate",
        2,
        (20000, 40),
        (30000, 60),
        (15000, 30),
        True,
    ),
    (
        "Job - idle insufficient, futureIdle sufficient",
        "allocate",
        2,
        (20000, 40),
        (15000, 30),
        (30000, 60),
        True,
    ),
    (
        "Job - idle insufficient, futureIdle insufficient",
        "allocate",
        2,
        (20000, 40),
        (15000, 30),
        (15000, 30),
        False,
    ),
    (
        "SubJob - idle sufficient, futureIdle sufficient",
        "allocate",
        1,
        (10000, 20),
        (20000, 40),
        (25000, 50),
        True,
    ),
    (
        "SubJob - idle sufficient, futureIdle insufficient",
        "allocate",
        1,
        (10000, 20),
        (20000, 40),
        (5000, 10),
        True,
    ),
    (
        "SubJob - idle insufficient, futureIdle sufficient",
        "allocate",
        1,
        (10000, 20),
        (5000, 10),
        (20000, 40),
        True,
    ),
    (
        "SubJob - idle insufficient, futureIdle insufficient",
        "allocate",
        1,
        (10000, 20),
        (5000, 10),
        (5000, 10),
        False,
    ),
    (
        "Evict purpose - idle insufficient, futureIdle insufficient",
        "evict",
        2,
        (20000, 40),
        (15000, 30),
        (15000, 30),
        True,
    ),
    (
        "Evict purpose - allocatable insufficient",
        "evict",
        2,
        (50000, 100),
        (15000, 30),
        (15000, 30),
        False,
    ),
]


@pytest.fixture(scope="module")
def pre_filtering_session() -> Session:
    """1000 nodes of 4 CPU / 8Gi; 100 tier-1 HyperNodes of 10 nodes under one tier-2."""
    case = ScoreCase(
        name="pre-filtering",
        pod_groups=[],
        pods=[],
        nodes=[build_node(f"node-{i}", {"cpu": "4", "memory": "8Gi"}) for i in range(1000)],
        hyper_nodes=[
            build_hyper_node(f"hn-1-{i}", 1, [f"node-{i * 10 + j}" for j in range(10)])
            for i in range(100)
        ]
        + [build_hyper_node("hn-2-0", 2, [], [f"hn-1-{i}" for i in range(100)])],
        expected={},
    )
    return open_case(case)[0]


@pytest.mark.parametrize(
    ("purpose", "tier", "minimum", "idle", "future_idle", "kept"),
    [pytest.param(*row[1:], id=row[0]) for row in PRE_FILTERING],
)
def test_hyper_node_gradient_pre_filtering_upstream(
    pre_filtering_session: Session,
    purpose: str,
    tier: int,
    minimum: tuple[int, int],
    idle: tuple[int, int],
    future_idle: tuple[int, int],
    kept: bool,
) -> None:
    """``TestHyperNodeGradientPreFiltering``: hn-1-0's idle / future idle are overridden; it is
    kept when the minimum fits either (allocation) or its allocatable (eviction)."""
    ssn = pre_filtering_session
    plugin = ssn.plugins[PLUGIN_NAME]
    assert isinstance(plugin, NetworkTopologyAwarePlugin)
    h = plugin.membership.index["hn-1-0"]
    saved = plugin.idle[h].copy(), plugin.future_idle[h].copy()
    try:
        index = ssn.matrix.index
        plugin.idle[h] = index.vector(_resource(idle[0], idle[1] * GIB))[: plugin.idle.shape[1]]
        plugin.future_idle[h] = index.vector(_resource(future_idle[0], future_idle[1] * GIB))[
            : plugin.future_idle.shape[1]
        ]
        # The plugin reads a HyperNode's idle once a session (and keeps the gradients made
        # from it); this test rewrites it.
        plugin._fixed_resources.clear()
        plugin._gradients_cache.clear()
        gradients = plugin.hyper_node_gradients(
            "hn-2-0",
            tier,
            "",
            _resource(minimum[0], minimum[1] * GIB),
            SearchPurpose(purpose),
        )
    finally:
        plugin.idle[h], plugin.future_idle[h] = saved
    assert any("hn-1-0" in gradient for gradient in gradients) is kept
    tiers = [ssn.topology.tree.tier_of(gradient[0]) for gradient in gradients]
    assert tiers == sorted(tiers)


def test_hyper_node_gradient_for_sub_job_without_policy_respects_hard_topology_upstream() -> None:
    """``TestHyperNodeGradientForSubJobFn_NoSubJobPolicyRespectsHardTopology``: a tier-1 hard
    sub-job whose request fits no tier-1 domain gets no gradient at all (never the root)."""
    nodes = ["node-a-1", "node-a-2", "node-d-1", "node-d-2"]
    case = ScoreCase(
        name="no fallback to the root",
        pod_groups=[topology_pod_group("pg1", "ns1", 1, "hard", 1, "Inqueue")],
        pods=[build_pod("ns1", "pending-task", "", "Pending", {"cpu": "20"}, "pg1")],
        nodes=[build_node(name, {"cpu": "8"}) for name in nodes],
        hyper_nodes=[
            build_hyper_node("zone-a", 1, nodes[:2]),
            build_hyper_node("zone-d", 1, nodes[2:]),
            build_hyper_node("region", 2, [], ["zone-a", "zone-d"]),
        ],
        expected={},
    )
    ssn, _ = open_case(case, flags=("enabledHyperNodeGradient",))
    assert ssn.topology.tree.max_tier == 3
    sub_job = ssn.jobs["ns1/pg1"].default_sub_job()
    gradients = ssn.hyper_node_gradient_for_sub_job(
        sub_job, CLUSTER_TOP_HYPER_NODE, SearchPurpose.EVICT
    )
    assert gradients == []


THREE_TIERS = hyper_nodes_from_upstream(
    {1: ["s3", "s4", "s5", "s6"], 2: ["s1", "s2"], 3: ["s0"]},
    {},
    {
        "s0": (3, [("s1", "HyperNode"), ("s2", "HyperNode")], None),
        "s1": (2, [("s3", "HyperNode"), ("s4", "HyperNode")], None),
        "s2": (2, [("s5", "HyperNode"), ("s6", "HyperNode")], None),
        "s3": (1, [("s3-n1", "Node"), ("s3-n2", "Node")], None),
        "s4": (1, [("s4-n1", "Node"), ("s4-n2", "Node")], None),
        "s5": (1, [("s5-n1", "Node"), ("s5-n2", "Node")], None),
        "s6": (1, [("s6-n1", "Node"), ("s6-n2", "Node")], None),
    },
)
EIGHT_NODES = [
    build_node(f"s{i}-n{j}", rl("2", "4Gi", pods="10")) for i in range(3, 7) for j in (1, 2)
]


def test_gradients_of_a_partly_running_job_stay_under_its_highest_allowed_ancestor() -> None:
    case = ScoreCase(
        name="search root",
        pod_groups=[topology_pod_group("pg1", "c1", 2, "hard", 2, "Running")],
        pods=[
            build_pod("c1", "p1", "s3-n1", "Running", rl("2", "4G"), "pg1"),
            build_pod("c1", "p2", "", "Pending", rl("2", "4G"), "pg1"),
        ],
        nodes=EIGHT_NODES,
        hyper_nodes=THREE_TIERS,
        expected={},
    )
    ssn, _ = open_case(case)
    job = ssn.jobs["c1/pg1"]
    assert job.allocated_hyper_node == "s3"  # recovered from p1's node
    gradients = ssn.hyper_node_gradient_for_job(job, CLUSTER_TOP_HYPER_NODE, SearchPurpose.ALLOCATE)
    # s1 is s3's highest ancestor within tier 2; a placed job skips the resource pre-filter
    # (s3 is full).
    assert gradients == [["s3", "s4"], ["s1"]]
    # A search root outside s1 does not intersect it: no gradient, the job waits.
    sub_job = ssn.jobs[job.uid].default_sub_job()
    assert ssn.hyper_node_gradient_for_sub_job(sub_job, "s2", SearchPurpose.ALLOCATE) == []
    # Inside it, the given HyperNode is the root.
    assert ssn.hyper_node_gradient_for_sub_job(sub_job, "s4", SearchPurpose.ALLOCATE) == [["s4"]]


def test_soft_and_tierless_jobs_get_the_given_hyper_node() -> None:
    case = ScoreCase(
        name="not hard",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, None, "Inqueue", network_topology={"mode": "hard"}
            )
        ],
        pods=[build_pod("c1", "p1", "", "Pending", rl("2", "4G"), "pg1")],
        nodes=EIGHT_NODES,
        hyper_nodes=THREE_TIERS,
        expected={},
    )
    ssn, _ = open_case(case)
    job = ssn.jobs["c1/pg1"]
    assert job.hard_topology() == (True, 0) or not job.hard_topology()[0]
    assert ssn.hyper_node_gradient_for_job(job, "s1", SearchPurpose.ALLOCATE) == [["s1"]]


# ---------------------------------------------------------------------------- events


def test_used_follows_allocations_and_evictions_of_the_session() -> None:
    case = ScoreCase(
        name="events",
        pod_groups=[topology_pod_group("pg1", "c1", 1, "hard", 2, "Inqueue")],
        pods=[
            build_pod("c1", "p1", "", "Pending", rl("1", "1Gi"), "pg1"),
            build_pod("c1", "p2", "s4-n1", "Running", rl("1", "1Gi"), "pg1"),
        ],
        nodes=EIGHT_NODES,
        hyper_nodes=THREE_TIERS,
        expected={},
    )
    ssn, _ = open_case(case)
    plugin = ssn.plugins[PLUGIN_NAME]
    assert isinstance(plugin, NetworkTopologyAwarePlugin)
    membership = plugin.membership
    before = plugin.used.copy()
    holding = {membership.names[h] for h in membership.hyper_nodes_of_row(ssn.nodes["s3-n2"].row)}
    assert holding == {"s3", "s1", "s0", CLUSTER_TOP_HYPER_NODE}

    job = ssn.jobs["c1/pg1"]
    (task,) = job.tasks_in(TaskStatus.PENDING).values()
    statement = ssn.statement()
    statement.allocate(task, ssn.nodes["s3-n2"])
    delta = plugin.used - before
    for name in membership.names:
        expected = 1000.0 if name in holding else 0.0
        assert delta[membership.index[name], 0] == expected, name
    statement.discard()
    assert np.allclose(plugin.used, before)

    running = next(iter(job.tasks_in(TaskStatus.RUNNING).values()))
    evicting = ssn.statement()
    evicting.evict(running, "test")
    assert plugin.used[membership.index["s4"], 0] == before[membership.index["s4"], 0] - 1000.0
    evicting.discard()
    assert np.allclose(plugin.used, before)


def test_a_resource_first_seen_mid_session_widens_the_arrays() -> None:
    case = ScoreCase(
        name="width",
        pod_groups=[topology_pod_group("pg1", "c1", 1, "hard", 2, "Inqueue")],
        pods=[build_pod("c1", "p1", "", "Pending", rl("1", "1Gi"), "pg1")],
        nodes=EIGHT_NODES,
        hyper_nodes=THREE_TIERS,
        expected={},
        arguments={"hypernode.binpack.resources": "example.com/new"},
    )
    ssn, _ = open_case(case)
    plugin = ssn.plugins[PLUGIN_NAME]
    assert isinstance(plugin, NetworkTopologyAwarePlugin)
    width = plugin.used.shape[1]
    task = TaskInfo.from_pod(
        build_pod("c1", "late", "", "Pending", {"example.com/new": "1"}, "pg1")
    )
    # The predicate step registers the new column (no node has any of it).
    ssn.task_vector(task.resreq)
    scores = plugin.batch_node_order(task, np.arange(len(ssn.node_list), dtype=np.intp))
    assert plugin.used.shape[1] == ssn.matrix.index.width == width + 1
    # It fits in no HyperNode of any tier: only the tier without HyperNodes (none here) helps.
    assert np.all(scores == 0)


def test_eviction_gradients_are_widest_first_and_capped(pre_filtering_session: Session) -> None:
    """The registered hooks (not the raw search) reverse and cap eviction gradients."""
    ssn = pre_filtering_session
    job = ssn.jobs.get("ns1/pg1")
    assert job is None  # the fixture has no job: ask through a throwaway one
    plugin = ssn.plugins[PLUGIN_NAME]
    assert isinstance(plugin, NetworkTopologyAwarePlugin)
    raw = plugin.hyper_node_gradients(
        CLUSTER_TOP_HYPER_NODE, 2, "", Resource(), SearchPurpose.EVICT
    )
    assert [len(gradient) for gradient in raw] == [100, 1]
    assert reverse_and_cap(raw, plugin.max_evict) == [["hn-2-0"], raw[0][-7:]]
