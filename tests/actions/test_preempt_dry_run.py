"""preempt's topology-aware mode (``actions/preempt_dry_run.py``): the candidate count and
offset, the choice among candidates (``pickOneNodeForPreemption``'s five rules), the dry run
over several nodes, and the reprieve pass that sets it apart from the normal mode.

Upstream tests these through ``TestTopologyAwarePreempt`` only (one node per case; see
``tests/scenarios/test_preempt_upstream.py``); the cases here are ours.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
)
from tests.builders import resource_list as rl
from tests.harness import Case, PluginFlags, check, run_case, tiers_of
from volcano_py.actions.preempt_dry_run import (
    Candidate,
    DryRunSettings,
    _go_div,
    clone_state,
    dry_run_preemption,
    earliest_start_time,
    pick_one_node_for_preemption,
    pod_start_time,
    select_candidate,
)
from volcano_py.api.resource import DimensionDefault
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import SchedulerConf
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins.proportion import ProportionPlugin
from volcano_py.scheduler.registry import PluginRegistry

PREEMPTABLE = "volcano.sh/preemptable"
MIN_INT32 = -(2**31)
TIER: PluginFlags = {
    "gang": ["enablePreemptable", "enableJobPipelined", "enableJobStarving"],
    "priority": [
        "enableTaskOrder",
        "enableJobOrder",
        "enablePreemptable",
        "enableJobPipelined",
        "enableJobStarving",
    ],
    "proportion": ["enabledAllocatable", "enableQueueOrder", "enablePredicate"],
    "predicates": ["enablePreemptable", "enablePredicate"],
}
PRIORITY_CLASSES = [
    build_priority_class("high-priority", 1000),
    build_priority_class("mid-priority", 50),
    build_priority_class("low-priority", 10),
]


# ---------------------------------------------------------------------- candidate count


@pytest.mark.parametrize(
    ("nodes", "percentage", "minimum", "maximum", "expected"),
    [
        (5, 10, 1, 100, 1),  # 10% of 5 is 0, raised to the minimum
        (50, 10, 1, 100, 5),
        (1000, 10, 1, 100, 100),
        (5000, 10, 1, 100, 100),  # 500, cut to the maximum
        (10, 10, 20, 100, 10),  # the minimum is more than there are nodes
        (300, 50, 1, 1000, 150),
        (7, 100, 1, 100, 7),
        (10, -15, 1, 100, 1),  # Go truncates -1.5 to -1, then the minimum applies
        (10, 10, 5, 3, 3),  # a maximum below the minimum wins, as upstream's order has it
    ],
)
def test_num_candidates_is_clamped(
    nodes: int, percentage: int, minimum: int, maximum: int, expected: int
) -> None:
    settings = DryRunSettings(16, percentage, minimum, maximum)
    assert settings.num_candidates(nodes) == expected


def test_go_division_truncates_toward_zero() -> None:
    assert [_go_div(a, 100) for a in (150, -150, 99, -99, 0)] == [1, -1, 0, 0, 0]


def test_settings_read_upstream_argument_names_and_defaults() -> None:
    assert DryRunSettings.from_arguments(Arguments({})) == DryRunSettings(16, 10, 1, 100)
    arguments = Arguments(
        {
            "topologyAwarePreemptWorkerNum": 4,
            "minCandidateNodesPercentage": 30,
            "minCandidateNodesAbsolute": 2,
            "maxCandidateNodesAbsolute": 7,
        }
    )
    assert DryRunSettings.from_arguments(arguments) == DryRunSettings(4, 30, 2, 7)


def test_offset_comes_from_the_session_rng_and_covers_every_node() -> None:
    settings = DryRunSettings()
    assert settings.offset_and_num_candidates(7, random.Random(3)) == (
        random.Random(3).randrange(7),
        1,
    )
    rng = random.Random(0)
    offsets = {settings.offset_and_num_candidates(4, rng)[0] for _ in range(200)}
    assert offsets == {0, 1, 2, 3}


# ---------------------------------------------------------------------- choosing a candidate


def victim(name: str, priority: int | None, started: str | None = None) -> TaskInfo:
    pod = build_pod("c1", name, "n", "Running", rl("1", "1G"), "pg", priority=priority)
    if started is not None:
        pod["status"]["startTime"] = started
    return TaskInfo.from_pod(pod)


def pick(victims_by_node: Mapping[str, Sequence[TaskInfo]]) -> str:
    return pick_one_node_for_preemption(victims_by_node)


def test_rule_1_lowest_highest_victim_priority() -> None:
    assert pick({"a": [victim("a1", 10)], "b": [victim("b1", 5), victim("b2", 5)]}) == "b"


def test_rule_2_lowest_sum_of_priorities() -> None:
    assert pick({"a": [victim("a1", 10), victim("a2", 10)], "b": [victim("b1", 10)]}) == "b"
    # Every priority is offset by 2^31 first: two pods of negative priority do not sum lower
    # than one of them.
    assert pick({"a": [victim("a1", -5)], "b": [victim("b1", -5), victim("b2", -5)]}) == "a"


def test_rule_3_fewest_victims() -> None:
    # The only way to tie the offset sums with different counts: minimum int32 priorities.
    many = [victim("a1", 0), victim("a2", MIN_INT32), victim("a3", MIN_INT32)]
    few = [victim("b1", 0), victim("b2", MIN_INT32)]
    assert pick({"a": many, "b": few}) == "b"


def test_rule_4_latest_start_of_the_highest_priority_victims() -> None:
    early = [victim("a1", 10, "2024-01-01T00:00:00Z"), victim("a2", 5, "2024-12-01T00:00:00Z")]
    late = [victim("b1", 10, "2024-06-01T00:00:00Z"), victim("b2", 5, "2023-01-01T00:00:00Z")]
    assert pick({"a": early, "b": late}) == "b"
    # A pod that has not started yet counts as starting now: later than any that did.
    not_started = [victim("c1", 10), victim("c2", 5, "2023-01-01T00:00:00Z")]
    assert pick({"a": early, "b": late, "c": not_started}) == "c"


def test_rule_5_first_node() -> None:
    def same(prefix: str) -> list[TaskInfo]:
        return [victim(f"{prefix}1", 10, "2024-01-01T00:00:00Z")]

    assert pick({"a": same("a"), "b": same("b")}) == "a"
    assert pick({"b": same("b"), "a": same("a")}) == "b"


def test_no_priority_means_zero() -> None:
    assert pick({"a": [victim("a1", None)], "b": [victim("b1", 1)]}) == "a"
    assert pick({"a": [victim("a1", None)], "b": [victim("b1", -1)]}) == "b"


def test_earliest_start_time_looks_at_the_highest_priority_only() -> None:
    victims = [
        victim("v1", 5, "2020-01-01T00:00:00Z"),
        victim("v2", 10, "2024-03-01T00:00:00Z"),
        victim("v3", 10, "2024-02-01T00:00:00Z"),
    ]
    assert earliest_start_time(victims) == pod_start_time(victims[2])


def test_select_candidate() -> None:
    assert select_candidate([]) is None
    only = Candidate("a", (victim("a1", 100),))
    assert select_candidate([only]) is only
    cheaper = Candidate("b", (victim("b1", 1),))
    assert select_candidate([only, cheaper]) is cheaper


def test_clone_state_clones_every_value() -> None:
    class Value:
        def __init__(self, items: list[int]) -> None:
            self.items = items

        def clone(self) -> Value:
            return Value(list(self.items))

    original = {"plugin": Value([1])}
    copy = clone_state(original)
    copy["plugin"].items.append(2)
    copy["other"] = Value([])
    assert original["plugin"].items == [1]
    assert set(original) == {"plugin"}


# ---------------------------------------------------------------------- the dry run


def _session(objects: Sequence[tuple[str, dict[str, Any]]], plugins: PluginFlags) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(actions=["preempt"], tiers=tiers_of(plugins))
    return open_session(cache.snapshot(), conf, PluginRegistry(), cache)


def _five_full_nodes() -> list[tuple[str, dict[str, Any]]]:
    """n0..n4, one CPU each, each full with a low-priority preemptable task; n5 the same with
    a CPU to spare; and a high-priority pending preemptor of one CPU."""
    objects: list[tuple[str, dict[str, Any]]] = [("PriorityClass", pc) for pc in PRIORITY_CLASSES]
    objects.append(("Queue", build_queue("q1", 1)))
    objects.append(
        (
            "PodGroup",
            build_pod_group(
                "low", "c1", "q1", 0, {}, "Running", priority_class_name="low-priority"
            ),
        )
    )
    objects.append(
        (
            "PodGroup",
            build_pod_group(
                "high", "c1", "q1", 1, {}, "Inqueue", priority_class_name="high-priority"
            ),
        )
    )
    for index in range(5):
        objects.append(("Node", build_node(f"n{index}", rl("1", "1G", pods="10"))))
    objects.append(("Node", build_node("n5", rl("2", "2G", pods="10"))))
    for index in range(6):
        pod = build_pod(
            "c1", f"v{index}", f"n{index}", "Running", rl("1", "1G"), "low", {PREEMPTABLE: "true"}
        )
        objects.append(("Pod", pod))
    objects.append(("Pod", build_pod("c1", "preemptor", "", "Pending", rl("1", "1G"), "high")))
    return objects


def _dry_run(offset: int, count: int) -> tuple[list[Candidate], dict[str, Any]]:
    ssn = _session(_five_full_nodes(), TIER)
    preemptor = next(t for t in ssn.jobs["c1/high"].tasks.values())
    assert ssn.pre_predicate_fn(preemptor) is None
    nodes = ssn.node_list
    return dry_run_preemption(
        ssn, preemptor, nodes, offset, count, lambda task: task.job != preemptor.job
    )


def test_dry_run_starts_at_the_offset_and_stops_at_the_count() -> None:
    candidates, statuses = _dry_run(offset=3, count=2)
    assert [c.node for c in candidates] == ["n3", "n4"]
    assert [[v.name for v in c.victims] for c in candidates] == [["v3"], ["v4"]]
    assert statuses == {}


def test_dry_run_wraps_around_and_records_why_a_node_is_no_candidate() -> None:
    candidates, statuses = _dry_run(offset=4, count=3)
    # The preemptor fits n5 with its victim back, so n5 offers none and is no candidate.
    assert [c.node for c in candidates] == ["n4", "n0", "n1"]
    assert list(statuses) == ["n5"]
    assert "expected at least one victim" in statuses["n5"].reason


def test_dry_run_leaves_the_session_untouched() -> None:
    ssn = _session(_five_full_nodes(), TIER)
    preemptor = next(t for t in ssn.jobs["c1/high"].tasks.values())
    ssn.pre_predicate_fn(preemptor)
    idle_before = ssn.matrix.idle.copy()
    tasks_before = {node.name: set(node.tasks) for node in ssn.node_list}
    proportion = ssn.plugins["proportion"]
    assert isinstance(proportion, ProportionPlugin)
    allocated_before = proportion.queue_attributes["q1"].allocated.clone()
    candidates, _ = dry_run_preemption(ssn, preemptor, ssn.node_list, 0, 6, lambda task: True)
    assert len(candidates) == 5
    assert (ssn.matrix.idle == idle_before).all()
    assert {node.name: set(node.tasks) for node in ssn.node_list} == tasks_before
    assert proportion.queue_attributes["q1"].allocated.equal(
        allocated_before, DimensionDefault.ZERO
    )
    assert all(task.status is TaskStatus.RUNNING for task in ssn.jobs["c1/low"].tasks.values())


def test_dry_run_without_seeded_state_finds_no_candidate() -> None:
    """No PrePredicate, no simulation state: proportion answers "not allocatable" and
    refuses to move allocations, as upstream's failed state read does."""
    ssn = _session(_five_full_nodes(), TIER)
    preemptor = next(t for t in ssn.jobs["c1/high"].tasks.values())
    candidates, statuses = dry_run_preemption(
        ssn, preemptor, ssn.node_list, 0, 6, lambda task: task.job != preemptor.job
    )
    assert candidates == []
    assert "no dry-run state" in statuses["n0"].reason


# ---------------------------------------------------------------------- reprieve


def _reprieve_case(topology_aware: bool, expected: list[str]) -> Case:
    """v1 (1 CPU, low job) goes first, then v2 (3 CPU, mid job); the 3-CPU preemptor needs
    both gone to fit the queue's deserved 4 CPU. The dry run then gives v1 back: with v2
    gone alone the preemptor fits. The normal mode keeps both evictions."""
    return Case(
        name="reprieve",
        plugins=TIER,
        configurations={"preempt": {"enableTopologyAwarePreemption": topology_aware}},
        priority_classes=PRIORITY_CLASSES,
        pod_groups=[
            build_pod_group(
                "low", "c1", "q1", 0, {}, "Running", priority_class_name="low-priority"
            ),
            build_pod_group(
                "mid", "c1", "q1", 0, {}, "Running", priority_class_name="mid-priority"
            ),
            build_pod_group(
                "high", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
            ),
        ],
        pods=[
            build_pod("c1", "v1", "n1", "Running", rl("1", "1G"), "low", {PREEMPTABLE: "true"}),
            build_pod("c1", "v2", "n1", "Running", rl("3", "3G"), "mid", {PREEMPTABLE: "true"}),
            build_pod("c1", "preemptor", "", "Pending", rl("3", "3G"), "high"),
        ],
        nodes=[build_node("n1", rl("4", "4G", pods="10"))],
        queues=[build_queue("q1", 1)],
        expect_evicted=expected,
        expect_evict_num=len(expected),
        expect_pipelined={"c1/high": ["n1"]},
    )


def test_topology_aware_mode_reprieves_victims_it_can_do_without() -> None:
    case = _reprieve_case(True, ["c1/v2"])
    check(case, run_case(case, ["preempt"]))


def test_normal_mode_keeps_every_eviction_on_the_way() -> None:
    case = _reprieve_case(False, ["c1/v1", "c1/v2"])
    check(case, run_case(case, ["preempt"]))


def test_topology_aware_mode_picks_the_cheapest_node() -> None:
    """n1 would cost a mid-priority victim, n2 a low-priority one (the pods' own
    ``spec.priority``, which the candidate rules read, not the job's). With at least two
    candidates asked for, both are dry-run whichever node the random offset starts on, and n2
    wins (rule 1). With the default count of one, the offset alone would decide."""
    pods = [
        build_pod(
            "c1", "mid1", "n1", "Running", rl("2", "2G"), "mid", {PREEMPTABLE: "true"}, priority=50
        ),
        build_pod(
            "c1", "low1", "n2", "Running", rl("2", "2G"), "low", {PREEMPTABLE: "true"}, priority=10
        ),
        build_pod("c1", "preemptor", "", "Pending", rl("2", "2G"), "high"),
    ]
    for seed in range(6):
        case = Case(
            name="cheapest node",
            plugins=TIER,
            configurations={
                "preempt": {
                    "enableTopologyAwarePreemption": True,
                    "minCandidateNodesAbsolute": 2,
                }
            },
            priority_classes=PRIORITY_CLASSES,
            pod_groups=[
                build_pod_group(
                    "low", "c1", "q1", 0, {}, "Running", priority_class_name="low-priority"
                ),
                build_pod_group(
                    "mid", "c1", "q1", 0, {}, "Running", priority_class_name="mid-priority"
                ),
                build_pod_group(
                    "high", "c1", "q1", 1, {"": 1}, "Inqueue", priority_class_name="high-priority"
                ),
            ],
            pods=pods,
            nodes=[
                build_node("n1", rl("2", "2G", pods="10")),
                build_node("n2", rl("2", "2G", pods="10")),
            ],
            queues=[build_queue("q1", 1)],
            expect_evicted=["c1/low1"],
            expect_evict_num=1,
            expect_pipelined={"c1/high": ["n2"]},
            seed=seed,
        )
        check(case, run_case(case, ["preempt"]))
