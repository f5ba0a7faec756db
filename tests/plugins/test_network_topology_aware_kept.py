"""network-topology-aware: what the plugin keeps across a session (for the HyperNode search's
speed, bench topology) answers as computing it afresh would.

* the placed tasks of each sub-job per lowest-tier HyperNode, counted once and then followed by
  the allocate/deallocate events, equal a fresh count after any run of statement operations
  (allocate, pipeline, evict, veto, discard, commit);
* the HyperNode order hook (one array over the candidates) equals the per-candidate reference
  (the binpack of ``_sub_job_binpack``, the task share added to the tied ones);
* the gradients kept per search are fresh lists, equal to what a new session answers.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from typing import Any

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.builders import resource_list as rl
from tests.hypernode_fixtures import build_hyper_node
from tests.statement_ops import apply_operation, operations
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.session import Session, open_session
from volcano_py.framework.statement import Statement, StatementError
from volcano_py.framework.topology import SearchPurpose
from volcano_py.plugins.network_topology_aware import (
    MAX_NODE_SCORE,
    PLUGIN_NAME,
    NetworkTopologyAwarePlugin,
)
from volcano_py.scheduler.registry import PluginRegistry

LEAVES = ("l0", "l1", "l2", "l3")
NODES = [f"{leaf}-n{j}" for leaf in LEAVES for j in range(2)]
# Pods whose allocation another handler refuses (the statement then rolls it back).
VETOED = "veto"


def _cluster() -> SchedulerCache:
    """8 nodes under 4 tier-1 HyperNodes under 2 tier-2 ones; a sub-grouped job (2 sub-jobs
    of 3 pods, one running, and a pod in no sub-group) and a plain gang (4 pods, one running),
    both hard at tier 2."""
    cache = SchedulerCache()
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1, None))
    for name in NODES:
        cache.apply_event("Node", "ADDED", build_node(name, rl("16", "32Gi", pods="50")))
    for leaf in LEAVES:
        members = [name for name in NODES if name.startswith(leaf)]
        cache.apply_event("HyperNode", "ADDED", build_hyper_node(leaf, 1, members))
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("s0", 2, [], ["l0", "l1"]))
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("s1", 2, [], ["l2", "l3"]))
    topology = {"mode": "hard", "highestTierAllowed": 2}
    policy = {
        "name": "part",
        "subGroupSize": 3,
        "matchLabelKeys": ["part"],
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }
    groups: list[dict[str, Any]] = [
        build_pod_group("sub", "ns", "q1", 6, network_topology=topology, sub_group_policy=[policy]),
        build_pod_group("gang", "ns", "q1", 4, network_topology=topology),
    ]
    for group in groups:
        group["status"] = {"phase": "Running"}
        cache.apply_event("PodGroup", "ADDED", group)
    pods = [
        build_pod("ns", "sub-0", "l0-n0", "Running", rl("1", "1Gi"), "sub", {"part": "a"}),
        build_pod("ns", "gang-0", "l2-n1", "Running", rl("1", "1Gi"), "gang"),
    ]
    pods += [
        build_pod("ns", f"sub-{i}", "", "Pending", rl("1", "1Gi"), "sub", {"part": part})
        for i, part in zip(range(1, 6), "aabbb", strict=True)
    ]
    # In no sub-group (no label): the job's default sub-job.
    pods.append(build_pod("ns", "sub-free", "", "Pending", rl("1", "1Gi"), "sub"))
    pods += [build_pod("ns", f"gang-{i}", "", "Pending", rl("1", "1Gi"), "gang") for i in (1, 2)]
    pods.append(build_pod("ns", f"gang-{VETOED}", "", "Pending", rl("1", "1Gi"), "gang"))
    for pod in pods:
        cache.apply_event("Pod", "ADDED", pod)
    return cache


def _open() -> tuple[Session, NetworkTopologyAwarePlugin]:
    conf = SchedulerConf(actions=["allocate"], tiers=[Tier([PluginOption(PLUGIN_NAME)])])
    ssn = open_session(_cluster().snapshot(), conf, PluginRegistry(), SchedulerCache())
    plugin = ssn.plugins[PLUGIN_NAME]
    assert isinstance(plugin, NetworkTopologyAwarePlugin)

    def veto(event: Event) -> None:
        if event.task.name.endswith(VETOED):
            event.error = "refused by the test"

    ssn.add_event_handler(EventHandler(allocate=veto, owner="test"))
    return ssn, plugin


def _sub_jobs(ssn: Session) -> list[SubJobInfo]:
    return [sub_job for job in ssn.jobs.values() for sub_job in job.all_sub_jobs()]


def _nonzero(counts: Counter[int]) -> dict[int, int]:
    return {h: count for h, count in counts.items() if count}


OPERATIONS = operations(len(NODES), 20)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(operations=OPERATIONS, counted_first=st.booleans())
def test_kept_placed_counts_equal_a_fresh_count(
    operations: list[tuple[str, int, int]], counted_first: bool
) -> None:
    ssn, plugin = _open()
    sub_jobs = _sub_jobs(ssn)
    if counted_first:
        # Counted before the operations: the events keep them; otherwise counted midway.
        for sub_job in sub_jobs:
            plugin._task_shares_by_lowest(sub_job)
    statements: list[Statement] = [ssn.statement()]
    for kind, which, node_index in operations:
        apply_operation(ssn, statements, kind, which, NODES[node_index])
        if which % 3 == 0:
            # Counting midway: from then on the events keep the counts.
            plugin._task_shares_by_lowest(sub_jobs[which % len(sub_jobs)])
        for sub_job in sub_jobs:
            kept = plugin._placed_by_lowest.get(sub_job.uid)
            if kept is not None:
                assert _nonzero(kept) == _nonzero(plugin._count_placed_by_lowest(sub_job))


def _reference_order(
    plugin: NetworkTopologyAwarePlugin, sub_job: SubJobInfo, candidates: list[str]
) -> dict[str, float]:
    """``HyperNodeOrderFn`` one candidate at a time (the hook's former shape)."""
    request = plugin._sub_job_request(sub_job)
    index = plugin.membership.index
    scores = {
        name: plugin._sub_job_binpack(index[name], request) if name in index else 0.0
        for name in candidates
    }
    if scores:
        top = max(scores.values())
        tied = [name for name, score in scores.items() if score == top]
        if len(tied) > 1 and sub_job.tasks:
            for h, count in plugin._task_shares(sub_job).items():
                name = plugin.membership.names[h]
                if name in tied:
                    scores[name] += count / len(sub_job.tasks)
    scale = float(MAX_NODE_SCORE * plugin.weights.weight)
    return {name: score * scale for name, score in scores.items()}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    placements=st.lists(st.tuples(st.integers(0, 20), st.integers(0, 7)), max_size=8),
    candidates=st.lists(st.sampled_from([*LEAVES, "s0", "s1", "unknown"]), unique=True, max_size=7),
)
def test_hyper_node_order_equals_the_per_candidate_reference(
    placements: list[tuple[int, int]], candidates: list[str]
) -> None:
    ssn, plugin = _open()
    statement = ssn.statement()
    for which, node_index in placements:
        pending = sorted(
            (
                task
                for job in ssn.jobs.values()
                for task in job.tasks_in(TaskStatus.PENDING).values()
            ),
            key=lambda task: task.name,
        )
        if pending:
            with contextlib.suppress(StatementError):
                statement.allocate(pending[which % len(pending)], ssn.nodes[NODES[node_index]])
    rows = {name: ssn.hyper_node_rows(name) for name in candidates}
    for sub_job in _sub_jobs(ssn):
        expected = _reference_order(plugin, sub_job, candidates)
        actual = plugin.hyper_node_order(sub_job, rows)
        assert list(actual) == list(expected)
        assert actual == expected


def test_kept_gradients_are_fresh_lists_equal_to_a_new_sessions() -> None:
    ssn, plugin = _open()
    fresh_ssn, fresh = _open()
    (gang,) = [job for job in ssn.jobs.values() if job.name == "gang"]
    first = plugin.gradient_for_job(gang, "<cluster-top-hypernode>", SearchPurpose.ALLOCATE)
    expected = [list(gradient) for gradient in first]
    first[0].clear()
    first.clear()
    again = plugin.gradient_for_job(gang, "<cluster-top-hypernode>", SearchPurpose.ALLOCATE)
    assert again == expected
    (fresh_gang,) = [job for job in fresh_ssn.jobs.values() if job.name == "gang"]
    assert again == fresh.gradient_for_job(
        fresh_gang, "<cluster-top-hypernode>", SearchPurpose.ALLOCATE
    )
    # Eviction gradients are kept apart from allocation ones.
    evict = plugin.gradient_for_job(gang, "<cluster-top-hypernode>", SearchPurpose.EVICT)
    assert evict == fresh.gradient_for_job(
        fresh_gang, "<cluster-top-hypernode>", SearchPurpose.EVICT
    )
    for sub_job in _sub_jobs(ssn):
        for root in ("s0", "l1"):
            mine = plugin.gradient_for_sub_job(sub_job, root, SearchPurpose.ALLOCATE)
            fresh_sub_job = fresh_ssn.jobs[sub_job.job].sub_jobs[sub_job.uid]
            theirs = fresh.gradient_for_sub_job(fresh_sub_job, root, SearchPurpose.ALLOCATE)
            assert mine == theirs
    assert np.all(plugin.used == fresh.used)


def test_the_cluster_has_every_kind_of_sub_job() -> None:
    """The operations above reach a sub-group's tasks, a policy job's default sub-job and a
    job without policies."""
    ssn, _ = _open()
    sizes = sorted(len(sub_job.tasks) for sub_job in _sub_jobs(ssn))
    sub = next(job for job in ssn.jobs.values() if job.name == "sub")
    assert sub.default_sub_job().tasks, "the pod in no sub-group is in the default sub-job"
    assert sizes == [1, 3, 3, 4]
