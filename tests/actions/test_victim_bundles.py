"""Victim bundles of gangpreempt / gangreclaim (``actions/victim_bundles.py``).

Upstream ``pkg/scheduler/actions/utils/bundle_test.go`` transcribed case by case. Jobs with
running tasks come from a real cache snapshot (PodGroup + pods through the builders); the
ordering tests hand-build their bundles, as upstream does.

The sub-job cases build their sub-jobs from a ``subGroupPolicy`` per upstream sub-job group
(``subGroupSize`` = upstream's sub-job ``MinAvailable``, ``minSubGroups`` = its ``MinSubJobs``),
the pods labelled with their sub-job.

Not transcribed (listed in ``NOT_PORTED``, each a skipped test naming it):

* ``TestSelectBundles_RespectsAllowWhole``: ``SelectBundles`` is not called anywhere upstream
  and has no counterpart here; the ``allowWholeBundle`` filter it also applies is transcribed
  with the actions (``TestSelectDomainVictims_RespectAllowWholeBundle``).
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_queue,
    build_sub_group_policy,
)
from tests.builders import resource_list as rl
from volcano_py.actions.victim_bundles import (
    Bundle,
    BundleType,
    create_job_bundles,
    keep_allowed,
    return_on_investment,
    sort_for_preempt,
    sort_for_reclaim,
)
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TASK_SPEC_KEY
from volcano_py.cache.cache import SchedulerCache

NOT_PORTED = {
    "TestSelectBundles_RespectsAllowWhole": (
        "SelectBundles is dead code upstream (no caller) and is not ported; the allowWholeBundle "
        "filter is covered by TestSelectDomainVictims_RespectAllowWholeBundle"
    ),
}


@pytest.mark.parametrize("upstream", sorted(NOT_PORTED))
def test_not_ported_upstream(upstream: str) -> None:
    pytest.skip(f"upstream {upstream}: {NOT_PORTED[upstream]}")


# ---------------------------------------------------------------------------- helpers


def running_job(
    min_member: int,
    roles: list[str],
    min_task_member: dict[str, int] | None = None,
) -> tuple[JobInfo, list[TaskInfo]]:
    """A job ``ns/job`` whose i-th Running pod (1 CPU, priority i, role ``roles[i]``) is named
    by the i-th letter, from a cache snapshot; its tasks in that order."""
    cache = SchedulerCache()
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", build_node("n1", rl("16", "16Gi", pods="100"))),
        ("Queue", build_queue("q1")),
        ("PodGroup", build_pod_group("job", "ns", "q1", min_member, min_task_member, "Running")),
    ]
    names = [chr(ord("a") + i) for i in range(len(roles))]
    for i, (name, role) in enumerate(zip(names, roles, strict=True)):
        pod = build_pod(
            "ns",
            name,
            "n1",
            "Running",
            rl("1", "1Gi"),
            "job",
            annotations={TASK_SPEC_KEY: role},
            priority=i,
        )
        objects.append(("Pod", pod))
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    job = cache.snapshot().jobs["ns/job"]
    return job, [job.tasks[f"ns-{name}"] for name in names]


def sub_grouped_job(
    min_member: int,
    policies: dict[str, tuple[int, int]],
    pods: list[tuple[str, str, int, str, str]],
    min_task_member: dict[str, int] | None = None,
) -> JobInfo:
    """``newJobForSubJobBundling`` + ``newSubJob`` + ``addRunningTaskToSubJob``: policy name ->
    (subGroupSize, minSubGroups); each pod (name, role, priority, policy, sub-job) Running on
    n1, labelled ``<policy>=<sub-job>``."""
    cache = SchedulerCache()
    group = build_pod_group(
        "job",
        "ns",
        "q1",
        min_member,
        min_task_member,
        "Running",
        sub_group_policy=[
            build_sub_group_policy(name, [name], sub_group_size=size, min_sub_groups=minimum)
            for name, (size, minimum) in policies.items()
        ],
    )
    objects: list[tuple[str, dict[str, Any]]] = [
        ("Node", build_node("n1", rl("16", "16Gi", pods="100"))),
        ("Queue", build_queue("q1")),
        ("PodGroup", group),
    ]
    for name, role, priority, policy, sub_job in pods:
        pod = build_pod(
            "ns",
            name,
            "n1",
            "Running",
            rl("1", "1Gi"),
            "job",
            {policy: sub_job},
            annotations={TASK_SPEC_KEY: role},
            priority=priority,
        )
        objects.append(("Pod", pod))
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    return cache.snapshot().jobs["ns/job"]


def split(job: JobInfo, local: list[str]) -> list[tuple[BundleType, list[str]]]:
    bundles = create_job_bundles(job, [job.tasks[f"ns-{name}"] for name in local])
    return [(b.type, sorted(t.name for t in b.tasks)) for b in bundles]


def test_create_job_bundles_sub_job_group_slack_caps_safe_upstream() -> None:
    """``TestCreateJobBundles_SubJobGroupSlackCapsSafe``: three ready sub-jobs, two needed:
    one may break (the lowest-priority task goes safe), the others keep the job whole."""
    pods = [
        (f"t{i}{part}", "worker", 100 + 2 * (i - 1) + (part == "b"), "g", f"sj{i}")
        for i in (1, 2, 3)
        for part in ("a", "b")
    ]
    job = sub_grouped_job(4, {"g": (2, 2)}, pods)
    assert split(job, ["t1a", "t2a", "t3a"]) == [
        (BundleType.SAFE, ["t1a"]),
        (BundleType.WHOLE, ["t2a", "t3a"]),
    ]


def test_create_job_bundles_mixed_legacy_and_sub_job_both_enforced_upstream() -> None:
    """``TestCreateJobBundles_MixedLegacyAndSubJobBothEnforced``: the master (no role minimum)
    goes safe on its group's slack; the worker (role at its minimum) is kept whole."""
    pods = [
        ("m1", "master", 0, "m-g", "sj_m1"),
        ("m2", "master", 10, "m-g", "sj_m2"),
        ("w1a", "worker", 1, "w-g", "sj_w1"),
        ("w2a", "worker", 11, "w-g", "sj_w2"),
        ("w2b", "worker", 12, "w-g", "sj_w2"),
        ("w3a", "worker", 13, "w-g", "sj_w3"),
        ("w3b", "worker", 14, "w-g", "sj_w3"),
    ]
    job = sub_grouped_job(5, {"m-g": (1, 1), "w-g": (2, 2)}, pods, {"worker": 5})
    assert split(job, ["m1", "w1a"]) == [
        (BundleType.SAFE, ["m1"]),
        (BundleType.WHOLE, ["w1a"]),
    ]


def test_create_job_bundles_already_broken_sub_job_is_subject_to_further_eviction_upstream() -> (
    None
):
    """``TestCreateJobBundles_AlreadyBrokenSubJobIsSubjectToFurtherEviction``: sj1 already
    misses a pod, so taking its other one costs nothing; the ready sub-jobs are needed."""
    pods = [
        ("sj1a", "worker", 1, "g", "sj1"),
        ("sj2a", "worker", 2, "g", "sj2"),
        ("sj2b", "worker", 3, "g", "sj2"),
        ("sj3a", "worker", 4, "g", "sj3"),
        ("sj3b", "worker", 5, "g", "sj3"),
    ]
    job = sub_grouped_job(3, {"g": (2, 2)}, pods)
    assert split(job, ["sj1a", "sj2a", "sj3a"]) == [
        (BundleType.SAFE, ["sj1a"]),
        (BundleType.WHOLE, ["sj2a", "sj3a"]),
    ]


def test_create_job_bundles_job_not_ready_short_circuits_all_safe_with_sub_jobs_upstream() -> None:
    """``TestCreateJobBundles_JobNotReadyShortCircuitsAllSafe``, with its sub-job: a job
    below its minimum gives every task safe."""
    pods = [("a", "worker", 0, "g", "sj1"), ("b", "worker", 1, "g", "sj1")]
    job = sub_grouped_job(10, {"g": (3, 2)}, pods)
    assert split(job, ["a", "b"]) == [(BundleType.SAFE, ["a", "b"])]


def cpu(cores: float) -> Resource:
    return Resource(milli_cpu=cores * 1000)


def task(uid: str, cores: float = 1, job: str = "ns/job") -> TaskInfo:
    """A bare task named ``uid`` (upstream's ``&api.TaskInfo{UID: ..., Resreq: ...}``)."""
    group = job.split("/", 1)[1]
    built = TaskInfo.from_pod(build_pod("ns", uid, "", "Pending", {"cpu": str(cores)}, group))
    built.uid = uid
    return built


def bundle(
    kind: BundleType, job: JobInfo, tasks: list[TaskInfo], cost: Resource | None = None
) -> Bundle:
    local = Resource()
    for member in tasks:
        local.add(member.resreq)
    return Bundle(kind, job, tuple(tasks), local, cost if cost is not None else Resource())


def uids(bundles: list[Bundle]) -> list[str]:
    return [b.tasks[0].uid for b in bundles]


def never(_left: Any, _right: Any) -> bool:
    """A victim order that never tells two apart (upstream passes nil)."""
    return False


# ---------------------------------------------------------------------------- CreateJobBundles


def test_create_job_bundles_safe_and_whole_upstream() -> None:
    """``TestCreateJobBundles_SafeAndWhole``: 5 ready workers, minAvailable 3 and worker
    minimum 3: the two lowest-priority tasks are safe, the other three whole."""
    job, tasks = running_job(3, ["worker"] * 5, {"worker": 3})
    bundles = create_job_bundles(job, tasks)
    assert [b.type for b in bundles] == [BundleType.SAFE, BundleType.WHOLE]
    assert [t.name for t in bundles[0].tasks] == ["a", "b"]
    assert len(bundles[1].tasks) == 3
    # What each costs: nothing for the safe bundle, the job's whole request for the whole one.
    assert bundles[0].cost.is_empty()
    assert bundles[0].local.milli_cpu == 2000
    assert bundles[1].local.milli_cpu == 3000
    assert bundles[1].cost.milli_cpu == 5000


def test_create_job_bundles_job_not_ready_short_circuits_all_safe_upstream() -> None:
    """``TestCreateJobBundles_JobNotReadyShortCircuitsAllSafe``: minAvailable 10 with two
    ready tasks; the job is already below its gang, so every candidate is safe. (Upstream also
    sets ``MinSubJobs``, which the short circuit ignores; it is not modelled here.)"""
    job, tasks = running_job(10, ["worker", "worker"])
    bundles = create_job_bundles(job, tasks)
    assert len(bundles) == 1
    assert bundles[0].type is BundleType.SAFE
    assert len(bundles[0].tasks) == 2
    assert bundles[0].cost.is_empty()


def test_create_job_bundles_no_task_min_available_upstream() -> None:
    """``TestCreateJobBundles_NoTaskMinAvailableTreatsAllRolesAsUnconstrained``: no role
    minimums, 4 ready, minAvailable 2: the two lowest-priority tasks safe, two whole."""
    job, tasks = running_job(2, ["worker"] * 4)
    assert job.task_min_available == {}
    bundles = create_job_bundles(job, tasks)
    assert [b.type for b in bundles] == [BundleType.SAFE, BundleType.WHOLE]
    assert [t.name for t in bundles[0].tasks] == ["a", "b"]
    assert [t.name for t in bundles[1].tasks] == ["c", "d"]


def test_create_job_bundles_role_gate_alone_upstream() -> None:
    """The role-gate half of ``TestCreateJobBundles_MixedLegacyAndSubJobBothEnforced``
    (its sub-job half is not ported): minAvailable 5, worker minimum 5, 2 masters and 5
    workers ready; the master (no role minimum) is safe on the job surplus, the worker is
    rejected by the role gate alone."""
    roles = ["master", "worker", "worker", "worker", "worker", "worker", "master"]
    job, tasks = running_job(5, roles, {"worker": 5})
    m1, w1a = tasks[0], tasks[1]
    bundles = create_job_bundles(job, [m1, w1a])
    assert [b.type for b in bundles] == [BundleType.SAFE, BundleType.WHOLE]
    assert [t.uid for t in bundles[0].tasks] == [m1.uid]
    assert [t.uid for t in bundles[1].tasks] == [w1a.uid]


def test_create_job_bundles_orders_candidates_lowest_priority_first() -> None:
    """Candidates given in any order are considered lowest priority first (then by UID)."""
    job, tasks = running_job(3, ["worker"] * 5)
    bundles = create_job_bundles(job, list(reversed(tasks)))
    assert [t.name for t in bundles[0].tasks] == ["a", "b"]
    assert [t.name for t in bundles[1].tasks] == ["c", "d", "e"]
    assert create_job_bundles(job, []) == []


# ---------------------------------------------------------------------------- ApplyAllowedTasks


def test_apply_allowed_tasks_whole_atomic_and_safe_shrink_upstream() -> None:
    """``TestApplyAllowedTasks_WholeAtomicAndSafeShrink``: allowed {t1, t3x}: the safe bundle
    shrinks to t1 (and what it frees with it), the whole bundle without t3 is dropped."""
    job = JobInfo(uid="ns/job")
    t1, t2, t3 = task("t1"), task("t2"), task("t3")
    bundles = [
        bundle(BundleType.SAFE, job, [t1, t2]),
        bundle(BundleType.WHOLE, job, [t3], cpu(3)),
    ]
    valid = keep_allowed(bundles, {"t1", "t3x"})
    assert len(valid) == 1
    assert valid[0].type is BundleType.SAFE
    assert [t.uid for t in valid[0].tasks] == ["t1"]
    assert valid[0].local.milli_cpu == 1000
    # A whole bundle allowed complete survives as it is.
    assert keep_allowed(bundles, {"t3"}) == [bundles[1]]


# ---------------------------------------------------------------------------- ordering


def test_sort_bundles_for_preempt_type_priority_and_roi_upstream() -> None:
    """``TestSortBundlesForPreempt_TypePriorityAndROI``: safe first, then the whole bundle
    that costs its job less (ROI 1/2 over 1/4)."""
    low = JobInfo(uid="", priority=1)
    high = JobInfo(uid="", priority=10)
    safe = bundle(BundleType.SAFE, high, [task("s1")])
    whole_low_roi = bundle(BundleType.WHOLE, low, [task("w1")], cpu(4))
    whole_high_roi = bundle(BundleType.WHOLE, low, [task("w2")], cpu(2))
    bundles = [whole_low_roi, safe, whole_high_roi]
    sort_for_preempt(bundles, cpu(1), lambda left, right: left.priority < right.priority)
    assert uids(bundles) == ["s1", "w2", "w1"]


def test_sort_bundles_for_reclaim_uses_queue_order_then_roi_upstream() -> None:
    """``TestSortBundlesForReclaim_UsesQueueOrderThenROI``: the victim queue order beats ROI;
    when it cannot tell (no order, queues unknown), ROI decides."""
    queues = {name: QueueInfo(uid=name, name=name) for name in ("qa", "qb")}
    job_a, job_b = JobInfo(uid="", queue="qa"), JobInfo(uid="", queue="qb")
    b_a = bundle(BundleType.WHOLE, job_a, [task("a")], cpu(4))
    b_b = bundle(BundleType.WHOLE, job_b, [task("b")], cpu(2))
    bundles = [b_b, b_a]
    sort_for_reclaim(bundles, cpu(1), lambda left, right: left.name < right.name, queues)
    assert uids(bundles)[0] == "a"

    job_c, job_d = JobInfo(uid="", queue="qc"), JobInfo(uid="", queue="qd")
    b_c = bundle(BundleType.WHOLE, job_c, [task("c")], cpu(4))
    b_d = bundle(BundleType.WHOLE, job_d, [task("d")], cpu(2))
    bundles = [b_c, b_d]
    sort_for_reclaim(bundles, cpu(1), never, queues)
    assert uids(bundles)[0] == "d"
    # Queues missing from the map tie even with a real order.
    bundles = [b_c, b_d]
    sort_for_reclaim(bundles, cpu(1), lambda left, right: left.name < right.name, queues)
    assert uids(bundles)[0] == "d"


def test_sort_bundles_for_preempt_uses_victim_job_order_upstream() -> None:
    """``TestSortBundlesForPreempt_UsesVictimJobOrder``: equal ROI, the victim job order
    (here: larger UID first) decides."""
    a = bundle(BundleType.WHOLE, JobInfo(uid="ja"), [task("a")], cpu(2))
    b = bundle(BundleType.WHOLE, JobInfo(uid="jb"), [task("b")], cpu(2))
    bundles = [a, b]
    sort_for_preempt(bundles, cpu(1), lambda left, right: left.uid > right.uid)
    assert uids(bundles)[0] == "b"


def test_sort_bundles_for_reclaim_deterministic_tie_breaker_upstream() -> None:
    """``TestSortBundlesForReclaim_DeterministicTieBreaker``: same queue, same ROI: by job
    UID."""
    queues = {"q": QueueInfo(uid="q", name="q")}
    a = bundle(BundleType.WHOLE, JobInfo(uid="ja", queue="q"), [task("a")], cpu(2))
    b = bundle(BundleType.WHOLE, JobInfo(uid="jb", queue="q"), [task("b")], cpu(2))
    bundles = [b, a]
    sort_for_reclaim(bundles, cpu(1), never, queues)
    assert uids(bundles) == ["a", "b"]


def test_return_on_investment_caps_local_at_the_need() -> None:
    """``bundleROI``: what a bundle frees counts only up to the need, per dimension; what it
    costs counts in full; a bundle that costs nothing is infinitely good."""
    job = JobInfo(uid="ns/job")
    need = Resource(milli_cpu=1000, memory=1024)
    big = Bundle(BundleType.WHOLE, job, (task("x"),), Resource(milli_cpu=4000, memory=512), cpu(2))
    # local: min(4, 1)/1 + 512/1024 = 1.5; cost: 2000/1000 = 2 (memory 0).
    assert return_on_investment(big, need) == pytest.approx(0.75)
    assert return_on_investment(bundle(BundleType.SAFE, job, [task("y")]), need) == math.inf
