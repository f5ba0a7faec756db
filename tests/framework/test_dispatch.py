"""How the session combines the plugins' answers (``framework/session_plugins.go``, spec §2.8).

The hook table (``framework/hooks.py``) is the contract: every hook has an ``add_*_fn``, a gate
flag in upstream spelling and one combination rule. Each rule is checked here with fake plugins
registering lambdas across two tiers, with their flags on and off.

Upstream cases transcribed:

* ``session_plugins_test.go``: ``TestUnifiedEvictable_TierWalkAndIntersection``,
  ``_AbstainSkipped``, ``_EmptyCandidatesBlocksTier``, ``_NoPluginsReturnsNil``,
  ``_ContextPassedThrough`` -- on Preemptable/Reclaimable, which share UnifiedEvictable's
  intersection rule (UnifiedEvictable itself: ``test_session_unified_evictable.py``).
* ``session_plugins_victim_order_test.go``:
  ``TestBuildVictimsPriorityQueueJobTieBreaksWithTaskOrder`` ("preemptor job found",
  "preemptor job missing").
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.framework.fake_plugins import (
    PluginSpec,
    cache_of,
    open_fake_session,
    plugin,
)
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode, ValidateResult, Vote
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.hooks import HOOKS, Combine, NodeMask
from volcano_py.framework.session import Session, open_session, victims_queue
from volcano_py.plugins import priority

# The contract, as spec §2.8 states it: hook -> (gate flag, combination rule).
EXPECTED_TABLE: dict[str, tuple[str | tuple[str, ...] | None, Combine]] = {
    "job_order": ("enableJobOrder", Combine.FIRST_NONZERO),
    "queue_order": ("enableQueueOrder", Combine.FIRST_NONZERO),
    "victim_queue_order": (None, Combine.FIRST_NONZERO),
    "task_order": ("enableTaskOrder", Combine.FIRST_NONZERO),
    "predicate": ("enablePredicate", Combine.ALL_PASS),
    "predicate_mask": ("enablePredicate", Combine.ALL_PASS),
    "task_predicate": ("enablePredicate", Combine.ALL_PASS),
    "pre_predicate": ("enablePredicate", Combine.ALL_PASS),
    "best_node": ("enableBestNode", Combine.FIRST_ANSWER),
    "node_order": ("enableNodeOrder", Combine.SUM),
    "batch_node_order": ("enableNodeOrder", Combine.SUM),
    "preemptable": ("enablePreemptable", Combine.INTERSECT_PER_TIER),
    "reclaimable": ("enableReclaimable", Combine.INTERSECT_PER_TIER),
    "unified_evictable": (None, Combine.INTERSECT_PER_TIER),
    "simulate_allocatable": ("enabledAllocatable", Combine.ALL_TRUE),
    "simulate_predicate": ("enablePredicate", Combine.ALL_PASS),
    "simulate_add_task": (("enablePreemptable", "enabledAllocatable"), Combine.ALL_PASS),
    "simulate_remove_task": (("enablePreemptable", "enabledAllocatable"), Combine.ALL_PASS),
    "overused": ("enabledOverused", Combine.ANY_TRUE),
    "preemptive": ("enablePreemptive", Combine.ALL_TRUE),
    "allocatable": ("enabledAllocatable", Combine.ALL_TRUE),
    "job_ready": ("enableJobReady", Combine.ALL_TRUE),
    "job_pipelined": ("enableJobPipelined", Combine.VOTE),
    "job_enqueueable": ("enableJobEnqueued", Combine.VOTE),
    "job_enqueued": ("enableJobEnqueued", Combine.CALL_ALL),
    "job_valid": (None, Combine.ALL_PASS),
    "job_starving": ("enableJobStarving", Combine.FIRST_TIER_AND),
    "target_job": ("enableTargetJob", Combine.FIRST_ANSWER),
    "reserved_nodes": ("enableReservedNodes", Combine.CALL_ALL),
    "victim_tasks": ("enabledVictim", Combine.UNION_FIRST_TIER),
    # Spec §2.8: SubJobReadyFn all true, SubJobPipelinedFn votes, SubJobOrderFn first non-zero.
    "sub_job_ready": ("enabledSubJobReady", Combine.ALL_TRUE),
    "sub_job_pipelined": ("enabledSubJobPipelined", Combine.VOTE),
    "sub_job_order": ("enabledSubJobOrder", Combine.FIRST_NONZERO),
    "hyper_node_order": ("enabledHyperNodeOrder", Combine.SUM),
    "hyper_node_gradient_for_job": ("enabledHyperNodeGradient", Combine.FIRST_ANSWER),
    "hyper_node_gradient_for_sub_job": ("enabledHyperNodeGradient", Combine.FIRST_ANSWER),
}


def task(name: str, namespace: str = "ns", group: str = "pg", **kwargs: Any) -> TaskInfo:
    pod = build_pod(namespace, name, "", "Pending", resource_list("1", "1G"), group, **kwargs)
    return TaskInfo.from_pod(pod)


def job(uid: str, created: str = "") -> JobInfo:
    return JobInfo(uid=uid, creation_timestamp=created)


def queue(name: str, created: str = "") -> QueueInfo:
    return QueueInfo(uid=name, name=name, creation_timestamp=created)


def session(*tiers: list[PluginSpec]) -> Session:
    return open_fake_session(list(tiers))


def names(tasks: list[TaskInfo]) -> list[str]:
    return [t.name for t in tasks]


# ---------------------------------------------------------------------------- the contract


def test_hook_table_is_the_spec_table():
    assert {name: (spec.flag, spec.combine) for name, spec in HOOKS.items()} == EXPECTED_TABLE


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_every_hook_has_an_add_method_that_registers_it(hook):
    ssn = session([plugin("p", *flags_of(hook))])
    assert not ssn.has_hook(hook)
    getattr(ssn, f"add_{hook}_fn")("p", lambda *args: None)
    assert ssn.has_hook(hook)
    others = [name for name in HOOKS if name != hook and ssn.has_hook(name)]
    assert others == []


@pytest.mark.parametrize("hook", sorted(HOOKS))
def test_gate_flag_decides_registration(hook):
    own = flags_of(hook)
    every_other_flag = {f for name in HOOKS for f in flags_of(name)} - set(own)
    off = session([PluginSpec("p", tuple(sorted(every_other_flag)), {hook: lambda *a: None})])
    assert off.has_hook(hook) is (not own)  # an ungated hook (job_valid, ...) is always on
    # Any one of a hook's flags turns it on (the simulate task hooks have two).
    for flag in own or ((),):
        on = session([PluginSpec("p", (flag,) if flag else (), {hook: lambda *a: None})])
        assert on.has_hook(hook)


def flags_of(hook: str) -> tuple[str, ...]:
    flag = HOOKS[hook].flag
    return () if flag is None else (flag,) if isinstance(flag, str) else flag


def test_plugin_not_in_tiers_registers_in_last_tier_enabled():
    ssn = session([plugin("a", "enableJobReady")], [plugin("b", "enableJobReady")])
    calls: list[str] = []
    ssn.add_job_ready_fn("a", lambda j: calls.append("a") or True)
    ssn.add_job_ready_fn("stranger", lambda j: calls.append("stranger") or True)
    ssn.add_job_ready_fn("b", lambda j: calls.append("b") or True)
    assert ssn.job_ready(job("j"))
    assert calls == ["a", "stranger", "b"]


def test_session_without_tiers_ignores_registrations():
    ssn = session()
    ssn.add_job_valid_fn("x", lambda j: ValidateResult(False, "r", "m"))
    assert not ssn.has_hook("job_valid")
    assert ssn.job_valid(job("j")) is None


def test_plugins_register_in_listed_order_within_a_tier():
    ssn = session(
        [
            plugin("second", "enableJobOrder", job_order=lambda left, right: 1),
            plugin("first", "enableJobOrder", job_order=lambda left, right: -1),
        ]
    )
    assert ssn.job_compare(job("a"), job("b")) == 1


def test_open_session_builds_each_plugin_with_its_arguments():
    seen: dict[str, dict[str, Any]] = {}

    class Recorder:
        def __init__(self, name: str, arguments: Any) -> None:
            self.name = name
            seen[name] = dict(arguments)

        def on_session_open(self, ssn: Session) -> None:
            return None

        def on_session_close(self, ssn: Session) -> None:
            return None

    conf = SchedulerConf(
        actions=[],
        tiers=[
            Tier([PluginOption.with_flags("a", arguments={"x": 1})]),
            Tier([PluginOption.with_flags("b"), PluginOption.with_flags("missing")]),
        ],
    )
    builders = {"a": lambda args: Recorder("a", args), "b": lambda args: Recorder("b", args)}
    from volcano_py.cache.cache import SchedulerCache

    ssn = open_session(SchedulerCache().snapshot(), conf, builders, SchedulerCache())
    assert seen == {"a": {"x": 1}, "b": {}}
    assert list(ssn.plugins) == ["a", "b"]


# ---------------------------------------------------------------------------- first non-zero


def test_job_order_first_nonzero_across_tiers_with_flags():
    calls: list[str] = []

    def answer(name: str, value: int):
        def fn(left: JobInfo, right: JobInfo) -> int:
            calls.append(name)
            return value

        return fn

    ssn = session(
        [
            plugin("zero", "enableJobOrder", job_order=answer("zero", 0)),
            plugin("disabled", "enableJobReady", job_order=answer("disabled", -1)),
        ],
        [
            plugin("later", "enableJobOrder", job_order=answer("later", 1)),
            plugin("never", "enableJobOrder", job_order=answer("never", -1)),
        ],
    )
    left, right = job("a", "2024-01-01T00:00:00Z"), job("b", "2024-01-02T00:00:00Z")
    assert ssn.job_compare(left, right) == 1
    assert ssn.job_order_fn(left, right) is False
    assert calls == ["zero", "later", "zero", "later"]


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    [
        (("b", "2024-01-01T00:00:00Z"), ("a", "2024-01-02T00:00:00Z"), True),
        (("b", "2024-01-02T00:00:00Z"), ("a", "2024-01-01T00:00:00Z"), False),
        (("a", "2024-01-01T00:00:00Z"), ("b", "2024-01-01T00:00:00Z"), True),
        (("b", "2024-01-01T00:00:00Z"), ("a", "2024-01-01T00:00:00Z"), False),
    ],
    ids=["earlier-first", "later-second", "same-time-smaller-uid", "same-time-larger-uid"],
)
def test_job_order_fallback_creation_then_uid(left, right, expected):
    ssn = session([plugin("zero", "enableJobOrder", job_order=lambda a, b: 0)])
    assert ssn.job_compare(job(*left), job(*right)) == 0
    assert ssn.job_order_fn(job(*left), job(*right)) is expected


def test_queue_order_first_nonzero_and_fallback():
    ssn = session(
        [plugin("off", queue_order=lambda a, b: -1)],
        [plugin("on", "enableQueueOrder", queue_order=lambda a, b: 1 if a.name == "x" else 0)],
    )
    assert ssn.queue_order_fn(queue("x"), queue("a")) is False
    # "on" abstains (0) for these: creation time, then name
    assert ssn.queue_order_fn(
        queue("b", "2024-01-01T00:00:00Z"), queue("a", "2024-02-01T00:00:00Z")
    )
    assert ssn.queue_order_fn(queue("a"), queue("b"))
    assert not ssn.queue_order_fn(queue("b"), queue("a"))


def test_victim_queue_order_has_no_gate_and_falls_back_to_reverse_queue_order():
    preemptor = queue("p")
    calls: list[str] = []

    def victim_order(left: QueueInfo, right: QueueInfo, by: QueueInfo) -> int:
        calls.append(by.name)
        return -1 if left.name == "first" else 0

    ssn = session([], [plugin("any", victim_queue_order=victim_order)])
    assert ssn.victim_queue_order_fn(queue("first"), queue("a"), preemptor) is True
    assert calls == ["p"]
    # 0 -> not QueueOrderFn(l, r): the queue scheduled later is the victim first.
    assert ssn.victim_queue_order_fn(queue("b"), queue("a"), preemptor) is True
    assert ssn.victim_queue_order_fn(queue("a"), queue("b"), preemptor) is False


def test_task_order_first_nonzero_and_compare_task_fallback():
    ssn = session(
        [plugin("off", "enableJobOrder", task_order=lambda a, b: -1)],
        [plugin("zero", "enableTaskOrder", task_order=lambda a, b: 0)],
    )
    assert ssn.task_compare(task("x"), task("y")) == 0
    # pod index of controller-made names (>= 3 dash tokens): 2 before 10
    assert ssn.task_order_fn(task("job-w-2"), task("job-w-10"))
    assert not ssn.task_order_fn(task("job-w-10"), task("job-w-2"))
    # not an index: creation time, then UID
    early = task("x-b", creation_timestamp="2024-01-01T00:00:00Z")
    late = task("x-a", creation_timestamp="2024-01-02T00:00:00Z")
    assert ssn.task_order_fn(early, late)
    assert ssn.task_order_fn(task("a"), task("b"))
    ssn.add_task_order_fn("zero", lambda a, b: 5)
    assert ssn.task_compare(task("a"), task("b")) == 5
    assert ssn.task_order_fn(task("a"), task("b")) is False


# ---------------------------------------------------------------------------- all pass


def test_predicate_all_pass_first_failure_returned():
    calls: list[str] = []
    unschedulable = Status(StatusCode.UNSCHEDULABLE, "tier 2 says no", "p2")

    def passing(name: str):
        def fn(t: TaskInfo, n: Any) -> Status | None:
            calls.append(name)
            return None if name != "ok-status" else Status(StatusCode.SUCCESS, "")

        return fn

    def failing(name: str, status: Status):
        def fn(t: TaskInfo, n: Any) -> Status:
            calls.append(name)
            return status

        return fn

    snapshot = cache_of([("Node", build_node("n1", resource_list("4", "4G")))]).snapshot()
    tiers = [
        [
            plugin("p0", "enablePredicate", predicate=passing("p0")),
            plugin("ok", "enablePredicate", predicate=passing("ok-status")),
            PluginSpec(
                "off",
                ("enableNodeOrder",),
                {"predicate": failing("off", Status(StatusCode.ERROR, "ignored"))},
            ),
        ],
        [
            plugin("p2", "enablePredicate", predicate=failing("p2", unschedulable)),
            plugin(
                "p3",
                "enablePredicate",
                predicate=failing("p3", Status(StatusCode.ERROR, "never")),
            ),
        ],
    ]
    ssn = open_fake_session(tiers, snapshot)
    node = ssn.nodes["n1"]
    assert ssn.predicate_fn(task("t"), node) == (unschedulable,)
    assert calls == ["p0", "ok-status", "p2"]


def test_predicate_passes_with_no_plugins_or_all_passing():
    snapshot = cache_of([("Node", build_node("n1", resource_list("4", "4G")))]).snapshot()
    ssn = open_fake_session(
        [[plugin("p", "enablePredicate", predicate=lambda t, n: None)]], snapshot
    )
    assert ssn.predicate_fn(task("t"), ssn.nodes["n1"]) == ()
    empty = open_fake_session([], snapshot)
    assert empty.predicate_fn(task("t"), empty.nodes["n1"]) == ()


def test_predicate_masks_and_task_predicates_join_the_all_pass_rule():
    snapshot = cache_of(
        [
            ("Node", build_node("n1", resource_list("4", "4G"))),
            ("Node", build_node("n2", resource_list("4", "4G"))),
        ]
    ).snapshot()
    masked = Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, "masked out")
    per_node = Status(StatusCode.UNSCHEDULABLE, "per-node says no")

    def mask(t: TaskInfo) -> NodeMask:
        return NodeMask(np.array([False, True]), lambda row: masked)

    def task_predicate(t: TaskInfo) -> Any:
        if t.name == "free":
            return None
        return lambda t, n: per_node if n.name == "n2" else None

    tiers = [
        [plugin("mask", "enablePredicate", predicate_mask=mask)],
        [plugin("tp", "enablePredicate", task_predicate=task_predicate)],
        [
            PluginSpec(
                "off", (), {"predicate_mask": lambda t: NodeMask(np.array([False] * 2), None)}
            )
        ],
    ]
    ssn = open_fake_session(tiers, snapshot)
    n1, n2 = ssn.nodes["n1"], ssn.nodes["n2"]
    assert ssn.predicate_fn(task("bound"), n1) == (masked,)
    assert ssn.predicate_fn(task("bound"), n2) == (per_node,)
    assert ssn.predicate_fn(task("free"), n2) == ()
    assert len(ssn.predicate_masks(task("x"))) == 1
    assert len(ssn.scalar_predicates(task("bound"))) == 1
    assert ssn.scalar_predicates(task("free")) == []


def test_pre_predicate_all_pass():
    first = Status(StatusCode.UNSCHEDULABLE, "first")
    ssn = session(
        [plugin("off", pre_predicate=lambda t: Status(StatusCode.ERROR, "ignored"))],
        [
            plugin("pass", "enablePredicate", pre_predicate=lambda t: None),
            plugin("fail", "enablePredicate", pre_predicate=lambda t: first),
            plugin(
                "late", "enablePredicate", pre_predicate=lambda t: Status(StatusCode.ERROR, "x")
            ),
        ],
    )
    assert ssn.pre_predicate_fn(task("t")) == first
    assert session().pre_predicate_fn(task("t")) is None


def test_job_valid_first_failing_result_no_gate():
    calls: list[str] = []
    invalid = ValidateResult(False, "NotEnoughPods", "2/3")

    def valid(name: str, result: ValidateResult | None):
        def fn(j: JobInfo) -> ValidateResult | None:
            calls.append(name)
            return result

        return fn

    ssn = session(
        [
            plugin("none", job_valid=valid("none", None)),
            plugin("ok", job_valid=valid("ok", ValidateResult(True))),
        ],
        [
            plugin("bad", job_valid=valid("bad", invalid)),
            plugin("later", job_valid=valid("later", ValidateResult(False, "x"))),
        ],
    )
    assert ssn.job_valid(job("j")) is invalid
    assert calls == ["none", "ok", "bad"]
    assert session().job_valid(job("j")) is None


# ---------------------------------------------------------------------------- sum


def test_node_order_sums_enabled_plugins_across_tiers():
    snapshot = cache_of(
        [
            ("Node", build_node("n1", resource_list("4", "4G"))),
            ("Node", build_node("n2", resource_list("4", "4G"))),
        ]
    ).snapshot()
    tiers = [
        [
            plugin("a", "enableNodeOrder", node_order=lambda t, n: 1.5),
            plugin("off", "enablePredicate", node_order=lambda t, n: 100.0),
        ],
        [
            plugin("b", "enableNodeOrder", node_order=lambda t, n: 10.0 if n.name == "n2" else 0.0),
            plugin(
                "batch",
                "enableNodeOrder",
                batch_node_order=lambda t, rows: np.asarray(rows, dtype=float) * 1000,
            ),
            plugin("batch-off", batch_node_order=lambda t, rows: np.full(len(rows), 1e9)),
        ],
    ]
    ssn = open_fake_session(tiers, snapshot)
    assert ssn.node_order_fn(task("t"), ssn.nodes["n1"]) == 1.5
    assert ssn.node_order_fn(task("t"), ssn.nodes["n2"]) == 11.5
    rows = np.array([1, 0])
    assert ssn.node_scores(task("t"), rows).tolist() == [1011.5, 1.5]
    assert open_fake_session([], snapshot).node_scores(task("t"), rows).tolist() == [0.0, 0.0]


# ---------------------------------------------------------------------------- first answer


def test_best_node_first_non_none_answer():
    snapshot = cache_of([("Node", build_node("n1", resource_list("4", "4G")))]).snapshot()
    calls: list[str] = []

    def best(name: str, answer: bool):
        def fn(t: TaskInfo, scores: Any) -> Any:
            calls.append(name)
            return next(iter(scores.values()))[0] if answer else None

        return fn

    tiers = [
        [
            plugin("off", best_node=best("off", True)),
            plugin("none", "enableBestNode", best_node=best("none", False)),
        ],
        [
            plugin("pick", "enableBestNode", best_node=best("pick", True)),
            plugin("later", "enableBestNode", best_node=best("later", True)),
        ],
    ]
    ssn = open_fake_session(tiers, snapshot)
    node = ssn.nodes["n1"]
    assert ssn.best_node_fn(task("t"), {1.0: [node]}) is node
    assert calls == ["none", "pick"]
    assert open_fake_session([], snapshot).best_node_fn(task("t"), {1.0: [node]}) is None


def test_target_job_first_registered_function_decides_even_with_none():
    jobs = [job("a"), job("b")]
    ssn = session(
        [plugin("off", target_job=lambda js: js[0])],
        [
            plugin("first", "enableTargetJob", target_job=lambda js: None),
            plugin("second", "enableTargetJob", target_job=lambda js: js[1]),
        ],
    )
    assert ssn.target_job(jobs) is None
    ssn2 = session([plugin("first", "enableTargetJob", target_job=lambda js: js[1])])
    assert ssn2.target_job(jobs) is jobs[1]
    assert session().target_job(jobs) is None


# ---------------------------------------------------------------------------- voting


def voter(calls: list[str], name: str, vote: Vote):
    def fn(j: JobInfo) -> Vote:
        calls.append(name)
        return vote

    return fn


P, A, R = Vote.PERMIT, Vote.ABSTAIN, Vote.REJECT


@pytest.mark.parametrize("hook", ["job_pipelined", "job_enqueueable"])
@pytest.mark.parametrize(
    ("tier1", "tier2", "expected", "consulted"),
    [
        ((), (), True, []),
        ((A, A), (A,), True, ["t1p0", "t1p1", "t2p0"]),
        ((A, P), (R,), True, ["t1p0", "t1p1"]),
        ((P, A), (R,), True, ["t1p0", "t1p1"]),
        ((A, A), (P, R), False, ["t1p0", "t1p1", "t2p0", "t2p1"]),
        ((A, A), (R, P), False, ["t1p0", "t1p1", "t2p0"]),
        ((P, R), (P,), False, ["t1p0", "t1p1"]),
        ((R, P), (P,), False, ["t1p0"]),
        ((), (P,), True, ["t2p0"]),
        ((A,), (A, P), True, ["t1p0", "t2p0", "t2p1"]),
    ],
    ids=[
        "no-voters",
        "all-abstain",
        "permit-ends-after-tier",
        "permit-then-abstain",
        "tier2-permit-then-reject",
        "tier2-reject-first",
        "reject-in-permitting-tier",
        "reject-stops-at-once",
        "only-tier2",
        "tier2-decides",
    ],
)
def test_vote_rule(hook, tier1, tier2, expected, consulted):
    flag = HOOKS[hook].flag
    calls: list[str] = []
    tiers = [
        [
            plugin(f"t{t}p{i}", flag, **{hook: voter(calls, f"t{t}p{i}", v)})
            for i, v in enumerate(votes)
        ]
        for t, votes in ((1, tier1), (2, tier2))
    ]
    # a rejecting plugin with the flag off never votes
    tiers[0].append(plugin("off", "enableJobReady", **{hook: voter(calls, "off", R)}))
    ssn = open_fake_session(tiers)
    assert getattr(ssn, hook)(job("j")) is expected
    assert calls == consulted


def test_job_enqueueable_is_gated_by_enable_job_enqueued():
    """Pitfall 5: no flag of its own; enableJobEnqueued gates both enqueue hooks."""
    calls: list[str] = []
    ssn = session(
        [
            plugin(
                "p",
                "enableJobEnqueued",
                job_enqueueable=voter(calls, "vote", R),
                job_enqueued=lambda j: calls.append("enqueued"),
            )
        ]
    )
    assert ssn.job_enqueueable(job("j")) is False
    ssn.job_enqueued(job("j"))
    assert calls == ["vote", "enqueued"]
    assert HOOKS["job_enqueueable"].flag == "enableJobEnqueued"


# ---------------------------------------------------------------------------- victims


def evictable(calls: list[str], name: str, answer: list[TaskInfo] | None, code: int = 1):
    def fn(actor: TaskInfo, candidates: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
        calls.append(name)
        return (list(candidates) if answer is None else answer), code

    return fn


TA, TB, TC = task("a"), task("b"), task("c")
CANDIDATES = [TA, TB, TC]


@pytest.mark.parametrize("hook", ["preemptable", "reclaimable"])
def test_intersection_tier_walk_upstream(hook):
    """``TestUnifiedEvictable_TierWalkAndIntersection``: {a,b} and {b,c} give {b}."""
    flag = HOOKS[hook].flag
    calls: list[str] = []
    ssn = session(
        [
            plugin("p1", flag, **{hook: evictable(calls, "p1", [TA, TB])}),
            plugin("p2", flag, **{hook: evictable(calls, "p2", [TB, TC])}),
        ]
    )
    assert names(getattr(ssn, hook)(task("preemptor"), CANDIDATES)) == ["b"]


@pytest.mark.parametrize("hook", ["preemptable", "reclaimable"])
def test_intersection_abstain_skipped_upstream(hook):
    """``TestUnifiedEvictable_AbstainSkipped``: code 0 is ignored, whatever it returns."""
    flag = HOOKS[hook].flag
    calls: list[str] = []
    ssn = session(
        [
            plugin("abstainer", flag, **{hook: evictable(calls, "abstainer", [], code=0)}),
            plugin("permitter", flag, **{hook: evictable(calls, "permitter", [TA])}),
        ]
    )
    assert names(getattr(ssn, hook)(task("x"), [TA])) == ["a"]
    assert calls == ["abstainer", "permitter"]


@pytest.mark.parametrize("hook", ["preemptable", "reclaimable"])
def test_intersection_empty_answer_blocks_only_its_tier_upstream(hook):
    """``TestUnifiedEvictable_EmptyCandidatesBlocksTier``: an empty non-abstaining answer
    leaves the tier undecided (pitfall 4); the next tier starts from scratch."""
    flag = HOOKS[hook].flag
    calls: list[str] = []
    ssn = session(
        [
            plugin("blocker", flag, **{hook: evictable(calls, "blocker", [])}),
            plugin("permitter", flag, **{hook: evictable(calls, "permitter", [TA])}),
        ],
        [plugin("fallback", flag, **{hook: evictable(calls, "fallback", [TA])})],
    )
    assert names(getattr(ssn, hook)(task("x"), [TA])) == ["a"]
    assert calls == ["blocker", "fallback"]


@pytest.mark.parametrize("hook", ["preemptable", "reclaimable"])
def test_intersection_no_plugins_returns_nothing_upstream(hook):
    """``TestUnifiedEvictable_NoPluginsReturnsNil``."""
    ssn = session([plugin("noop")])
    assert getattr(ssn, hook)(task("x"), [TA]) == []


@pytest.mark.parametrize("hook", ["preemptable", "reclaimable"])
def test_intersection_passes_actor_and_candidates_upstream(hook):
    """``TestUnifiedEvictable_ContextPassedThrough`` (the preemptor and candidates)."""
    seen: list[tuple[TaskInfo, list[TaskInfo]]] = []

    def spy(actor: TaskInfo, candidates: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
        seen.append((actor, candidates))
        return candidates, 1

    actor = task("preemptor")
    ssn = session([plugin("spy", HOOKS[hook].flag, **{hook: spy})])
    assert getattr(ssn, hook)(actor, [TA]) == [TA]
    assert seen == [(actor, [TA])]


@pytest.mark.parametrize("hook", ["preemptable", "reclaimable"])
def test_intersection_decided_tier_stops_the_walk_and_keeps_first_order(hook):
    flag = HOOKS[hook].flag
    calls: list[str] = []
    ssn = session(
        [
            plugin("p1", flag, **{hook: evictable(calls, "p1", [TC, TB, TA])}),
            plugin("off", "enableJobReady", **{hook: evictable(calls, "off", [])}),
            plugin("p2", flag, **{hook: evictable(calls, "p2", [TA, TC])}),
        ],
        [plugin("t2", flag, **{hook: evictable(calls, "t2", [TB])})],
    )
    assert names(getattr(ssn, hook)(task("x"), CANDIDATES)) == ["c", "a"]
    assert calls == ["p1", "p2"]


@pytest.mark.parametrize("hook", ["preemptable", "reclaimable"])
def test_intersection_all_abstain_then_next_tier(hook):
    flag = HOOKS[hook].flag
    calls: list[str] = []
    ssn = session(
        [plugin("p1", flag, **{hook: evictable(calls, "p1", [TA], code=0)})],
        [plugin("p2", flag, **{hook: evictable(calls, "p2", [TB])})],
    )
    assert names(getattr(ssn, hook)(task("x"), CANDIDATES)) == ["b"]


@pytest.mark.parametrize("hook", ["preemptable", "reclaimable"])
def test_intersection_empty_in_every_tier_gives_nothing(hook):
    flag = HOOKS[hook].flag
    calls: list[str] = []
    ssn = session(
        [
            plugin("p1", flag, **{hook: evictable(calls, "p1", [TA])}),
            plugin("p2", flag, **{hook: evictable(calls, "p2", [TB])}),
        ],
        [plugin("p3", flag, **{hook: evictable(calls, "p3", [])})],
    )
    assert getattr(ssn, hook)(task("x"), CANDIDATES) == []
    assert calls == ["p1", "p2", "p3"]


@pytest.mark.parametrize("hook", ["preemptable", "reclaimable"])
def test_intersection_empty_intersection_restarts_within_tier(hook):
    flag = HOOKS[hook].flag
    calls: list[str] = []
    ssn = session(
        [
            plugin("p1", flag, **{hook: evictable(calls, "p1", [TA])}),
            plugin("p2", flag, **{hook: evictable(calls, "p2", [TB])}),
            plugin("p3", flag, **{hook: evictable(calls, "p3", [TC])}),
        ]
    )
    assert names(getattr(ssn, hook)(task("x"), CANDIDATES)) == ["c"]


def test_victim_tasks_union_within_first_non_empty_tier():
    calls: list[str] = []

    def victims(name: str, answer: list[TaskInfo]):
        def fn(tasks: list[TaskInfo]) -> list[TaskInfo]:
            calls.append(name)
            return answer

        return fn

    ssn = session(
        [plugin("empty", "enabledVictim", victim_tasks=victims("empty", []))],
        [
            plugin("x", "enabledVictim", victim_tasks=victims("x", [TA, TB])),
            plugin("off", "enableJobReady", victim_tasks=victims("off", [TC])),
            plugin("y", "enabledVictim", victim_tasks=victims("y", [TB, TC])),
        ],
        [plugin("later", "enabledVictim", victim_tasks=victims("later", [task("z")]))],
    )
    assert sorted(names(ssn.victim_tasks(CANDIDATES))) == ["a", "b", "c"]
    assert calls == ["empty", "x", "y"]
    assert session().victim_tasks(CANDIDATES) == []


# ---------------------------------------------------------------------------- booleans


def test_overused_any_true():
    ssn = session(
        [
            plugin("no", "enabledOverused", overused=lambda q: False),
            plugin("off", overused=lambda q: True),
        ],
        [plugin("yes", "enabledOverused", overused=lambda q: True)],
    )
    assert ssn.overused(queue("q")) is True
    quiet = session(
        [
            plugin("no", "enabledOverused", overused=lambda q: False),
            plugin("off", overused=lambda q: True),
        ]
    )
    assert quiet.overused(queue("q")) is False
    assert session().overused(queue("q")) is False


@pytest.mark.parametrize(
    ("hook", "call"),
    [
        ("preemptive", lambda ssn: ssn.preemptive(queue("q"), [TA])),
        ("allocatable", lambda ssn: ssn.allocatable(queue("q"), TA)),
        ("job_ready", lambda ssn: ssn.job_ready(job("j"))),
    ],
)
def test_all_true_rules(hook, call):
    flag = HOOKS[hook].flag
    calls: list[str] = []

    def answer(name: str, value: bool):
        def fn(*args: Any) -> bool:
            calls.append(name)
            return value

        return fn

    assert call(session()) is True
    agreeing = session(
        [
            plugin("t", flag, **{hook: answer("t", True)}),
            plugin("off", **{hook: answer("off", False)}),
        ],
        [plugin("t2", flag, **{hook: answer("t2", True)})],
    )
    assert call(agreeing) is True
    assert calls == ["t", "t2"]
    calls.clear()
    vetoed = session(
        [plugin("t", flag, **{hook: answer("t", True)})],
        [
            plugin("f", flag, **{hook: answer("f", False)}),
            plugin("t3", flag, **{hook: answer("t3", True)}),
        ],
    )
    assert call(vetoed) is False
    assert calls == ["t", "f"]


@pytest.mark.parametrize(
    ("tier1", "tier2", "expected", "consulted"),
    [
        ((), (), False, []),
        ((True,), (False,), True, ["t1p0"]),
        ((True, False), (True,), False, ["t1p0", "t1p1"]),
        ((False, True), (True,), False, ["t1p0"]),
        ((), (True,), True, ["t2p0"]),
        ((), (True, False), False, ["t2p0", "t2p1"]),
    ],
    ids=["none", "tier1-decides", "tier1-and-false", "short-circuit", "tier2", "tier2-and"],
)
def test_job_starving_first_tier_with_functions_decides(tier1, tier2, expected, consulted):
    calls: list[str] = []

    def starving(name: str, value: bool):
        def fn(j: JobInfo) -> bool:
            calls.append(name)
            return value

        return fn

    tiers = [
        [
            plugin(f"t{t}p{i}", "enableJobStarving", job_starving=starving(f"t{t}p{i}", v))
            for i, v in enumerate(values)
        ]
        for t, values in ((1, tier1), (2, tier2))
    ]
    # A function whose flag is off does not make its tier "have" one.
    tiers[0].append(plugin("off", "enableJobReady", job_starving=starving("off", True)))
    ssn = open_fake_session(tiers)
    assert ssn.job_starving(job("j")) is expected
    assert calls == consulted


# ---------------------------------------------------------------------------- call all


def test_job_enqueued_and_reserved_nodes_call_every_enabled_function_in_order():
    calls: list[str] = []
    ssn = session(
        [
            plugin(
                "a",
                "enableJobEnqueued",
                "enableReservedNodes",
                job_enqueued=lambda j: calls.append("a"),
                reserved_nodes=lambda: calls.append("ra"),
            ),
            plugin(
                "off",
                job_enqueued=lambda j: calls.append("off"),
                reserved_nodes=lambda: calls.append("roff"),
            ),
        ],
        [
            plugin(
                "b",
                "enableJobEnqueued",
                "enableReservedNodes",
                job_enqueued=lambda j: calls.append("b"),
                reserved_nodes=lambda: calls.append("rb"),
            )
        ],
    )
    ssn.job_enqueued(job("j"))
    ssn.reserved_nodes()
    assert calls == ["a", "b", "ra", "rb"]


# ---------------------------------------------------------------------------- victims queue


def victim_order_objects(with_preemptor: bool) -> list[tuple[str, dict[str, Any]]]:
    """The fixtures of ``TestBuildVictimsPriorityQueueJobTieBreaksWithTaskOrder``."""
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Queue", build_queue("q1")),
        ("Node", build_node("n1", resource_list("10", "10Gi", pods="20"))),
        (
            "PodGroup",
            build_pod_group(
                "pg-high",
                "ns1",
                "q1",
                1,
                phase="Running",
                creation_timestamp="1970-01-01T00:00:20Z",
            ),
        ),
        (
            "PodGroup",
            build_pod_group(
                "pg-low", "ns1", "q1", 1, phase="Running", creation_timestamp="1970-01-01T00:00:10Z"
            ),
        ),
        (
            "Pod",
            build_pod(
                "ns1", "p-high", "n1", "Running", resource_list("1", "1Gi"), "pg-high", priority=100
            ),
        ),
        (
            "Pod",
            build_pod(
                "ns1", "p-low", "n1", "Running", resource_list("1", "1Gi"), "pg-low", priority=1
            ),
        ),
    ]
    if with_preemptor:
        objects += [
            ("PodGroup", build_pod_group("pg-preemptor", "ns1", "q1", 1, phase="Pending")),
            (
                "Pod",
                build_pod(
                    "ns1",
                    "p-preemptor",
                    "",
                    "Pending",
                    resource_list("1", "1Gi"),
                    "pg-preemptor",
                    priority=100,
                ),
            ),
        ]
    return objects


def priority_session(objects: list[tuple[str, dict[str, Any]]]) -> Session:
    conf = SchedulerConf(
        actions=[],
        tiers=[Tier([PluginOption.with_flags("priority", "enableJobOrder", "enableTaskOrder")])],
    )
    cache = cache_of(objects)
    return open_session(cache.snapshot(), conf, {"priority": priority.new}, cache)


def find_task(ssn: Session, name: str) -> TaskInfo:
    return next(t for j in ssn.jobs.values() for t in j.tasks.values() if t.name == name)


@pytest.mark.parametrize(
    "with_preemptor", [True, False], ids=["preemptor job found", "preemptor job missing"]
)
def test_victims_queue_job_tie_breaks_with_task_order_upstream(with_preemptor):
    ssn = priority_session(victim_order_objects(with_preemptor))
    high, low = find_task(ssn, "p-high"), find_task(ssn, "p-low")
    assert ssn.job_compare(ssn.jobs[high.job], ssn.jobs[low.job]) == 0
    preemptor = find_task(ssn, "p-preemptor") if with_preemptor else task("x", group="missing")
    queue_ = victims_queue(ssn, [high, low], preemptor)
    assert queue_.pop().name == "p-low"


def test_victims_queue_orders_jobs_tasks_queues_and_orphans():
    ssn = session(
        [
            plugin(
                "order",
                "enableJobOrder",
                "enableTaskOrder",
                job_order=lambda a, b: (a.priority < b.priority) - (a.priority > b.priority),
                task_order=lambda a, b: (a.priority < b.priority) - (a.priority > b.priority),
            )
        ]
    )
    ssn.queues = {
        "qa": queue("qa", "2024-01-01T00:00:00Z"),
        "qb": queue("qb", "2024-01-02T00:00:00Z"),
    }
    jobs = {
        "ns/hi": JobInfo(uid="ns/hi", queue="qa", priority=10),
        "ns/lo": JobInfo(uid="ns/lo", queue="qa", priority=1),
        "ns/other": JobInfo(uid="ns/other", queue="qb", priority=100),
        "ns/me": JobInfo(uid="ns/me", queue="qa", priority=50),
    }
    ssn.jobs = jobs
    hi1, hi2 = task("hi1", group="hi", priority=5), task("hi2", group="hi", priority=1)
    lo = task("lo", group="lo")
    other = task("other", group="other")
    orphan = task("orphan", group="gone")
    preemptor = task("me", group="me")
    # same queue: the lower-priority job first; inside a job the lower-priority task first;
    # an orphan (job gone) before everyone; across queues the queue scheduled last first.
    queue_ = victims_queue(ssn, [hi1, lo, hi2, other, orphan], preemptor)
    order = [queue_.pop().name for _ in range(len(queue_))]
    assert order == ["orphan", "other", "lo", "hi2", "hi1"]
