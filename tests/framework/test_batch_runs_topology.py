"""Inside a HyperNode's search, a run of like gang members placed with one node search kept
across the run decides exactly as placing them task by task (issue 12, "Performance").

The run keeps its candidate rows' fit, masks and per-row scores, and adds the
network-topology-aware score, the same on every row of one lowest-tier HyperNode, per member
(``Session.run_uniform_scores``). These properties run whole sessions on random HyperNode
trees with that path on and off (``task_placement._BATCH_RUNS``) and compare every bind in
bind order, every pipelined task, the PodGroup phases, the HyperNodes the jobs and sub-jobs
were given and the next start index; then they pin the two per-row and per-member scores the
run uses against the functions they stand in for.
"""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench import topology as bench_topology
from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.hypernode_fixtures import build_hyper_node
from volcano_py.actions import task_placement
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework.conf import SchedulerConf, parse_conf
from volcano_py.framework.session import SchedulingState, Session, close_session, open_session
from volcano_py.plugins.binpack import BinpackWeights, binpack_row_score, binpack_scores
from volcano_py.plugins.network_topology_aware import NetworkTopologyAwarePlugin
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action


def topology_conf(binpack: bool) -> SchedulerConf:
    """``bench topology``'s conf (binpack and network-topology-aware last), binpack optional."""
    text = (
        bench_topology.CONF if binpack else bench_topology.CONF.replace("  - name: binpack\n", "")
    )
    return parse_conf(text, BUILTIN_ACTIONS)


Cluster = dict[str, list[dict[str, Any]]]


@st.composite
def topology_clusters(draw: st.DrawFn) -> Cluster:
    """Leaves of 1 to 6 nodes of mixed sizes under spines, half full at random; hard gangs of
    like members (tier 1 or 2), some soft, and sub-grouped jobs whose sub-groups are hard at
    tier 1."""
    nodes: list[dict[str, Any]] = []
    hyper_nodes: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    groups: list[dict[str, Any]] = [build_pod_group("run-0", "ns", "q1", 1, phase="Running")]
    leaves: list[str] = []
    for leaf in range(draw(st.integers(2, 8))):
        members = []
        for j in range(draw(st.integers(1, 6))):
            name = f"l{leaf}-n{j}"
            cpu = draw(st.sampled_from(["8", "16", "32"]))
            nodes.append(build_node(name, resource_list(cpu, "64Gi", pods="110")))
            members.append(name)
            held = draw(st.integers(0, 3))
            for k in range(held):
                pods.append(
                    build_pod(
                        "ns",
                        f"run-{name}-{k}",
                        name,
                        "Running",
                        resource_list(draw(st.sampled_from(["1", "2", "4"])), "1Gi"),
                        "run-0",
                    )
                )
        leaves.append(f"leaf-{leaf}")
        hyper_nodes.append(build_hyper_node(leaves[-1], 1, members))
    per_spine = draw(st.integers(1, 4))
    for s in range(0, len(leaves), per_spine):
        hyper_nodes.append(build_hyper_node(f"spine-{s}", 2, [], leaves[s : s + per_spine]))
    for g in range(draw(st.integers(1, 6))):
        group = f"gang-{g}"
        size = draw(st.integers(2, 24))
        mode = draw(st.sampled_from(["hard", "hard", "soft"]))
        tier = draw(st.sampled_from([1, 1, 2]))
        topology = {"mode": mode, "highestTierAllowed": tier}
        sub_grouped = draw(st.integers(0, 3)) == 0
        policy = None
        if sub_grouped:
            sub_size = draw(st.integers(2, 6))
            policy = [
                {
                    "name": "part",
                    "subGroupSize": sub_size,
                    "matchLabelKeys": ["part"],
                    "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                }
            ]
            topology = {"mode": "hard", "highestTierAllowed": 2}
        groups.append(
            build_pod_group(
                group, "ns", "q1", size, network_topology=topology, sub_group_policy=policy
            )
        )
        cpu = draw(st.sampled_from(["1", "2", "3", "4"]))
        for t in range(size):
            labels = {"part": str(t // sub_size)} if sub_grouped else None
            pods.append(
                build_pod(
                    "ns", f"{group}-{t}", "", "Pending", resource_list(cpu, "1Gi"), group, labels
                )
            )
    return {"nodes": nodes, "hyper_nodes": hyper_nodes, "groups": groups, "pods": pods}


def cache_with(cluster: Cluster, binder: RecordingBinder | None = None) -> SchedulerCache:
    """A cache holding the queue and ``cluster``'s objects, each kind after those it needs."""
    cache = SchedulerCache(binder=binder) if binder is not None else SchedulerCache()
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1, None))
    for kind, objects in (
        ("Node", cluster["nodes"]),
        ("HyperNode", cluster["hyper_nodes"]),
        ("PodGroup", cluster["groups"]),
        ("Pod", cluster["pods"]),
    ):
        for item in objects:
            cache.apply_event(kind, "ADDED", item)
    return cache


def run_session(cluster: Cluster, conf: SchedulerConf, seed: int) -> tuple[Any, ...]:
    """Binds in bind order, pipelined tasks, PodGroup phases, the HyperNodes given to each job
    and sub-job, the HyperNode each task was placed with, and the next start index."""
    binder = RecordingBinder()
    cache = cache_with(cluster, binder)
    state = SchedulingState(seed=seed)
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
    for name in conf.actions:
        new_action(name).execute(ssn)
    close_session(ssn)
    jobs = ssn.jobs.values()
    return (
        list(binder.order),
        sorted(
            (task.key, task.node_name)
            for job in jobs
            for task in job.tasks.values()
            if task.status.name == "PIPELINED"
        ),
        sorted((job.name, job.pod_group.phase) for job in jobs if job.pod_group is not None),
        sorted(
            (sub_job.uid, sub_job.allocated_hyper_node)
            for job in jobs
            for sub_job in job.all_sub_jobs()
        ),
        sorted((job.name, job.allocated_hyper_node) for job in jobs),
        sorted(
            (task.key, task.job_allocated_hyper_node) for job in jobs for task in job.tasks.values()
        ),
        state.next_start_index,
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topology_clusters(), st.booleans(), st.integers(0, 3))
def test_hyper_node_runs_place_alike_batched_or_not(
    cluster: Cluster, binpack: bool, seed: int
) -> None:
    conf = topology_conf(binpack)
    batched = run_session(cluster, conf, seed)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(task_placement, "_BATCH_RUNS", False)
        single = run_session(cluster, conf, seed)
    assert batched == single


def test_the_bench_shape_runs_inside_one_hyper_node() -> None:
    """A hard gang inside one tier-1 HyperNode is placed as a run (the topology score, the
    same on every node of the HyperNode, lets it: one run, one uniform part), deciding as task
    by task. (A uniform score cannot change which node wins but through rounding; the run adds
    it all the same, so that every sum is the per-task search's, bit for bit.)"""
    cluster: Cluster = {"nodes": [], "hyper_nodes": [], "groups": [], "pods": []}
    for leaf in range(3):
        members = [f"l{leaf}-n{j}" for j in range(4)]
        for name in members:
            cluster["nodes"].append(build_node(name, resource_list("16", "64Gi", pods="110")))
        cluster["hyper_nodes"].append(build_hyper_node(f"leaf-{leaf}", 1, members))
    cluster["groups"].append(
        build_pod_group(
            "gang", "ns", "q1", 12, network_topology={"mode": "hard", "highestTierAllowed": 1}
        )
    )
    cluster["pods"] += [
        build_pod("ns", f"gang-{t}", "", "Pending", resource_list("2", "1Gi"), "gang")
        for t in range(12)
    ]
    conf = topology_conf(binpack=True)
    runs: list[int] = []
    original = Session.run_uniform_scores

    def counting(ssn: Session, task: Any, rows: Any = None) -> Any:
        uniform = original(ssn, task, rows)
        if uniform:
            runs.append(len(uniform))
        return uniform

    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(Session, "run_uniform_scores", counting)
        batched = run_session(cluster, conf, 1)
    assert runs == [1]
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(task_placement, "_BATCH_RUNS", False)
        assert run_session(cluster, conf, 1) == batched


def _session_with(cluster: Cluster, conf: SchedulerConf) -> Session:
    cache = cache_with(cluster)
    return open_session(cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState())


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(topology_clusters(), st.integers(0, 2**16))
def test_the_uniform_score_is_the_plugins_score_on_every_row(cluster: Cluster, seed: int) -> None:
    """``batch_uniform_score`` gives, for any member state, exactly the number
    ``batch_node_order`` puts on every candidate row of a lowest-tier HyperNode (and refuses
    rows spanning several)."""
    ssn = _session_with(cluster, topology_conf(binpack=False))
    plugin = ssn.plugins["network-topology-aware"]
    assert isinstance(plugin, NetworkTopologyAwarePlugin)
    rng = random.Random(seed)
    names = [h["metadata"]["name"] for h in cluster["hyper_nodes"]]
    for job in ssn.jobs.values():
        for task in job.tasks.values():
            for leaf in [n for n in names if n.startswith("leaf-")]:
                rows = ssn.hyper_node_rows(leaf)
                score = plugin.batch_uniform_score(task, rows)
                if not job.sub_job_of(task).with_network_topology():
                    continue
                assert score is not None
                if len(rows) < 2:
                    continue
                task.job_allocated_hyper_node = rng.choice([*names, ""])
                expected = plugin.batch_node_order(task, rows)
                assert np.all(expected == expected[0])
                assert score(task) == expected[0]
            spine_rows = ssn.hyper_node_rows(next(n for n in names if n.startswith("spine-")))
            lowest = plugin._lowest_tier_of_rows()[spine_rows]
            if job.sub_job_of(task).with_network_topology() and len(set(lowest.tolist())) > 1:
                assert plugin.batch_uniform_score(task, spine_rows) is None


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.sampled_from(["1", "2", "3", "500m", "0"]), min_size=1, max_size=1),
    st.sampled_from(["1Gi", "3Gi", "0"]),
    st.integers(0, 5),
    st.integers(0, 3),
    st.integers(1, 4),
)
def test_binpack_row_score_is_the_vector_score_bit_for_bit(
    cpus: list[str], memory: str, cpu_weight: int, memory_weight: int, weight: int
) -> None:
    """One row in plain floats (``binpack_row_score``) equals ``binpack_scores`` on that row,
    bit for bit, on full, empty and overflowing nodes."""
    cluster: Cluster = {"nodes": [], "hyper_nodes": [], "groups": [], "pods": []}
    for i, cpu in enumerate(["4", "8", "3", "16"]):
        cluster["nodes"].append(build_node(f"n{i}", resource_list(cpu, "8Gi", pods="110")))
        cluster["pods"].append(
            build_pod("ns", f"held-{i}", f"n{i}", "Running", resource_list("3", "5Gi"), "run")
        )
    cluster["groups"].append(build_pod_group("run", "ns", "q1", 1, phase="Running"))
    cluster["groups"].append(build_pod_group("gang", "ns", "q1", 1))
    cluster["pods"].append(
        build_pod("ns", "gang-0", "", "Pending", resource_list(cpus[0], memory), "gang")
    )
    ssn = _session_with(cluster, topology_conf(binpack=True))
    weights = BinpackWeights(
        weight, cpu_weight, memory_weight, {"cpu": cpu_weight, "memory": memory_weight}
    )
    task = ssn.jobs["ns/gang"].tasks[next(iter(ssn.jobs["ns/gang"].tasks))]
    row_score = binpack_row_score(task.resreq, ssn, weights)
    rows = np.arange(len(ssn.node_list))
    vector = binpack_scores(task.resreq, ssn.matrix, rows, weights)
    assert [row_score(int(row)) for row in rows] == vector.tolist()
