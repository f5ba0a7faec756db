"""Upstream ``actions/allocate/allocate_test.go``: the network-topology tables.

``TestAllocateWithNetWorkTopologies`` (all 25 cases; spec §7.3 S6 is the pair "hard network
topology constrain, can not allocate job when cross highestTierAllowed tier" / "... can allocate
job when highestTierAllowed not reached"), ``TestNodeLevelScoreWithNetWorkTopologies`` and
``TestHyperNodeBinpackWithNetWorkTopologies``.

How the fixtures are read:

* upstream describes HyperNodes by ``HyperNodesSetByTier`` (tier -> names) and ``HyperNodes``
  (name -> real nodes), plus, in most cases, a ``HyperNodesMap`` of the objects. We build the
  HyperNode objects those sets describe (``hyper_nodes_from_sets``) and feed them through the
  cache like any watch event. Three cases have no ``HyperNodesMap`` upstream, so there the
  gradient search only ever sees the virtual root; with the objects built, they exercise the
  HyperNode search instead, with the same expected outcome;
* ``HyperNodesTierNameMap`` becomes the ``tierName`` of the HyperNodes of each tier;
* the PodGroup annotation ``volcano.sh/job-allocated-hypernode`` that upstream's fixture sets is
  not read by the scheduler (the job's HyperNode is recovered from its running tasks), so it is
  left out;
* upstream's ``TestAllocateWithNetWorkTopologies`` runs ``CheckAll``, which checks nothing; the
  expectations below are the table's own and are checked here, for every tie-breaking seed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pytest
from builders import build_node, build_pod, build_pod_group, build_queue
from builders import resource_list as rl
from harness import Case, run_case
from hypernode_fixtures import build_hyper_node, hyper_nodes_from_sets
from upstream_fixtures import TASK_SPEC, case_param, check_every_seed

TOPOLOGY_TIER = {
    "gang": ["enableJobOrder", "enableJobReady", "enableJobPipelined", "enableJobStarving"],
    "predicates": ["enablePredicate"],
    "network-topology-aware": [
        "enableNodeOrder",
        "enabledHyperNodeOrder",
        "enabledHyperNodeGradient",
    ],
}


def node(name: str, cpu: str, memory: str, labels: Mapping[str, str] | None = None) -> Any:
    return build_node(name, rl(cpu, memory, pods="10"), labels)


def pod(
    name: str,
    node_name: str,
    phase: str,
    role: str,
    requests: Mapping[str, str],
    node_selector: Mapping[str, str] | None = None,
) -> Any:
    return build_pod(
        "c1", name, node_name, phase, requests, "pg1", {TASK_SPEC: role}, node_selector
    )


def topology_pg(name: str, min_member: int, topology: Mapping[str, Any], phase: str) -> Any:
    """``util.BuildPodGroupWithNetWorkTopologies`` / ``...UsingNetWorkTopologiesWithTierName``."""
    return build_pod_group(name, "c1", "q1", min_member, None, phase, network_topology=topology)


def hyper_nodes(
    tiers: Mapping[int, Sequence[str]],
    members: Mapping[str, Sequence[str]],
    tier_names: Mapping[int, str] | None = None,
) -> list[dict[str, Any]]:
    objects = hyper_nodes_from_sets(tiers, members)
    for obj in objects:
        tier_name = (tier_names or {}).get(obj["spec"]["tier"])
        if tier_name:
            obj["spec"]["tierName"] = tier_name
    return objects


TEST_ALLOCATE_WITH_NETWORK_TOPOLOGIES = [
    Case(
        name="soft network topology constrain, can allocate job when resources are enough",
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 3, {"mode": "soft", "highestTierAllowed": 0}, "Inqueue")],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G")),
            pod("p2", "", "Pending", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {0: ("s0", "s1"), 1: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=3,
        minimal_bind_check=True,
    ),
    Case(
        name="soft network topology constrain, can allocate job when minavailable < replicas",
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 1, {"mode": "soft", "highestTierAllowed": 0}, "Inqueue")],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G")),
            pod("p2", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=2,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "soft network topology constrain, two available hyperNodes, can allocate job to "
            "nodes with affinity"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 1, {"mode": "soft", "highestTierAllowed": 0}, "Inqueue")],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G"), {"nodeRole": "master"}),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s1-n2", "2", "4Gi", {"nodeRole": "master"}),
        ],
        hyper_nodes=hyper_nodes(
            {0: ("s0", "s1")},
            {"s0": ("s0-n1",), "s1": ("s1-n2",)},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_bind_map={"c1/p1": "s1-n2"},
        expect_binds_num=1,
    ),
    Case(
        name=(
            "soft network topology constrain and tasks in job rescheduled, can allocate job "
            "when resources are enough"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 2, {"mode": "soft", "highestTierAllowed": 0}, "Inqueue")],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "soft network topology constrain and tasks in job rescheduled, can allocate job "
            "when resources are enough and minavailable = replicas"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 3, {"mode": "soft", "highestTierAllowed": 0}, "Inqueue")],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "soft network topology constrain and tasks in job rescheduled, can allocate job "
            "when cross highestTierAllowed tier and hyperNodesInfo has three tier"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 2, {"mode": "soft", "highestTierAllowed": 0}, "Inqueue")],
        pods=[
            pod("p1", "s3-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s3-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s3-n1", "2", "4Gi"),
            node("s3-n2", "2", "4Gi"),
            node("s4-n1", "2", "4Gi"),
            node("s4-n2", "2", "4Gi"),
            node("s5-n1", "2", "4Gi"),
            node("s5-n2", "2", "4Gi"),
            node("s6-n1", "2", "4Gi"),
            node("s6-n2", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s3", "s4", "s5", "s6"), 2: ("s1", "s2"), 3: ("s0",)},
            {
                "s0": ("s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
                "s1": ("s3-n1", "s3-n2", "s4-n1", "s4-n2"),
                "s2": ("s5-n1", "s5-n2", "s6-n1", "s6-n2"),
                "s3": ("s3-n1", "s3-n2"),
                "s4": ("s4-n1", "s4-n2"),
                "s5": ("s5-n1", "s5-n2"),
                "s6": ("s6-n1", "s6-n2"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain, can not allocate job when cross "
            "highestTierAllowed tier"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 3, {"mode": "hard", "highestTierAllowed": 1}, "Inqueue")],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G")),
            pod("p2", "", "Pending", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=0,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain, can allocate job when highestTierAllowed not reached"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 3, {"mode": "hard", "highestTierAllowed": 2}, "Inqueue")],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G")),
            pod("p2", "", "Pending", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=3,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain, can allocate job when multi hyperNodes are available"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 2, {"mode": "hard", "highestTierAllowed": 1}, "Inqueue")],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G")),
            pod("p2", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=2,
        minimal_bind_check=True,
    ),
    Case(
        name="hard network topology constrain, can allocate job when minavailable < replicas",
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 1, {"mode": "hard", "highestTierAllowed": 1}, "Inqueue")],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G")),
            pod("p2", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=2,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain, two available hyperNodes, can allocate job to "
            "nodes with affinity"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 1, {"mode": "hard", "highestTierAllowed": 1}, "Inqueue")],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G"), {"nodeRole": "master"}),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s1-n2", "2", "4Gi", {"nodeRole": "master"}),
        ],
        hyper_nodes=hyper_nodes(
            {0: ("s0", "s1")},
            {"s0": ("s0-n1",), "s1": ("s1-n2",)},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_bind_map={"c1/p1": "s1-n2"},
        expect_binds_num=1,
    ),
    Case(
        name=(
            "hard network topology constrain and tasks in job rescheduled, can allocate job "
            "when highestTierAllowed not reached"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 2, {"mode": "hard", "highestTierAllowed": 2}, "Inqueue")],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain and tasks in job rescheduled, can allocate job "
            "when highestTierAllowed not reached and minavailable = replicas"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 3, {"mode": "hard", "highestTierAllowed": 2}, "Inqueue")],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain and tasks in job rescheduled, can allocate job "
            "when highestTierAllowed not reached and hyperNodesInfo has three tier"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 2, {"mode": "hard", "highestTierAllowed": 2}, "Inqueue")],
        pods=[
            pod("p1", "s3-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s3-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s3-n1", "2", "4Gi"),
            node("s3-n2", "2", "4Gi"),
            node("s4-n1", "2", "4Gi"),
            node("s4-n2", "2", "4Gi"),
            node("s5-n1", "2", "4Gi"),
            node("s5-n2", "2", "4Gi"),
            node("s6-n1", "2", "4Gi"),
            node("s6-n2", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s3", "s4", "s5", "s6"), 2: ("s1", "s2"), 3: ("s0",)},
            {
                "s0": ("s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
                "s1": ("s3-n1", "s3-n2", "s4-n1", "s4-n2"),
                "s2": ("s5-n1", "s5-n2", "s6-n1", "s6-n2"),
                "s3": ("s3-n1", "s3-n2"),
                "s4": ("s4-n1", "s4-n2"),
                "s5": ("s5-n1", "s5-n2"),
                "s6": ("s6-n1", "s6-n2"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain and tasks in job rescheduled, can not allocate "
            "job when cross highestTierAllowed tier"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 2, {"mode": "hard", "highestTierAllowed": 1}, "Inqueue")],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=0,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain and tasks in job rescheduled, can not allocate "
            "job when cross highestTierAllowed tier and hyperNodesInfo has three tier"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 2, {"mode": "hard", "highestTierAllowed": 1}, "Inqueue")],
        pods=[
            pod("p1", "s3-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s3-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s3-n1", "2", "4Gi"),
            node("s3-n2", "2", "4Gi"),
            node("s4-n1", "2", "4Gi"),
            node("s4-n2", "2", "4Gi"),
            node("s5-n1", "2", "4Gi"),
            node("s5-n2", "2", "4Gi"),
            node("s6-n1", "2", "4Gi"),
            node("s6-n2", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s3", "s4", "s5", "s6"), 2: ("s1", "s2"), 3: ("s0",)},
            {
                "s0": ("s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
                "s1": ("s3-n1", "s3-n2", "s4-n1", "s4-n2"),
                "s2": ("s5-n1", "s5-n2", "s6-n1", "s6-n2"),
                "s3": ("s3-n1", "s3-n2"),
                "s4": ("s4-n1", "s4-n2"),
                "s5": ("s5-n1", "s5-n2"),
                "s6": ("s6-n1", "s6-n2"),
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=0,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain and tasks in job rescheduled, can allocate job "
            "when LCAHyperNode is empty"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 2, {"mode": "hard", "highestTierAllowed": 2}, "Inqueue")],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1")},
            {"s0": ("s0-n1", "s0-n2"), "s1": ("s1-n3", "s1-n4")},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain, can not allocate job when cross highestTierName tier"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[
            topology_pg(
                "pg1", 3, {"mode": "hard", "highestTierName": "volcano.sh/task-spec"}, "Inqueue"
            )
        ],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G")),
            pod("p2", "", "Pending", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
            tier_names={1: "volcano.sh/task-spec", 2: "volcano.sh/job-spec"},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=0,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain, can allocate job when the tier corresponding to"
            " highestTierName not reached"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[
            topology_pg(
                "pg1", 3, {"mode": "hard", "highestTierName": "volcano.sh/job-spec"}, "Inqueue"
            )
        ],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G")),
            pod("p2", "", "Pending", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
            tier_names={1: "volcano.sh/task-spec", 2: "volcano.sh/job-spec"},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=3,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain, can allocate job when multi hyperNodes are "
            "available (highestTierName)"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[
            topology_pg(
                "pg1", 2, {"mode": "hard", "highestTierName": "volcano.sh/task-spec"}, "Inqueue"
            )
        ],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4G")),
            pod("p2", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
            tier_names={1: "volcano.sh/task-spec", 2: "volcano.sh/job-spec"},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=2,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain and task in job rescheduled, can allocate job "
            "when the tier corresponding to highestTierName not reached"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[
            topology_pg(
                "pg1", 2, {"mode": "hard", "highestTierName": "volcano.sh/job-spec"}, "Inqueue"
            )
        ],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
            tier_names={1: "volcano.sh/task-spec", 2: "volcano.sh/job-spec"},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain and task in job rescheduled, can allocate job "
            "when the tier corresponding to highestTierName not reached and minavailable = "
            "replicas"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[
            topology_pg(
                "pg1", 3, {"mode": "hard", "highestTierName": "volcano.sh/job-spec"}, "Inqueue"
            )
        ],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
            tier_names={1: "volcano.sh/task-spec", 2: "volcano.sh/job-spec"},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain and task in job rescheduled, can allocate job "
            "when the tier corresponding to highestTierName not reached and hyperNodesInfo "
            "has three tier"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[
            topology_pg(
                "pg1", 2, {"mode": "hard", "highestTierName": "volcano.sh/job-spec"}, "Inqueue"
            )
        ],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s3-n1", "2", "4Gi"),
            node("s3-n2", "2", "4Gi"),
            node("s4-n1", "2", "4Gi"),
            node("s4-n2", "2", "4Gi"),
            node("s5-n1", "2", "4Gi"),
            node("s5-n2", "2", "4Gi"),
            node("s6-n1", "2", "4Gi"),
            node("s6-n2", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s3", "s4", "s5", "s6"), 2: ("s1", "s2"), 3: ("s0",)},
            {
                "s0": ("s3-n1", "s3-n2", "s4-n1", "s4-n2", "s5-n1", "s5-n2", "s6-n1", "s6-n2"),
                "s1": ("s3-n1", "s3-n2", "s4-n1", "s4-n2"),
                "s2": ("s5-n1", "s5-n2", "s6-n1", "s6-n2"),
                "s3": ("s3-n1", "s3-n2"),
                "s4": ("s4-n1", "s4-n2"),
                "s5": ("s5-n1", "s5-n2"),
                "s6": ("s6-n1", "s6-n2"),
            },
            tier_names={
                1: "volcano.sh/task-spec",
                2: "volcano.sh/job-spec",
                3: "volcano.sh/hypernode-spec",
            },
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology constrain and tasks in job rescheduled, can not allocate "
            "job when cross the tier corresponding to highestTierName"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[
            topology_pg(
                "pg1", 2, {"mode": "hard", "highestTierName": "volcano.sh/task-spec"}, "Inqueue"
            )
        ],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1"), 2: ("s2",)},
            {
                "s0": ("s0-n1", "s0-n2"),
                "s1": ("s1-n3", "s1-n4"),
                "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
            },
            tier_names={1: "volcano.sh/task-spec", 2: "volcano.sh/job-spec"},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=0,
        minimal_bind_check=True,
    ),
    Case(
        name=(
            "hard network topology with highestTierName constrain and tasks in job "
            "rescheduled, can allocate job when here is no corresponding highestTierAllowed "
            "for highestTierName"
        ),
        plugins=TOPOLOGY_TIER,
        pod_groups=[
            topology_pg(
                "pg1", 2, {"mode": "hard", "highestTierName": "volcano.sh/hypercluster"}, "Inqueue"
            )
        ],
        pods=[
            pod("p1", "s0-n1", "Running", "master", rl("2", "4G")),
            pod("p2", "s0-n2", "Running", "worker", rl("2", "4G")),
            pod("p3", "", "Pending", "worker", rl("2", "4G")),
        ],
        nodes=[
            node("s0-n1", "2", "4Gi"),
            node("s0-n2", "2", "4Gi"),
            node("s1-n3", "2", "4Gi"),
            node("s1-n4", "2", "4Gi"),
        ],
        hyper_nodes=hyper_nodes(
            {1: ("s0", "s1")},
            {"s0": ("s0-n1", "s0-n2"), "s1": ("s1-n3", "s1-n4")},
            tier_names={1: "volcano.sh/task-spec"},
        ),
        queues=[build_queue("q1", 1, None)],
        expect_binds_num=1,
        minimal_bind_check=True,
    ),
]


@pytest.mark.parametrize(
    "case", [case_param(case) for case in TEST_ALLOCATE_WITH_NETWORK_TOPOLOGIES]
)
def test_allocate_with_network_topologies(case: Case) -> None:
    """allocate_test.go TestAllocateWithNetWorkTopologies."""
    check_every_seed(case, ["allocate"])


TWO_TIERS = hyper_nodes(
    {1: ("s0", "s1"), 2: ("s2",)},
    {
        "s0": ("s0-n1", "s0-n2"),
        "s1": ("s1-n3", "s1-n4"),
        "s2": ("s0-n1", "s0-n2", "s1-n3", "s1-n4"),
    },
)


def test_node_level_score_with_network_topologies() -> None:
    """allocate_test.go TestNodeLevelScoreWithNetWorkTopologies: "hard network topology
    constrain, allocate job to highest score hypeNode with node level binpack". s0 already runs
    pg2, so it binpacks best; inside it, node-level binpack puts each task where it fills most."""
    tier = {"binpack": ["enableNodeOrder"], **TOPOLOGY_TIER}
    case = Case(
        name="hard network topology constrain, allocate job to highest score hypeNode with "
        "node level binpack",
        plugins=tier,
        pod_groups=[
            topology_pg("pg1", 2, {"mode": "hard", "highestTierAllowed": 1}, "Inqueue"),
            topology_pg("pg2", 2, {"mode": "", "highestTierAllowed": 1}, "Running"),
        ],
        pods=[
            pod("p1", "", "Pending", "master", rl("2", "4Gi")),
            pod("p2", "", "Pending", "worker", rl("4", "8Gi")),
            build_pod("c1", "p3", "s0-n1", "Running", rl("2", "4Gi"), "pg2", {TASK_SPEC: "master"}),
            build_pod("c1", "p4", "s0-n2", "Running", rl("4", "8Gi"), "pg2", {TASK_SPEC: "worker"}),
        ],
        nodes=[
            node("s0-n1", "4", "8Gi"),
            node("s0-n2", "8", "16Gi"),
            node("s1-n3", "4", "8Gi"),
            node("s1-n4", "8", "16Gi"),
        ],
        hyper_nodes=TWO_TIERS,
        queues=[build_queue("q1", 1, None)],
        expect_bind_map={"c1/p1": "s0-n1", "c1/p2": "s0-n2"},
        expect_binds_num=2,
    )
    check_every_seed(case, ["allocate"])


@pytest.mark.parametrize("seed", range(8))
def test_hyper_node_binpack_with_network_topologies(seed: int) -> None:
    """allocate_test.go TestHyperNodeBinpackWithNetWorkTopologies: "hard network topology
    constrain, allocate task to node under LCAHyperNode". Four one-node tasks, three tier-1
    HyperNodes of two nodes: none holds the gang, their tier-2 parent does; node scoring then
    fills one tier-1 HyperNode before starting the next (binds per tier-1 HyperNode: 2 and 2)."""
    six_nodes = [f"s{i // 2}-n{i + 1}" for i in range(6)]
    case = Case(
        name="hard network topology constrain, allocate task to node under LCAHyperNode",
        plugins=TOPOLOGY_TIER,
        pod_groups=[topology_pg("pg1", 4, {"mode": "hard", "highestTierAllowed": 2}, "Inqueue")],
        pods=[
            pod(name, "", "Pending", role, rl("4", "8Gi"))
            for name, role in (
                ("p1", "master"),
                ("p2", "worker"),
                ("p3", "worker"),
                ("p4", "worker"),
            )
        ],
        nodes=[node(name, "4", "8Gi") for name in six_nodes],
        hyper_nodes=[
            build_hyper_node("s0", 1, ["s0-n1", "s0-n2"]),
            build_hyper_node("s1", 1, ["s1-n3", "s1-n4"]),
            build_hyper_node("s2", 1, ["s2-n5", "s2-n6"]),
            build_hyper_node("s3", 2, [], ["s0", "s1", "s2"]),
        ],
        queues=[build_queue("q1", 1, None)],
        seed=seed,
    )
    outcome = run_case(case, ["allocate"])
    binds = outcome.binder.binds
    assert len(binds) == 4
    tree = outcome.session.topology.tree
    per_hyper_node: dict[str, int] = {}
    for node_name in binds.values():
        lowest = tree.find_hyper_node_for_node(node_name)
        assert lowest is not None
        per_hyper_node[lowest] = per_hyper_node.get(lowest, 0) + 1
    assert sorted(per_hyper_node.values()) == [2, 2]
    assert outcome.session.jobs["c1/pg1"].allocated_hyper_node == "s3"
