"""allocate for jobs with a network topology (``actions/allocate_topology.py``): behaviour the
upstream tables do not pin down, on a 2-tier cluster of 8 nodes (leaf-0, leaf-1 under spine)."""

from __future__ import annotations

from typing import Any

import numpy as np

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.builders import resource_list as rl
from tests.harness import Case, run_case
from tests.hypernode_fixtures import build_hyper_node
from volcano_py.actions.allocate_topology import TopologyAllocator
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import open_session
from volcano_py.scheduler.registry import PluginRegistry, new_action

TIER = {
    "gang": ["enableJobOrder", "enableJobReady", "enableJobPipelined", "enableJobStarving"],
    "predicates": ["enablePredicate"],
    "network-topology-aware": [
        "enableNodeOrder",
        "enabledHyperNodeOrder",
        "enabledHyperNodeGradient",
    ],
}
LEAF_0 = [f"n{i}" for i in range(4)]
LEAF_1 = [f"n{i}" for i in range(4, 8)]
HYPER_NODES = [
    build_hyper_node("leaf-0", 1, LEAF_0),
    build_hyper_node("leaf-1", 1, LEAF_1),
    build_hyper_node("spine", 2, [], ["leaf-0", "leaf-1"]),
]
NODES = [build_node(name, rl("4", "8Gi", pods="10")) for name in LEAF_0 + LEAF_1]


def gang(
    name: str, size: int, min_member: int, topology: dict[str, Any] | None, cpu: str = "4"
) -> list[dict[str, Any]]:
    """A PodGroup and its pending pods (one whole node each by default)."""
    objects: list[dict[str, Any]] = [
        build_pod_group(name, "ns", "q1", min_member, None, "Inqueue", network_topology=topology)
    ]
    objects += [
        build_pod("ns", f"{name}-{i}", "", "Pending", rl(cpu, "1Gi"), name) for i in range(size)
    ]
    return objects


def case(*objects: dict[str, Any], hyper_nodes: list[dict[str, Any]] | None = None) -> Case:
    return Case(
        name="topology",
        plugins=TIER,
        nodes=list(NODES),
        pods=[obj for obj in objects if obj["kind"] == "Pod"],
        pod_groups=[obj for obj in objects if obj["kind"] == "PodGroup"],
        queues=[build_queue("q1", 1, None)],
        hyper_nodes=HYPER_NODES if hyper_nodes is None else hyper_nodes,
    )


def bound(binds: dict[str, str], group: str) -> set[str]:
    return {node for pod, node in binds.items() if pod.startswith(f"ns/{group}-")}


def test_elastic_tasks_stay_inside_the_first_hyper_node() -> None:
    """minAvailable 1 of 3: the job gets one task per pop, and every later pop searches only
    below what it already occupies."""
    outcome = run_case(
        case(*gang("elastic", 3, 1, {"mode": "hard", "highestTierAllowed": 1})), ["allocate"]
    )
    nodes = bound(outcome.binder.binds, "elastic")
    assert len(nodes) == 3
    assert nodes <= set(LEAF_0) or nodes <= set(LEAF_1)
    job = outcome.session.jobs["ns/elastic"]
    assert job.allocated_hyper_node in ("leaf-0", "leaf-1")


def test_a_full_leaf_blocks_a_partly_running_tier_1_job() -> None:
    """Two tasks run on leaf-0, which is now full; the third may not go to leaf-1."""
    running = [
        build_pod("ns", f"bg-{name}", name, "Running", rl("4", "1Gi"), "") for name in LEAF_0[2:]
    ]
    objects = gang("job", 3, 1, {"mode": "hard", "highestTierAllowed": 1})
    objects[1] = build_pod("ns", "job-0", "n0", "Running", rl("4", "1Gi"), "job")
    objects[2] = build_pod("ns", "job-1", "n1", "Running", rl("4", "1Gi"), "job")
    outcome = run_case(case(*objects, *running), ["allocate"])
    assert outcome.binder.binds == {}
    job = outcome.session.jobs["ns/job"]
    assert job.allocated_hyper_node == "leaf-0"
    # The same job allowed up to tier 2 takes leaf-1.
    objects[0] = build_pod_group(
        "job",
        "ns",
        "q1",
        1,
        None,
        "Running",
        network_topology={"mode": "hard", "highestTierAllowed": 2},
    )
    outcome = run_case(case(*objects, *running), ["allocate"])
    assert bound(outcome.binder.binds, "job") <= set(LEAF_1)
    assert outcome.session.jobs["ns/job"].allocated_hyper_node == "spine"


def test_broken_hyper_nodes_hold_back_only_topology_jobs() -> None:
    cyclic = [
        build_hyper_node("leaf-0", 1, LEAF_0, ["spine"]),
        build_hyper_node("leaf-1", 1, LEAF_1),
        build_hyper_node("spine", 2, [], ["leaf-0", "leaf-1"]),
    ]
    outcome = run_case(
        case(
            *gang("topo", 2, 2, {"mode": "hard", "highestTierAllowed": 1}),
            *gang("plain", 2, 2, None),
            hyper_nodes=cyclic,
        ),
        ["allocate"],
    )
    assert not outcome.session.hyper_nodes_ready
    assert bound(outcome.binder.binds, "topo") == set()
    assert len(bound(outcome.binder.binds, "plain")) == 2


def test_without_the_plugin_a_hard_job_is_placed_anywhere() -> None:
    """No gradient function: the only candidate is the virtual root (upstream's default)."""
    six = case(*gang("wide", 6, 6, {"mode": "hard", "highestTierAllowed": 1}))
    six.plugins = {name: flags for name, flags in TIER.items() if name != "network-topology-aware"}
    outcome = run_case(six, ["allocate"])
    assert len(bound(outcome.binder.binds, "wide")) == 6


def test_soft_job_prefers_one_leaf_but_may_span_the_spine() -> None:
    small = run_case(case(*gang("small", 3, 3, {"mode": "soft"})), ["allocate"])
    nodes = bound(small.binder.binds, "small")
    assert len(nodes) == 3 and (nodes <= set(LEAF_0) or nodes <= set(LEAF_1))
    wide = run_case(case(*gang("wide", 6, 6, {"mode": "soft"})), ["allocate"])
    assert len(bound(wide.binder.binds, "wide")) == 6
    assert wide.session.jobs["ns/wide"].allocated_hyper_node == "spine"


def test_failed_search_leaves_the_session_as_it_was() -> None:
    """Every dry run is undone: node accounting, task states and the plugin's HyperNode usage
    end where they started; the tasks say why, naming the HyperNode tried last."""
    cache = SchedulerCache()
    for obj in NODES:
        cache.apply_event("Node", "ADDED", obj)
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1, None))
    # 15 CPUs fit a leaf's 16 as a sum, but each node takes one 3-CPU task: four, not five.
    for obj in gang("big", 5, 5, {"mode": "hard", "highestTierAllowed": 1}, cpu="3"):
        cache.apply_event(obj["kind"], "ADDED", obj)
    for obj in HYPER_NODES:
        cache.apply_event("HyperNode", "ADDED", obj)
    conf = SchedulerConf(
        actions=["allocate"],
        tiers=[Tier([PluginOption.with_flags(name, *flags) for name, flags in TIER.items()])],
    )
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache)
    plugin = ssn.plugins["network-topology-aware"]
    used_before = plugin.used.copy()  # type: ignore[attr-defined]
    idle_before = ssn.matrix.idle.copy()
    new_action("allocate").execute(ssn)
    assert np.array_equal(ssn.matrix.idle, idle_before)
    assert np.array_equal(plugin.used, used_before)  # type: ignore[attr-defined]
    job = ssn.jobs["ns/big"]
    assert len(job.tasks_in(TaskStatus.PENDING)) == 5
    assert job.allocated_hyper_node == ""
    messages = [errors.message() for errors in job.nodes_fit_errors.values()]
    assert messages and all(message.startswith("In hyperNode leaf-") for message in messages)


def test_pipelined_only_placement_is_kept_but_not_committed() -> None:
    """Room that frees up only when releasing pods leave: the job is pipelined inside one
    leaf (a reservation for this session), nothing is bound and no HyperNode is recorded."""
    releasing = [
        build_pod("ns", f"old-{name}", name, "Running", rl("4", "1Gi"), "") for name in LEAF_1
    ]
    for pod in releasing:
        pod["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    busy = [build_pod("ns", f"busy-{name}", name, "Running", rl("4", "1Gi"), "") for name in LEAF_0]
    outcome = run_case(
        case(*gang("later", 4, 4, {"mode": "hard", "highestTierAllowed": 1}), *releasing, *busy),
        ["allocate"],
    )
    assert outcome.binder.binds == {}
    job = outcome.session.jobs["ns/later"]
    pipelined = job.tasks_in(TaskStatus.PIPELINED)
    assert {task.node_name for task in pipelined.values()} == set(LEAF_1)
    assert job.allocated_hyper_node == ""


def test_handles_only_jobs_with_a_tier() -> None:
    cache = SchedulerCache()
    for obj in gang("a", 1, 1, {"mode": "hard"}) + gang("b", 1, 1, None):
        cache.apply_event(obj["kind"], "ADDED", obj)
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1, None))
    snapshot = cache.snapshot()
    assert not TopologyAllocator.handles(snapshot.jobs["ns/a"])
    assert not TopologyAllocator.handles(snapshot.jobs["ns/b"])


def test_a_job_no_hyper_node_has_room_for_says_why() -> None:
    """The resource pre-filter rules out both leaves (20 CPUs asked, 16 in each): no dry run
    runs, and the job still says why it waits."""
    outcome = run_case(
        case(*gang("big", 5, 5, {"mode": "hard", "highestTierAllowed": 1})), ["allocate"]
    )
    assert outcome.binder.binds == {}
    job = outcome.session.jobs["ns/big"]
    assert job.job_fit_errors == (
        "all 5 pending pods (cpu 20) must fit inside one HyperNode of tier <= 1"
        " (networkTopology.highestTierAllowed), as Volcano places a job's pending pods together;"
        " the roomiest, leaf-0, has cpu 16 free; raising highestTierAllowed would let it run"
    )
    assert "Origin reason is: all 5 pending pods (cpu 20)" in job.fit_error()
