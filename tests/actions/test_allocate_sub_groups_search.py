"""allocate's score-first search for a job of several sub-groups (``actions/allocate_topology``
``_score_first_sub_groups_search``) picks what upstream's search picks: a HyperNode of the best
summed score among those a dry run places the job in (upstream dry-runs every candidate; ties
are broken at random in both, with the session's seeded generator here).

The reference below is upstream's search itself: a dry run of the job in every candidate, in the
same session state, keeping each solved candidate's summed score."""

from __future__ import annotations

import random
from typing import Any

import pytest

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_queue,
    build_sub_group_policy,
)
from tests.builders import resource_list as rl
from tests.harness import Case, run_case
from tests.hypernode_fixtures import build_hyper_node
from volcano_py.actions.allocate import Allocate
from volcano_py.actions.allocate_topology import TopologyAllocator, _discard
from volcano_py.actions.sub_job_worksheet import organize
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import SchedulerConf
from volcano_py.framework.session import SchedulingState, open_session
from volcano_py.framework.topology import SearchPurpose
from volcano_py.scheduler.registry import PluginRegistry
from volcano_py.testing.session import case_objects, tiers_of

GANG = ["enableJobOrder", "enableJobReady", "enableJobPipelined", "enableJobStarving"]
SUB_JOB_GANG = ["enabledSubJobReady", "enabledSubJobPipelined", "enabledSubJobOrder"]
TIER = {
    "gang": GANG + SUB_JOB_GANG,
    "predicates": ["enablePredicate"],
    "network-topology-aware": [
        "enableNodeOrder",
        "enabledHyperNodeOrder",
        "enabledHyperNodeGradient",
    ],
}
LEAVES = 6
NODES_PER_LEAF = 2
SUB_GROUPS = 3
SUB_GROUP_SIZE = 2


def _case(seed: int, plugins: dict[str, list[str]] | None = None) -> Case:
    """6 leaves of 2 nodes of 8 CPU under one spine, each node 0, 2 or 4 CPU busy (so leaves
    differ, some tie, and some cannot take the whole job); a job of 3 sub-groups of 2 pods of
    2 CPU, each sub-group inside one leaf, the job inside one spine."""
    chooser = random.Random(seed)
    nodes: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    leaves: list[dict[str, Any]] = []
    for leaf in range(LEAVES):
        names = [f"l{leaf}-n{i}" for i in range(NODES_PER_LEAF)]
        leaves.append(build_hyper_node(f"leaf-{leaf}", 1, names))
        for name in names:
            nodes.append(build_node(name, rl("8", "32Gi", pods="20")))
            for busy in range(chooser.choice([0, 1, 2])):
                pods.append(
                    build_pod("ns", f"busy-{name}-{busy}", name, "Running", rl("2", "1Gi"), "busy")
                )
    hyper_nodes = [
        *leaves,
        build_hyper_node("spine", 2, [], [f"leaf-{leaf}" for leaf in range(LEAVES)]),
    ]
    policy = build_sub_group_policy(
        "part",
        ["part"],
        mode="hard",
        highest_tier_allowed=1,
        sub_group_size=SUB_GROUP_SIZE,
        min_sub_groups=SUB_GROUPS,
    )
    size = SUB_GROUPS * SUB_GROUP_SIZE
    groups = [
        build_pod_group("busy", "ns", "q1", 1, None, "Running"),
        build_pod_group(
            "job",
            "ns",
            "q1",
            size,
            None,
            "Inqueue",
            network_topology={"mode": "hard", "highestTierAllowed": 2},
            sub_group_policy=[policy],
        ),
    ]
    for i in range(size):
        pods.append(
            build_pod(
                "ns",
                f"job-{i}",
                "",
                "Pending",
                rl("2", "1Gi"),
                "job",
                labels={"part": str(i // SUB_GROUP_SIZE)},
            )
        )
    return Case(
        name=f"sub-groups-{seed}",
        plugins=TIER if plugins is None else plugins,
        nodes=nodes,
        pods=pods,
        pod_groups=groups,
        queues=[build_queue("q1", 1, None)],
        hyper_nodes=hyper_nodes,
        seed=seed,
    )


def _upstream_best(case: Case) -> tuple[set[str], dict[str, float]]:
    """Upstream's search over the tier-1 candidates: every solved candidate's summed score,
    and those of the best score."""
    cache = SchedulerCache()
    for kind, obj in case_objects(case):
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(actions=["allocate"], tiers=tiers_of(case.plugins, case.arguments))
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState(seed=0))
    job = ssn.jobs["ns/job"]
    queue = ssn.queues[job.queue]
    allocator = TopologyAllocator(ssn, True)
    worksheet = organize(ssn, job, Allocate._schedulable)
    allocator.recorder.sub_job_snapshot[job.uid] = {
        uid: job.sub_jobs[uid].allocated_hyper_node for uid in worksheet.tasks
    }
    gradient = ssn.hyper_node_gradient_for_job(job, CLUSTER_TOP_HYPER_NODE, SearchPurpose.ALLOCATE)
    solved_scores: dict[str, float] = {}
    for candidate in gradient[0]:
        statements, _left, score, solved = allocator._trial_in(job, queue, worksheet, candidate)
        if solved:
            solved_scores[candidate] = score
        _discard(statements)
    if not solved_scores:
        return set(), solved_scores
    top = max(solved_scores.values())
    return {name for name, score in solved_scores.items() if score == top}, solved_scores


@pytest.mark.parametrize("seed", range(24))
def test_score_first_sub_groups_search_picks_an_upstream_best(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    case = _case(seed)
    best, scores = _upstream_best(case)

    def no_full_search(*_args: Any) -> None:
        raise AssertionError("the score-first search fell back to the full search")

    monkeypatch.setattr(TopologyAllocator, "_full_job_search", no_full_search)
    _check_placed_in_best(case, best, scores)


@pytest.mark.parametrize("seed", range(6))
def test_sub_groups_placed_in_steps_fall_back_to_the_full_search(seed: int) -> None:
    """Without gang's sub-job readiness a sub-group is "ready" after one pod, so a dry run
    places it pod by pod and scores every step: not what the prediction assumes. The first dry
    run shows it and the full search decides, as upstream's."""
    case = _case(seed, {**TIER, "gang": GANG})
    best, scores = _upstream_best(case)
    _check_placed_in_best(case, best, scores)


def _check_placed_in_best(case: Case, best: set[str], scores: dict[str, float]) -> None:
    outcome = run_case(case, ["allocate"])
    placed = {node for pod, node in outcome.binds.items() if pod.startswith("ns/job-")}
    if not best:
        assert not placed, f"no leaf takes the job, yet it was placed: {scores}"
        return
    assert len(placed) > 0
    leaves = {node.split("-")[0].replace("l", "leaf-") for node in placed}
    assert len(leaves) == 1, f"the job spans {leaves}"
    (leaf,) = leaves
    assert leaf in best, f"chose {leaf}; upstream's best are {best} of {scores}"
    assert outcome.session.jobs["ns/job"].allocated_hyper_node == leaf
