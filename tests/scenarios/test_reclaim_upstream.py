"""Upstream ``pkg/scheduler/actions/reclaim/reclaim_test.go`` transcribed.

Every ``TestReclaim`` case shares one tier (conformance, gang, proportion, capacity, priority) but
registers only some of those plugins; a plugin listed in the tier but not registered is skipped by
``OpenSession``, so each case's tier is the shared one restricted to its registered plugins.
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import build_node, build_pod, build_pod_group, build_priority_class, build_queue
from builders import resource_list as rl
from harness import Case, check, run_case
from upstream_fixtures import (
    PREEMPTABLE,
    build_priority_class_with_policy,
    build_queue_with_priority,
    case_param,
    needs,
    only,
)

RECLAIM_TIER = {
    "conformance": ["enableReclaimable"],
    "gang": ["enableReclaimable", "enableJobStarving"],
    # proportion will cause deserved resource larger than preemptable pods' usage, and return
    # less victims
    "proportion": ["enableReclaimable", "enableQueueOrder", "enablePreemptive"],
    "capacity": ["enableReclaimable", "enableQueueOrder", "enablePreemptive"],
    "priority": ["enableReclaimable", "enableJobOrder", "enableTaskOrder"],
}


def _preemptable(value: str) -> dict[str, str]:
    return {PREEMPTABLE: value}


def _case(name: str, registered: tuple[str, ...], **fields: Any) -> Case:
    return Case(name=name, plugins=only(RECLAIM_TIER, registered), **fields)


CGP = ("conformance", "gang", "proportion")
CGPP = ("conformance", "gang", "priority", "proportion")

TEST_RECLAIM = [
    (
        _case(
            "Two Queue with one Queue overusing resource, should reclaim",
            CGP,
            pod_groups=[
                build_pod_group(
                    "pg1", "c1", "q1", 1, None, "Inqueue", priority_class_name="low-priority"
                ),
                build_pod_group(
                    "pg2", "c1", "q2", 1, None, "Inqueue", priority_class_name="high-priority"
                ),
            ],
            pods=[
                build_pod(
                    "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
                ),
                build_pod(
                    "c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
                ),
                build_pod(
                    "c1", "preemptee3", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
                ),
                build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2"),
            ],
            nodes=[build_node("n1", rl("3", "3Gi", pods="10"))],
            queues=[build_queue("q1", 1, None), build_queue("q2", 1, None)],
            expect_evict_num=1,
            # let pod2 in the middle when sort tasks be preemptable and will not disturb
            expect_evicted=["c1/preemptee2"],
        ),
        (),
    ),
    (
        _case(
            "sort reclaimees when reclaiming from overusing queue",
            CGPP,
            priority_classes=[
                build_priority_class("low-priority", 100),
                build_priority_class("mid-priority", 500),
                build_priority_class("high-priority", 1000),
            ],
            pod_groups=[
                build_pod_group(
                    "pg1", "c1", "q1", 1, None, "Inqueue", priority_class_name="mid-priority"
                ),
                # reclaimed first
                build_pod_group(
                    "pg2", "c1", "q2", 1, None, "Inqueue", priority_class_name="low-priority"
                ),
                build_pod_group(
                    "pg3", "c1", "q3", 1, None, "Inqueue", priority_class_name="high-priority"
                ),
            ],
            pods=[
                build_pod(
                    "c1",
                    "preemptee1-1",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg1",
                    _preemptable("true"),
                ),
                build_pod(
                    "c1",
                    "preemptee1-2",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg1",
                    _preemptable("true"),
                ),
                build_pod(
                    "c1",
                    "preemptee2-1",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg2",
                    _preemptable("true"),
                ),
                build_pod(
                    "c1",
                    "preemptee2-2",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg2",
                    _preemptable("false"),
                ),
                build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg3"),
            ],
            nodes=[build_node("n1", rl("4", "4Gi", pods="10"))],
            queues=[
                build_queue("q1", 1, None),
                build_queue("q2", 1, None),
                build_queue("q3", 1, None),
            ],
            expect_evict_num=1,
            # low priority job's preemptable pod is evicted
            expect_evicted=["c1/preemptee2-1"],
        ),
        (),
    ),
    (
        _case(
            "sort reclaimees when reclaiming from overusing queues with different queue priority",
            CGP,
            pod_groups=[
                build_pod_group(
                    "pg1", "c1", "q1", 1, None, "Inqueue", priority_class_name="mid-priority"
                ),
                build_pod_group(
                    "pg2", "c1", "q2", 1, None, "Inqueue", priority_class_name="mid-priority"
                ),
                build_pod_group(
                    "pg3", "c1", "q3", 1, None, "Inqueue", priority_class_name="mid-priority"
                ),
            ],
            pods=[
                build_pod(
                    "c1",
                    "preemptee1-1",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg1",
                    _preemptable("true"),
                ),
                build_pod(
                    "c1",
                    "preemptee1-2",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg1",
                    _preemptable("false"),
                ),
                build_pod(
                    "c1",
                    "preemptee2-1",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg2",
                    _preemptable("true"),
                ),
                build_pod(
                    "c1",
                    "preemptee2-2",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg2",
                    _preemptable("false"),
                ),
                build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg3"),
            ],
            nodes=[build_node("n1", rl("4", "4Gi", pods="10"))],
            queues=[
                build_queue_with_priority("q1", 5, None, None),
                build_queue_with_priority("q2", 10, None, None),  # highest queue priority
                build_queue_with_priority("q3", 1, None, None),
            ],
            expect_evict_num=1,
            # low queue priority job's preemptable pod is evicted
            expect_evicted=["c1/preemptee1-1"],
        ),
        (),
    ),
    (
        # case about #3642
        _case(
            "can not reclaim resources when task preemption policy is never",
            CGP,
            priority_classes=[
                build_priority_class("low-priority", 100),
                build_priority_class_with_policy("high-priority", 1000, "Never"),
            ],
            pod_groups=[
                build_pod_group(
                    "pg1", "c1", "q1", 0, None, "Inqueue", priority_class_name="low-priority"
                ),
                build_pod_group(
                    "pg2", "c1", "q2", 0, None, "Inqueue", priority_class_name="high-priority"
                ),
            ],
            pods=[
                build_pod(
                    "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
                ),
                build_pod(
                    "c1",
                    "preemptor1",
                    "",
                    "Pending",
                    rl("1", "1G"),
                    "pg2",
                    preemption_policy="Never",
                ),
            ],
            nodes=[build_node("n1", rl("1", "1Gi", pods="1"))],
            queues=[build_queue("q1", 5, None), build_queue("q2", 10, None)],
            expect_evict_num=0,
            expect_evicted=[],  # no victims should be reclaimed
        ),
        (),
    ),
    (
        _case(
            "can not reclaim resources when queue is not open(proportion plugin)",
            CGP,
            pod_groups=[
                build_pod_group(
                    "pg1", "c1", "q1", 1, None, "Running", priority_class_name="low-priority"
                ),
                build_pod_group(
                    "pg2", "c1", "q2", 1, None, "Inqueue", priority_class_name="high-priority"
                ),
            ],
            pods=[
                build_pod(
                    "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
                ),
                build_pod(
                    "c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
                ),
                build_pod(
                    "c1", "preemptee3", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
                ),
                build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2"),
            ],
            nodes=[build_node("n1", rl("3", "3Gi", pods="10"))],
            queues=[build_queue("q1", 1, None), build_queue("q2", 1, None, state="Closed")],
            expect_evict_num=0,
            expect_evicted=[],
        ),
        (),
    ),
    (
        _case(
            "can not reclaim resources when queue is not open(capacity plugin)",
            ("conformance", "gang", "capacity"),
            pod_groups=[
                build_pod_group(
                    "pg1", "c1", "q1", 1, None, "Running", priority_class_name="low-priority"
                ),
                build_pod_group(
                    "pg2", "c1", "q2", 1, None, "Inqueue", priority_class_name="high-priority"
                ),
            ],
            pods=[
                build_pod(
                    "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
                ),
                build_pod(
                    "c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
                ),
                build_pod(
                    "c1", "preemptee3", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
                ),
                build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2"),
            ],
            nodes=[build_node("n1", rl("3", "3Gi", pods="10"))],
            queues=[build_queue("q1", 1, None), build_queue("q2", 1, None, state="Closed")],
            expect_evict_num=0,
            expect_evicted=[],
        ),
        needs("capacity"),
    ),
    (
        _case(
            "Node available resources should be included in reclaimed resources",
            CGPP,
            priority_classes=[
                build_priority_class("low-priority", 100),
                build_priority_class("mid-priority", 500),
                build_priority_class("high-priority", 1000),
            ],
            pod_groups=[
                build_pod_group(
                    "pg1", "c1", "q1", 0, None, "Running", priority_class_name="mid-priority"
                ),
                build_pod_group(
                    "pg2", "c1", "q2", 0, None, "Running", priority_class_name="mid-priority"
                ),
                build_pod_group(
                    "pg3", "c1", "q3", 1, None, "Inqueue", priority_class_name="mid-priority"
                ),
            ],
            pods=[
                build_pod(
                    "c1",
                    "preemptee1-1",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg1",
                    _preemptable("true"),
                ),
                build_pod(
                    "c1",
                    "preemptee2-1",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg2",
                    _preemptable("true"),
                ),
                build_pod("c1", "preemptor1", "", "Pending", rl("2", "1G"), "pg3"),
            ],
            nodes=[build_node("n1", rl("10", "2Gi", pods="10"))],
            queues=[
                build_queue_with_priority("q1", 1, None, None),
                build_queue_with_priority("q2", 2, None, None),
                build_queue("q3", 3, None),
            ],
            expect_evict_num=1,
            # cpu resource is enough in node, memory resource is not enough, need 1G memory to
            # schedule preemptor1
            expect_evicted=["c1/preemptee1-1"],
        ),
        (),
    ),
    (
        _case(
            "Reclaim succeeds for second task when first task has PreemptionPolicy=Never",
            CGPP,
            priority_classes=[
                build_priority_class("low-priority", 100),
                build_priority_class_with_policy("high-priority-no-preempt", 1000, "Never"),
                build_priority_class("high-priority-can-preempt", 900),
            ],
            pod_groups=[
                build_pod_group(
                    "pg-victim", "c1", "q1", 1, None, "Running", priority_class_name="low-priority"
                ),
                build_pod_group(
                    "pg-preemptor",
                    "c1",
                    "q2",
                    2,
                    None,
                    "Inqueue",
                    priority_class_name="high-priority-no-preempt",
                ),
            ],
            pods=[
                build_pod(
                    "c1",
                    "victim-pod-no",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg-victim",
                    _preemptable("false"),
                ),
                build_pod(
                    "c1",
                    "victim-pod",
                    "n1",
                    "Running",
                    rl("1", "1G"),
                    "pg-victim",
                    _preemptable("true"),
                ),
                build_pod(
                    "c1",
                    "preemptor-task1-non-preemptable",
                    "",
                    "Pending",
                    rl("1", "1G"),
                    "pg-preemptor",
                    preemption_policy="Never",
                ),
                build_pod(
                    "c1",
                    "preemptor-task2-preemptable",
                    "",
                    "Pending",
                    rl("1", "1G"),
                    "pg-preemptor",
                ),
            ],
            nodes=[build_node("n1", rl("2", "2G", pods="10"))],
            queues=[build_queue("q1", 1, None), build_queue("q2", 1, None)],
            expect_evict_num=1,
            expect_evicted=["c1/victim-pod"],
        ),
        (),
    ),
    (
        # Regression: the "resources satisfied" check must come before each eviction. n1 has 8
        # CPU idle, already enough for the 3-CPU preemptor, so nothing may be evicted.
        _case(
            "only commit evictions on the node where reclaim succeeds",
            CGP,
            pod_groups=[
                build_pod_group(
                    "pg-victim", "c1", "q1", 0, None, "Running", priority_class_name="low-priority"
                ),
                build_pod_group(
                    "pg-preemptor",
                    "c1",
                    "q2",
                    1,
                    None,
                    "Inqueue",
                    priority_class_name="low-priority",
                ),
            ],
            pods=[
                build_pod(
                    "c1",
                    "victim-n1",
                    "n1",
                    "Running",
                    rl("2", "2G"),
                    "pg-victim",
                    _preemptable("true"),
                ),
                build_pod("c1", "preemptor1", "", "Pending", rl("3", "3G"), "pg-preemptor"),
            ],
            nodes=[build_node("n1", rl("10", "10G", pods="10"))],
            queues=[
                # q1 deserves 1 CPU (weight 1 of 10 total), uses 2 CPU -> overused.
                build_queue("q1", 1, None),
                # q2 deserves 9 CPU (weight 9 of 10 total), uses 0 -> may reclaim.
                build_queue("q2", 9, None),
            ],
            expect_evict_num=0,
            expect_evicted=[],
        ),
        (),
    ),
]


@pytest.mark.parametrize("case", [case_param(case, marks) for case, marks in TEST_RECLAIM])
def test_reclaim(case: Case) -> None:
    """reclaim_test.go TestReclaim."""
    check(case, run_case(case, ["reclaim"]))


@pytest.mark.parametrize("upstream", ["TestReclaimWithShard (reclaim_shard_test.go): 2 cases"])
def test_reclaim_with_shard(upstream: str) -> None:
    pytest.skip(f"{upstream}: scheduler sharding is not implemented in volcano-py")
