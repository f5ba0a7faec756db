"""A session's network topology: open-time normalisation and recovery, HyperNode rows, the
topology hook dispatchers (``framework/session.go`` steps 4-6, ``session_plugins.go``).

Transcribed from upstream ``session_test.go``: ``TestSession_adjustNetworkTopologySpec`` (3
cases), ``TestAdjustNetworkTopologySpec_DoesNotMutatePodGroupSpec``, the job-level cases of
``TestConvertSoftToHardTopology`` and ``TestAdjustNetworkTopologySpec_SoftToHardConversion``
(3 cases), and the sub-group-policy cases of ``TestConvertSoftToHardTopology`` (7), each
sub-group policy's sub-job made by a pod labelled for it.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.builders import resource_list as rl
from tests.framework.fake_plugins import PluginSpec, open_fake_session
from tests.hypernode_fixtures import build_hyper_node
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import SchedulerConf, Tier
from volcano_py.framework.session import Session, close_session, open_session
from volcano_py.framework.topology import HyperNodeMembership, SearchPurpose
from volcano_py.scheduler.registry import PluginRegistry

NODES = [f"s{i}-n{j}" for i in range(3, 7) for j in (1, 2)]


def three_tier_hyper_nodes(tier_names: bool = False) -> list[dict[str, Any]]:
    """s0 (tier 3) > s1, s2 (tier 2) > s3..s6 (tier 1) > two nodes each; the virtual root is
    tier 4."""
    names = {1: "volcano.sh/hypernode", 2: "volcano.sh/hypercluster"} if tier_names else {}
    objects = [
        build_hyper_node(f"s{i}", 1, [f"s{i}-n1", f"s{i}-n2"], tier_name=names.get(1, ""))
        for i in range(3, 7)
    ]
    objects.append(build_hyper_node("s1", 2, [], ["s3", "s4"], tier_name=names.get(2, "")))
    objects.append(build_hyper_node("s2", 2, [], ["s5", "s6"], tier_name=names.get(2, "")))
    objects.append(build_hyper_node("s0", 3, [], ["s1", "s2"]))
    return objects


def cluster(
    topology: dict[str, Any] | None,
    *,
    pods: list[dict[str, Any]] | None = None,
    hyper_nodes: list[dict[str, Any]] | None = None,
) -> SchedulerCache:
    cache = SchedulerCache()
    for name in NODES:
        cache.apply_event("Node", "ADDED", build_node(name, rl("2", "4Gi", pods="10")))
    cache.apply_event("Queue", "ADDED", build_queue("q1"))
    pod_group = build_pod_group("pg1", "c1", "q1", 1, None, "Inqueue", network_topology=topology)
    cache.apply_event("PodGroup", "ADDED", pod_group)
    for pod in pods or [build_pod("c1", "p1", "", "Pending", rl("1", "1Gi"), "pg1")]:
        cache.apply_event("Pod", "ADDED", pod)
    for obj in three_tier_hyper_nodes() if hyper_nodes is None else hyper_nodes:
        cache.apply_event("HyperNode", "ADDED", obj)
    return cache


def session_of(cache: SchedulerCache) -> Session:
    return open_session(cache.snapshot(), SchedulerConf([], [Tier([])]), PluginRegistry(), cache)


# ---------------------------------------------------------------------------- normalisation


@pytest.mark.parametrize(
    ("topology", "expected"),
    [
        pytest.param(
            {"highestTierName": "", "highestTierAllowed": 2},
            {"highestTierName": "", "highestTierAllowed": 2},
            id="job with highestTierAllowed, no translation",
        ),
        pytest.param(
            {"highestTierName": "volcano.sh/hypercluster"},
            {"highestTierAllowed": 2},
            id="job with highestTierName, need translation",
        ),
        pytest.param(
            {"highestTierName": "volcano.sh/hypercluster-test"},
            {"highestTierName": "volcano.sh/hypercluster-test"},
            id="job with highestTierName, failed to translate",
        ),
    ],
)
def test_adjust_network_topology_spec_upstream(
    topology: dict[str, Any], expected: dict[str, Any]
) -> None:
    """``TestSession_adjustNetworkTopologySpec``; the tier names come from the HyperNodes'
    ``tierName``. The default sub-job gets the same spec."""
    ssn = session_of(cluster(topology, hyper_nodes=three_tier_hyper_nodes(tier_names=True)))
    job = ssn.jobs["c1/pg1"]
    assert job.network_topology == expected
    assert job.default_sub_job().network_topology == expected


def test_adjust_network_topology_spec_does_not_mutate_the_pod_group_upstream() -> None:
    """``TestAdjustNetworkTopologySpec_DoesNotMutatePodGroupSpec``: neither the session's nor
    the cache's PodGroup spec changes."""
    topology = {"mode": "soft", "highestTierName": "volcano.sh/hypercluster"}
    cache = cluster(topology, hyper_nodes=three_tier_hyper_nodes(tier_names=True))
    ssn = session_of(cache)
    assert ssn.jobs["c1/pg1"].network_topology == {"mode": "hard", "highestTierAllowed": 4}
    session_pod_group = ssn.jobs["c1/pg1"].pod_group
    assert session_pod_group is not None
    assert session_pod_group.network_topology == topology
    assert cache.jobs["c1/pg1"].network_topology == topology
    assert session_of(cache).jobs["c1/pg1"].network_topology == {
        "mode": "hard",
        "highestTierAllowed": 4,
    }


@pytest.mark.parametrize(
    ("topology", "mode", "tier", "hard"),
    [
        pytest.param({"mode": "soft"}, "hard", 4, True, id="job-level soft is converted to hard"),
        pytest.param(
            {"mode": "hard", "highestTierAllowed": 2},
            "hard",
            2,
            True,
            id="job-level hard topology is unchanged",
        ),
        pytest.param(None, None, None, False, id="nil job topology remains nil"),
    ],
)
def test_convert_soft_to_hard_topology_upstream(
    topology: dict[str, Any] | None, mode: str | None, tier: int | None, hard: bool
) -> None:
    """``TestConvertSoftToHardTopology``, job-level cases (the root's tier here is 4, as
    upstream's ``maxTier``)."""
    ssn = session_of(cluster(topology))
    job = ssn.jobs["c1/pg1"]
    if topology is None:
        assert job.network_topology is None
        assert not job.default_sub_job().with_network_topology()
    else:
        assert job.network_topology is not None
        assert job.network_topology.get("mode") == mode
        assert job.network_topology.get("highestTierAllowed") == tier
        sub_job = job.default_sub_job()
        assert sub_job.hard_topology() == (True, tier)
    assert job.hard_topology()[0] is hard


@pytest.mark.parametrize(
    ("topology", "tier"),
    [
        pytest.param(
            {"mode": "soft", "highestTierName": "volcano.sh/hypercluster"},
            4,
            id="soft topology with tierName: both translated and converted",
        ),
        pytest.param({"mode": "soft"}, 4, id="pure soft topology without tierName"),
        pytest.param(
            {"mode": "hard", "highestTierName": "volcano.sh/hypernode"},
            1,
            id="hard topology with tierName: only translated, not re-converted",
        ),
    ],
)
def test_adjust_network_topology_spec_soft_to_hard_upstream(
    topology: dict[str, Any], tier: int
) -> None:
    """``TestAdjustNetworkTopologySpec_SoftToHardConversion``."""
    ssn = session_of(cluster(topology, hyper_nodes=three_tier_hyper_nodes(tier_names=True)))
    assert ssn.jobs["c1/pg1"].hard_topology() == (True, tier)


def test_soft_job_without_hyper_nodes_becomes_hard_with_tier_one() -> None:
    """No HyperNode at all: the virtual root is tier 1, so is the converted constraint."""
    ssn = session_of(cluster({"mode": "soft"}, hyper_nodes=[]))
    assert ssn.hyper_node_tree is None
    assert ssn.jobs["c1/pg1"].hard_topology() == (True, 1)
    assert ssn.topology.tiers == (1,)
    assert ssn.hyper_node_rows(CLUSTER_TOP_HYPER_NODE).tolist() == list(range(len(NODES)))


SOFT = {"mode": "soft"}


def _policy(name: str, size: int, topology: dict[str, Any] | None) -> dict[str, Any]:
    policy: dict[str, Any] = {"name": name, "subGroupSize": size, "matchLabelKeys": [name]}
    if topology is not None:
        policy["networkTopology"] = topology
    return policy


@pytest.mark.parametrize(
    ("job_topology", "policies", "job_tier", "sub_tiers", "contains_hard"),
    [
        pytest.param(
            None,
            [_policy("worker", 4, SOFT)],
            None,
            [4],
            True,
            id="subGroupPolicy-level soft topology is converted to hard",
        ),
        pytest.param(
            None,
            [_policy("worker", 4, {"mode": "hard", "highestTierAllowed": 2})],
            None,
            [2],
            True,
            id="subGroupPolicy-level hard topology is unchanged",
        ),
        pytest.param(
            SOFT,
            [_policy("worker", 4, SOFT)],
            4,
            [4],
            True,
            id="mixed: job soft + subGroupPolicy soft both converted",
        ),
        pytest.param(
            {"mode": "hard", "highestTierAllowed": 2},
            [_policy("worker", 4, SOFT)],
            2,
            [2],
            True,
            id="mixed: job hard + subGroupPolicy soft (subgroup bounded by job tier)",
        ),
        pytest.param(
            {"mode": "hard", "highestTierAllowed": 3},
            [_policy("worker", 4, SOFT), _policy("ps", 2, SOFT)],
            3,
            [3, 3],
            True,
            id="mixed: job hard tier=3 + multiple subGroupPolicies soft (all bounded by job tier)",
        ),
        pytest.param(
            None,
            [
                _policy("worker", 4, SOFT),
                _policy("ps", 2, {"mode": "hard", "highestTierAllowed": 1}),
            ],
            None,
            [4, 1],
            True,
            id="multiple subGroupPolicies: some soft some hard",
        ),
        pytest.param(
            None,
            [_policy("worker", 4, None)],
            None,
            [None],
            False,
            id="subGroupPolicy with nil NetworkTopology is unchanged",
        ),
    ],
)
def test_convert_soft_to_hard_topology_sub_groups_upstream(
    job_topology: dict[str, Any] | None,
    policies: list[dict[str, Any]],
    job_tier: int | None,
    sub_tiers: list[int | None],
    contains_hard: bool,
) -> None:
    """``TestConvertSoftToHardTopology``, the sub-group cases: a soft sub-group becomes hard
    bounded by its job's tier (the root's, 4, without one)."""
    cache = SchedulerCache()
    for name in NODES:
        cache.apply_event("Node", "ADDED", build_node(name, rl("2", "4Gi", pods="10")))
    cache.apply_event("Queue", "ADDED", build_queue("q1"))
    group = build_pod_group(
        "pg1",
        "c1",
        "q1",
        4,
        None,
        "Inqueue",
        network_topology=job_topology,
        sub_group_policy=policies,
    )
    cache.apply_event("PodGroup", "ADDED", group)
    for policy in policies:
        labels = {policy["name"]: "0"}
        pod = build_pod("c1", policy["name"], "", "Pending", rl("1", "1Gi"), "pg1", labels)
        cache.apply_event("Pod", "ADDED", pod)
    for obj in three_tier_hyper_nodes():
        cache.apply_event("HyperNode", "ADDED", obj)
    ssn = session_of(cache)
    job = ssn.jobs["c1/pg1"]
    if job_tier is None:
        assert job.network_topology is None
    else:
        assert job.hard_topology() == (True, job_tier)
    for policy, tier in zip(policies, sub_tiers, strict=True):
        sub_job = job.sub_jobs[f"c1/pg1/{policy['name']}-0"]
        if tier is None:
            assert not sub_job.with_network_topology()
        else:
            assert sub_job.hard_topology() == (True, tier)
            assert not sub_job.soft_topology()
    assert job.contains_hard_topology() is contains_hard
    # The cache's PodGroup spec is untouched (TestAdjustNetworkTopologySpec_DoesNot...).
    assert cache.jobs["c1/pg1"].pod_group.raw["spec"]["subGroupPolicy"] == policies


# ---------------------------------------------------------------------------- recovery


def _running(name: str, node: str) -> dict[str, Any]:
    return build_pod("c1", name, node, "Running", rl("1", "1Gi"), "pg1")


@pytest.mark.parametrize(
    ("nodes", "expected"),
    [
        pytest.param(["s3-n1"], "s3", id="one task: its node's lowest HyperNode"),
        pytest.param(["s3-n1", "s3-n2"], "s3", id="same tier-1 HyperNode"),
        pytest.param(["s3-n1", "s4-n2"], "s1", id="two tier-1 HyperNodes under s1"),
        pytest.param(["s3-n1", "s6-n2"], "s0", id="across the top real HyperNode"),
        pytest.param([], "", id="nothing placed: nothing recovered"),
    ],
)
def test_allocated_hyper_node_is_recovered_from_placed_tasks(
    nodes: list[str], expected: str
) -> None:
    pods = [_running(f"r{i}", node) for i, node in enumerate(nodes)]
    pods.append(build_pod("c1", "p", "", "Pending", rl("1", "1Gi"), "pg1"))
    ssn = session_of(cluster({"mode": "hard", "highestTierAllowed": 2}, pods=pods))
    job = ssn.jobs["c1/pg1"]
    assert job.allocated_hyper_node == expected
    assert job.default_sub_job().allocated_hyper_node == expected
    assert (job.uid in ssn.dirty_jobs) is bool(expected)


def test_a_task_on_a_node_outside_the_session_recovers_nothing() -> None:
    pods = [_running("r1", "s3-n1"), _running("r2", "gone")]
    ssn = session_of(cluster({"mode": "hard", "highestTierAllowed": 2}, pods=pods))
    assert ssn.jobs["c1/pg1"].allocated_hyper_node == ""


def test_recovery_waits_while_hyper_nodes_are_broken() -> None:
    """A membership cycle makes the HyperNodes not ready: no recovery, and allocate skips the
    job (``HyperNodesReadyToSchedule``)."""
    hyper_nodes = three_tier_hyper_nodes()
    hyper_nodes.append(build_hyper_node("loop", 4, [], ["s0"]))
    hyper_nodes.append(build_hyper_node("s0", 3, [], ["s1", "s2", "loop"]))
    cache = cluster({"mode": "hard", "highestTierAllowed": 2}, pods=[_running("r", "s3-n1")])
    for obj in hyper_nodes[-2:]:
        cache.apply_event("HyperNode", "MODIFIED", obj)
    ssn = session_of(cache)
    assert not ssn.hyper_nodes_ready
    assert ssn.jobs["c1/pg1"].allocated_hyper_node == ""


# ---------------------------------------------------------------------------- rows


def test_hyper_node_rows_are_session_rows_in_node_order() -> None:
    ssn = session_of(cluster({"mode": "hard", "highestTierAllowed": 2}))
    row = {node.name: node.row for node in ssn.node_list}
    assert ssn.hyper_node_rows("s4").tolist() == [row["s4-n1"], row["s4-n2"]]
    assert ssn.hyper_node_rows("s2").tolist() == sorted(
        row[f"s{i}-n{j}"] for i in (5, 6) for j in (1, 2)
    )
    assert len(ssn.hyper_node_rows(CLUSTER_TOP_HYPER_NODE)) == len(NODES)
    assert len(ssn.hyper_node_rows("unknown")) == 0


def test_membership_both_ways_and_sums() -> None:
    ssn = session_of(cluster({"mode": "hard", "highestTierAllowed": 2}))
    membership = ssn.topology.membership()
    s5 = ssn.nodes["s5-n2"].row
    holders = {membership.names[h] for h in membership.hyper_nodes_of_row(s5)}
    assert holders == {"s5", "s2", "s0", CLUSTER_TOP_HYPER_NODE}
    sums = membership.sum_rows(ssn.matrix.allocatable)
    assert sums[membership.index["s1"], 0] == 8000.0  # four 2-CPU nodes, in millicores
    assert sums[membership.index[CLUSTER_TOP_HYPER_NODE], 0] == 16000.0
    at_tier_1 = membership.at_tier(1)
    assert membership.names[at_tier_1[s5]] == "s5"
    assert np.all(membership.at_tier(7) == -1)


def test_membership_handles_empty_hyper_nodes() -> None:
    """A HyperNode over nodes outside the session holds no row; sums skip it."""
    hyper_nodes = three_tier_hyper_nodes()
    hyper_nodes.append(build_hyper_node("ghost", 1, ["not-a-node"]))
    ssn = session_of(cluster({"mode": "hard", "highestTierAllowed": 2}, hyper_nodes=hyper_nodes))
    membership = ssn.topology.membership()
    assert len(membership.rows_of(membership.index["ghost"])) == 0
    sums = membership.sum_rows(ssn.matrix.allocatable)
    assert np.all(sums[membership.index["ghost"]] == 0)
    assert sums[membership.index["s6"], 0] == 4000.0


def test_sessions_over_an_unchanged_cluster_share_the_membership() -> None:
    cache = cluster({"mode": "hard", "highestTierAllowed": 2})
    first = session_of(cache).topology.membership()
    assert session_of(cache).topology.membership() is first
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("extra", 1, ["s3-n1"]))
    assert session_of(cache).topology.membership() is not first
    assert isinstance(first, HyperNodeMembership)


# ---------------------------------------------------------------------------- dispatch


def test_hyper_node_order_sums_plugins_per_candidate() -> None:
    rows = {"a": np.zeros(0, dtype=np.intp), "b": np.zeros(0, dtype=np.intp)}
    ssn = open_fake_session(
        [
            [
                PluginSpec(
                    "p1",
                    ("enabledHyperNodeOrder",),
                    {"hyper_node_order": lambda sub_job, candidates: {"a": 1.0, "b": 2.0}},
                ),
                PluginSpec(
                    "p2",
                    ("enabledHyperNodeOrder",),
                    # A name that is no candidate is ignored.
                    {"hyper_node_order": lambda sub_job, candidates: {"a": 5.0, "zz": 9.0}},
                ),
                PluginSpec(
                    "off", (), {"hyper_node_order": lambda sub_job, candidates: {"b": 100.0}}
                ),
            ]
        ]
    )
    assert ssn.hyper_node_order(None, rows) == {"a": 6.0, "b": 2.0}  # type: ignore[arg-type]


def test_first_registered_gradient_fn_decides_else_the_given_hyper_node() -> None:
    calls: list[str] = []

    def gradient(name: str, answer: list[list[str]]) -> Any:
        def fn(owner: Any, hyper_node: str, purpose: SearchPurpose) -> list[list[str]]:
            calls.append(name)
            return answer

        return fn

    none = open_fake_session([[PluginSpec("p", ())]])
    assert none.hyper_node_gradient_for_job(None, "root", SearchPurpose.ALLOCATE) == [["root"]]  # type: ignore[arg-type]
    assert none.hyper_node_gradient_for_sub_job(None, "x", SearchPurpose.EVICT) == [["x"]]  # type: ignore[arg-type]

    flag = ("enabledHyperNodeGradient",)
    ssn = open_fake_session(
        [
            [PluginSpec("off", (), {"hyper_node_gradient_for_job": gradient("off", [["z"]])})],
            [
                PluginSpec("first", flag, {"hyper_node_gradient_for_job": gradient("first", [])}),
                PluginSpec(
                    "second", flag, {"hyper_node_gradient_for_job": gradient("second", [["b"]])}
                ),
            ],
        ]
    )
    # The first one answers, even with nothing: the job then has no HyperNode to try.
    assert ssn.hyper_node_gradient_for_job(None, "root", SearchPurpose.ALLOCATE) == []  # type: ignore[arg-type]
    assert calls == ["first"]


def test_the_allocated_hyper_node_is_kept_between_sessions_not_rebuilt() -> None:
    """Upstream keeps a job's (and each sub-job's) HyperNode on the scheduler cache's job
    (``updateJobInfo`` for the session's dirty jobs) and only recovers it from the running
    pods when there is none, e.g. after a restart."""
    pods = [_running("r0", "s3-n1"), build_pod("c1", "p", "", "Pending", rl("1", "1Gi"), "pg1")]
    cache = cluster({"mode": "hard", "highestTierAllowed": 2}, pods=pods)
    first = session_of(cache)
    assert first.jobs["c1/pg1"].allocated_hyper_node == "s3"  # recovered: nothing was kept
    close_session(first)
    kept = cache.jobs["c1/pg1"]
    assert kept.allocated_hyper_node == "s3"
    assert kept.default_sub_job().allocated_hyper_node == "s3"
    # What the cache keeps is what the next session starts from: here a wider record (as a
    # search that placed the job's tasks across s3 and s4 would leave) is not narrowed back.
    kept.allocated_hyper_node = "s1"
    kept.default_sub_job().allocated_hyper_node = "s1"
    second = session_of(cache)
    assert second.jobs["c1/pg1"].allocated_hyper_node == "s1"
    assert "c1/pg1" not in second.dirty_jobs
