"""Upstream ``pkg/scheduler/actions/enqueue/enqueue_test.go`` transcribed.

``TestEnqueue`` registers drf, gang, sla (argument ``sla-waiting-time: 3m``) and proportion in
one tier, as here. The PodGroups have Go's zero creation time in upstream and no creation time
here, so every job is long overdue for sla: its Permit only matters where proportion abstains,
and proportion, listed before it, rejects the one over-quota case (a Reject ends the vote).
"""

from __future__ import annotations

import pytest
from builders import build_pod, build_pod_group, build_queue
from builders import resource_list as rl
from harness import Case, check, run_case
from upstream_fixtures import case_param

ENQUEUE_TIER = {
    "drf": ["enableJobOrder", "enableJobEnqueued"],
    "proportion": ["enableQueueOrder", "enableJobEnqueued"],
    "sla": ["enableJobOrder", "enableJobEnqueued"],
    "gang": ["enableJobOrder"],
}
ENQUEUE_ARGUMENTS = {"sla": {"sla-waiting-time": "3m"}}

TEST_ENQUEUE = [
    Case(
        name="when podgroup status is inqueue",
        plugins=ENQUEUE_TIER,
        arguments=ENQUEUE_ARGUMENTS,
        pod_groups=[build_pod_group("pg1", "c1", "c1", 2, None, "Inqueue")],
        pods=[
            build_pod("c1", "p1", "", "Pending", rl("1", "1G"), "pg1"),
            build_pod("c1", "p2", "", "Pending", rl("1", "1G"), "pg1"),
        ],
        queues=[build_queue("c1", 1, rl("4", "4G")), build_queue("c2", 1, rl("4", "4G"))],
        expect_status={"c1/pg1": "Inqueue"},
    ),
    Case(
        name="when podgroup status is pending",
        plugins=ENQUEUE_TIER,
        arguments=ENQUEUE_ARGUMENTS,
        pod_groups=[
            build_pod_group("pg1", "c1", "c1", 1, None, "Pending"),
            build_pod_group("pg2", "c1", "c2", 1, None, "Pending"),
        ],
        pods=[
            build_pod("c1", "p1", "", "Pending", rl("3", "1G"), "pg1"),
            build_pod("c1", "p2", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        queues=[build_queue("c1", 1, rl("4", "4G")), build_queue("c2", 1, rl("4", "4G"))],
        expect_status={"c1/pg1": "Inqueue", "c1/pg2": "Inqueue"},
    ),
    Case(
        name="when podgroup status is running",
        plugins=ENQUEUE_TIER,
        arguments=ENQUEUE_ARGUMENTS,
        pod_groups=[build_pod_group("pg1", "c1", "c1", 2, None, "Running")],
        pods=[
            build_pod("c1", "p1", "", "Running", rl("1", "1G"), "pg1"),
            build_pod("c1", "p2", "", "Running", rl("1", "1G"), "pg1"),
        ],
        queues=[build_queue("c1", 1, rl("4", "4G"))],
        expect_status={"c1/pg1": "Running"},
    ),
    Case(
        name="pggroup cannot enqueue because the specified queue is c1, but there is only c2",
        plugins=ENQUEUE_TIER,
        arguments=ENQUEUE_ARGUMENTS,
        pod_groups=[build_pod_group("pg1", "c1", "c1", 0, None, "Pending")],
        queues=[build_queue("c2", 1, rl("4", "4G"))],
        expect_status={},
    ),
    Case(
        name="pggroup cannot enqueue because queue resources are less than podgroup MinResources",
        plugins=ENQUEUE_TIER,
        arguments=ENQUEUE_ARGUMENTS,
        pod_groups=[
            build_pod_group("pg1", "c1", "c1", 1, None, "Pending", min_resources=rl("8", "8G"))
        ],
        queues=[build_queue("c1", 1, rl("1", "1G"))],
        expect_status={"c1/pg1": "Pending"},
    ),
]


@pytest.mark.parametrize("case", [case_param(case) for case in TEST_ENQUEUE])
def test_enqueue(case: Case) -> None:
    """enqueue_test.go TestEnqueue."""
    outcome = run_case(case, ["enqueue"])
    check(case, outcome)
