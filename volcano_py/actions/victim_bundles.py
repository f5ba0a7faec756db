"""Victim bundles for gangpreempt and gangreclaim (``actions/utils/bundle.go``).

The task-level preempt and reclaim evict victims one by one and may leave a victim gang below
its ``minAvailable``, broken but still holding its other pods. The gang-aware actions instead
split each victim job's candidate tasks (on the nodes of one HyperNode domain) in two:

* the **safe** bundle: tasks the job can lose and stay gang-ready (job, per-role and
  sub-group minimums all still met); taking them costs the job nothing beyond those pods;
* the **whole** bundle: the rest. Taking any of them breaks the gang, so the job's whole
  footprint is the price, and the bundle is only ever taken complete.

Bundles are taken greedily, safe before whole, then in victim order, then by *return on
investment*: how much of what the preemptor needs a bundle frees in the domain, divided by what
breaking the victim job costs cluster-wide (a safe bundle breaks nothing: infinitely good).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import IntEnum
from functools import cmp_to_key
from typing import TypeVar

from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import ALLOCATED_STATUSES, PREEMPTABLE_KEY, TaskStatus


class BundleType(IntEnum):
    # The order is the preference: safe bundles are always taken first.
    SAFE = 0
    WHOLE = 1


@dataclass(frozen=True, slots=True)
class Bundle:
    type: BundleType
    job: JobInfo
    tasks: tuple[TaskInfo, ...]
    # What its tasks free in the domain.
    local: Resource
    # What evicting it costs the victim job in all: nothing for a safe bundle, the job's
    # whole request for a whole one (a broken gang loses every pod).
    cost: Resource


def job_preemptable_for_gang_eviction(job: JobInfo) -> bool:
    """A victim job is spared only when its PodGroup says ``volcano.sh/preemptable: false``;
    without the key it may be evicted (unlike the task-level default, which reads false)."""
    pod_group = job.pod_group
    if pod_group is None:
        return True
    if PREEMPTABLE_KEY in pod_group.annotations or PREEMPTABLE_KEY in pod_group.labels:
        return job.preemptable
    return True


def create_job_bundles(job: JobInfo, candidates: Iterable[TaskInfo]) -> list[Bundle]:
    """Split one victim job's candidate tasks into at most a safe and a whole bundle.

    Candidates are considered lowest priority first (then by UID, for a stable answer); each
    is safe while the job keeps a surplus over ``minAvailable``, its role a surplus over
    its role minimum, and its sub-group policy enough ready sub-groups (``minSubGroups``): a
    sub-job already missing a pod costs nothing more; the first pod taken from a ready one
    costs its policy one ready sub-group.
    """
    tasks = sorted(candidates, key=lambda task: (task.priority, task.uid))
    if not tasks:
        return []
    job_surplus = job.ready_task_num() - job.min_available
    if job_surplus < 0:
        # Already below its gang minimum: evicting more cannot break it further.
        return [Bundle(BundleType.SAFE, job, tuple(tasks), _sum(tasks), Resource())]

    # Per-role minimums count only when the job minimum covers them (as CheckTaskReady).
    role_surplus: dict[str, int] = {}
    if job.min_available >= job.task_min_available_total:
        ready = _ready_per_role(job)
        role_surplus = {
            role: ready.get(role, 0) - low for role, low in job.task_min_available.items()
        }

    # Per sub-group policy: ready sub-jobs beyond minSubGroups; sub-jobs already broken.
    enforce_sub_jobs = bool(job.min_sub_jobs)
    broken: set[str] = set()
    group_surplus: dict[str, int] = {}
    if enforce_sub_jobs:
        for each in job.sub_jobs.values():
            if each.is_ready():
                group_surplus[each.gid] = group_surplus.get(each.gid, 0) + 1
            else:
                broken.add(each.uid)
        for gid, minimum in job.min_sub_jobs.items():
            group_surplus[gid] = group_surplus.get(gid, 0) - minimum

    safe: list[TaskInfo] = []
    whole: list[TaskInfo] = []
    for task in tasks:
        role_has_minimum = task.task_role in role_surplus
        role_safe = not role_has_minimum or role_surplus[task.task_role] > 0
        sub_job: SubJobInfo | None = None
        group_safe = True
        if enforce_sub_jobs:
            sub_job = job.sub_jobs.get(job.task_to_sub_job.get(task.uid, ""))
            # A task filed under no sub-job is a bookkeeping bug: keep its job whole.
            group_safe = sub_job is not None and (
                sub_job.uid in broken or group_surplus.get(sub_job.gid, 0) > 0
            )
        if job_surplus > 0 and role_safe and group_safe:
            safe.append(task)
            job_surplus -= 1
            if role_has_minimum:
                role_surplus[task.task_role] -= 1
            if sub_job is not None and sub_job.uid not in broken:
                broken.add(sub_job.uid)
                group_surplus[sub_job.gid] = group_surplus.get(sub_job.gid, 0) - 1
        else:
            whole.append(task)

    bundles = []
    if safe:
        bundles.append(Bundle(BundleType.SAFE, job, tuple(safe), _sum(safe), Resource()))
    if whole:
        footprint = _sum(job.tasks.values())
        bundles.append(Bundle(BundleType.WHOLE, job, tuple(whole), _sum(whole), footprint))
    return bundles


def _ready_per_role(job: JobInfo) -> dict[str, int]:
    """Tasks per role that count as placed: allocated or succeeded, and Pending best-effort
    tasks (they need no room, so they never wait for any)."""
    ready: dict[str, int] = {}
    for status, tasks in job.task_status_index.items():
        if status in ALLOCATED_STATUSES or status is TaskStatus.SUCCEEDED:
            counted: Iterable[TaskInfo] = tasks.values()
        elif status is TaskStatus.PENDING:
            counted = (task for task in tasks.values() if task.init_resreq.is_empty())
        else:
            continue
        for task in counted:
            ready[task.task_role] = ready.get(task.task_role, 0) + 1
    return ready


def keep_allowed(bundles: Iterable[Bundle], allowed: set[str]) -> list[Bundle]:
    """Bundles after the plugins' victim filter: a whole bundle survives only complete (part
    of a broken gang frees less while costing as much); a safe one keeps what is allowed."""
    kept = []
    for bundle in bundles:
        approved = tuple(task for task in bundle.tasks if task.uid in allowed)
        if len(approved) == len(bundle.tasks):
            kept.append(bundle)
        elif approved and bundle.type is BundleType.SAFE:
            kept.append(replace(bundle, tasks=approved, local=_sum(approved)))
    return kept


def flatten(bundles: Iterable[Bundle]) -> list[TaskInfo]:
    return [task for bundle in bundles for task in bundle.tasks]


# ---------------------------------------------------------------------------- ordering

VictimJobsBefore = Callable[[JobInfo, JobInfo], bool]
VictimQueuesBefore = Callable[[QueueInfo, QueueInfo], bool]


def sort_for_preempt(bundles: list[Bundle], need: Resource, jobs_before: VictimJobsBefore) -> None:
    """Safe first; then the victim job to evict first (``jobs_before``); then by ROI."""
    jobs = {bundle.job.uid: bundle.job for bundle in bundles}
    rank = _rank(jobs, jobs_before)
    _sort(bundles, need, lambda bundle: rank[bundle.job.uid])


def sort_for_reclaim(
    bundles: list[Bundle],
    need: Resource,
    queues_before: VictimQueuesBefore,
    queues: Mapping[str, QueueInfo],
) -> None:
    """Safe first; then the victim queue to reclaim from first; then by ROI. A bundle whose
    queue is unknown ties with every queue, as upstream's comparator has it; the rank puts it
    first, which is one order consistent with that."""
    present = {
        bundle.job.queue: queues[bundle.job.queue]
        for bundle in bundles
        if bundle.job.queue in queues
    }
    rank = _rank(present, queues_before)
    _sort(bundles, need, lambda bundle: rank.get(bundle.job.queue, -1))


T = TypeVar("T")


def _rank(items: Mapping[str, T], before: Callable[[T, T], bool]) -> dict[str, int]:
    """Each item's position in the order ``before`` gives (asked both ways, so a predicate
    that cannot tell two items apart ties them). Ranking the distinct victims once costs
    O(v log v) calls of ``before``; comparing bundles pairwise cost one per comparison."""

    def compare(left: tuple[str, T], right: tuple[str, T]) -> int:
        left_first, right_first = before(left[1], right[1]), before(right[1], left[1])
        if left_first == right_first:
            return 0
        return -1 if left_first else 1

    ordered = sorted(items.items(), key=cmp_to_key(compare))
    rank: dict[str, int] = {}
    position = 0
    for index, (name, item) in enumerate(ordered):
        if index and compare(ordered[index - 1], (name, item)) != 0:
            position = index
        rank[name] = position
    return rank


def _sort(bundles: list[Bundle], need: Resource, victim_rank: Callable[[Bundle], int]) -> None:
    """By type, victim rank, return on investment (highest first), then a stable key. The
    return on investment is only worked out where type and rank tie: for preemption, whose
    victim jobs are totally ordered, that is nowhere."""
    bundles.sort(key=lambda bundle: (bundle.type, victim_rank(bundle)))
    wanted = _wanted(need)
    start = 0
    while start < len(bundles):
        head = (bundles[start].type, victim_rank(bundles[start]))
        end = start + 1
        while end < len(bundles) and (bundles[end].type, victim_rank(bundles[end])) == head:
            end += 1
        if end - start > 1:
            bundles[start:end] = sorted(
                bundles[start:end],
                key=lambda bundle: (
                    -_return_on_investment(bundle, wanted),
                    *_stable_key(bundle),
                ),
            )
        start = end


def return_on_investment(bundle: Bundle, need: Resource) -> float:
    """Share of ``need`` the bundle frees locally (each dimension capped at the need) over the
    share the victim job loses in all; a bundle that costs nothing is worth taking first."""
    return _return_on_investment(bundle, _wanted(need))


def _wanted(need: Resource) -> list[tuple[str, float]]:
    return [(name, need.get(name)) for name in need.resource_names() if need.get(name) > 0]


def _return_on_investment(bundle: Bundle, wanted: list[tuple[str, float]]) -> float:
    if bundle.type is BundleType.SAFE:
        return math.inf  # its cost is nothing by construction
    cost = sum(bundle.cost.get(name) / amount for name, amount in wanted)
    if cost == 0:
        return math.inf
    local = sum(min(bundle.local.get(name), amount) / amount for name, amount in wanted)
    return local / cost


def _stable_key(bundle: Bundle) -> tuple[str, str, int]:
    first = bundle.tasks[0].uid if bundle.tasks else ""
    return (bundle.job.uid, first, len(bundle.tasks))


def _sum(tasks: Iterable[TaskInfo]) -> Resource:
    total = Resource()
    for task in tasks:
        total.add(task.resreq)
    return total
