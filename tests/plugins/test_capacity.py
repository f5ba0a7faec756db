"""capacity plugin (``pkg/scheduler/plugins/capacity``).

Transcribed from upstream ``capacity_test.go``, one parametrized test per upstream test function
and one case per upstream table entry (same names, same objects, same expectations):

* ``Test_capacityPlugin_OnSessionOpenWithoutHierarchy`` (case0..case10)
* ``TestEnqueueAndAllocatable`` (case0, case1, case2, case4)
* ``Test_capacityPlugin_OnSessionOpenWithHierarchy`` (case0..case12; case3 is spec §7.3 S5)
* ``Test_capacityPlugin_AncestorReclaimScenarios`` (case1..case11)
* ``Test_updateQueueAttrShare`` (the share table)
* ``Test_buildHierarchicalQueueAttrs_nilSafety`` (both cases)
* ``TestNoDoubleCountingForInqueueJobWithBindingTasks`` (two cycles over one cache)
* ``TestJobEnqueuedOnOtherPluginsReject`` (a co-tier plugin rejects one job)

Not transcribed: the DRA tests (``TestCapacityPluginDRA``, ``TestParseDRAResourceList...``,
``TestSharedResourceClaimIsChargedOnce``, ``TestJobEnqueueable...DRA...``,
``TestDRAAllocatableIgnoresInqueue``, ``TestJobEnqueuedUpdatesDRAInqueueForDRAOnlyJob``,
``TestCheckDRAAllocatable_overflowRejected``): DRA quota is not ported.

Upstream's ``util.BuildPod(ns, name, node, phase, req, group, labels, selector)`` maps onto
``build_pod`` with the same positional order; ``BuildResourceList("", "")`` leaves cpu and
memory out, which ``resource_list(None, None)`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case, PluginFlags, check, run_case
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.types import TaskStatus, Vote
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder, RecordingEvictor
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import (
    SchedulingState,
    Session,
    close_session,
    open_session,
)
from volcano_py.plugins import capacity
from volcano_py.plugins.capacity import CapacityPlugin, QueueAttributes
from volcano_py.scheduler.registry import PluginRegistry, new_action

PREEMPTABLE = "volcano.sh/preemptable"
GPU = "nvidia.com/gpu"
A100 = "nvidia.com/a100"
RDMA_HCA = "rdma/hca"
NOT_PREEMPTABLE = {PREEMPTABLE: "false"}


def rl(cpu: str | None = None, memory: str | None = None, **scalars: str) -> dict[str, str]:
    return resource_list(cpu, memory, **scalars)


def scalars(**named: str) -> dict[str, str]:
    """Scalar names with dots and slashes: ``scalars(gpu="1")`` -> ``{"nvidia.com/gpu": "1"}``."""
    aliases = {"gpu": GPU, "a100": A100, "A100": "nvidia.com/A100", "rdma_hca": RDMA_HCA}
    return {aliases.get(name, name.replace("_", "-")): value for name, value in named.items()}


def res(cpu: str | None = None, memory: str | None = None, **named: str) -> dict[str, str]:
    return {**rl(cpu, memory), **scalars(**named)}


def queue(
    name: str,
    deserved: Mapping[str, str] | None = None,
    capability: Mapping[str, str] | None = None,
    *,
    parent: str = "",
    priority: int | None = None,
    guarantee: Mapping[str, str] | None = None,
    state: str = "Open",
) -> dict[str, Any]:
    """``util.BuildQueueWithResourcesQuantity`` / ``buildQueueWithParents`` (weight 1)."""
    return build_queue(
        name,
        1,
        capability,
        deserved=deserved,
        guarantee=guarantee,
        parent=parent,
        priority=priority,
        state=state,
    )


def run(case: Case, actions: list[str]) -> None:
    check(case, run_case(case, actions))


# ============================================================================================
# Test_capacityPlugin_OnSessionOpenWithoutHierarchy
# ============================================================================================

FLAT_PLUGINS: PluginFlags = {
    "capacity": [
        "enabledAllocatable",
        "enablePreemptive",
        "enableReclaimable",
        "enableQueueOrder",
    ],
    "predicates": ["enablePredicate"],
    "gang": ["enableJobStarving"],
}


def _flat_cases() -> list[Case]:
    n1 = build_node("n1", rl("2", "4Gi", pods="10"), {"selector": "worker"})
    n2 = build_node("n2", rl("2", "4Gi", pods="10"), {})
    n3 = build_node("n3", res("2", "4Gi", A100="10", pods="10"), {"selector": "worker"})
    n4 = build_node("n4", res("2", "4Gi", A100="10", pods="10"), {})
    n5 = build_node("n5", rl("2", "4Gi", pods="10"))
    n6 = build_node("n6", rl("2", "4Gi", pods="10"))
    n7 = build_node("n7", res("4", "8Gi", gpu="4", pods="10"))
    n8 = build_node("n8", res("4", "8Gi", gpu="1", pods="10"))
    n9 = build_node("n9", rl("8", "100Gi", pods="10"))
    n10 = build_node("n10", rl("8", "100Gi", pods="10"))
    selector = {"selector": "worker"}
    return [
        Case(
            name="case0: Pod allocatable when queue has not exceed capability",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p1", "n1", "Running", rl("1", "1Gi"), "pg1"),
                build_pod("ns1", "p2", "", "Pending", rl("1", "1Gi"), "pg2", {}, selector),
            ],
            nodes=[n1, n2],
            pod_groups=[
                build_pod_group("pg1", "ns1", "q1", 1, None, "Running"),
                build_pod_group("pg2", "ns1", "q1", 1, None, "Inqueue"),
            ],
            queues=[queue("q1", None, rl("2", "2Gi"))],
            expect_bind_map={"ns1/p2": "n1"},
            expect_binds_num=1,
        ),
        Case(
            name="case1: Pod not allocatable when queue exceed queue capability",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p3", "n1", "Running", rl("1", "1Gi"), "pg3"),
                build_pod("ns1", "p4", "", "Pending", rl("1", "1Gi"), "pg4"),
            ],
            nodes=[n1, n2],
            pod_groups=[
                build_pod_group("pg3", "ns1", "q2", 1, None, "Running"),
                build_pod_group("pg4", "ns1", "q2", 1, None, "Inqueue"),
            ],
            queues=[queue("q2", None, rl("1.5", "1.5Gi"))],
            expect_binds_num=0,
        ),
        Case(
            name="case2: Can reclaim from other queues when allocated < deserved",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p5", "n1", "Running", rl("2", "4Gi"), "pg5", NOT_PREEMPTABLE),
                build_pod("ns1", "p6", "n2", "Running", rl("2", "4Gi"), "pg5"),
                build_pod("ns1", "p7", "", "Pending", rl("2", "4Gi"), "pg6"),
            ],
            nodes=[n1, n2],
            pod_groups=[
                build_pod_group("pg5", "ns1", "q3", 1, None, "Running"),
                build_pod_group("pg6", "ns1", "q4", 1, None, "Inqueue"),
            ],
            queues=[queue("q3", rl("2", "4Gi")), queue("q4", rl("2", "4Gi"))],
            expect_pipelined={"ns1/pg6": ["n2"]},
            expect_evicted=["ns1/p6"],
            expect_evict_num=1,
        ),
        Case(
            name="case3: CPU & Memory are overused, scalar resource is not overused, but candidate"
            " pod has not request CPU & Memory, reclaim should happen",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod(
                    "ns1", "p8", "n3", "Running", res("0", "0Gi", A100="10"), "pg7", NOT_PREEMPTABLE
                ),
                build_pod("ns1", "p9", "n4", "Running", res("0", "0Gi", A100="10"), "pg7"),
                build_pod("ns1", "p10", "n3", "Running", rl("2", "4Gi"), "pg8"),
                build_pod("ns1", "p11", "n4", "Running", rl("2", "4Gi"), "pg8"),
                build_pod("ns1", "p12", "", "Pending", res("0", "0Gi", A100="10"), "pg9"),
            ],
            nodes=[n3, n4],
            pod_groups=[
                build_pod_group("pg7", "ns1", "q5", 1, None, "Running"),
                build_pod_group("pg8", "ns1", "q6", 1, None, "Running"),
                build_pod_group("pg9", "ns1", "q6", 1, None, "Inqueue"),
            ],
            queues=[
                queue("q5", res("2", "4Gi", A100="10")),
                queue("q6", res("2", "4Gi", A100="10")),
            ],
            expect_pipelined={"ns1/pg9": ["n4"]},
            expect_evicted=["ns1/p9"],
            expect_evict_num=1,
        ),
        Case(
            name="case4: Pods are assigned according to the order of Queue Priority in which PGs"
            " are placed",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p13", "n5", "Running", rl("2", "4Gi"), "pg10"),
                build_pod("ns1", "p14", "", "Pending", rl("2", "4Gi"), "pg11"),
                build_pod("ns1", "p15", "", "Pending", rl("2", "4Gi"), "pg12"),
            ],
            nodes=[n5, n6],
            pod_groups=[
                build_pod_group("pg10", "ns1", "q7", 1, None, "Running"),
                build_pod_group("pg11", "ns1", "q8", 1, None, "Inqueue"),
                build_pod_group("pg12", "ns1", "q9", 1, None, "Inqueue"),
            ],
            queues=[
                queue("q7", None, rl("2", "4Gi"), priority=5),
                queue("q8", None, rl("2", "4Gi"), priority=1),
                queue("q9", None, rl("2", "4Gi"), priority=10),
            ],
            expect_bind_map={"ns1/p15": "n6"},
            expect_binds_num=1,
        ),
        Case(
            name="case5: Can reclaim from other queues when allocated + req <= deserved on one"
            " dimension",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p16", "n1", "Running", rl("1", "3Gi"), "pg16"),
                build_pod("ns1", "p17", "", "Pending", rl("1", "1Gi"), "pg17"),
                build_pod("ns1", "p18", "n1", "Running", rl("1", "1Gi"), "pg18"),
            ],
            nodes=[n1],
            pod_groups=[
                build_pod_group("pg16", "ns1", "q10", 1, None, "Running"),
                build_pod_group("pg17", "ns1", "q10", 1, None, "Inqueue"),
                build_pod_group("pg18", "ns1", "q11", 1, None, "Running"),
            ],
            queues=[
                queue("q10", rl("2", "2Gi"), rl("4", "4Gi")),
                queue("q11", rl("0", "0Gi"), rl("2", "2Gi")),
            ],
            expect_pipelined={"ns1/pg17": ["n1"]},
            expect_evicted=["ns1/p18"],
            expect_evict_num=1,
        ),
        Case(
            name="case6: Can not reclaim from other queues when allocated + req > deserved",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p19", "n1", "Running", rl("1", "1Gi"), "pg19"),
                build_pod("ns1", "p20", "", "Pending", rl("1", "2Gi"), "pg20"),
                build_pod("ns1", "p21", "n1", "Running", rl("1", "1Gi"), "pg21"),
            ],
            nodes=[n1],
            pod_groups=[
                build_pod_group("pg19", "ns1", "q12", 1, None, "Running"),
                build_pod_group("pg20", "ns1", "q12", 1, None, "Inqueue"),
                build_pod_group("pg21", "ns1", "q13", 1, None, "Running"),
            ],
            queues=[
                queue("q12", rl("1", "2Gi"), rl("4", "4Gi")),
                queue("q13", rl("0", "0Gi"), rl("2", "2Gi")),
            ],
            expect_evict_num=0,
        ),
        Case(
            name="case7: allocated does not contain scalar dimension (GPU), deserved does; should"
            " not reclaim",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p22", "n7", "Running", rl("2", "4Gi"), "pg22"),
                build_pod("ns1", "p23", "n7", "Running", res("0", "0Gi", gpu="1"), "pg23"),
                build_pod("ns1", "p24", "n7", "Running", res("2", "1Gi", gpu="1"), "pg24"),
                build_pod("ns1", "p25", "", "Pending", res("2", "3Gi", gpu="1"), "pg25"),
            ],
            nodes=[n7],
            pod_groups=[
                build_pod_group("pg22", "ns1", "queue14", 1, None, "Running"),
                build_pod_group("pg23", "ns1", "queue15", 1, None, "Running"),
                build_pod_group("pg24", "ns1", "queue16", 1, None, "Running"),
                build_pod_group("pg25", "ns1", "queue16", 1, None, "Inqueue"),
            ],
            queues=[
                queue("queue14", res("2", "4Gi", gpu="2")),
                queue("queue15"),
                queue("queue16", res("2", "4Gi", gpu="2")),
            ],
            expect_evict_num=0,
        ),
        Case(
            name="case8: reclaimer dimensions are considered properly while evicting reclaimees",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p26", "n8", "Running", rl("0", "4Gi"), "pg26"),
                build_pod("ns1", "p27", "n8", "Running", rl("1", "0Gi"), "pg27"),
                build_pod("ns1", "p28", "n8", "Running", res("0", "0Gi", gpu="1"), "pg28"),
                build_pod("ns1", "p29", "n8", "Running", rl("2", "4Gi"), "pg29"),
                build_pod("ns1", "p30", "", "Pending", res("1", "0Gi", gpu="1"), "pg30"),
            ],
            nodes=[n8],
            pod_groups=[
                build_pod_group("pg26", "ns1", "queue17", 1, None, "Running"),
                build_pod_group("pg27", "ns1", "queue17", 1, None, "Running"),
                build_pod_group("pg28", "ns1", "queue17", 1, None, "Running"),
                build_pod_group("pg29", "ns1", "queue18", 1, None, "Running"),
                build_pod_group("pg30", "ns1", "queue18", 1, None, "Inqueue"),
            ],
            queues=[queue("queue17", rl("2", "2Gi")), queue("queue18", res("2", "4Gi", gpu="1"))],
            expect_pipelined={"ns1/pg30": ["n8"]},
            expect_evicted=["ns1/p28"],
            expect_evict_num=1,
        ),
        Case(
            name="case9: reclaimee has intersecting scalar dimensions with deserved shouldn't be"
            " reclaimed on cpu/memory",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p31", "n8", "Running", res("4", "4Gi", gpu="1"), "pg31"),
                build_pod("ns1", "p32", "", "Pending", rl("1", "1Gi"), "pg32"),
            ],
            nodes=[n8],
            pod_groups=[
                build_pod_group("pg31", "ns1", "queue19", 1, None, "Running"),
                build_pod_group("pg32", "ns1", "queue20", 1, None, "Inqueue"),
            ],
            queues=[queue("queue19", res(gpu="1")), queue("queue20", rl("2", "2Gi"))],
            expect_evict_num=0,
        ),
        Case(
            name="case10: PreemptiveFn respects capability — no reclaim when futureUsed would"
            " exceed capability",
            plugins=FLAT_PLUGINS,
            pods=[
                build_pod("ns1", "p33", "n9", "Running", rl("7", "90Gi"), "pg33"),
                build_pod("ns1", "p34", "", "Pending", rl("2", "5Gi"), "pg34"),
                build_pod("ns1", "p35", "n10", "Running", rl("2", "5Gi"), "pg35"),
            ],
            nodes=[n9, n10],
            pod_groups=[
                build_pod_group("pg33", "ns1", "queue21", 1, None, "Running"),
                build_pod_group("pg34", "ns1", "queue21", 1, None, "Inqueue"),
                build_pod_group("pg35", "ns1", "queue22", 1, None, "Running"),
            ],
            queues=[
                queue("queue21", rl("8", "100Gi"), rl("8", "100Gi")),
                queue("queue22", None, rl("2", "5Gi")),
            ],
            expect_evict_num=0,
        ),
    ]


FLAT_CASES = _flat_cases()


@pytest.mark.parametrize("case", FLAT_CASES, ids=[c.name.split(":")[0] for c in FLAT_CASES])
def test_capacity_plugin_on_session_open_without_hierarchy(case: Case) -> None:
    """Test_capacityPlugin_OnSessionOpenWithoutHierarchy (actions allocate, reclaim)."""
    run(case, ["allocate", "reclaim"])


# ============================================================================================
# TestEnqueueAndAllocatable
# ============================================================================================

ENQUEUE_PLUGINS: PluginFlags = {
    "capacity": ["enabledAllocatable", "enablePreemptive", "enabledOverused", "enableJobEnqueued"],
}


def _enqueue_cases() -> list[Case]:
    n1 = build_node("n1", rl("3", "3G", pods="10"))
    n2 = build_node("n2", rl("3", "3G", pods="10"))
    res1c3g, res3c1g, res1c0g = rl("1", "3G"), rl("3", "1G"), rl("1", "0G")
    res0c1g, res1c1g = rl("0", "1G"), rl("1", "1G")
    p1 = build_pod("ns1", "pod1", "n1", "Running", res1c3g, "pg1")
    p2 = build_pod("ns1", "pod2", "n2", "Running", res3c1g, "pg2")
    p3 = build_pod("ns1", "pod3", "", "Pending", res1c0g, "pg3")
    p4 = build_pod("ns1", "pod4", "", "Pending", res0c1g, "pg4")
    p5 = build_pod("ns1", "pod5", "", "Pending", res1c1g, "pg5")
    p6 = build_pod("ns1", "pod6", "", "Pending", res1c1g, "pg6")

    def pg(name: str, queue_name: str, phase: str, minimum: dict[str, str]) -> dict[str, Any]:
        return build_pod_group(name, "ns1", queue_name, 1, None, phase, min_resources=minimum)

    pg1 = pg("pg1", "q1", "Running", res1c3g)
    pg2 = pg("pg2", "q2", "Running", res3c1g)
    pg3 = pg("pg3", "q1", "Pending", res1c0g)
    pg4 = pg("pg4", "q2", "Pending", res0c1g)
    pg5 = pg("pg5", "q1", "Pending", res1c1g)
    pg6 = pg("pg6", "q3", "Pending", res1c1g)
    queue1 = queue("q1", rl("2", "2G"), rl("2", "2G"))
    queue2 = queue("q2", rl("2", "2G"), rl("3", "3G"))
    closed3 = build_queue("q3", 1, rl("3", "3G"), state="Closed")
    return [
        Case(
            name="case0: memory exceed derserved, job only request cpu can be enqueued and"
            " allocated",
            plugins=ENQUEUE_PLUGINS,
            pods=[p1, p2, p3],
            nodes=[n1, n2],
            pod_groups=[pg1, pg2, pg3],
            queues=[queue1, queue2],
            expect_bind_map={"ns1/pod3": "n1"},
            expect_binds_num=1,
        ),
        Case(
            name="case1: cpu exceed derserved, job only request memory can be enqueued and"
            " allocated",
            plugins=ENQUEUE_PLUGINS,
            pods=[p1, p2, p4],
            nodes=[n1, n2],
            pod_groups=[pg1, pg2, pg4],
            queues=[queue1, queue2],
            expect_bind_map={"ns1/pod4": "n2"},
            expect_binds_num=1,
        ),
        Case(
            name="case2: exceed capacity, can not enqueue",
            plugins=ENQUEUE_PLUGINS,
            pods=[p1, p2, p5],
            nodes=[n1, n2],
            pod_groups=[pg1, pg2, pg5],
            queues=[queue1, queue2],
            expect_binds_num=0,
        ),
        Case(
            name="case4: queue with non-open state, can not enqueue",
            plugins=ENQUEUE_PLUGINS,
            pods=[p6],
            nodes=[n1, n2],
            pod_groups=[pg6],
            queues=[closed3],
            expect_binds_num=0,
        ),
    ]


ENQUEUE_CASES = _enqueue_cases()


@pytest.mark.parametrize("case", ENQUEUE_CASES, ids=[c.name.split(":")[0] for c in ENQUEUE_CASES])
def test_enqueue_and_allocatable(case: Case) -> None:
    """TestEnqueueAndAllocatable (actions enqueue, allocate)."""
    run(case, ["enqueue", "allocate"])


# ============================================================================================
# Test_capacityPlugin_OnSessionOpenWithHierarchy
# ============================================================================================

HIERARCHY_PLUGINS: PluginFlags = {
    "capacity": [
        "enabledAllocatable",
        "enablePreemptive",
        "enableReclaimable",
        "enableQueueOrder",
        "enableHierarchy",
        "enableJobEnqueued",
    ],
    "predicates": ["enablePredicate"],
    "gang": ["enableJobStarving"],
}


def _hierarchy_cases() -> list[Case]:
    n1 = build_node("n1", rl("8", "8Gi", pods="11"), {})
    root = queue("root")
    root1 = queue("root", None, rl("16", "16Gi"))
    root2 = queue("root", res("16", "16Gi", a100="4", rdma="1000"))
    queue1 = queue("q1", None, rl("4", "4Gi"), parent="root")
    queue2 = queue("q2", None, rl("4", "4Gi"), parent="root")
    queue11 = queue("q11", None, rl("1", "1Gi"), parent="q1")
    queue12 = queue("q12", None, rl("3", "3Gi"), parent="q1")

    queue3 = queue("q3", rl("4", "4Gi", pods="10"), rl("4", "4Gi", pods="10"), parent="root")
    queue4 = queue("q4", rl("2", "2Gi", pods="1"), rl("4", "4Gi", pods="4"), parent="root")
    queue31 = queue("q31", rl("2", "2Gi", pods="2"), rl("4", "4Gi", pods="4"), parent="q3")
    queue32 = queue("q32", rl("2", "2Gi", pods="2"), rl("4", "4Gi", pods="4"), parent="q3")
    queue33 = queue("q33", rl("0", "0Gi", pods="2"), rl("4", "4Gi", pods="4"), parent="q3")

    p5 = build_pod("ns1", "p5", "n1", "Running", rl("4", "4Gi"), "pg4", {})
    p6 = build_pod("ns1", "p6", "n1", "Running", rl("2", "2Gi"), "pg5", NOT_PREEMPTABLE)
    p7 = build_pod("ns1", "p7", "n1", "Running", rl("2", "2Gi"), "pg5")
    p8 = build_pod("ns1", "p8", "", "Pending", rl("2", "2Gi"), "pg6")
    p9 = build_pod("ns1", "p9", "n1", "Running", rl("2", "2Gi"), "pg7")
    p10 = build_pod("ns1", "p10", "", "Pending", rl("3", "3Gi"), "pg8")
    pg4 = build_pod_group("pg4", "ns1", "q4", 1, None, "Running")
    pg5 = build_pod_group("pg5", "ns1", "q31", 1, None, "Running")
    pg6 = build_pod_group("pg6", "ns1", "q32", 1, None, "Inqueue")
    pg7 = build_pod_group("pg7", "ns1", "q32", 1, None, "Running")
    pg8 = build_pod_group("pg8", "ns1", "q33", 1, None, "Inqueue")

    queue5 = queue("q5", None, rl(None, "4Gi"), parent="root")
    queue51 = queue("q51", None, rl(None, "2Gi"), parent="q5")

    queue6 = queue("q6", None, rl("2", "4Gi"), parent="root")
    queue61 = queue("q61", parent="q6")
    queue62 = queue("q62", parent="q6")

    def min_pg(name: str, queue_name: str) -> dict[str, Any]:
        return build_pod_group(
            name, "ns1", queue_name, 1, None, "Pending", min_resources=rl("2", "4Gi")
        )

    queue7 = queue("q7", None, rl("6", "4Gi"), parent="root")
    queue71 = queue("q71", None, rl("6", "4Gi"), parent="q7", guarantee=rl("4", "3Gi"))
    queue72 = queue("q72", None, rl("6", "4Gi"), parent="q7", guarantee=rl("4", "3Gi"))

    queue8 = queue("q8", res("4", "4Gi", gpu="8"), parent="root")
    queue81 = queue("q81", res("2", "2Gi", gpu="4"), parent="q8")
    queue82 = queue("q82", res("2", "2Gi", gpu="4"), parent="q8")
    gpu_node = build_node("n-gpu", res("8", "8Gi", gpu="8", pods="10"), {})

    queue9 = queue("q9", res("2", "2Gi", gpu="8", hugepages_1Gi="0"), parent="root")
    queue91 = queue("q91", res("2", "2Gi", gpu="4", hugepages_1Gi="0"), parent="q9")
    n2 = build_node("n2", res("8", "8Gi", gpu="8", pods="10", hugepages_1Gi="0"), {})
    queue10 = queue("q10", None, rl("10", "4Gi"), parent="root")

    case11_queue1 = queue("case11_queue1", parent="root")
    case11_queue11 = queue("case11_queue11", None, res("4", "4Gi", gpu="4"), parent="case11_queue1")
    case11_queue12 = queue("case11_queue12", None, res("4", "4Gi", gpu="4"), parent="case11_queue1")

    case12_queue1 = queue("case12_queue1", res(a100="2"), parent="root")
    case12_queue11 = queue("case12_queue11", res(a100="2"), parent="case12_queue1")
    case12_queue12 = queue("case12_queue12", parent="case12_queue1")
    n3 = build_node("n3", res("16", "16Gi", a100="5", rdma_hca="1001", pods="11"), {})
    a100_task = res("1", "1Gi", a100="2", rdma_hca="1")

    return [
        Case(
            name="case0: Pod allocatable when queue is leaf queue",
            plugins=HIERARCHY_PLUGINS,
            pods=[build_pod("ns1", "p1", "", "Pending", rl("1", "1Gi"), "pg1", {})],
            nodes=[n1],
            pod_groups=[build_pod_group("pg1", "ns1", "q11", 1, None, "Inqueue")],
            queues=[root, queue1, queue2, queue11, queue12],
            expect_bind_map={"ns1/p1": "n1"},
            expect_binds_num=1,
        ),
        Case(
            name="case1: Pod not allocatable when queue is not leaf queue",
            plugins=HIERARCHY_PLUGINS,
            pods=[build_pod("ns1", "p2", "", "Pending", rl("1", "1Gi"), "pg2", {})],
            nodes=[n1],
            pod_groups=[build_pod_group("pg2", "ns1", "q1", 1, None, "Pending")],
            queues=[root, queue1, queue2, queue11, queue12],
            expect_binds_num=0,
        ),
        Case(
            name="case2: Pod allocatable when queue has not exceed capability",
            plugins=HIERARCHY_PLUGINS,
            pods=[
                build_pod("ns1", "p3", "", "Pending", rl("2", "2Gi"), "pg3", {}),
                build_pod("ns1", "p4", "", "Pending", rl("2", "2Gi"), "pg3", {}),
            ],
            nodes=[n1],
            pod_groups=[build_pod_group("pg3", "ns1", "q31", 2, None, "Inqueue")],
            queues=[root, queue3, queue4, queue31, queue32],
            expect_bind_map={"ns1/p3": "n1", "ns1/p4": "n1"},
            expect_binds_num=2,
        ),
        Case(
            name="case3: Can reclaim from other queues when allocated < deserved",
            plugins=HIERARCHY_PLUGINS,
            pods=[p5, p6, p7, p8],
            nodes=[n1],
            pod_groups=[pg4, pg5, pg6],
            queues=[root, queue3, queue31, queue32, queue4],
            expect_pipelined={"ns1/pg6": ["n1"]},
            expect_evicted=["ns1/p7"],
            expect_evict_num=1,
        ),
        Case(
            name="case4: Pod is not allocatable when ancestor queue's real capability not enough",
            plugins=HIERARCHY_PLUGINS,
            pods=[p6, p9, p10],
            nodes=[n1],
            pod_groups=[pg5, pg7, pg8],
            queues=[root, queue3, queue31, queue32, queue33],
            expect_binds_num=0,
        ),
        Case(
            name="case5: If the capability cpu or memory is not specified, the value should be"
            " inherited from parent queue",
            plugins=HIERARCHY_PLUGINS,
            pods=[build_pod("ns1", "p11", "", "Pending", rl("1", None), "pg9", {})],
            nodes=[n1],
            pod_groups=[build_pod_group("pg9", "ns1", "q51", 1, None, "Running")],
            queues=[root, queue5, queue51],
            expect_bind_map={"ns1/p11": "n1"},
            expect_binds_num=1,
        ),
        Case(
            name="case6: podgroup can't be enqueued when any ancestor queue's capability is not"
            " enough",
            plugins=HIERARCHY_PLUGINS,
            nodes=[n1],
            pod_groups=[min_pg("pg10", "q61"), min_pg("pg11", "q62")],
            queues=[root, queue6, queue61, queue62],
            expect_status={"ns1/pg10": "Inqueue", "ns1/pg11": "Pending"},
        ),
        Case(
            name="case7: the sum of sub queue 71 and 72's guarantee exceeds the capacity of"
            " queue7, but should not panic",
            plugins=HIERARCHY_PLUGINS,
            nodes=[n1],
            queues=[root, queue7, queue71, queue72],
        ),
        Case(
            name="case8: When the queue's deserved value has a scalar resource set, the check can"
            " pass",
            plugins=HIERARCHY_PLUGINS,
            nodes=[gpu_node],
            pod_groups=[build_pod_group("pg12", "ns1", "q81", 1, None, "Inqueue")],
            pods=[build_pod("ns1", "p12", "", "Pending", res("2", "2Gi", gpu="1"), "pg12")],
            queues=[root, queue8, queue81, queue82],
            expect_bind_map={"ns1/p12": "n-gpu"},
            expect_binds_num=1,
        ),
        Case(
            name="case9: When some scalar resources are 0 in deserved, the check can still pass",
            plugins=HIERARCHY_PLUGINS,
            nodes=[n2],
            pod_groups=[build_pod_group("pg13", "ns1", "q91", 1, None, "Inqueue")],
            pods=[build_pod("ns1", "p13", "", "Pending", res("2", "2Gi", gpu="1"), "pg13")],
            queues=[root, queue9, queue91],
            expect_bind_map={"ns1/p13": "n2"},
            expect_binds_num=1,
        ),
        Case(
            name="case10: root queue's capability > cluster total resource, but should not panic",
            plugins=HIERARCHY_PLUGINS,
            nodes=[n1],
            queues=[root1, queue10],
        ),
        Case(
            name="case11: If the capability scalar resources is not specified, the value should"
            " be inherited from parent queue",
            plugins=HIERARCHY_PLUGINS,
            pods=[
                build_pod("ns1", "p14", "", "Pending", res("1", "1Gi", gpu="4"), "pg14", {}),
                build_pod("ns1", "p15", "", "Pending", res("1", "1Gi", gpu="4"), "pg15", {}),
            ],
            nodes=[n2],
            pod_groups=[
                build_pod_group("pg14", "ns1", "case11_queue11", 1, None, "Inqueue"),
                build_pod_group("pg15", "ns1", "case11_queue12", 1, None, "Inqueue"),
            ],
            queues=[root, case11_queue1, case11_queue11, case11_queue12],
            expect_bind_map={"ns1/p14": "n2", "ns1/p15": "n2"},
            expect_binds_num=2,
        ),
        Case(
            name="case12: Can reclaim from other queues when allocated <= deserved on a single"
            " scalar dimension",
            plugins=HIERARCHY_PLUGINS,
            pods=[
                build_pod("ns1", "p16", "", "Pending", a100_task, "pg16", {}),
                build_pod("ns1", "p17", "n3", "Running", a100_task, "pg17", {}),
                build_pod("ns1", "p18", "n3", "Running", a100_task, "pg18", NOT_PREEMPTABLE),
            ],
            nodes=[n3],
            pod_groups=[
                build_pod_group("pg16", "ns1", "case12_queue11", 1, None, "Inqueue"),
                build_pod_group("pg17", "ns1", "case12_queue12", 1, None, "Running"),
                build_pod_group("pg18", "ns1", "case12_queue12", 1, None, "Running"),
            ],
            queues=[root2, case12_queue1, case12_queue11, case12_queue12],
            expect_pipelined={"ns1/pg16": ["n3"]},
            expect_evicted=["ns1/p17"],
            expect_evict_num=1,
        ),
    ]


HIERARCHY_CASES = _hierarchy_cases()


@pytest.mark.parametrize(
    "case", HIERARCHY_CASES, ids=[c.name.split(":")[0] for c in HIERARCHY_CASES]
)
def test_capacity_plugin_on_session_open_with_hierarchy(case: Case) -> None:
    """Test_capacityPlugin_OnSessionOpenWithHierarchy (actions enqueue, reclaim, allocate);
    case3 is spec §7.3 S5."""
    run(case, ["enqueue", "reclaim", "allocate"])


# ============================================================================================
# Test_capacityPlugin_AncestorReclaimScenarios
# ============================================================================================


def _ancestor_plugins(include_priority: bool) -> PluginFlags:
    plugins: dict[str, list[str]] = {name: list(flags) for name, flags in HIERARCHY_PLUGINS.items()}
    if include_priority:
        plugins["priority"] = ["enableJobOrder", "enableTaskOrder"]
    return plugins


def _project_queue_tree() -> list[dict[str, Any]]:
    return [
        queue("root", res("16", "16Gi", a100="4", rdma="1000")),
        queue("project1_root", res(a100="1"), res(a100="2"), parent="root"),
        queue("project1_non-preemptable", res(a100="1"), res(a100="1"), parent="project1_root"),
        queue("project1_preemptable", parent="project1_root"),
        queue("project2_root", res(a100="3"), res(a100="4"), parent="root"),
        queue("project2_non-preemptable", res(a100="3"), res(a100="3"), parent="project2_root"),
        queue("project2_preemptable", parent="project2_root"),
    ]


def _level_semantics_tree() -> list[dict[str, Any]]:
    return [
        queue("root"),
        queue("grand-a", rl("2", "2Gi"), rl("4", "4Gi"), parent="root"),
        queue("parent-a", rl("2", "2Gi"), rl("2", "2Gi"), parent="grand-a"),
        queue("queue-a", rl("2", "2Gi"), rl("2", "2Gi"), parent="parent-a"),
        queue("grand-b", rl("3", "3Gi"), rl("4", "4Gi"), parent="root"),
        queue("parent-b", rl("1", "1Gi"), rl("2", "2Gi"), parent="grand-b"),
        queue("queue-b", rl("1", "1Gi"), rl("2", "2Gi"), parent="parent-b"),
    ]


def _victim_and_reclaimer(
    victim_queue: str, reclaimer_queue: str, request: dict[str, str] | None = None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The two-pod shape of cases 5-10: a running victim and a pending reclaimer."""
    victim_request = request or rl("2", "2Gi")
    pods = [
        build_pod("ns1", "p-victim", "n1", "Running", victim_request, "pg-victim"),
        build_pod("ns1", "p-reclaimer", "", "Pending", rl("2", "2Gi"), "pg-reclaimer"),
    ]
    pod_groups = [
        build_pod_group("pg-victim", "ns1", victim_queue, 1, None, "Running"),
        build_pod_group("pg-reclaimer", "ns1", reclaimer_queue, 1, None, "Inqueue"),
    ]
    return pods, pod_groups


def _ancestor_cases() -> list[tuple[int, Case]]:
    big_node = build_node("n1", res("16", "16Gi", a100="4", rdma_hca="1001", pods="11"), {})
    small_node = build_node("n1", rl("2", "2Gi", pods="10"), {})
    a100_one = res("1", "1Gi", a100="1", rdma_hca="1")
    cases: list[tuple[int, Case]] = []

    cases.append(
        (
            1,
            Case(
                name="case1: Can reclaim based on parent deserved when ancestorReclaimLevel is 1",
                plugins=_ancestor_plugins(True),
                nodes=[big_node],
                queues=[
                    queue("root", res("16", "16Gi", a100="4", rdma="1000")),
                    queue("case1_queue1", res(a100="1"), parent="root"),
                    queue("case1_queue11", parent="case1_queue1"),
                    queue("case1_queue2", parent="root"),
                ],
                pod_groups=[
                    build_pod_group("pg1", "ns1", "case1_queue2", 1, None, "Running"),
                    build_pod_group("pg2", "ns1", "case1_queue11", 1, None, "Inqueue"),
                ],
                pods=[
                    build_pod(
                        "ns1", "p1", "n1", "Running", res("1", "1Gi", a100="4", rdma_hca="1"), "pg1"
                    ),
                    build_pod("ns1", "p2", "", "Pending", a100_one, "pg2"),
                ],
                expect_pipelined={"ns1/pg2": ["n1"]},
                expect_evicted=["ns1/p1"],
                expect_evict_num=1,
            ),
        )
    )
    cases.append(
        (
            1,
            Case(
                name="case2: Cross-parent reclaim pipelines project1 pending job when project2"
                " child and parent are both over deserved",
                plugins=_ancestor_plugins(True),
                nodes=[big_node],
                queues=_project_queue_tree(),
                pod_groups=[
                    *(
                        build_pod_group(f"pg{i}", "ns1", "project2_preemptable", 1, None, "Running")
                        for i in range(1, 5)
                    ),
                    build_pod_group("pg5", "ns1", "project1_preemptable", 1, None, "Pending"),
                ],
                pods=[
                    build_pod("ns1", "p1", "n1", "Running", a100_one, "pg1", priority=2),
                    build_pod("ns1", "p2", "n1", "Running", a100_one, "pg2", priority=2),
                    build_pod("ns1", "p3", "n1", "Running", a100_one, "pg3", priority=2),
                    build_pod("ns1", "p4", "n1", "Running", a100_one, "pg4", priority=1),
                    build_pod("ns1", "p5", "", "Pending", a100_one, "pg5"),
                ],
                expect_pipelined={"ns1/pg5": ["n1"]},
                expect_evicted=["ns1/p4"],
                expect_evict_num=1,
            ),
        )
    )
    cases.append(
        (
            1,
            Case(
                name="case3: Cross-parent reclaim can evict sibling-queue victim first",
                plugins=_ancestor_plugins(True),
                nodes=[big_node],
                queues=_project_queue_tree(),
                pod_groups=[
                    build_pod_group("pg1", "ns1", "project2_preemptable", 1, None, "Running"),
                    build_pod_group("pg2", "ns1", "project2_preemptable", 1, None, "Running"),
                    build_pod_group("pg3", "ns1", "project2_preemptable", 1, None, "Running"),
                    build_pod_group(
                        "pg4_reclaimed", "ns1", "project2_preemptable", 1, None, "Inqueue"
                    ),
                    build_pod_group(
                        "pg5_pipelined", "ns1", "project1_preemptable", 1, None, "Running"
                    ),
                    build_pod_group("pg6", "ns1", "project2_non-preemptable", 1, None, "Pending"),
                ],
                pods=[
                    build_pod("ns1", "p1", "n1", "Running", a100_one, "pg1", priority=2),
                    build_pod("ns1", "p2", "n1", "Running", a100_one, "pg2", priority=2),
                    build_pod("ns1", "p3", "n1", "Running", a100_one, "pg3", priority=2),
                    build_pod("ns1", "p4", "", "Pending", a100_one, "pg4_reclaimed"),
                    build_pod("ns1", "p5", "n1", "Running", a100_one, "pg5_pipelined"),
                    build_pod("ns1", "p6", "", "Pending", a100_one, "pg6"),
                ],
                expect_pipelined={"ns1/pg6": ["n1"]},
                expect_evicted=["ns1/p3"],
                expect_evict_num=1,
            ),
        )
    )
    cases.append(
        (
            1,
            Case(
                name="case4: Cross-parent reclaim is blocked when victim child is not over"
                " deserved",
                plugins=_ancestor_plugins(True),
                nodes=[build_node("n1", res("8", "8Gi", a100="1", rdma_hca="1001", pods="11"), {})],
                queues=[
                    queue("root", res("16", "16Gi", a100="4", rdma="1000")),
                    queue("case4_parent1", res(a100="1"), parent="root"),
                    queue("case4_child1", res(a100="1"), parent="case4_parent1"),
                    queue("case4_child1_sibling", parent="case4_parent1"),
                    queue("case4_parent2", res(a100="1"), parent="root"),
                    queue("case4_child2", res(a100="1"), parent="case4_parent2"),
                ],
                pod_groups=[
                    build_pod_group("pg1", "ns1", "case4_child1", 1, None, "Running"),
                    build_pod_group("pg2", "ns1", "case4_child2", 1, None, "Pending"),
                    build_pod_group("pg3", "ns1", "case4_child1_sibling", 1, None, "Running"),
                ],
                pods=[
                    build_pod("ns1", "p1", "n1", "Running", a100_one, "pg1"),
                    build_pod("ns1", "p2", "", "Pending", a100_one, "pg2"),
                    build_pod("ns1", "p3", "n1", "Running", a100_one, "pg3", NOT_PREEMPTABLE),
                ],
                expect_evict_num=0,
            ),
        )
    )
    for level, name in (
        (0, "case5: level 0 allows reclaim based on leaf-level deserved checks"),
        (1, "case6: level 1 allows reclaim when parent-level check passes"),
    ):
        pods, pod_groups = _victim_and_reclaimer("queue-b", "queue-a")
        cases.append(
            (
                level,
                Case(
                    name=name,
                    plugins=_ancestor_plugins(False),
                    nodes=[small_node],
                    queues=_level_semantics_tree(),
                    pods=pods,
                    pod_groups=pod_groups,
                    expect_pipelined={"ns1/pg-reclaimer": ["n1"]},
                    expect_evicted=["ns1/p-victim"],
                    expect_evict_num=1,
                ),
            )
        )
    pods, pod_groups = _victim_and_reclaimer("queue-b", "queue-a")
    cases.append(
        (
            2,
            Case(
                name="case7: level 2 blocks reclaim when grandparent-level check fails",
                plugins=_ancestor_plugins(False),
                nodes=[small_node],
                queues=_level_semantics_tree(),
                pods=pods,
                pod_groups=pod_groups,
                expect_evict_num=0,
            ),
        )
    )
    pods, pod_groups = _victim_and_reclaimer("queue-b", "queue-a")
    cases.append(
        (
            1,
            Case(
                name="case8: level 1 blocks sibling reclaim when leaf deserved is unset and no"
                " ancestor gate applies",
                plugins=_ancestor_plugins(False),
                nodes=[small_node],
                queues=[
                    queue("root"),
                    queue("parent", rl("4", "4Gi"), rl("4", "4Gi"), parent="root"),
                    queue("queue-a", parent="parent"),
                    queue("queue-b", parent="parent"),
                ],
                pods=pods,
                pod_groups=pod_groups,
                expect_evict_num=0,
            ),
        )
    )
    pods, pod_groups = _victim_and_reclaimer("queue-b", "queue-a")
    cases.append(
        (
            2,
            Case(
                name="case9: level 2 blocks reclaim when leaf deserved is unset and queues share"
                " grandparent",
                plugins=_ancestor_plugins(False),
                nodes=[small_node],
                queues=[
                    queue("root"),
                    queue("grand", rl("2", "2Gi"), rl("2", "2Gi"), parent="root"),
                    queue("parent-a", parent="grand"),
                    queue("queue-a", parent="parent-a"),
                    queue("parent-b", parent="grand"),
                    queue("queue-b", parent="parent-b"),
                ],
                pods=pods,
                pod_groups=pod_groups,
                expect_evict_num=0,
            ),
        )
    )
    pods, pod_groups = _victim_and_reclaimer("queue-deep", "queue-shallow")
    cases.append(
        (
            2,
            Case(
                name="case10: level 2 blocks reclaim in unbalanced shared-grandparent tree when"
                " leaf deserved is unset",
                plugins=_ancestor_plugins(False),
                nodes=[small_node],
                queues=[
                    queue("root"),
                    queue("grand", rl("1", "1Gi"), rl("2", "2Gi"), parent="root"),
                    queue("parent-deep", rl("1", "1Gi"), rl("2", "2Gi"), parent="grand"),
                    queue("queue-deep", parent="parent-deep"),
                    queue("queue-shallow", parent="grand"),
                ],
                pods=pods,
                pod_groups=pod_groups,
                expect_evict_num=0,
            ),
        )
    )
    cases.append(
        (
            2,
            Case(
                name="case11: unbalanced level2 blocks reclaim when depth-2 ancestor is not over"
                " deserved",
                plugins=_ancestor_plugins(False),
                nodes=[build_node("n1", res("4", "4Gi", pods="10", a100="2"), {})],
                queues=[
                    queue("root"),
                    queue("shallow-parent", res(a100="1"), parent="root"),
                    queue("queue-shallow", res(a100="1"), parent="shallow-parent"),
                    queue("deep-grand", res(a100="2"), parent="root"),
                    queue("deep-parent", res(a100="1"), parent="deep-grand"),
                    queue("queue-deep", res(a100="1"), parent="deep-parent"),
                ],
                pods=[
                    build_pod(
                        "ns1", "p-victim", "n1", "Running", res("1", "1Gi", a100="2"), "pg-victim"
                    ),
                    build_pod(
                        "ns1",
                        "p-reclaimer",
                        "",
                        "Pending",
                        res("1", "1Gi", a100="1"),
                        "pg-reclaimer",
                    ),
                ],
                pod_groups=[
                    build_pod_group("pg-victim", "ns1", "queue-deep", 1, None, "Running"),
                    build_pod_group("pg-reclaimer", "ns1", "queue-shallow", 1, None, "Inqueue"),
                ],
                expect_evict_num=0,
            ),
        )
    )
    for level, case in cases:
        case.arguments = {"capacity": {"ancestorReclaimLevel": level}}
    return cases


ANCESTOR_CASES = _ancestor_cases()


@pytest.mark.parametrize(
    "case", [c for _, c in ANCESTOR_CASES], ids=[c.name.split(":")[0] for _, c in ANCESTOR_CASES]
)
def test_capacity_plugin_ancestor_reclaim_scenarios(case: Case) -> None:
    """Test_capacityPlugin_AncestorReclaimScenarios (actions enqueue, reclaim, allocate)."""
    run(case, ["enqueue", "reclaim", "allocate"])


# ============================================================================================
# Test_updateQueueAttrShare
# ============================================================================================

_2C2G, _1C1G = rl("2", "2Gi"), rl("1", "1Gi")
SHARE_TABLE: list[tuple[str, dict[str, str], dict[str, str], float]] = [
    ("best-effort queue with allocated resources", {}, _1C1G, 1.0),
    ("best-effort queue with pending requests only (no allocated)", {}, {}, 1.0),
    ("best-effort queue with both allocated and request", {}, _1C1G, 1.0),
    ("best-effort queue completely idle", {}, {}, 1.0),
    ("queue with deserved but no allocated", _2C2G, {}, 0.0),
    ("queue with deserved, allocated < deserved (CPU dimension)", _2C2G, _1C1G, 0.5),
    ("queue with deserved, allocated = deserved", _2C2G, _2C2G, 1.0),
    ("queue with deserved, allocated > deserved (CPU dimension)", _2C2G, rl("3", "2Gi"), 1.5),
    ("queue with deserved, memory is dominant resource", rl("2", "4Gi"), rl("1", "3Gi"), 0.75),
    ("queue with deserved, CPU is dominant resource", rl("2", "4Gi"), rl("1.5", "2Gi"), 0.75),
    ("queue with deserved, allocated exceeds on both dimensions", _2C2G, rl("3", "3Gi"), 1.5),
    ("queue with deserved, request should not affect share calculation", _2C2G, _1C1G, 0.5),
    ("queue with deserved but zero values", rl("0", "0Gi"), _1C1G, 1.0),
    ("queue with deserved, allocated is zero", _2C2G, rl("0", "0Gi"), 0.0),
    ("best-effort queue with only CPU allocated", {}, rl("1", "0Gi"), 1.0),
    ("best-effort queue with only memory allocated", {}, rl("0", "1Gi"), 1.0),
    ("best-effort queue with only CPU request (no allocated)", {}, {}, 1.0),
]


@pytest.mark.parametrize(
    ("deserved", "allocated", "want"),
    [row[1:] for row in SHARE_TABLE],
    ids=[row[0] for row in SHARE_TABLE],
)
def test_update_queue_attr_share(
    deserved: dict[str, str], allocated: dict[str, str], want: float
) -> None:
    """Test_updateQueueAttrShare (``request`` never matters, so the table's request column is
    not carried over)."""
    attr = QueueAttributes(
        "test-queue",
        deserved=Resource.from_list(deserved),
        allocated=Resource.from_list(allocated),
    )
    attr.update_share()
    assert attr.share == want


# ============================================================================================
# Test_buildHierarchicalQueueAttrs_nilSafety
# ============================================================================================

NIL_SAFETY_PLUGINS: PluginFlags = {
    "capacity": [
        "enabledAllocatable",
        "enableReclaimable",
        "enableQueueOrder",
        "enableHierarchy",
        "enableJobEnqueued",
    ],
    "predicates": ["enablePredicate"],
    "gang": ["enableJobStarving"],
}


def test_build_hierarchical_queue_attrs_nil_safety_root_absent() -> None:
    """Test_buildHierarchicalQueueAttrs_nilSafety: "no-panic when root queue is absent (empty
    ssn.Queues)"; the plugin reports itself not ready instead of failing."""
    case = Case(
        name="no-panic when root queue is absent (empty ssn.Queues)",
        plugins=NIL_SAFETY_PLUGINS,
        nodes=[build_node("n1", rl("4", "4Gi", pods="10"), {})],
        expect_binds_num=0,
    )
    outcome = run_case(case, ["allocate"])
    check(case, outcome)
    plugin = outcome.session.plugins["capacity"]
    assert isinstance(plugin, CapacityPlugin) and not plugin.ready


def test_build_hierarchical_queue_attrs_nil_safety_deleted_queue() -> None:
    """Test_buildHierarchicalQueueAttrs_nilSafety: "no-panic when job references a deleted
    queue" (our snapshot already drops a job whose queue is gone)."""
    case = Case(
        name="no-panic when job references a deleted queue",
        plugins=NIL_SAFETY_PLUGINS,
        nodes=[build_node("n1", rl("4", "4Gi", pods="10"), {})],
        pods=[build_pod("ns1", "orphan", "", "Pending", rl("1", "1Gi"), "pg-orphan")],
        pod_groups=[build_pod_group("pg-orphan", "ns1", "deleted-queue", 1, None, "Inqueue")],
        queues=[queue("root")],
        expect_binds_num=0,
    )
    check(case, run_case(case, ["allocate"]))


# ============================================================================================
# TestNoDoubleCountingForInqueueJobWithBindingTasks
# ============================================================================================


def _session(cache: SchedulerCache, tiers: list[Tier], actions: list[str]) -> Session:
    conf = SchedulerConf(actions=actions, tiers=tiers)
    return open_session(cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState())


def test_no_double_counting_for_inqueue_job_with_binding_tasks() -> None:
    """TestNoDoubleCountingForInqueueJobWithBindingTasks: cycle 1 places jobA's three tasks
    (Binding in the cache, PodGroup still Inqueue); cycle 2 must count them once, leaving
    room to admit and bind jobB."""
    tiers = [
        Tier(
            [
                PluginOption.with_flags(
                    "capacity", "enabledAllocatable", "enabledOverused", "enableJobEnqueued"
                )
            ]
        )
    ]
    binder = RecordingBinder()
    cache = SchedulerCache(binder=binder, evictor=RecordingEvictor())
    cache.apply_event("Node", "ADDED", build_node("n1", rl("4", "8Gi", pods="10")))
    for name in ("pA1", "pA2", "pA3"):
        cache.apply_event(
            "Pod", "ADDED", build_pod("ns1", name, "", "Pending", rl("1", "1Gi"), "pgA")
        )
    cache.apply_event(
        "PodGroup",
        "ADDED",
        build_pod_group("pgA", "ns1", "q1", 3, None, "Inqueue", min_resources=rl("3", "3Gi")),
    )
    cache.apply_event("Queue", "ADDED", queue("q1", None, rl("4", "8Gi")))

    # Upstream enables only "enqueue" for cycle 1 so allocate does not admit jobs itself; it
    # then runs allocate alone.
    first = _session(cache, tiers, ["enqueue", "allocate"])
    new_action("allocate").execute(first)
    close_session(first)
    assert set(binder.binds) == {"ns1/pA1", "ns1/pA2", "ns1/pA3"}

    cache.apply_event("Pod", "ADDED", build_pod("ns1", "pB1", "", "Pending", rl("1", "1Gi"), "pgB"))
    cache.apply_event(
        "PodGroup",
        "ADDED",
        build_pod_group("pgB", "ns1", "q1", 1, None, "Pending", min_resources=rl("1", "1Gi")),
    )
    second = _session(cache, tiers, ["enqueue", "allocate"])
    new_action("enqueue").execute(second)
    new_action("allocate").execute(second)
    close_session(second)
    assert binder.binds.get("ns1/pB1") == "n1", binder.binds


# ============================================================================================
# TestJobEnqueuedOnOtherPluginsReject
# ============================================================================================


class _Rejecter:
    """uthelper.RejecterPlugin: rejects the job whose PodGroup is ``reject_job``."""

    name = "test-rejecter"

    def __init__(self, reject_job: str) -> None:
        self.reject_job = reject_job

    def on_session_open(self, ssn: Session) -> None:
        def enqueueable(job: Any) -> Vote:
            pod_group = job.pod_group
            if pod_group is not None and pod_group.name == self.reject_job:
                return Vote.REJECT
            return Vote.PERMIT

        ssn.add_job_enqueueable_fn(self.name, enqueueable)

    def on_session_close(self, ssn: Session) -> None:
        return None


def test_job_enqueued_on_other_plugins_reject() -> None:
    """TestJobEnqueuedOnOtherPluginsReject: "pgA rejected by co-tier plugin must not consume
    q1 capacity; pgB must be admitted"."""
    res_1cpu = rl("1", "1G")
    case = Case(
        name="pgA rejected by co-tier plugin must not consume q1 capacity; pgB must be admitted",
        plugins={"capacity": ["enableJobEnqueued"], "test-rejecter": ["enableJobEnqueued"]},
        nodes=[build_node("n1", rl("4", "4G", pods="10"))],
        pods=[
            build_pod("ns1", "podA", "", "Pending", res_1cpu, "pgA"),
            build_pod("ns1", "podB", "", "Pending", res_1cpu, "pgB"),
        ],
        pod_groups=[
            build_pod_group("pgA", "ns1", "q1", 1, None, "Pending", min_resources=res_1cpu),
            build_pod_group("pgB", "ns1", "q1", 1, None, "Pending", min_resources=res_1cpu),
        ],
        queues=[queue("q1", rl("1", "4G"), rl("1", "4G"))],
        expect_status={"ns1/pgB": "Inqueue"},
    )
    registry = PluginRegistry({"test-rejecter": lambda _arguments: _Rejecter("pgA")})
    check(case, run_case(case, ["enqueue"], registry))


# ============================================================================================
# Beyond upstream: the computed attributes themselves
# ============================================================================================


def _open(
    queues: list[dict[str, Any]],
    pod_groups: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    nodes: list[dict[str, Any]],
    *flags: str,
    arguments: Mapping[str, Any] | None = None,
) -> tuple[Session, CapacityPlugin]:
    cache = SchedulerCache()
    for kind, objects in (
        ("Node", nodes),
        ("Pod", pods),
        ("PodGroup", pod_groups),
        ("Queue", queues),
    ):
        for obj in objects:
            cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("capacity", *flags, arguments=arguments)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    ssn = open_session(cache.snapshot(), conf, {"capacity": capacity.new}, cache)
    plugin = ssn.plugins["capacity"]
    assert isinstance(plugin, CapacityPlugin)
    return ssn, plugin


def test_s5_attributes_real_capability_and_root_sums() -> None:
    """The numbers spec §7.3 S5 reasons with: q32's real capability, root's deserved as the
    sum of its children, the job usage counted on every ancestor."""
    cases = {c.name.split(":")[0]: c for c in HIERARCHY_CASES}
    s5 = cases["case3"]
    ssn, plugin = _open(
        s5.queues, s5.pod_groups, s5.pods, s5.nodes, "enableHierarchy", "enableQueueOrder"
    )
    attrs = plugin.queue_attributes
    assert attrs["q32"].real_capability.to_list() == rl("4", "4Gi", pods="4")
    assert attrs["q32"].ancestors == ["root", "q3"]
    assert attrs["root"].deserved.to_list() == rl("6", "6Gi", pods="11")
    assert attrs["q3"].allocated.to_list() == rl("4", "4Gi", pods="2")
    assert attrs["root"].allocated.to_list() == rl("8", "8Gi", pods="3")
    assert dict(plugin.deserved_by_queue())["q31"].to_list() == rl("2", "2Gi", pods="2")
    # Victim order: q31 shares q3 with the preemptor's q32, q4 only root.
    q31, q4, q32 = (ssn.queues[name] for name in ("q31", "q4", "q32"))
    assert plugin.victim_queue_order(q31, q4, q32) == -1
    assert ssn.victim_queue_order_fn(q31, q4, q32)


def test_flat_deserved_is_capped_by_real_capability_and_raised_to_guarantee() -> None:
    """buildQueueAttrs: deserved = max(min(deserved, realCapability), guarantee), and
    realCapability = min(capability, cluster - all guarantees + own guarantee)."""
    nodes = [build_node("n1", rl("10", "10Gi", pods="100"))]
    queues = [
        queue("a", rl("20", "1Gi"), rl("8", None), guarantee=rl("2", "2Gi")),
        queue("b", rl("1", "1Gi"), guarantee=rl("3", "1Gi")),
    ]
    pod_groups = [
        build_pod_group("pa", "ns", "a", 1, None, "Running"),
        build_pod_group("pb", "ns", "b", 1, None, "Running"),
    ]
    _, plugin = _open(queues, pod_groups, [], nodes)
    a, b = plugin.queue_attributes["a"], plugin.queue_attributes["b"]
    # cluster 10 cpu - guarantees 5 + own 2 = 7, under capability 8 (memory uncapped).
    assert a.real_capability.milli_cpu == 7000
    assert a.deserved.milli_cpu == 7000
    assert a.deserved.memory == Resource.from_list({"memory": "2Gi"}).memory
    assert b.deserved.milli_cpu == 3000


def test_hierarchy_not_ready_when_parent_unknown() -> None:
    """A parent that does not exist makes the plugin refuse everything for the session."""
    queues = [queue("root"), queue("orphan", parent="missing")]
    ssn, plugin = _open(queues, [], [], [build_node("n1", rl("1", "1Gi"))], "enableHierarchy")
    assert not plugin.ready
    orphan = ssn.queues["orphan"]
    assert not plugin.preemptive(orphan, [])


def test_job_enqueueable_records_event_naming_dimensions() -> None:
    """A rejected enqueue records "queue resource quota insufficient: insufficient cpu"."""
    nodes = [build_node("n1", rl("4", "4Gi", pods="10"))]
    queues = [queue("q", None, rl("1", "4Gi"))]
    pod_groups = [
        build_pod_group("pg", "ns", "q", 1, None, "Pending", min_resources=rl("2", "1Gi"))
    ]
    case = Case(
        name="enqueue event",
        plugins={"capacity": ["enableJobEnqueued"]},
        nodes=nodes,
        queues=queues,
        pod_groups=pod_groups,
        expect_status={"ns/pg": "Pending"},
    )
    outcome = run_case(case, ["enqueue"])
    check(case, outcome)
    messages = [event[-1] for event in outcome.recorder.events]
    assert "queue resource quota insufficient: insufficient cpu" in messages


def test_ancestor_reclaim_level_argument_is_read_and_negative_falls_back() -> None:
    plugin = capacity.new(Arguments({"ancestorReclaimLevel": -3}, owner="capacity"))
    plugin._parse_arguments()
    assert plugin.ancestor_reclaim_level == 0
    plugin = capacity.new(Arguments({"ancestorReclaimLevel": 2}, owner="capacity"))
    plugin._parse_arguments()
    assert plugin.ancestor_reclaim_level == 2


def test_allocated_follows_allocation_events_on_every_ancestor() -> None:
    cases = {c.name.split(":")[0]: c for c in HIERARCHY_CASES}
    case2 = cases["case2"]
    outcome = run_case(case2, ["allocate"])
    plugin = outcome.session.plugins["capacity"]
    assert isinstance(plugin, CapacityPlugin)
    for name in ("q31", "q3", "root"):
        assert plugin.queue_attributes[name].allocated.to_list() == rl("4", "4Gi", pods="2")
    job = outcome.session.jobs["ns1/pg3"]
    assert len(job.tasks_in(TaskStatus.BINDING)) == 2
    assert isinstance(outcome.session.queues["q31"], QueueInfo)


def test_a_queue_without_state_is_not_open(caplog: pytest.LogCaptureFixture) -> None:
    """capacity's ``queue.Queue.Status.State != QueueStateOpen``: a Queue no queue controller
    has synced yet (no ``status.state``) admits, allocates and reclaims nothing; said once, as
    a warning naming the queue."""
    nodes = [build_node("n1", rl("10", "10Gi", pods="100"))]
    unsynced = {k: v for k, v in queue("cap-new", rl("4", "4Gi")).items() if k != "status"}
    pod_groups = [build_pod_group("pg", "ns", "cap-new", 1, None, "Pending")]
    pods = [build_pod("ns", "p", "", "Pending", rl("1", "1Gi"), "pg")]
    flags = ("enableJobEnqueued", "enabledAllocatable", "enablePreemptive")
    ssn, _ = _open([queue("root"), unsynced], pod_groups, pods, nodes, *flags)
    job = ssn.jobs["ns/pg"]
    target = ssn.queues["cap-new"]
    assert target.state == ""
    assert not ssn.job_enqueueable(job)
    assert not ssn.allocatable(target, job.tasks["ns-p"])
    assert not ssn.preemptive(target, job.tasks["ns-p"])
    warned = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert [m.split(": ")[2] for m in warned] == [
        "its jobs stay pending until the queue controller sets it Open (Volcano's scheduler"
        " also takes a queue without a state as not Open)",
        "no allocation in it until the queue controller sets it Open (Volcano's scheduler also"
        " takes a queue without a state as not Open)",
        "no reclaim for it until the queue controller sets it Open (Volcano's scheduler also"
        " takes a queue without a state as not Open)",
    ]
