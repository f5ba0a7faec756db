"""Upstream plugin tests (``pkg/scheduler/plugins/*/*_test.go``) transcribed.

Action-driven tables run through ``harness.run_case``; tests that call session functions
directly (``ssn.JobEnqueueable``, ``ssn.NodeOrderFn``, ``ssn.Preemptable``) open a session with
``upstream_fixtures.open_case_session`` and call our counterparts.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
)
from builders import resource_list as rl
from harness import Case, check, run_case
from upstream_fixtures import (
    HIERARCHY,
    HIERARCHY_WEIGHTS,
    PREEMPTABLE,
    CaseCluster,
    build_pod_with_spread,
    build_queue_with_annos,
    build_queue_with_priority,
    case_param,
    needs,
    open_case_session,
)

from volcano_py.api.job import JobInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus, Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session
from volcano_py.scheduler.registry import PluginRegistry

# =============================================================== proportion/proportion_test.go

# TestEnqueueAndAllocable fixtures (shared by its five cases).
_RES_1C2G, _RES_2C1G = rl("1", "2G"), rl("2", "1G")
_RES_1C0G, _RES_0C1G, _RES_1C1G = rl("1", "0G"), rl("0", "1G"), rl("1", "1G")
_EA_NODES = [build_node("n1", rl("2", "2G", pods="10")), build_node("n2", rl("2", "2G", pods="10"))]
_EA_PODS = {
    "p1": build_pod("ns1", "pod1", "n1", "Running", _RES_1C2G, "pg1"),
    "p2": build_pod("ns1", "pod2", "n2", "Running", _RES_2C1G, "pg2"),
    "p3": build_pod("ns1", "pod3", "", "Pending", _RES_1C0G, "pg3"),
    "p4": build_pod("ns1", "pod4", "", "Pending", _RES_0C1G, "pg4"),
    "p5": build_pod("ns1", "pod5", "", "Pending", _RES_1C1G, "pg5"),
    "p6": build_pod("ns1", "pod6", "", "Pending", _RES_1C1G, "pg6"),
}
_EA_PGS = {
    "pg1": build_pod_group("pg1", "ns1", "q1", 1, None, "Running", min_resources=_RES_1C2G),
    "pg2": build_pod_group("pg2", "ns1", "q2", 1, None, "Running", min_resources=_RES_2C1G),
    "pg3": build_pod_group("pg3", "ns1", "q1", 1, None, "Pending", min_resources=_RES_1C0G),
    "pg4": build_pod_group("pg4", "ns1", "q2", 1, None, "Pending", min_resources=_RES_0C1G),
    "pg5": build_pod_group("pg5", "ns1", "q1", 1, None, "Pending", min_resources=_RES_1C1G),
    "pg6": build_pod_group("pg6", "ns1", "q3", 1, None, "Pending", min_resources=_RES_1C1G),
}
_EA_QUEUE1 = build_queue("q1", 1, rl("2", "2G"))
_EA_QUEUE2 = build_queue("q2", 1, rl("3", "3G"))
_EA_CLOSED_QUEUE3 = build_queue("q3", 1, rl("3", "3G"), state="Closed")
_ALL_ENABLE = {"proportion": ["enabledAllocatable", "enabledOverused", "enableJobEnqueued"]}
_ENQUEUEABLE = {"proportion": ["enableJobEnqueued"]}
_ALLOCATABLE = {"proportion": ["enabledAllocatable"]}


def _ea_case(name: str, plugins: dict, pods: str, pgs: str, queues: list, **fields: Any) -> Case:
    return Case(
        name=name,
        plugins=plugins,
        pods=[_EA_PODS[key] for key in pods.split()],
        nodes=_EA_NODES,
        pod_groups=[_EA_PGS[key] for key in pgs.split()],
        queues=queues,
        **fields,
    )


TEST_ENQUEUE_AND_ALLOCABLE = [
    _ea_case(
        "case0: memory exceed derserved, job only request cpu can be enqueued and allocated",
        _ALL_ENABLE,
        "p1 p2 p3",
        "pg1 pg2 pg3",
        [_EA_QUEUE1, _EA_QUEUE2],
        expect_binds_num=1,
        expect_bind_map={"ns1/pod3": "n1"},
    ),
    _ea_case(
        "case1: cpu exceed derserved, job only request memory can be enqueued and allocated",
        _ALL_ENABLE,
        "p1 p2 p4",
        "pg1 pg2 pg4",
        [_EA_QUEUE1, _EA_QUEUE2],
        expect_binds_num=1,
        expect_bind_map={"ns1/pod4": "n2"},
    ),
    _ea_case(
        "case2: exceed capacity, can not enqueue",
        _ENQUEUEABLE,
        "p1 p2 p5",
        "pg1 pg2 pg5",
        [_EA_QUEUE1, _EA_QUEUE2],
        expect_binds_num=0,
        expect_bind_map={},
    ),
    _ea_case(
        "case3: exceed deserved, can not allocate",
        _ALLOCATABLE,
        "p1 p2 p5",
        "pg1 pg2 pg5",
        [_EA_QUEUE1, _EA_QUEUE2],
        expect_binds_num=0,
        expect_bind_map={},
    ),
    _ea_case(
        "case4: queue with  non-open state, can not enqueue",
        _ENQUEUEABLE,
        "p6",
        "pg6",
        [_EA_CLOSED_QUEUE3],
        expect_binds_num=0,
        expect_bind_map={},
    ),
]


@pytest.mark.parametrize("case", [case_param(case) for case in TEST_ENQUEUE_AND_ALLOCABLE])
def test_proportion_enqueue_and_allocable(case: Case) -> None:
    """proportion_test.go TestEnqueueAndAllocable."""
    check(case, run_case(case, ["enqueue", "allocate"]))


def test_proportion_allocate_queue_priority_order() -> None:
    """proportion_test.go TestAllocate, "case0: Pods are assigned according to the order of
    Queue Priority in which PGs are placed"."""
    case = Case(
        name=(
            "case0: Pods are assigned according to the order of Queue Priority in which PGs "
            "are placed"
        ),
        plugins={"proportion": ["enableQueueOrder"]},
        pods=[
            build_pod("ns1", "p1", "n1", "Running", rl("2", "4Gi"), "pg1"),
            build_pod("ns1", "p2", "", "Pending", rl("2", "4Gi"), "pg2"),
            build_pod("ns1", "p3", "", "Pending", rl("2", "4Gi"), "pg3"),
        ],
        nodes=[
            build_node("n1", rl("2", "4Gi", pods="10")),
            build_node("n2", rl("2", "4Gi", pods="10")),
        ],
        pod_groups=[
            build_pod_group("pg1", "ns1", "q1", 1, None, "Running"),
            build_pod_group("pg2", "ns1", "q2", 1, None, "Inqueue"),
            build_pod_group("pg3", "ns1", "q3", 1, None, "Inqueue"),
        ],
        queues=[
            build_queue_with_priority("q1", 5, None, rl("2", "4Gi")),
            build_queue_with_priority("q2", 1, None, rl("2", "4Gi")),
            build_queue_with_priority("q3", 10, None, rl("2", "4Gi")),
        ],
        expect_bind_map={"ns1/p3": "n2"},
        expect_binds_num=1,
    )
    check(case, run_case(case, ["allocate", "reclaim"]))


def test_proportion_no_double_counting_for_inqueue_job_with_binding_tasks() -> None:
    """proportion_test.go TestNoDoubleCountingForInqueueJobWithBindingTasks.

    Cycle 1 allocates jobA (PodGroup Inqueue, minResources 3 cpu); its tasks stay Binding in the
    cache while the PodGroup stays Inqueue. Cycle 2 adds jobB (Pending, 1 cpu) and runs enqueue +
    allocate: with queue capability 4 cpu, jobB must be enqueued and bound (allocated 3 + inqueue
    max(0, 3 - 3) + 1 <= 4). Both cycles configure enqueue (upstream sets EnabledActionMap
    {"enqueue": true}) so allocate does not promote Pending jobs itself."""
    res_1cpu = rl("1", "1Gi")
    case = Case(
        name="no double counting for inqueue job with binding tasks",
        plugins={"proportion": ["enabledAllocatable", "enabledOverused", "enableJobEnqueued"]},
        nodes=[build_node("n1", rl("4", "8Gi", pods="10"))],
        pods=[build_pod("ns1", f"pA{i}", "", "Pending", res_1cpu, "pgA") for i in (1, 2, 3)],
        pod_groups=[
            build_pod_group("pgA", "ns1", "q1", 3, None, "Inqueue", min_resources=rl("3", "3Gi"))
        ],
        queues=[build_queue("q1", 1, rl("4", "8Gi"))],
    )
    cluster = CaseCluster(case)
    cluster.cycle(["allocate"], configured_actions=["enqueue", "allocate"])
    cycle1 = dict(cluster.binder.binds)
    for pod in ("ns1/pA1", "ns1/pA2", "ns1/pA3"):
        assert pod in cycle1, f"expected {pod} to be bound in cycle 1, got {cycle1}"

    cluster.add("Pod", [build_pod("ns1", "pB1", "", "Pending", res_1cpu, "pgB")])
    cluster.add(
        "PodGroup",
        [build_pod_group("pgB", "ns1", "q1", 1, None, "Pending", min_resources=res_1cpu)],
    )
    cluster.cycle(["enqueue", "allocate"])
    cycle2 = {pod: node for pod, node in cluster.binder.binds.items() if pod not in cycle1}
    assert "ns1/pB1" in cycle2, (
        f"regression: pB1 was not bound in cycle 2 (got {cycle2}) -- proportion plugin is "
        "double-counting inqueue resources for pgA whose tasks are in Binding state"
    )


class RejecterPlugin:
    """``uthelper.RejecterPlugin``: rejects the job whose PodGroup is named ``reject_job``,
    permits every other job."""

    name = "test-rejecter"

    def __init__(self, reject_job: str) -> None:
        self.reject_job = reject_job

    def on_session_open(self, ssn: Session) -> None:
        def enqueueable(job: JobInfo) -> int:
            if job.pod_group is not None and job.pod_group.name == self.reject_job:
                return Vote.REJECT
            return Vote.PERMIT

        ssn.add_job_enqueueable_fn(self.name, enqueueable)

    def on_session_close(self, ssn: Session) -> None:
        return None


def test_proportion_job_enqueued_on_other_plugins_reject() -> None:
    """proportion_test.go TestJobEnqueuedOnOtherPluginsReject: "phantom inqueue reservation:
    rejecter blocks pgA, pgB must still be admitted"."""
    res_1cpu = rl("1", "1G")
    case = Case(
        name="phantom inqueue reservation: rejecter blocks pgA, pgB must still be admitted",
        plugins={"proportion": ["enableJobEnqueued"], RejecterPlugin.name: ["enableJobEnqueued"]},
        nodes=[build_node("n1", rl("4", "4G", pods="10"))],
        pods=[
            build_pod("ns1", "podA", "", "Pending", res_1cpu, "pgA"),
            build_pod("ns1", "podB", "", "Pending", res_1cpu, "pgB"),
        ],
        pod_groups=[
            build_pod_group("pgA", "ns1", "q1", 1, None, "Pending", min_resources=res_1cpu),
            build_pod_group("pgB", "ns1", "q1", 1, None, "Pending", min_resources=res_1cpu),
        ],
        # Queue capacity: exactly 1 CPU -- only one job can be admitted per session.
        queues=[build_queue("q1", 1, rl("1", "4G"))],
        # pgB must be enqueued; pgA stays Pending (blocked by the rejecter, not proportion).
        expect_status={"ns1/pgB": "Inqueue"},
    )
    registry = PluginRegistry({RejecterPlugin.name: lambda _arguments: RejecterPlugin("pgA")})
    check(case, run_case(case, ["enqueue"], registry))


def test_proportion_test_proportion() -> None:
    """proportion_test.go TestProportion."""
    pytest.skip(
        "TestProportion polls Prometheus metrics over HTTP in a loop of sessions and never "
        "asserts its `expected` bind map; nothing action-level to transcribe"
    )


# =================================================================== priority/priority_test.go

_ENABLE_EVICT = {
    "priority": [
        "enableTaskOrder",
        "enableJobOrder",
        "enablePreemptable",
        "enableReclaimable",
        "enableJobStarving",
    ]
}
_DISABLE_EVICT = {"priority": ["enableTaskOrder", "enableJobOrder", "enableJobStarving"]}
_PRIORITY_CLASSES = [
    build_priority_class("low-priority", 100),
    build_priority_class("high-priority", 1000),
]

TEST_PRIORITY_PREEMPT = [
    Case(
        name="enable preempt low priority: enablePreemptable:true",
        plugins=_ENABLE_EVICT,
        priority_classes=_PRIORITY_CLASSES,
        pod_groups=[
            build_pod_group(
                "pg1", "ns1", "q1", 1, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "ns2", "q1", 1, {}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        # as preemptee victims are searched by node, priority can not be guaranteed cross nodes
        pods=[
            build_pod(
                "ns1", "preemptee1", "node1", "Running", rl("3", "3G"), "pg1", {PREEMPTABLE: "true"}
            ),
            build_pod(
                "ns1",
                "preemptee2",
                "node1",
                "Running",
                rl("3", "3G"),
                "pg1",
                {PREEMPTABLE: "true"},
                priority=1000,
            ),
            build_pod("ns2", "preemptor1", "", "Pending", rl("3", "3G"), "pg2"),
        ],
        nodes=[
            build_node("node1", rl("6", "6G", pods="10")),
            build_node("node2", rl("2", "2G", pods="10")),
        ],
        queues=[build_queue("q1", 1, rl("6", "6G"))],
        expect_evicted=["ns1/preemptee1"],
        expect_evict_num=1,
        expect_pipelined={"ns2/pg2": ["node1"]},
    ),
    Case(
        name="disable preempt low priority: enablePreemptable:false",
        plugins=_DISABLE_EVICT,
        priority_classes=_PRIORITY_CLASSES,
        pod_groups=[
            build_pod_group(
                "pg1", "ns1", "q1", 1, {}, "Inqueue", priority_class_name="low-priority"
            ),
            build_pod_group(
                "pg2", "ns2", "q1", 1, {}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod(
                "ns1", "preemptee1", "node1", "Running", rl("3", "3G"), "pg1", {PREEMPTABLE: "true"}
            ),
            build_pod(
                "ns1",
                "preemptee2",
                "node2",
                "Running",
                rl("3", "3G"),
                "pg1",
                {PREEMPTABLE: "false"},
            ),
            build_pod("ns2", "preemptor1", "", "Pending", rl("3", "3G"), "pg2"),
        ],
        nodes=[
            build_node("node1", rl("3", "3G", pods="10")),
            build_node("node2", rl("3", "3G", pods="10")),
        ],
        queues=[build_queue("q1", 1, rl("6", "6G"))],
        expect_evicted=[],
        expect_evict_num=0,
        expect_pipelined={},
    ),
]


@pytest.mark.parametrize("case", [case_param(case) for case in TEST_PRIORITY_PREEMPT])
def test_priority_preempt(case: Case) -> None:
    """priority_test.go TestPreempt (actions allocate, preempt)."""
    check(case, run_case(case, ["allocate", "preempt"]))


def test_priority_unified_evictable_gang_reclaim_permits_all() -> None:
    """priority_test.go TestUnifiedEvictableFn_GangReclaimPermitsAll."""
    pytest.skip(
        "UnifiedEvictableFn belongs to gangpreempt/gangreclaim, not implemented in volcano-py"
    )


# ============================================================= conformance/conformance_test.go


def test_conformance_plugin() -> None:
    """conformance_test.go TestConformancePlugin, "conformance plugin": kube-system pods are
    never victims."""
    case = Case(name="conformance plugin", plugins={"conformance": ["enablePreemptable"]})
    task1 = TaskInfo.from_pod(
        build_pod("kube-system", "test-pod", "test-node", "Running", rl("1", "1Gi"), "pg1")
    )
    task2 = TaskInfo.from_pod(
        build_pod("test-namespace", "test-pod", "test-node", "Running", rl("1", "1Gi"), "pg1")
    )
    preemptor = TaskInfo.from_pod(build_pod("", "", "", "Pending", {}, ""))
    ssn = open_case_session(case)
    victims = ssn.preemptable(preemptor, [task1, task2])
    assert victims == [task2]


# ========================================================================= gang/gang_test.go


def _gang_task(uid: str, status: TaskStatus, node_name: str) -> TaskInfo:
    task = TaskInfo.from_pod(build_pod("ns", uid, node_name, "Pending", {}, "job-1"))
    task.status = status
    task.node_name = node_name
    return task


_SKIP_RELEASING_CASES = [
    (
        "partial termination",
        2,
        [("running", TaskStatus.RUNNING, "node-1"), ("releasing", TaskStatus.RELEASING, "node-2")],
        True,
    ),
    (
        "pending replacement still needs condition",
        2,
        [
            ("running", TaskStatus.RUNNING, "node-1"),
            ("releasing", TaskStatus.RELEASING, "node-2"),
            ("replacement", TaskStatus.PENDING, ""),
        ],
        False,
    ),
    (
        "pipelined replacement still needs condition",
        2,
        [
            ("running", TaskStatus.RUNNING, "node-1"),
            ("releasing", TaskStatus.RELEASING, "node-2"),
            ("replacement", TaskStatus.PIPELINED, "node-3"),
        ],
        False,
    ),
    (
        "never scheduled releasing task is not counted",
        1,
        [("releasing", TaskStatus.RELEASING, "")],
        False,
    ),
    (
        "scheduled tasks below minAvailable",
        3,
        [("running", TaskStatus.RUNNING, "node-1"), ("releasing", TaskStatus.RELEASING, "node-2")],
        False,
    ),
]


@pytest.mark.parametrize(
    ("minimum", "tasks", "expected"),
    [pytest.param(m, t, e, id=name) for name, m, t, e in _SKIP_RELEASING_CASES],
)
def test_gang_should_skip_unschedulable_for_releasing(
    minimum: int, tasks: list[tuple[str, TaskStatus, str]], expected: bool
) -> None:
    """gang_test.go TestShouldSkipUnschedulableForReleasing (``shouldSkipUnschedulableForReleasing``
    is ``skip_unschedulable_for_releasing`` here)."""
    from volcano_py.plugins.gang import skip_unschedulable_for_releasing

    job = JobInfo(uid="job-1")
    for uid, status, node_name in tasks:
        job.add_task(_gang_task(uid, status, node_name))
    job.min_available = minimum
    assert skip_unschedulable_for_releasing(job) is expected


# ============================================================================ drf/hdrf_test.go

HDRF_TIER = {
    "drf": ["enableHierarchy", "enableQueueOrder", "enableJobOrder"],
    "proportion": ["enableJobEnqueued", "enableQueueOrder", "enableReclaimable"],
}


def _make_pods(count: int, cpu: str, memory: str, group: str) -> list[dict[str, Any]]:
    """hdrf_test.go ``makePods``."""
    return [
        build_pod("default", f"{group}-p{i}", "", "Pending", rl(cpu, memory), group)
        for i in range(count)
    ]


def _hierarchy_queue(name: str, path: str, weights: str) -> dict[str, Any]:
    return build_queue_with_annos(name, 1, None, {HIERARCHY: path, HIERARCHY_WEIGHTS: weights})


TEST_HDRF = [
    (
        Case(
            name="rescaling test",
            plugins=HDRF_TIER,
            pod_groups=[
                build_pod_group("pg1", "default", "root-sci", 0, None, "Inqueue"),
                build_pod_group("pg21", "default", "root-eng-dev", 0, None, "Inqueue"),
                build_pod_group("pg22", "default", "root-eng-prod", 0, None, "Inqueue"),
            ],
            pods=_make_pods(10, "1", "1G", "pg1")
            + _make_pods(10, "1", "0G", "pg21")
            + _make_pods(10, "0", "1G", "pg22"),
            queues=[
                _hierarchy_queue("root-sci", "root/sci", "100/50"),
                _hierarchy_queue("root-eng-dev", "root/eng/dev", "100/50/50"),
                _hierarchy_queue("root-eng-prod", "root/eng/prod", "100/50/50"),
            ],
            nodes=[build_node("n", rl("10", "10G", pods="50"))],
        ),
        {
            "pg1": Resource(5000, 5e9, {"pods": 5}),
            "pg21": Resource(5000, 0, {"pods": 5}),
            "pg22": Resource(0, 5e9, {"pods": 5}),
        },
    ),
    (
        Case(
            name="blocking nodes test",
            plugins=HDRF_TIER,
            pod_groups=[
                build_pod_group("pg1", "default", "root-pg1", 0, None, "Inqueue"),
                build_pod_group("pg2", "default", "root-pg2", 0, None, "Inqueue"),
                build_pod_group("pg31", "default", "root-pg3-pg31", 0, None, "Inqueue"),
                # upstream puts pg32 in queue root-pg3-pg31 too (root-pg3-pg32 stays empty)
                build_pod_group("pg32", "default", "root-pg3-pg31", 0, None, "Inqueue"),
                build_pod_group("pg4", "default", "root-pg4", 0, None, "Inqueue"),
            ],
            pods=(
                _make_pods(30, "1", "0G", "pg1")
                + _make_pods(30, "1", "0G", "pg2")
                + _make_pods(30, "1", "0G", "pg31")
                + _make_pods(30, "0", "1G", "pg32")
                + _make_pods(30, "0", "1G", "pg4")
            ),
            queues=[
                _hierarchy_queue("root-pg1", "root/pg1", "100/25"),
                _hierarchy_queue("root-pg2", "root/pg2", "100/25"),
                _hierarchy_queue("root-pg3-pg31", "root/pg3/pg31", "100/25/50"),
                _hierarchy_queue("root-pg3-pg32", "root/pg3/pg32", "100/25/50"),
                _hierarchy_queue("root-pg4", "root/pg4", "100/25"),
            ],
            nodes=[build_node("n", rl("30", "30G", pods="500"))],
        ),
        {
            "pg1": Resource(10000, 0, {"pods": 10}),
            "pg2": Resource(10000, 0, {"pods": 10}),
            "pg31": Resource(10000, 0, {"pods": 10}),
            "pg32": Resource(0, 15e9, {"pods": 15}),
            "pg4": Resource(0, 15e9, {"pods": 15}),
        },
    ),
]


@pytest.mark.parametrize(
    ("case", "expected"), [pytest.param(c, e, id=c.name) for c, e in TEST_HDRF]
)
def test_hdrf(case: Case, expected: dict[str, Resource]) -> None:
    """hdrf_test.go TestHDRF: after allocate, each job's allocation is its hierarchical DRF
    share. (Upstream's assertion compares the whole expected map with one job's Resource via
    DeepEqual, which can never be equal, so upstream never actually checks these numbers; this
    transcription checks what the table states.)"""
    outcome = run_case(case, ["allocate"])
    got = {job.name: job.allocated for job in outcome.session.jobs.values()}
    assert set(got) == set(expected)
    for name, resource in expected.items():
        assert got[name].milli_cpu == resource.milli_cpu, (name, got[name])
        assert got[name].memory == resource.memory, (name, got[name])
        assert got[name].scalar_resources.get("pods", 0) == resource.scalar_resources["pods"], (
            name,
            got[name],
        )


# ===================================================================== binpack/binpack_test.go


@pytest.mark.parametrize("_plugin", [pytest.param("binpack", marks=needs("binpack"))])
def test_binpack_arguments(_plugin: str) -> None:
    """binpack_test.go TestArguments."""
    from volcano_py.plugins.binpack import BinpackWeights

    weights = BinpackWeights.from_arguments(
        Arguments(
            {
                "binpack.weight": 10,
                "binpack.cpu": 5,
                "binpack.memory": 2,
                "binpack.resources": "nvidia.com/gpu, example.com/foo",
                "binpack.resources.nvidia.com/gpu": 7,
                "binpack.resources.example.com/foo": -3,
            },
            owner="binpack",
        )
    )
    assert weights.weight == 10
    assert weights.cpu == 5
    assert weights.memory == 2
    assert weights.resources == {"nvidia.com/gpu": 7, "example.com/foo": 1, "cpu": 5, "memory": 2}


def _binpack_objects() -> dict[str, Any]:
    p3 = build_pod("c1", "p3", "", "Pending", rl("2", "10Gi", **{"nvidia.com/gpu": "2"}), "pg1")
    p4 = build_pod("c1", "p4", "", "Pending", rl("3", "4Gi", **{"example.com/foo": "3"}), "pg1")
    n2 = build_node("n2", rl("4", "16Gi", pods="10", **{"nvidia.com/gpu": "4"}))
    n3 = build_node("n3", rl("2", "4Gi", pods="10", **{"example.com/foo": "16"}))
    return {
        "pods": [
            build_pod("c1", "p1", "n1", "Pending", rl("1", "1Gi"), "pg1"),
            build_pod("c1", "p2", "n3", "Pending", rl("1.5", "0Gi"), "pg1"),
            p3,
            p4,
        ],
        "nodes": [build_node("n1", rl("2", "4Gi", pods="10")), n2, n3],
        "pod_groups": [build_pod_group("pg1", "c1", "c1", 0, None, "")],
        "queues": [build_queue("c1", 1, None)],
    }


TEST_BINPACK_NODE = [
    (
        {
            "binpack.weight": 10,
            "binpack.cpu": 2,
            "binpack.memory": 3,
            "binpack.resources": "nvidia.com/gpu, example.com/foo",
            "binpack.resources.nvidia.com/gpu": 7,
            "binpack.resources.example.com/foo": 8,
        },
        {
            "c1/p1": {"n1": 700, "n2": 137.5, "n3": 0},  # n3: p2 uses 1.5c, p1 does not fit
            "c1/p2": {"n1": 0, "n2": 375, "n3": 0},
            "c1/p3": {"n1": 0, "n2": 531.25, "n3": 0},
            "c1/p4": {"n1": 0, "n2": 173.076923076, "n3": 0},  # n3: required 3c, node has 2c
        },
    ),
    (
        {
            "binpack.weight": 1,
            "binpack.cpu": 1,
            "binpack.memory": 1,
            "binpack.resources": "nvidia.com/gpu",
            "binpack.resources.nvidia.com/gpu": 23,
        },
        {
            "c1/p1": {"n1": 75, "n2": 15.625, "n3": 0},
            "c1/p2": {"n1": 0, "n2": 37.5, "n3": 0},
            "c1/p3": {"n1": 0, "n2": 50.5, "n3": 0},
            "c1/p4": {"n1": 0, "n2": 50, "n3": 0},
        },
    ),
]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(a, e, id=f"single job (case{i})", marks=needs("binpack"))
        for i, (a, e) in enumerate(TEST_BINPACK_NODE)
    ],
)
def test_binpack_node(arguments: dict[str, Any], expected: dict[str, dict[str, float]]) -> None:
    """binpack_test.go TestNode: every task's binpack score on every node (upstream calls
    ``ssn.NodeOrderFn``; our binpack scores through the batch node-order hook, so the session's
    summed node score is read)."""
    case = Case(
        name="single job",
        plugins={"binpack": ["enableNodeOrder"]},
        arguments={"binpack": arguments},
        **_binpack_objects(),
    )
    ssn = open_case_session(case)
    for job in ssn.jobs.values():
        for task in job.tasks.values():
            for node in ssn.nodes.values():
                score = float(ssn.node_scores(task, np.array([node.row], dtype=np.intp))[0])
                want = expected[task.key][node.name]
                assert abs(want - score) <= 1e-6, (
                    f"task {task.key} on node {node.name}: {score} != {want}"
                )


# ================================================================= nodeorder/nodeorder_test.go

_NODEORDER_WEIGHTS = (
    "leastrequested.weight",
    "mostrequested.weight",
    "balancedresource.weight",
    "nodeaffinity.weight",
    "tainttoleration.weight",
    "podaffinity.weight",
    "podtopologyspread.weight",
    "imagelocality.weight",
)


def _nodeorder_case(name: str, weights: dict[str, int], **fields: Any) -> Case:
    """A TestNodeOrderPlugin row: gang (jobReady) and nodeorder with every weight the row
    does not set passed as 0, as upstream's struct does."""
    arguments = {key: weights.get(key, 0) for key in _NODEORDER_WEIGHTS}
    return Case(
        name=name,
        plugins={"gang": ["enableJobReady"], "nodeorder": ["enableNodeOrder"]},
        arguments={"nodeorder": arguments},
        pod_groups=[build_pod_group("pg1", "c1", "c1", 0, None, "Inqueue")],
        queues=[build_queue("c1", 1, None)],
        **fields,
    )


_TAINTED_N2 = build_node(
    "n2",
    rl("2", "4Gi", pods="10"),
    taints=[{"key": "key1", "value": "value1", "effect": "PreferNoSchedule"}],
)

TEST_NODE_ORDER_PLUGIN = [
    _nodeorder_case(
        "leastAllocated strategy",
        {"leastrequested.weight": 1},
        pods=[build_pod("c1", "p1", "", "Pending", rl("1", "1G"), "pg1")],
        nodes=[
            build_node("n1", rl("2", "4Gi", pods="10")),
            build_node("n2", rl("4", "8Gi", pods="10")),
        ],
        expect_binds_num=1,
        expect_bind_map={"c1/p1": "n2"},
    ),
    _nodeorder_case(
        "mostAllocated strategy",
        {"mostrequested.weight": 1},
        pods=[build_pod("c1", "p1", "", "Pending", rl("1", "1G"), "pg1")],
        nodes=[
            build_node("n1", rl("2", "4Gi", pods="10")),
            build_node("n2", rl("4", "8Gi", pods="10")),
        ],
        expect_binds_num=1,
        expect_bind_map={"c1/p1": "n1"},
    ),
    _nodeorder_case(
        "balanced allocation prefers balanced node",
        {"balancedresource.weight": 10},
        pods=[build_pod("c1", "p1", "", "Pending", rl("1", "1Gi"), "pg1")],
        nodes=[
            build_node("n1", rl("2", "2Gi", pods="10")),  # balanced
            build_node("n2", rl("4", "2Gi", pods="10")),  # imbalanced (more CPU)
        ],
        expect_binds_num=1,
        expect_bind_map={"c1/p1": "n1"},
    ),
    _nodeorder_case(
        "node affinity prefers labeled node",
        {"nodeaffinity.weight": 10},
        pods=[
            build_pod(
                "c1",
                "p1",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                affinity={
                    "nodeAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 100,
                                "preference": {
                                    "matchExpressions": [
                                        {"key": "zone", "operator": "In", "values": ["zone1"]}
                                    ]
                                },
                            }
                        ]
                    }
                },
            )
        ],
        nodes=[
            build_node("n1", rl("2", "4Gi", pods="10"), {"zone": "zone1"}),
            build_node("n2", rl("2", "4Gi", pods="10"), {"zone": "zone2"}),
        ],
        expect_binds_num=1,
        expect_bind_map={"c1/p1": "n1"},
    ),
    _nodeorder_case(
        "taint toleration prefers non-tainted node",
        {"tainttoleration.weight": 10},
        # Pod without toleration should prefer non-tainted node (n1) over tainted node (n2).
        pods=[build_pod("c1", "p1", "", "Pending", rl("1", "1G"), "pg1")],
        nodes=[build_node("n1", rl("2", "4Gi", pods="10")), _TAINTED_N2],
        expect_binds_num=1,
        expect_bind_map={"c1/p1": "n1"},
    ),
    _nodeorder_case(
        "inter-pod affinity prefers node with matching pod",
        {"podaffinity.weight": 10},
        pods=[
            # Existing pod on n1
            build_pod("c1", "p1", "n1", "Running", rl("1", "1G"), "pg1", {"service": "s1"}),
            # Noise pod on n3 (different service, shouldn't attract)
            build_pod("c1", "p-noise", "n3", "Running", rl("1", "1G"), "pg1", {"service": "s2"}),
            # Pending pod with affinity
            build_pod(
                "c1",
                "p2",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                affinity={
                    "podAffinity": {
                        "preferredDuringSchedulingIgnoredDuringExecution": [
                            {
                                "weight": 100,
                                "podAffinityTerm": {
                                    "labelSelector": {"matchLabels": {"service": "s1"}},
                                    "topologyKey": "kubernetes.io/hostname",
                                },
                            }
                        ]
                    }
                },
            ),
        ],
        nodes=[
            build_node("n1", rl("2", "4Gi", pods="10"), {"kubernetes.io/hostname": "n1"}),
            build_node("n2", rl("2", "4Gi", pods="10"), {"kubernetes.io/hostname": "n2"}),
            build_node("n3", rl("2", "4Gi", pods="10"), {"kubernetes.io/hostname": "n3"}),
        ],
        expect_binds_num=1,  # p2 binds
        expect_bind_map={"c1/p2": "n1"},
    ),
    _nodeorder_case(
        "pod topology spread prefers node to reduce skew",
        {"podtopologyspread.weight": 10},
        pods=[
            build_pod("c1", "p1", "n1", "Running", rl("1", "1G"), "pg1", {"app": "foo"}),
            build_pod("c1", "p2", "n1", "Running", rl("1", "1G"), "pg1", {"app": "foo"}),
            build_pod("c1", "p3", "n2", "Running", rl("1", "1G"), "pg1", {"app": "foo"}),
            build_pod_with_spread(
                "c1",
                "p4",
                "",
                "Pending",
                rl("1", "1G"),
                "pg1",
                {"app": "foo"},
                [
                    {
                        "maxSkew": 1,
                        "topologyKey": "zone",
                        "whenUnsatisfiable": "ScheduleAnyway",
                        "labelSelector": {"matchLabels": {"app": "foo"}},
                    }
                ],
            ),
        ],
        nodes=[
            build_node("n1", rl("4", "4Gi", pods="10"), {"zone": "zone1"}),
            build_node("n2", rl("4", "4Gi", pods="10"), {"zone": "zone2"}),
            build_node("n3", rl("4", "4Gi", pods="10"), {"zone": "zone3"}),
        ],
        expect_binds_num=1,
        # n3 (zone3) is empty, n2 (zone2) has 1 pod and n1 (zone1) has 2 pods.
        expect_bind_map={"c1/p4": "n3"},
    ),
]


NODE_ORDER_DIVERGENCES = {
    "pod topology spread prefers node to reduce skew": pytest.mark.xfail(
        strict=True,
        reason=(
            "volcano_py/plugins/nodeorder.py does not port kube-scheduler's PodTopologySpread "
            "scorer (podtopologyspread.weight is read but scores nothing), so all three nodes "
            "tie and the tie-break picks n1; upstream scores n3 (empty zone3) highest"
        ),
    ),
}


@pytest.mark.parametrize(
    "case",
    [
        case_param(case, needs("nodeorder"), NODE_ORDER_DIVERGENCES.get(case.name, []))
        for case in TEST_NODE_ORDER_PLUGIN
    ],
)
def test_nodeorder_plugin(case: Case) -> None:
    """nodeorder_test.go TestNodeOrderPlugin (action allocate)."""
    check(case, run_case(case, ["allocate"]))


# ================================================================= overcommit/overcommit_test.go

_OC_NODES = [build_node("n1", rl("2", "4Gi")), build_node("n2", rl("4", "16Gi"))]
_OC_PG1 = build_pod_group(
    "pg1", "test-namespace", "c1", 2, None, "Inqueue", min_resources=rl("2000m", "2G")
)
_OC_PG2 = build_pod_group(
    "pg2", "test-namespace", "c1", 2, None, "Inqueue", min_resources=rl("20000m", "20G")
)
# pg that no requires resources (named pg2 upstream as well)
_OC_PG3 = build_pod_group("pg2", "test-namespace", "c1", 2, None, "Inqueue")
_OC_QUEUE1 = build_queue("c1", 1, None)
_OC_QUEUE2 = build_queue("c1", 1, rl("200m", "0.5G"))

TEST_OVERCOMMIT = [
    ("overCommitFactor is more than 0", _OC_PG1, _OC_QUEUE1, 1.2, True),
    ("overCommitFactor is less than 0", _OC_PG1, _OC_QUEUE1, 0.8, True),
    ("when the required resources of pg are too large", _OC_PG2, _OC_QUEUE1, 1.2, False),
    ("when pg does not fill MinResources", _OC_PG3, _OC_QUEUE2, 1.2, True),
]


@pytest.mark.parametrize(
    ("pod_group", "queue", "factor", "expected"),
    [pytest.param(pg, q, f, e, id=name) for name, pg, q, f, e in TEST_OVERCOMMIT],
)
def test_overcommit_plugin(pod_group: dict, queue: dict, factor: float, expected: bool) -> None:
    """overcommit_test.go TestOvercommitPlugin: for every job, ``ssn.JobEnqueued(job)`` then
    ``ssn.JobEnqueueable(job)``."""
    case = Case(
        name="overcommit",
        plugins={"overcommit": ["enableJobEnqueued"]},
        arguments={"overcommit": {"overcommit-factor": factor}},
        pod_groups=[pod_group],
        queues=[queue],
        nodes=_OC_NODES,
    )
    ssn = open_case_session(case)
    # upstream iterates ssn.Jobs, which holds this one task-less PodGroup's job
    assert list(ssn.jobs) == [f"test-namespace/{pod_group['metadata']['name']}"]
    for job in ssn.jobs.values():
        ssn.job_enqueued(job)
        assert ssn.job_enqueueable(job) is expected


# ================================================================= predicates/predicates_test.go


def _worker_affinity() -> dict[str, Any]:
    return {
        "podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [
                {
                    "labelSelector": {
                        "matchExpressions": [
                            {"key": "role", "operator": "In", "values": ["worker"]}
                        ]
                    },
                    "topologyKey": "kubernetes.io/hostname",
                }
            ]
        }
    }


def test_predicates_event_handler() -> None:
    """predicates_test.go TestEventHandler, "pod-deallocate": worker-1 and worker-2 (pg1,
    minMember 2) cannot both be placed because of anti-affinity, so pg1's allocation is
    discarded and the predicates' pod snapshot must forget them; worker-3 (pg2) then fits
    node1."""
    case = Case(
        name="pod-deallocate",
        plugins={
            "predicates": ["enablePredicate"],
            "gang": ["enableJobReady", "enableJobPipelined"],
            "priority": ["enableJobOrder"],
        },
        pods=[
            build_pod(
                "ns1",
                "worker-1",
                "",
                "Pending",
                rl("3", "3k"),
                "pg1",
                {"role": "worker"},
                {"selector": "worker"},
                affinity=_worker_affinity(),
            ),
            build_pod(
                "ns1",
                "worker-2",
                "",
                "Pending",
                rl("5", "5k"),
                "pg1",
                {"role": "worker"},
                affinity=_worker_affinity(),
            ),
            build_pod(
                "ns1",
                "worker-3",
                "",
                "Pending",
                rl("4", "4k"),
                "pg2",
                {"role": "worker"},
                affinity=_worker_affinity(),
            ),
        ],
        nodes=[
            build_node(
                "node1",
                rl("14", "14k", pods="10"),
                {"selector": "worker", "kubernetes.io/hostname": "node1"},
            ),
            build_node("node2", rl("3", "3k", pods="10"), {"kubernetes.io/hostname": "node2"}),
        ],
        priority_classes=[build_priority_class("p1", 1), build_priority_class("p2", 2)],
        pod_groups=[
            build_pod_group("pg1", "ns1", "q1", 2, None, "Inqueue", priority_class_name="p2"),
            build_pod_group("pg2", "ns1", "q1", 1, None, "Inqueue", priority_class_name="p1"),
        ],
        queues=[build_queue("q1", 0, None)],
        expect_bind_map={"ns1/worker-3": "node1"},
        expect_binds_num=1,
    )
    check(case, run_case(case, ["allocate"]))


def test_predicates_node_num() -> None:
    """predicates_test.go TestNodeNum, "pod-predicate": node1 allows 2 pods; the three
    best-effort workers go through backfill and only two fit (pod-count predicate)."""
    case = Case(
        name="pod-predicate",
        plugins={"predicates": ["enablePredicate"]},
        pods=[
            build_pod(
                "ns1",
                "worker-1",
                "",
                "Pending",
                {},
                "pg1",
                {"role": "worker"},
                {"selector": "worker"},
            ),
            build_pod("ns1", "worker-2", "", "Pending", {}, "pg1", {"role": "worker"}),
            build_pod("ns1", "worker-3", "", "Pending", {}, "pg2", {"role": "worker"}),
        ],
        nodes=[build_node("node1", rl("4", "4k", pods="2"), {"selector": "worker"})],
        priority_classes=[build_priority_class("p1", 1), build_priority_class("p2", 2)],
        pod_groups=[
            build_pod_group("pg1", "ns1", "q1", 2, None, "Inqueue", priority_class_name="p2"),
            build_pod_group("pg2", "ns1", "q1", 1, None, "Inqueue", priority_class_name="p1"),
        ],
        queues=[build_queue("q1", 0, None)],
        expect_bind_map={"ns1/worker-1": "node1", "ns1/worker-2": "node1"},
        expect_binds_num=2,
    )
    check(case, run_case(case, ["allocate", "backfill"]))


def test_predicates_pod_anti_affinity() -> None:
    """predicates_test.go TestPodAntiAffinity."""
    pytest.skip(
        "pod-anti-affinity: runs preempt with enableTopologyAwarePreemption: true; "
        "topology-aware preemption is not implemented in volcano-py"
    )
