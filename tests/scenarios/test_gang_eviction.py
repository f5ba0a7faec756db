"""gangpreempt and gangreclaim end to end: one session over objects, what was evicted and where
the starving gang was pipelined (spec section 3.7).

Upstream's own tests of these actions are unit tests of their parts (transcribed under
tests/actions); these cases pin the behaviour a user sees, each against the task-level action
it replaces where they differ: whole victim gangs instead of broken ones, victims inside one
HyperNode domain, nothing evicted unless the whole preemptor gang can then start.
"""

from __future__ import annotations

from typing import Any

from builders import build_node, build_pod, build_pod_group, build_priority_class, build_queue
from builders import resource_list as rl
from harness import Case, check, run_case
from hypernode_fixtures import build_hyper_node
from upstream_fixtures import PREEMPTABLE

from volcano_py.api.types import TaskStatus

PREEMPT_TIER = {
    "conformance": ["enablePreemptable"],
    "gang": ["enablePreemptable", "enableJobPipelined", "enableJobStarving", "enableJobReady"],
    "priority": ["enableTaskOrder", "enableJobOrder", "enablePreemptable", "enableJobStarving"],
    "predicates": ["enablePredicate"],
    "proportion": ["enabledOverused", "enabledAllocatable", "enableQueueOrder"],
}
TOPOLOGY_PREEMPT_TIER = [
    PREEMPT_TIER,
    {"network-topology-aware": ["enabledHyperNodeOrder", "enabledHyperNodeGradient"]},
]
RECLAIM_TIER = {
    "conformance": ["enableReclaimable"],
    "gang": ["enableReclaimable", "enableJobPipelined", "enableJobStarving", "enableJobReady"],
    "priority": ["enableJobOrder", "enableTaskOrder"],
    "predicates": ["enablePredicate"],
    "proportion": [
        "enableReclaimable",
        "enableQueueOrder",
        "enablePreemptive",
        "enabledOverused",
        "enabledAllocatable",
    ],
}
PRIORITY_CLASSES = [build_priority_class("high", 1000), build_priority_class("low", 10)]


def node(name: str, cpu: str = "4") -> dict[str, Any]:
    return build_node(name, rl(cpu, "16Gi", pods="20"))


def running(name: str, node_name: str, group: str, cpu: str = "1", **extra: Any) -> Any:
    return build_pod("ns", name, node_name, "Running", rl(cpu, "1Gi"), group, **extra)


def pending(name: str, group: str, cpu: str = "1") -> Any:
    return build_pod("ns", name, "", "Pending", rl(cpu, "1Gi"), group)


def gang(name: str, queue: str, min_member: int, priority: str, **extra: Any) -> Any:
    return build_pod_group(
        name, "ns", queue, min_member, None, "Running", priority_class_name=priority, **extra
    )


def preempt_case(name: str, **fields: Any) -> Case:
    fields.setdefault("queues", [build_queue("q1", 1, None)])
    fields.setdefault("plugins", PREEMPT_TIER)
    fields.setdefault("priority_classes", PRIORITY_CLASSES)
    return Case(name=name, **fields)


def pipelined_nodes(outcome: Any, job: str) -> list[str]:
    tasks = outcome.session.jobs[job].tasks_in(TaskStatus.PIPELINED).values()
    return sorted(task.node_name for task in tasks)


# ---------------------------------------------------------------------------- gangpreempt


def test_a_whole_victim_gang_is_evicted_for_a_whole_preemptor_gang() -> None:
    case = preempt_case(
        "victim gang at its minimum: the whole bundle goes",
        nodes=[node("n1")],
        pod_groups=[gang("low", "q1", 2, "low"), gang("high", "q1", 2, "high")],
        pods=[
            running("low-0", "n1", "low", "2"),
            running("low-1", "n1", "low", "2"),
            pending("high-0", "high", "2"),
            pending("high-1", "high", "2"),
        ],
        expect_evicted=["ns/low-0", "ns/low-1"],
    )
    outcome = run_case(case, ["gangpreempt"])
    check(case, outcome)
    assert pipelined_nodes(outcome, "ns/high") == ["n1", "n1"]


def test_a_victims_surplus_goes_first_and_keeps_its_gang_ready() -> None:
    """Safe bundles (tasks above the victim's minimum) before whole ones: ``wide`` runs 4 with
    minMember 2, so losing 2 keeps it ready; ``tight`` sits at its minimum and is spared,
    although it is the lower-priority job."""
    case = preempt_case(
        "safe bundle before whole bundle",
        priority_classes=[
            build_priority_class("high", 1000),
            build_priority_class("mid", 100),
            build_priority_class("low", 10),
        ],
        nodes=[node("n1"), node("n2")],
        pod_groups=[
            gang("wide", "q1", 2, "mid"),
            gang("tight", "q1", 4, "low"),
            gang("high", "q1", 2, "high"),
        ],
        pods=[
            *(running(f"wide-{i}", "n1", "wide") for i in range(4)),
            *(running(f"tight-{i}", "n2", "tight") for i in range(4)),
            pending("high-0", "high"),
            pending("high-1", "high"),
        ],
        expect_evict_num=2,
    )
    outcome = run_case(case, ["gangpreempt"])
    check(case, outcome)
    assert all(key.startswith("ns/wide-") for key in outcome.evictor.evicted)
    assert pipelined_nodes(outcome, "ns/high") == ["n1", "n1"]


def test_allow_whole_bundle_false_never_breaks_a_victim_gang() -> None:
    case = preempt_case(
        "allowWholeBundle: false",
        nodes=[node("n1")],
        pod_groups=[gang("low", "q1", 2, "low"), gang("high", "q1", 2, "high")],
        pods=[
            running("low-0", "n1", "low", "2"),
            running("low-1", "n1", "low", "2"),
            pending("high-0", "high", "2"),
            pending("high-1", "high", "2"),
        ],
        configurations={"gangpreempt": {"allowWholeBundle": False}},
        expect_evict_num=0,
    )
    check(case, run_case(case, ["gangpreempt"]))


def test_nothing_is_evicted_unless_the_whole_preemptor_gang_fits() -> None:
    """The task-level preempt would evict for the first task and then discard; here the dry
    run fails before anything is touched, and no victim is even proposed."""
    case = preempt_case(
        "preemptor gang larger than the domain",
        nodes=[node("n1")],
        pod_groups=[gang("low", "q1", 1, "low"), gang("high", "q1", 3, "high")],
        pods=[
            running("low-0", "n1", "low", "2"),
            running("low-1", "n1", "low", "2"),
            *(pending(f"high-{i}", "high", "2") for i in range(3)),
        ],
        expect_evict_num=0,
    )
    outcome = run_case(case, ["gangpreempt"])
    check(case, outcome)
    assert pipelined_nodes(outcome, "ns/high") == []


def test_victims_are_other_jobs_of_the_same_queue_with_lower_priority() -> None:
    case = preempt_case(
        "equal priority, other queue and non-preemptable PodGroup are spared",
        queues=[build_queue("q1", 1, None), build_queue("q2", 1, None)],
        nodes=[node("n1", "3")],
        pod_groups=[
            gang("peer", "q1", 1, "high"),
            gang("elsewhere", "q2", 1, "low"),
            gang("pinned", "q1", 1, "low", annotations={PREEMPTABLE: "false"}),
            gang("high", "q1", 1, "high"),
        ],
        pods=[
            running("peer-0", "n1", "peer"),
            running("elsewhere-0", "n1", "elsewhere"),
            running("pinned-0", "n1", "pinned"),
            pending("high-0", "high"),
        ],
        expect_evict_num=0,
    )
    check(case, run_case(case, ["gangpreempt"]))


def test_a_non_preemptable_task_keeps_its_bundle_partial() -> None:
    """A pod annotated ``volcano.sh/preemptable: false`` is never a candidate; the job's
    other pods still are."""
    case = preempt_case(
        "pod-level preemptable false",
        nodes=[node("n1", "2")],
        pod_groups=[gang("low", "q1", 1, "low"), gang("high", "q1", 1, "high")],
        pods=[
            running("low-0", "n1", "low", annotations={PREEMPTABLE: "false"}),
            running("low-1", "n1", "low"),
            pending("high-0", "high"),
        ],
        expect_evicted=["ns/low-1"],
    )
    check(case, run_case(case, ["gangpreempt"]))


def test_hard_topology_gang_takes_its_victims_inside_one_hyper_node() -> None:
    """The task-level preempt leaves jobs with a network topology alone. gangpreempt looks for
    victims per tier-1 HyperNode: s0 holds a free node and one victim, which is enough."""
    case = preempt_case(
        "hard topology: one domain",
        plugins=TOPOLOGY_PREEMPT_TIER,
        nodes=[node(f"n{i}") for i in range(4)],
        hyper_nodes=[
            build_hyper_node("s0", 1, ["n0", "n1"]),
            build_hyper_node("s1", 1, ["n2", "n3"]),
            build_hyper_node("s2", 2, hyper_nodes=["s0", "s1"]),
        ],
        pod_groups=[
            gang("low-a", "q1", 1, "low"),
            gang("low-b", "q1", 1, "low"),
            gang("low-c", "q1", 1, "low"),
            gang(
                "high",
                "q1",
                2,
                "high",
                network_topology={"mode": "hard", "highestTierAllowed": 1},
            ),
        ],
        pods=[
            running("a-0", "n0", "low-a", "4"),
            running("b-0", "n2", "low-b", "4"),
            running("c-0", "n3", "low-c", "4"),
            pending("high-0", "high", "4"),
            pending("high-1", "high", "4"),
        ],
        expect_evicted=["ns/a-0"],
    )
    outcome = run_case(case, ["gangpreempt"])
    check(case, outcome)
    assert pipelined_nodes(outcome, "ns/high") == ["n0", "n1"]
    assert run_case(case, ["preempt"]).evictor.evicted == []


# ---------------------------------------------------------------------------- gangreclaim


def reclaim_case(name: str, **fields: Any) -> Case:
    fields.setdefault("queues", [build_queue("q1", 1, None), build_queue("q2", 1, None)])
    fields.setdefault("plugins", RECLAIM_TIER)
    return Case(name=name, priority_classes=PRIORITY_CLASSES, **fields)


def test_gang_reclaim_takes_an_overused_queues_surplus() -> None:
    """q1 uses all 4 CPUs, q2 deserves half: q2's gang of 2 takes back room from q1's surplus
    above its gang minimum. A bundle is taken whole, as upstream: the safe bundle holds all 3
    surplus tasks, so 3 go although 2 would do (proportion registers no UnifiedEvictableFn to
    stop at the deserved share; capacity does)."""
    case = reclaim_case(
        "reclaim for a whole gang",
        nodes=[node("n1")],
        pod_groups=[gang("greedy", "q1", 1, "low"), gang("starved", "q2", 2, "low")],
        pods=[
            *(running(f"greedy-{i}", "n1", "greedy") for i in range(4)),
            pending("starved-0", "starved"),
            pending("starved-1", "starved"),
        ],
        expect_evict_num=3,
    )
    outcome = run_case(case, ["gangreclaim"])
    check(case, outcome)
    assert all(key.startswith("ns/greedy-") for key in outcome.evictor.evicted)
    assert pipelined_nodes(outcome, "ns/starved") == ["n1", "n1"]


def test_gang_reclaim_spares_a_queue_that_is_not_reclaimable() -> None:
    case = reclaim_case(
        "reclaimable: false",
        queues=[build_queue("q1", 1, None, reclaimable=False), build_queue("q2", 1, None)],
        nodes=[node("n1")],
        pod_groups=[gang("greedy", "q1", 1, "low"), gang("starved", "q2", 2, "low")],
        pods=[
            *(running(f"greedy-{i}", "n1", "greedy") for i in range(4)),
            pending("starved-0", "starved"),
            pending("starved-1", "starved"),
        ],
        expect_evict_num=0,
    )
    check(case, run_case(case, ["gangreclaim"]))


def test_gang_reclaim_never_takes_from_its_own_queue() -> None:
    case = reclaim_case(
        "same queue",
        queues=[build_queue("q1", 1, None)],
        nodes=[node("n1")],
        pod_groups=[gang("greedy", "q1", 1, "low"), gang("starved", "q1", 2, "high")],
        pods=[
            *(running(f"greedy-{i}", "n1", "greedy") for i in range(4)),
            pending("starved-0", "starved"),
            pending("starved-1", "starved"),
        ],
        expect_evict_num=0,
    )
    check(case, run_case(case, ["gangreclaim"]))


def test_gang_reclaim_does_not_act_for_a_queue_at_its_share() -> None:
    """q2 already holds its half: asking for more is not reclaim (``preemptive`` says no)."""
    case = reclaim_case(
        "reclaimer at its deserved share",
        nodes=[node("n1")],
        pod_groups=[
            gang("q1-job", "q1", 1, "low"),
            gang("q2-running", "q2", 1, "low"),
            gang("starved", "q2", 2, "low"),
        ],
        pods=[
            running("q1-0", "n1", "q1-job"),
            running("q1-1", "n1", "q1-job"),
            running("q2-0", "n1", "q2-running"),
            running("q2-1", "n1", "q2-running"),
            pending("starved-0", "starved"),
            pending("starved-1", "starved"),
        ],
        expect_evict_num=0,
    )
    check(case, run_case(case, ["gangreclaim"]))


def test_gang_reclaim_with_capacity_stops_at_the_victim_queues_deserved_share() -> None:
    """capacity's UnifiedEvictableFn lets q1 lose tasks only while it stays above what it
    deserves (2 CPUs), so of the 3-task safe bundle 2 remain, exactly what q2's gang needs."""
    capacity_tier = {
        **{name: flags for name, flags in RECLAIM_TIER.items() if name != "proportion"},
        "capacity": [
            "enableReclaimable",
            "enableQueueOrder",
            "enablePreemptive",
            "enabledOverused",
            "enabledAllocatable",
        ],
    }
    deserved = rl("2", "8Gi")
    case = reclaim_case(
        "capacity: reclaim down to deserved",
        plugins=capacity_tier,
        queues=[
            build_queue("q1", 1, None, deserved=deserved),
            build_queue("q2", 1, None, deserved=deserved),
        ],
        nodes=[node("n1")],
        pod_groups=[gang("greedy", "q1", 1, "low"), gang("starved", "q2", 2, "low")],
        pods=[
            *(running(f"greedy-{i}", "n1", "greedy") for i in range(4)),
            pending("starved-0", "starved"),
            pending("starved-1", "starved"),
        ],
        expect_evict_num=2,
    )
    outcome = run_case(case, ["gangreclaim"])
    check(case, outcome)
    assert pipelined_nodes(outcome, "ns/starved") == ["n1", "n1"]
