"""``Session.unified_evictable``: how the plugins' UnifiedEvictableFns combine for gangpreempt
and gangreclaim (``framework/session_plugins.go`` ``UnifiedEvictable``).

Upstream ``session_plugins_test.go`` transcribed: ``TestUnifiedEvictable_TierWalkAndIntersection``,
``_AbstainSkipped``, ``_EmptyCandidatesBlocksTier``, ``_NoPluginsReturnsNil`` and
``_ContextPassedThrough``. (``test_dispatch.py`` checks the same rule on Preemptable and
Reclaimable, which share it.) UnifiedEvictableFn has no enable flag upstream: the fake plugins
here turn none on.
"""

from __future__ import annotations

from collections.abc import Callable

from tests.builders import build_pod
from tests.framework.fake_plugins import PluginSpec, open_fake_session, plugin
from volcano_py.api.job import JobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.framework.hooks import EvictionContext, EvictionKind
from volcano_py.framework.session import Session

Fn = Callable[[EvictionContext, list[TaskInfo]], tuple[list[TaskInfo], int]]


def task(uid: str) -> TaskInfo:
    built = TaskInfo.from_pod(build_pod("ns", uid, "", "Pending", {"cpu": "1"}, ""))
    built.uid = uid
    return built


TA, TB, TC = task("a"), task("b"), task("c")


def answer(tasks: list[TaskInfo], code: int = 1, calls: list[str] | None = None) -> Fn:
    def fn(context: EvictionContext, candidates: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
        if calls is not None:
            calls.append(",".join(t.uid for t in tasks) or "-")
        return list(tasks), code

    return fn


def session(*tiers: list[PluginSpec]) -> Session:
    return open_fake_session(list(tiers))


def context(kind: EvictionKind = EvictionKind.GANG_PREEMPT) -> EvictionContext:
    return EvictionContext(kind, JobInfo(uid="job"), "")


def uids(tasks: list[TaskInfo]) -> list[str]:
    return [t.uid for t in tasks]


def test_unified_evictable_tier_walk_and_intersection_upstream() -> None:
    """``TestUnifiedEvictable_TierWalkAndIntersection``: {a, b} and {b, c} give {b}."""
    ssn = session(
        [
            plugin("p1", unified_evictable=answer([TA, TB])),
            plugin("p2", unified_evictable=answer([TB, TC])),
        ]
    )
    assert uids(ssn.unified_evictable(context(), [TA, TB, TC])) == ["b"]


def test_unified_evictable_abstain_skipped_upstream() -> None:
    """``TestUnifiedEvictable_AbstainSkipped``: a plugin answering code 0 is ignored."""
    ssn = session(
        [
            plugin("abstainer", unified_evictable=answer([], code=0)),
            plugin("permitter", unified_evictable=answer([TA])),
        ]
    )
    assert uids(ssn.unified_evictable(context(), [TA])) == ["a"]


def test_unified_evictable_empty_candidates_blocks_tier_upstream() -> None:
    """``TestUnifiedEvictable_EmptyCandidatesBlocksTier``: an empty non-abstaining answer ends
    tier 0 undecided (the permitter after it is not asked); tier 1's fallback decides."""
    calls: list[str] = []
    ssn = session(
        [
            plugin("blocker", unified_evictable=answer([], calls=calls)),
            plugin("permitter", unified_evictable=answer([TA], calls=calls)),
        ],
        [plugin("fallback", unified_evictable=answer([TA], calls=calls))],
    )
    assert uids(ssn.unified_evictable(context(EvictionKind.GANG_RECLAIM), [TA])) == ["a"]
    assert calls == ["-", "a"]


def test_unified_evictable_no_plugins_returns_nil_upstream() -> None:
    """``TestUnifiedEvictable_NoPluginsReturnsNil``: a tier whose plugin registers nothing."""
    ssn = session([plugin("noop")])
    assert ssn.unified_evictable(context(), [TA]) == []


def test_unified_evictable_context_passed_through_upstream() -> None:
    """``TestUnifiedEvictable_ContextPassedThrough``: kind, job and HyperNode reach the
    plugin as given."""
    received: list[EvictionContext] = []

    def spy(ctx: EvictionContext, candidates: list[TaskInfo]) -> tuple[list[TaskInfo], int]:
        received.append(ctx)
        return candidates, 1

    ssn = session([plugin("spy", unified_evictable=spy)])
    job = JobInfo(uid="job1", priority=42)
    ssn.unified_evictable(EvictionContext(EvictionKind.GANG_RECLAIM, job, "hn1"), [TA])
    assert len(received) == 1
    assert received[0].kind is EvictionKind.GANG_RECLAIM
    assert received[0].job.uid == "job1"
    assert received[0].hyper_node == "hn1"


def test_unified_evictable_needs_no_enable_flag() -> None:
    """Upstream registers and calls UnifiedEvictableFns without a flag: a plugin with only an
    unrelated flag on (preemptable and reclaimable off) still votes."""
    ssn = session([plugin("p", "enableJobOrder", unified_evictable=answer([TB]))])
    assert uids(ssn.unified_evictable(context(), [TA, TB])) == ["b"]
