"""The six representative scenarios of volcano-spec.md §7.3, each an upstream test case."""

from __future__ import annotations

from builders import build_node, build_pod, build_pod_group, build_priority_class, build_queue
from builders import resource_list as rl
from harness import Case, check, run_case


def test_s2_preempt_enough_tasks_to_fit_large_task_of_different_job() -> None:
    """actions/preempt/preempt_test.go TestPreempt: "preempt enough tasks to fit large task of
    different job"."""
    case = Case(
        name="S2",
        plugins={
            "conformance": ["enablePreemptable"],
            "gang": ["enablePreemptable", "enableJobPipelined", "enableJobStarving"],
            "priority": [
                "enableTaskOrder",
                "enableJobOrder",
                "enablePreemptable",
                "enableJobPipelined",
                "enableJobStarving",
            ],
            "proportion": ["enabledOverused", "enabledAllocatable", "enableQueueOrder"],
        },
        configurations={"preempt": {"enableTopologyAwarePreemption": False}},
        priority_classes=[
            build_priority_class("high-priority", 100000),
            build_priority_class("low-priority", 10),
        ],
        queues=[build_queue("q1", 1)],
        nodes=[build_node("n1", rl("6", "6G", pods="10"))],
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {"": 3}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1",
                "preemptee1",
                "n1",
                "Running",
                rl("1", "1G"),
                "pg1",
                {"volcano.sh/preemptable": "true"},
            ),
            build_pod(
                "c1",
                "preemptee2",
                "n1",
                "Running",
                rl("1", "1G"),
                "pg1",
                {"volcano.sh/preemptable": "true"},
            ),
            build_pod(
                "c1",
                "preemptee3",
                "n1",
                "Running",
                rl("1", "1G"),
                "pg1",
                {"volcano.sh/preemptable": "false"},
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("5", "5G"), "pg2"),
        ],
        expect_evicted=["c1/preemptee2", "c1/preemptee1"],
        expect_evict_num=2,
    )
    check(case, run_case(case, ["preempt"]))


def test_s3_two_queues_one_overusing_should_reclaim() -> None:
    """actions/reclaim/reclaim_test.go TestReclaim: "Two Queue with one Queue overusing
    resource, should reclaim"."""
    case = Case(
        name="S3",
        plugins={
            "conformance": ["enableReclaimable"],
            "gang": ["enableReclaimable", "enableJobStarving"],
            "proportion": ["enableReclaimable", "enableQueueOrder", "enablePreemptive"],
        },
        queues=[build_queue("q1", 1), build_queue("q2", 1)],
        nodes=[build_node("n1", rl("3", "3Gi", pods="10"))],
        pod_groups=[
            build_pod_group("pg1", "c1", "q1", 1, None, "Inqueue"),
            build_pod_group("pg2", "c1", "q2", 1, None, "Inqueue"),
        ],
        pods=[
            build_pod(
                "c1",
                "preemptee1",
                "n1",
                "Running",
                rl("1", "1G"),
                "pg1",
                {"volcano.sh/preemptable": "false"},
            ),
            build_pod(
                "c1",
                "preemptee2",
                "n1",
                "Running",
                rl("1", "1G"),
                "pg1",
                {"volcano.sh/preemptable": "true"},
            ),
            build_pod(
                "c1",
                "preemptee3",
                "n1",
                "Running",
                rl("1", "1G"),
                "pg1",
                {"volcano.sh/preemptable": "false"},
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        expect_evicted=["c1/preemptee2"],
        expect_evict_num=1,
    )
    check(case, run_case(case, ["reclaim"]))
