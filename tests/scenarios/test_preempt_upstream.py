"""Upstream ``pkg/scheduler/actions/preempt/preempt_test.go`` transcribed.

``TestPreempt`` and ``TestNormalPreemptRechecksPredicateAfterEviction`` run the normal (victim
by victim) preemption; ``TestTopologyAwarePreempt`` runs the dry-run mode
(``enableTopologyAwarePreemption: true``).
"""

from __future__ import annotations

from typing import Any

import pytest
from builders import build_node, build_pod, build_pod_group, build_priority_class, build_queue
from builders import resource_list as rl
from harness import Case, check, run_case
from upstream_fixtures import PREEMPTABLE, build_queue_with_priority, case_param

from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus, unschedulable
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session
from volcano_py.scheduler.registry import PluginRegistry

PREEMPT_TIER = {
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
}
NORMAL_PREEMPT = {"preempt": {"enableTopologyAwarePreemption": False}}
HIGH = 100000
PRIORITY_CLASSES = [
    build_priority_class("high-priority", HIGH),
    build_priority_class("low-priority", 10),
]


def _preemptable(value: str) -> dict[str, str]:
    return {PREEMPTABLE: value}


def _case(name: str, **fields: Any) -> Case:
    return Case(
        name=name,
        plugins=PREEMPT_TIER,
        configurations=NORMAL_PREEMPT,
        priority_classes=PRIORITY_CLASSES,
        **fields,
    )


TEST_PREEMPT = [
    _case(
        "do not preempt if there are enough idle resources",
        pod_groups=[build_pod_group("pg1", "c1", "q1", 3, {"": 3}, "Inqueue")],
        pods=[
            build_pod("c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1"),
            build_pod("c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1"),
            build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg1"),
        ],
        # If there are enough idle resources on the node, then there is no need to preempt
        # anything.
        nodes=[build_node("n1", rl("10", "10G", pods="10"))],
        queues=[build_queue("q1", 1, None)],
        expect_evict_num=0,
    ),
    _case(
        "do not preempt if job is pipelined",
        pod_groups=[
            build_pod_group("pg1", "c1", "q1", 1, {"": 2}, "Inqueue"),
            build_pod_group("pg2", "c1", "q1", 1, {"": 2}, "Inqueue"),
        ],
        # Both pg1 and pg2 jobs are pipelined, because enough pods are already running.
        pods=[
            build_pod("c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1"),
            build_pod("c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1"),
            build_pod("c1", "preemptee3", "n1", "Running", rl("1", "1G"), "pg2"),
            build_pod("c1", "preemptor2", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        # All resources on the node will be in use.
        nodes=[build_node("n1", rl("3", "3G", pods="10"))],
        queues=[build_queue("q1", 1, None)],
        expect_evict_num=0,
    ),
    _case(
        "preempt one task of different job to fit both jobs on one node",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {"": 2}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 2}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2"),
            build_pod("c1", "preemptor2", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("2", "2G", pods="10"))],
        queues=[build_queue("q1", 1, None)],
        expect_evicted=["c1/preemptee1"],
        expect_evict_num=1,
    ),
    _case(
        "preempt enough tasks to fit large task of different job",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {"": 3}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        # There are 3 cpus and 3G of memory idle and 3 tasks running each consuming 1 cpu and 1G
        # of memory. Big task requiring 5 cpus and 5G of memory should preempt 2 of 3 running
        # tasks to fit into the node.
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptee3", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("5", "5G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("6", "6G", pods="10"))],
        queues=[build_queue("q1", 1, None)],
        expect_evicted=["c1/preemptee2", "c1/preemptee1"],
        expect_evict_num=2,
    ),
    # case about #3161
    _case(
        "preempt low priority job in same queue",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("3", "3G"), "pg1", _preemptable("true")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("3", "3G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="10"))],
        queues=[build_queue("q1", 1, rl("4", "4G"))],
        expect_evicted=["c1/preemptee1"],
        expect_evict_num=1,
    ),
    # case about #3161
    _case(
        (
            "preempt low priority job in same queue: allocatable and has enough resource, "
            "don't preempt"
        ),
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("3", "3G"), "pg1", _preemptable("true")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("3", "3G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="10"))],
        queues=[build_queue("q1", 1, rl("6", "6G"))],
        expect_evict_num=0,
    ),
    # case about issue #2232
    _case(
        (
            "preempt low priority job in same queue but not pod with preemptable=false "
            "or higher priority"
        ),
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
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
                "c1",
                "preemptee3",
                "n1",
                "Running",
                rl("1", "1G"),
                "pg1",
                _preemptable("true"),
                priority=HIGH,
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="10"))],
        queues=[build_queue("q1", 1, rl("3", "3G"))],
        expect_evicted=["c1/preemptee2"],
        expect_evict_num=1,
    ),
    # case about #3335
    _case(
        "unBestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod("c1", "preemptee1", "n1", "Running", {}, "pg1", _preemptable("true")),
            build_pod("c1", "preemptor1", "", "Pending", rl("3", "3G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="1"))],
        queues=[build_queue("q1", 1, rl("6", "6G"))],
        expect_evicted=["c1/preemptee1"],
        expect_evict_num=1,
    ),
    # case about #3335
    _case(
        "BestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod("c1", "preemptee1", "n1", "Running", {}, "pg1", _preemptable("true")),
            build_pod("c1", "preemptor1", "", "Pending", {}, "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="1"))],
        queues=[build_queue("q1", 1, rl("6", "6G"))],
        expect_evicted=["c1/preemptee1"],
        expect_evict_num=1,
    ),
    # case about #3642
    _case(
        "can not preempt resources when task preemption policy is never",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, None, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, None, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2", preemption_policy="Never"
            ),
        ],
        nodes=[build_node("n1", rl("1", "1Gi", pods="1"))],
        queues=[build_queue("q1", 1, None)],
        expect_evict_num=0,
        expect_evicted=[],  # no victims should be reclaimed
    ),
    # Verify that evictions are rolled back when the preemptor cannot be allocated due to queue
    # capacity limits: the preemptor requests 4 CPU while the queue capacity is only 3 CPU, so
    # the Allocatable check fails after all victims have been evicted and the temporary node
    # statement is discarded.
    _case(
        "rollback evictions when preemptor exceeds queue capacity after evicting victims",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {"": 2}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("4", "4G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("10", "10G", pods="10"))],
        queues=[build_queue("q1", 1, rl("3", "3G"))],
        expect_evict_num=0,
    ),
    # When preemption succeeds on n2 after failing on n1, only n2's victims are committed.
    # n1 victim (1 CPU): queue allocated 5 -> 4; 4 + 3 > 6 (cap) -> Allocatable fails -> discard.
    # n2 victim (4 CPU): queue allocated 5 -> 1; 1 + 3 <= 6 -> pipeline succeeds -> merged.
    _case(
        "only commit evictions on the node where preemption succeeds",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
            build_pod_group(
                "pg3", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptee2", "n2", "Running", rl("4", "4G"), "pg3", _preemptable("true")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("3", "3G"), "pg2"),
        ],
        # Cluster: 7 CPU total. Queue cap: 6 CPU -> deserved = 6 CPU.
        nodes=[
            build_node("n1", rl("3", "3G", pods="10")),
            build_node("n2", rl("4", "4G", pods="10")),
        ],
        queues=[build_queue("q1", 1, rl("6", "6G"))],
        expect_evict_num=1,
        expect_evicted=["c1/preemptee2"],
    ),
    # Regression test for the preemptorTasks overwrite issue in multi-queue preemption: pg3's
    # preemptor tasks (q2) must not be drained by the intra-job pass of q1.
    _case(
        (
            "multi-queue: preemptorTasks must not be overwritten by intra-job preemption "
            "of another queue"
        ),
        pod_groups=[
            build_pod_group("pg1", "c1", "q1", 1, {"": 1}, "Inqueue"),
            build_pod_group(
                "pg2", "c1", "q2", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg3", "c1", "q2", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod("c1", "q1-runner1", "n1", "Running", rl("1", "1G"), "pg1"),
            build_pod(
                "c1", "q2-preemptee1", "n1", "Running", rl("1", "1G"), "pg2", _preemptable("true")
            ),
            build_pod("c1", "q2-preemptor1", "", "Pending", rl("1", "1G"), "pg3"),
        ],
        nodes=[build_node("n1", rl("2", "2G", pods="10"))],
        queues=[build_queue("q1", 1, None), build_queue("q2", 1, rl("4", "4G"))],
        expect_evicted=["c1/q2-preemptee1"],
        expect_evict_num=1,
    ),
]


@pytest.mark.parametrize("case", [case_param(case) for case in TEST_PREEMPT])
def test_preempt(case: Case) -> None:
    """preempt_test.go TestPreempt."""
    check(case, run_case(case, ["preempt"]))


class DeviceFitAfterEvictionPlugin:
    """preempt_test.go ``deviceFitAfterEvictionPlugin``: the preemptor does not fit a node while
    a task named "preemptee" on it is not Releasing (hidden device capacity)."""

    name = "device-fit-after-eviction"

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments

    def on_session_open(self, ssn: Session) -> None:
        def predicate(task: TaskInfo, node: Any) -> Any:
            if task.name != "preemptor":
                return None
            for node_task in node.tasks.values():
                if node_task.name == "preemptee" and node_task.status != TaskStatus.RELEASING:
                    return unschedulable("hidden device capacity is occupied", self.name)
            return None

        ssn.add_predicate_fn(self.name, predicate)

    def on_session_close(self, ssn: Session) -> None:
        return None


def test_normal_preempt_rechecks_predicate_after_eviction() -> None:
    """preempt_test.go TestNormalPreemptRechecksPredicateAfterEviction
    (``newNormalPreemptDeviceFitFixture``): "normal preemption evicts a victim when hidden device
    capacity remains unavailable"."""
    case = Case(
        name="normal preemption evicts a victim when hidden device capacity remains unavailable",
        plugins={
            "conformance": ["enablePreemptable"],
            # EnabledPreemptable explicitly false
            "gang": ["enableJobPipelined", "enableJobStarving"],
            "priority": [
                "enableTaskOrder",
                "enableJobOrder",
                "enablePreemptable",
                "enableJobPipelined",
                "enableJobStarving",
            ],
            "proportion": ["enabledOverused", "enabledAllocatable", "enableQueueOrder"],
            DeviceFitAfterEvictionPlugin.name: ["enablePredicate"],
        },
        configurations=NORMAL_PREEMPT,
        priority_classes=PRIORITY_CLASSES,
        pod_groups=[
            build_pod_group(
                "pg-low", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg-high", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee", "n1", "Running", rl("1", "1G"), "pg-low", _preemptable("true")
            ),
            build_pod("c1", "preemptor", "", "Pending", rl("1", "1G"), "pg-high"),
        ],
        nodes=[build_node("n1", rl("2", "2G", pods="10"))],
        queues=[build_queue("q1", 1, None)],
        expect_evicted=["c1/preemptee"],
        expect_evict_num=1,
    )
    registry = PluginRegistry({DeviceFitAfterEvictionPlugin.name: DeviceFitAfterEvictionPlugin})
    check(case, run_case(case, ["preempt"], registry))


TOPOLOGY_AWARE_TIER = {
    "conformance": ["enablePreemptable"],
    "gang": ["enablePreemptable", "enableJobPipelined", "enableJobStarving"],
    "priority": [
        "enableTaskOrder",
        "enableJobOrder",
        "enablePreemptable",
        "enableJobPipelined",
        "enableJobStarving",
    ],
    # enablePredicate: PrePredicate seeds the dry run's queue allocations.
    "proportion": ["enabledOverused", "enabledAllocatable", "enableQueueOrder", "enablePredicate"],
    # enablePreemptable gates its SimulateAddTask / SimulateRemoveTask.
    "predicates": ["enablePreemptable", "enablePredicate"],
    "capacity": ["enableQueueOrder"],
}
TOPOLOGY_AWARE_PREEMPT = {"preempt": {"enableTopologyAwarePreemption": True}}


def _topology_case(name: str, **fields: Any) -> Case:
    return Case(
        name=name,
        plugins=TOPOLOGY_AWARE_TIER,
        configurations=TOPOLOGY_AWARE_PREEMPT,
        priority_classes=PRIORITY_CLASSES,
        **fields,
    )


def _pod_with_anti_affinity(
    namespace: str,
    name: str,
    node_name: str,
    phase: str,
    requests: dict[str, str],
    group: str,
    labels: dict[str, str],
    topology_key: str,
) -> dict[str, Any]:
    """preempt_test.go ``buildPodWithPodAntiAffinity``: required anti-affinity to pods carrying
    all of the pod's own labels."""
    term = {"labelSelector": {"matchLabels": dict(labels)}, "topologyKey": topology_key}
    affinity = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [term]}}
    return build_pod(namespace, name, node_name, phase, requests, group, labels, affinity=affinity)


# Every case has one node, so the random first node of the dry run cannot change the outcome.
TOPOLOGY_AWARE_CASES = [
    _topology_case(
        "do not preempt if there are enough idle resources",
        pod_groups=[build_pod_group("pg1", "c1", "q1", 3, {"": 3}, "Inqueue")],
        pods=[
            build_pod("c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1"),
            build_pod("c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1"),
            build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg1"),
        ],
        # If there are enough idle resources on the node, then there is no need to preempt
        # anything.
        nodes=[build_node("n1", rl("10", "10G", pods="10"))],
        queues=[build_queue("q1", 1, None)],
        expect_evict_num=0,
    ),
    _topology_case(
        "do not preempt if job is pipelined",
        pod_groups=[
            build_pod_group("pg1", "c1", "q1", 1, {"": 2}, "Inqueue"),
            build_pod_group("pg2", "c1", "q1", 1, {"": 2}, "Inqueue"),
        ],
        # Both pg1 and pg2 jobs are pipelined, because enough pods are already running.
        pods=[
            build_pod("c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1"),
            build_pod("c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1"),
            build_pod("c1", "preemptee3", "n1", "Running", rl("1", "1G"), "pg2"),
            build_pod("c1", "preemptor2", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        # All resources on the node will be in use.
        nodes=[build_node("n1", rl("3", "3G", pods="10"))],
        queues=[build_queue("q1", 1, None)],
        expect_evict_num=0,
    ),
    _topology_case(
        "preempt one task of different job to fit both jobs on one node",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {"": 2}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 2}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2"),
            build_pod("c1", "preemptor2", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("2", "2G", pods="10"))],
        queues=[build_queue("q1", 1, None)],
        expect_evicted=["c1/preemptee1"],
        expect_evict_num=1,
    ),
    _topology_case(
        "preempt enough tasks to fit large task of different job",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {"": 3}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        # There are 3 cpus and 3G of memory idle and 3 tasks running each consuming 1 cpu and 1G
        # of memory. Big task requiring 5 cpus and 5G of memory should preempt 2 of 3 running
        # tasks to fit into the node.
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptee3", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("false")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("5", "5G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("6", "6G", pods="10"))],
        queues=[build_queue("q1", 1, None)],
        expect_evicted=["c1/preemptee2", "c1/preemptee1"],
        expect_evict_num=2,
    ),
    # case about #3161
    _topology_case(
        "preempt low priority job in same queue",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("3", "3G"), "pg1", _preemptable("true")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("3", "3G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="10"))],
        queues=[build_queue("q1", 1, rl("4", "4G"))],
        expect_evicted=["c1/preemptee1"],
        expect_evict_num=1,
    ),
    # case about #3161
    _topology_case(
        (
            "preempt low priority job in same queue: allocatable and has enough resource, "
            "don't preempt"
        ),
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("3", "3G"), "pg1", _preemptable("true")
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("3", "3G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="10"))],
        queues=[build_queue("q1", 1, rl("6", "6G"))],
        expect_evict_num=0,
    ),
    # case about issue #2232
    _topology_case(
        (
            "preempt low priority job in same queue but not pod with preemptable=false "
            "or higher priority"
        ),
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 1, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
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
                "c1",
                "preemptee3",
                "n1",
                "Running",
                rl("1", "1G"),
                "pg1",
                _preemptable("true"),
                priority=HIGH,
            ),
            build_pod("c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="10"))],
        queues=[build_queue("q1", 1, rl("3", "3G"))],
        expect_evicted=["c1/preemptee2"],
        expect_evict_num=1,
    ),
    # case about #3335
    _topology_case(
        "unBestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod("c1", "preemptee1", "n1", "Running", {}, "pg1", _preemptable("true")),
            build_pod("c1", "preemptor1", "", "Pending", rl("3", "3G"), "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="1"))],
        queues=[build_queue("q1", 1, rl("6", "6G"))],
        expect_evicted=["c1/preemptee1"],
        expect_evict_num=1,
    ),
    # case about #3335
    _topology_case(
        "BestEffort high-priority pod preempt BestEffort low-priority pod in same queue",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod("c1", "preemptee1", "n1", "Running", {}, "pg1", _preemptable("true")),
            build_pod("c1", "preemptor1", "", "Pending", {}, "pg2"),
        ],
        nodes=[build_node("n1", rl("12", "12G", pods="1"))],
        queues=[build_queue("q1", 1, rl("6", "6G"))],
        expect_evicted=["c1/preemptee1"],
        expect_evict_num=1,
    ),
    # case about #3642
    _topology_case(
        "can not preempt resources when task preemption policy is never",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, None, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, None, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg1", _preemptable("true")
            ),
            build_pod(
                "c1", "preemptor1", "", "Pending", rl("1", "1G"), "pg2", preemption_policy="Never"
            ),
        ],
        nodes=[build_node("n1", rl("1", "1Gi", pods="1"))],
        queues=[build_queue("q1", 1, None)],
        expect_evict_num=0,
        expect_evicted=[],  # no victims should be reclaimed
    ),
    _topology_case(
        "preempt low-priority pod when high-priority pod has PodAntiAffinity conflict",
        pod_groups=[
            build_pod_group(
                "pg1", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 0, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg3", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee1", "n1", "Running", rl("1", "1G"), "pg2", _preemptable("true")
            ),
            _pod_with_anti_affinity(
                "c1",
                "preemptee2",
                "n1",
                "Running",
                rl("1", "1G"),
                "pg1",
                {PREEMPTABLE: "true", "test": "test"},
                "kubernetes.io/hostname",
            ),
            _pod_with_anti_affinity(
                "c1",
                "preemptor1",
                "",
                "Pending",
                rl("1", "1G"),
                "pg3",
                {"test": "test"},
                "kubernetes.io/hostname",
            ),
        ],
        nodes=[build_node("n1", rl("2", "2Gi", pods="2"), {"kubernetes.io/hostname": "n1"})],
        queues=[build_queue("q1", 1, rl("2", "2G"))],
        expect_evict_num=1,
        expect_evicted=["c1/preemptee2"],
    ),
    _topology_case(
        "preemption with priority queues",
        pod_groups=[
            build_pod_group(
                "pg3", "c1", "q2", 1, None, "Running", priority_class_name="high-priority"
            ),
            build_pod_group(
                "pg1", "c1", "q1", 0, None, "Running", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "c1", "q1", 1, None, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "c1", "preemptee2", "n1", "Running", rl("1", "1G"), "pg3", _preemptable("true")
            ),
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
                preemption_policy="PreemptLowerPriority",
            ),
        ],
        nodes=[build_node("n1", rl("2", "2Gi", pods="2"))],
        queues=[
            build_queue_with_priority("q1", 1, rl("1", "1G"), rl("1", "1G")),
            build_queue_with_priority("q2", 10, rl("1", "1G"), rl("1", "1G")),
        ],
        expect_evict_num=1,
        expect_evicted=["c1/preemptee1"],
    ),
]


@pytest.mark.parametrize("case", [case_param(case) for case in TOPOLOGY_AWARE_CASES])
def test_topology_aware_preempt(case: Case) -> None:
    """preempt_test.go TestTopologyAwarePreempt (enableTopologyAwarePreemption: true)."""
    check(case, run_case(case, ["preempt"]))


@pytest.mark.parametrize("upstream", ["TestPreemptWithShard (preempt_shard_test.go): 2 cases"])
def test_preempt_with_shard(upstream: str) -> None:
    pytest.skip(f"{upstream}: scheduler sharding is not implemented in volcano-py")
