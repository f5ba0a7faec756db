"""Upstream ``pkg/scheduler/actions/allocate/allocate_test.go`` transcribed.

``TestAllocate`` and ``TestFareShareAllocate`` are transcribed case by case; the network-topology
tables are in ``test_allocate_topology_upstream.py``. The other tables of that file exercise
features volcano-py deliberately does not implement (see ``test_allocate_upstream_not_ported``).
"""

from __future__ import annotations

import pytest
from builders import build_node, build_pod, build_pod_group, build_queue
from builders import resource_list as rl
from harness import Case
from upstream_fixtures import TASK_SPEC, case_param, check_every_seed, needs

# TestAllocate: one tier, every plugin registered.
ALLOCATE_TIER = {
    "gang": ["enableJobOrder", "enableJobReady", "enableJobPipelined", "enableJobStarving"],
    "drf": ["enablePreemptable", "enableJobOrder"],
    "proportion": ["enableQueueOrder", "enableReclaimable", "enabledAllocatable"],
    "predicates": ["enablePredicate"],
    "nodeorder": ["enableNodeOrder"],
}


def _role(role: str) -> dict[str, str]:
    return {TASK_SPEC: role}


def _node_role(role: str) -> dict[str, str]:
    return {"nodeRole": role}


TEST_ALLOCATE = [
    Case(
        name="prepredicate failed: node selector does not match",
        plugins=ALLOCATE_TIER,
        pod_groups=[build_pod_group("pg1", "c1", "c1", 1, None, "Inqueue")],
        pods=[
            # should use different role, because allocate actions default to enable the role
            # caches when predicate
            build_pod(
                "c1",
                "p1",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("master"),
                _node_role("master"),
            ),
            build_pod(
                "c1",
                "p2",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("worker"),
                _node_role("worker"),
            ),
        ],
        nodes=[build_node("n1", rl("2", "4Gi", pods="10"), _node_role("worker"))],
        queues=[build_queue("c1", 1, None)],
        expect_bind_map={"c1/p2": "n1"},
        expect_binds_num=1,
    ),
    Case(
        name="prepredicate failed and tasks are not used up, continue on until min member meet",
        plugins=ALLOCATE_TIER,
        pod_groups=[build_pod_group("pg1", "c1", "c1", 2, {"master": 1, "worker": 1}, "Inqueue")],
        pods=[
            build_pod(
                "c1",
                "p0",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("master"),
                _node_role("master"),
            ),
            build_pod(
                "c1",
                "p1",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("master"),
                _node_role("master"),
            ),
            build_pod(
                "c1",
                "p2",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("worker"),
                _node_role("worker"),
            ),
            build_pod(
                "c1",
                "p3",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("worker"),
                _node_role("worker"),
            ),
        ],
        nodes=[
            build_node("n1", rl("1", "2Gi", pods="10"), _node_role("master")),
            build_node("n2", rl("1", "2Gi", pods="10"), _node_role("worker")),
        ],
        queues=[build_queue("c1", 1, None)],
        expect_bind_map={"c1/p0": "n1", "c1/p2": "n2"},
        expect_binds_num=2,
    ),
    Case(
        name="master's min member can not be allocated, break from allocating",
        plugins=ALLOCATE_TIER,
        pod_groups=[build_pod_group("pg1", "c1", "c1", 2, {"master": 2, "worker": 0}, "Inqueue")],
        pods=[
            build_pod(
                "c1",
                "p0",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("master"),
                _node_role("master"),
            ),
            build_pod(
                "c1",
                "p1",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("master"),
                _node_role("master"),
            ),
            build_pod(
                "c1",
                "p2",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("worker"),
                _node_role("worker"),
            ),
            build_pod(
                "c1",
                "p3",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                _role("worker"),
                _node_role("worker"),
            ),
        ],
        nodes=[
            build_node("n1", rl("1", "2Gi", pods="10"), _node_role("master")),
            build_node("n2", rl("2", "2Gi", pods="10"), _node_role("worker")),
        ],
        queues=[build_queue("c1", 1, None)],
        expect_bind_map={},
        expect_binds_num=0,
    ),
    Case(
        name="one Job with two Pods on one node",
        plugins=ALLOCATE_TIER,
        pod_groups=[build_pod_group("pg1", "c1", "c1", 0, None, "Inqueue")],
        pods=[
            build_pod("c1", "p1", "", "Pending", rl("1", "1G"), "pg1"),
            build_pod("c1", "p2", "", "Pending", rl("1", "1G"), "pg1"),
        ],
        nodes=[build_node("n1", rl("2", "4Gi", pods="10"))],
        queues=[build_queue("c1", 1, None)],
        expect_bind_map={"c1/p1": "n1", "c1/p2": "n1"},
        expect_binds_num=2,
    ),
    Case(
        name="two Jobs on one node",
        plugins=ALLOCATE_TIER,
        pod_groups=[
            build_pod_group("pg1", "c1", "c1", 0, None, "Inqueue"),
            build_pod_group("pg2", "c2", "c2", 0, None, "Inqueue"),
        ],
        # pod name should be like "*-*-{index}", due to change of TaskOrderFn
        pods=[
            build_pod("c1", "pg1-p-1", "", "Pending", rl("1", "1G"), "pg1"),
            build_pod("c1", "pg1-p-2", "", "Pending", rl("1", "1G"), "pg1"),
            build_pod("c2", "pg2-p-1", "", "Pending", rl("1", "1G"), "pg2"),
            build_pod("c2", "pg2-p-2", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("2", "4G", pods="10"))],
        queues=[build_queue("c1", 1, None), build_queue("c2", 1, None)],
        expect_bind_map={"c2/pg2-p-1": "n1", "c1/pg1-p-1": "n1"},
        expect_binds_num=2,
    ),
    Case(
        name="high priority queue should not block others",
        plugins=ALLOCATE_TIER,
        pod_groups=[
            build_pod_group("pg1", "c1", "c1", 0, None, "Inqueue"),
            build_pod_group("pg2", "c1", "c2", 0, None, "Inqueue"),
        ],
        pods=[
            build_pod("c1", "p1", "", "Pending", rl("3", "1G"), "pg1"),
            build_pod("c1", "p2", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("2", "4G", pods="10"))],
        queues=[build_queue("c1", 1, None), build_queue("c2", 1, None)],
        expect_bind_map={"c1/p2": "n1"},
        expect_binds_num=1,
    ),
]


@pytest.mark.parametrize(
    "case", [case_param(case, needs("predicates", "nodeorder")) for case in TEST_ALLOCATE]
)
def test_allocate(case: Case) -> None:
    """allocate_test.go TestAllocate."""
    check_every_seed(case, ["allocate"])


# TestFareShareAllocate: no gang; proportion's allocatable flag explicitly false.
FARE_SHARE_TIER = {
    "drf": ["enablePreemptable", "enableJobOrder"],
    "proportion": ["enableQueueOrder", "enableReclaimable"],
    "predicates": ["enablePredicate"],
    "nodeorder": ["enableNodeOrder"],
}

TEST_FARE_SHARE_ALLOCATE = [
    Case(
        name="queue with low DRF share value has high priority, should allocate first",
        plugins=FARE_SHARE_TIER,
        pod_groups=[
            build_pod_group("pg-small-1", "ns-1", "q-1", 0, None, "Running"),
            build_pod_group("pg-large-1", "ns-1", "q-1", 0, None, "Inqueue"),
            build_pod_group("pg-large-2", "ns-1", "q-2", 0, None, "Inqueue"),
        ],
        # allocate order: q-2/pg-large-2, q-1/pg-large-1
        pods=[
            build_pod("ns-1", "pod-small-1", "node-1", "Running", rl("1", "1G"), "pg-small-1"),
            build_pod("ns-1", "pod-large-1", "", "Pending", rl("2", "2G"), "pg-large-1"),
            build_pod("ns-1", "pod-large-2", "", "Pending", rl("3", "2G"), "pg-large-2"),
        ],
        nodes=[build_node("node-1", rl("5", "5G", pods="10"))],
        queues=[build_queue("q-1", 1, None), build_queue("q-2", 1, None)],
        expect_bind_map={"ns-1/pod-large-2": "node-1"},
        expect_binds_num=1,
    ),
    Case(
        name=(
            "queue's DRF share value will be updated and its priority will change before it is "
            "put back into the priority queue"
        ),
        plugins=FARE_SHARE_TIER,
        pod_groups=[
            build_pod_group("pg-small-1", "ns-1", "q-1", 0, None, "Running"),
            build_pod_group("pg-large-1", "ns-1", "q-1", 0, None, "Inqueue"),
            build_pod_group("pg-small-2", "ns-1", "q-2", 0, None, "Inqueue"),
            build_pod_group("pg-large-2", "ns-1", "q-2", 0, None, "Inqueue"),
        ],
        # allocate order: q-2/pg-large-2, q-1/pg-large-1, q-2/pg-small-2
        pods=[
            build_pod("ns-1", "pod-small-1", "node-1", "Running", rl("1", "1G"), "pg-small-1"),
            build_pod("ns-1", "pod-large-1", "", "Pending", rl("2", "2G"), "pg-large-1"),
            build_pod("ns-1", "pod-large-2", "", "Pending", rl("2", "2G"), "pg-large-2"),
            build_pod("ns-1", "pod-small-2", "", "Pending", rl("1", "1G"), "pg-small-2"),
        ],
        nodes=[build_node("node-1", rl("5", "5G", pods="10"))],
        queues=[build_queue("q-1", 1, None), build_queue("q-2", 1, None)],
        expect_bind_map={"ns-1/pod-large-1": "node-1", "ns-1/pod-large-2": "node-1"},
        expect_binds_num=2,
    ),
    Case(
        name="queue's one jobs has no pending tasks, should be put back to queues for next job",
        plugins=FARE_SHARE_TIER,
        pod_groups=[
            build_pod_group("pg-1", "ns-1", "q-1", 0, None, "Running"),
            build_pod_group("pg-2", "ns-1", "q-1", 0, None, "Inqueue"),
        ],
        pods=[
            build_pod("ns-1", "pod-1", "node-1", "Running", rl("1", "1G"), "pg-1"),
            build_pod("ns-1", "pod-2", "", "Pending", rl("2", "2G"), "pg-2"),
        ],
        nodes=[build_node("node-1", rl("5", "5G", pods="10"))],
        queues=[build_queue("q-1", 1, None)],
        expect_bind_map={"ns-1/pod-2": "node-1"},
        expect_binds_num=1,
    ),
]


@pytest.mark.parametrize(
    "case",
    [case_param(case, needs("predicates", "nodeorder")) for case in TEST_FARE_SHARE_ALLOCATE],
)
def test_fare_share_allocate(case: Case) -> None:
    """allocate_test.go TestFareShareAllocate."""
    check_every_seed(case, ["allocate"])


# TestAllocateWithNetWorkTopologies, TestNodeLevelScoreWithNetWorkTopologies and
# TestHyperNodeBinpackWithNetWorkTopologies are transcribed in test_allocate_topology_upstream.py,
# TestAllocateWithPartitionPolicyNetworkTopology in test_allocate_partition_upstream.py, the
# nomination fast-path tests in tests/actions/test_nomination_fast_path.py, TestAllocateWithDRA
# in tests/sim/test_dra_allocate_upstream.py.
NOT_PORTED = {
    "TestAllocateWithPVC": "PVC/volume binding",
    "TestAllocateWithShard (allocate_shard_test.go)": "scheduler sharding",
    "TestAllocateFromNomination_AllocateErrorFallsBack": (
        "a Go-level fault injection (the pod already on the node's task map) the cache cannot hold"
    ),
    "TestWorksheetShallowCopy / TestWorksheetEmpty / TestWorksheetClone": (
        "white-box tests of the Go worksheet type; ours (actions/sub_job_worksheet.py) is "
        "covered by tests/actions/test_sub_job_worksheet.py"
    ),
}


@pytest.mark.parametrize("upstream", sorted(NOT_PORTED))
def test_allocate_upstream_not_ported(upstream: str) -> None:
    pytest.skip(f"{upstream}: not implemented in volcano-py ({NOT_PORTED[upstream]})")
