"""JobInfo: one PodGroup and its tasks, with the gang predicates (``job_info.go``).

A job's ID is ``<namespace>/<podgroup name>``; its tasks are the pods annotated with that group.
"""

from __future__ import annotations

import itertools
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final, TypeVar

from volcano_py.api.go_duration import DurationError, parse_go_duration_seconds
from volcano_py.api.resource import Resource, exceeded_part
from volcano_py.api.sub_job import (
    SubGroupPolicy,
    SubJobInfo,
    parse_sub_group_policies,
    sub_job_gid,
    sub_job_id,
)
from volcano_py.api.task import JobID, TaskID, TaskInfo, parse_go_bool
from volcano_py.api.types import (
    ALLOCATED_STATUSES,
    COMPLETED_STATUSES,
    POD_REASON_SCHEDULABLE,
    POD_REASON_UNSCHEDULABLE,
    PREEMPTABLE_KEY,
    REVOCABLE_ZONE_KEY,
    SCHEDULED_STATUSES,
    FitErrors,
    TaskStatus,
)

POD_GROUP_READY = "pod group is ready"
POD_GROUP_NOT_READY = "pod group is not ready"

# PodGroup phases.
PG_PENDING = "Pending"
PG_INQUEUE = "Inqueue"
PG_RUNNING = "Running"
PG_UNKNOWN = "Unknown"
PG_COMPLETED = "Completed"

_SLA_KEYS = ("volcano.sh/sla-waiting-time", "sla-waiting-time")
# The statuses ``ready_task_num`` and ``valid_task_num`` count.
_READY_STATUSES: Final = frozenset(
    {
        TaskStatus.BOUND,
        TaskStatus.BINDING,
        TaskStatus.RUNNING,
        TaskStatus.ALLOCATED,
        TaskStatus.SUCCEEDED,
    }
)
_VALID_STATUSES: Final = ALLOCATED_STATUSES | {
    TaskStatus.SUCCEEDED,
    TaskStatus.PIPELINED,
    TaskStatus.PENDING,
}


def parse_go_duration(text: str) -> float | None:
    """Seconds of a Go duration string ("1h30m", "90s", "1.5m", "-5m", "0"), or None if
    malformed (``time.ParseDuration``)."""
    try:
        return parse_go_duration_seconds(text)
    except DurationError:
        return None


_Key = TypeVar("_Key")

# ``task_sums`` kept per tasks version (False: summed at every call, the tests' reference).
_KEEP_TASK_SUMS = True
# A status move (and the cache's bind) refiles a task in one call, ``refile_task`` (False:
# ``_unfile_task`` then ``add_task``, the tests' reference).
_ONE_CALL_MOVES = True

# ``snapshot_copy`` builds the copy in one constructor call and skips copying sub-jobs a job
# without policies does not have (False: ``_shell`` then its containers, the tests' reference).
_FLAT_SNAPSHOT_COPY = True

# ``task_sums`` adds each task's request into both sums and checks it whole in one pass
# (False: one ``add_all`` per sum and status, then ``_whole`` per task, the tests' reference).
_ONE_PASS_SUMS = True

# Every change to a job's tasks takes a number never used before (``JobInfo.tasks_version``).
_TASK_VERSIONS: Final = itertools.count(1)
# Integers up to 2**53 are exact in a float64, and so is any sum of them that stays there.
EXACT_INTEGERS: Final = 2.0**53


@dataclass(frozen=True, slots=True)
class TaskSums:
    """Sums over a job's tasks at one tasks version (``JobInfo.task_sums``). Never changed:
    readers that want to add to them clone them.

    ``allocated``: the requests of the tasks in an allocated status; ``requested``: those and
    the Pending tasks' (what proportion and capacity count a job as holding and asking for),
    each added in the job's status-index order from zero. ``exact``: every request value
    summed into ``allocated`` is a non-negative integer, so any sum of such values (a queue's
    over all its jobs' tasks), in any order, is the same float as long as it stays within
    ``EXACT_INTEGERS``."""

    version: int
    allocated: Resource
    requested: Resource
    exact: bool


def _whole(resource: Resource) -> bool:
    """Every value of ``resource`` a non-negative integer (``x % 1.0`` is nan for nan and
    infinities, so those are not)."""
    if not (
        resource.milli_cpu >= 0.0
        and resource.milli_cpu % 1.0 == 0.0
        and resource.memory >= 0.0
        and resource.memory % 1.0 == 0.0
    ):
        return False
    return all(value >= 0.0 and value % 1.0 == 0.0 for value in resource.scalar_resources.values())


def _counter_copy(counter: Counter[_Key]) -> Counter[_Key]:
    """``Counter(counter)`` without ``Counter.update``'s generic path: a Counter holds no
    state beyond its dict."""
    copy: Counter[_Key] = Counter.__new__(Counter)
    if counter:
        dict.update(copy, counter)
    return copy


@dataclass(slots=True)
class TaskSumsMemo:
    """The last ``TaskSums`` computed for a job, shared by the cache's job and the copies
    sessions take of it: a job whose tasks did not change since is not summed again. The
    sums are replaced in one assignment, so a reader on another thread sees old or new."""

    sums: TaskSums | None = None


@dataclass(slots=True)
class JobMemo:
    """What sessions derived from a job, each entry kept with the key of every fact it was
    derived from, shared (as ``TaskSumsMemo``) by the cache's job and the copies sessions take
    of it: a job none of whose facts changed is not worked out again. The owner of an entry
    builds its key and compares it; an entry is replaced in one assignment."""

    # Session close: (key, (phase, running, failed, succeeded, has waiting tasks)).
    close_facts: tuple[tuple[Any, ...], tuple[str, int, int, int, bool]] | None = None
    # Session close, flat: (tasks version, Unschedulable mark, minMember, phase, then the
    # five facts of ``close_facts``).
    flat_close_facts: tuple[Any, ...] | None = None
    # drf: (key, (dominant resource, share)) of the job's allocation against a cluster total.
    share: tuple[tuple[Any, ...], tuple[str, float]] | None = None
    # drf, flat: (tasks version, cluster total key, dominant resource, share).
    flat_share: tuple[Any, ...] | None = None
    # proportion and capacity: (key, what the job holds beyond its minResources).
    elastic: tuple[tuple[Any, ...], Resource] | None = None
    # proportion and capacity: the job's whole usage (``_plugin_helpers.JobUsage``) of a job
    # that reserves no quota, keyed by the objects it holds.
    usage: object | None = None
    # The same usage, flat: (tasks version, minResources object, usage).
    flat_usage: tuple[Any, ...] | None = None


@dataclass(slots=True)
class PodGroupInfo:
    """The fields of a PodGroup the scheduler reads and writes, from its raw dict."""

    name: str
    namespace: str
    uid: str = ""
    queue: str = ""
    min_member: int = 0
    min_task_member: dict[str, int] = field(default_factory=dict)
    min_resources: Mapping[str, Any] | None = None
    priority_class_name: str = ""
    network_topology: Mapping[str, Any] | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)
    labels: Mapping[str, str] = field(default_factory=dict)
    creation_timestamp: str = ""
    phase: str = ""
    conditions: list[dict[str, Any]] = field(default_factory=list)
    running: int = 0
    succeeded: int = 0
    failed: int = 0
    raw: Mapping[str, Any] = field(default_factory=dict)
    sub_group_policies: tuple[SubGroupPolicy, ...] = ()

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any], default_queue: str = "default") -> PodGroupInfo:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        return cls(
            name=str(meta.get("name", "")),
            namespace=str(meta.get("namespace") or "default"),
            uid=str(meta.get("uid") or ""),
            queue=str(spec.get("queue") or default_queue),
            min_member=int(spec.get("minMember") or 0),
            min_task_member={str(k): int(v) for k, v in (spec.get("minTaskMember") or {}).items()},
            min_resources=spec.get("minResources"),
            priority_class_name=str(spec.get("priorityClassName") or ""),
            network_topology=spec.get("networkTopology"),
            annotations=dict(meta.get("annotations") or {}),
            labels=dict(meta.get("labels") or {}),
            creation_timestamp=str(meta.get("creationTimestamp") or ""),
            phase=str(status.get("phase") or ""),
            conditions=[dict(c) for c in status.get("conditions") or []],
            running=int(status.get("running") or 0),
            succeeded=int(status.get("succeeded") or 0),
            failed=int(status.get("failed") or 0),
            raw=obj,
            sub_group_policies=parse_sub_group_policies(spec.get("subGroupPolicy")),
        )

    def clone(self) -> PodGroupInfo:
        copy = PodGroupInfo(
            self.name,
            self.namespace,
            self.uid,
            self.queue,
            self.min_member,
            self.min_task_member,
            self.min_resources,
            self.priority_class_name,
            self.network_topology,
            self.annotations,
            self.labels,
            self.creation_timestamp,
            self.phase,
            list(map(dict, self.conditions)),
            self.running,
            self.succeeded,
            self.failed,
            self.raw,
            self.sub_group_policies,
        )
        return copy

    def status_dict(self) -> dict[str, Any]:
        status: dict[str, Any] = {"phase": self.phase}
        if self.conditions:
            status["conditions"] = [dict(c) for c in self.conditions]
        for name in ("running", "succeeded", "failed"):
            value = getattr(self, name)
            if value:
                status[name] = value
        return status


@dataclass(slots=True)
class JobInfo:
    uid: JobID
    name: str = ""
    namespace: str = ""
    queue: str = ""
    priority: int = 0
    min_available: int = 0
    pod_group: PodGroupInfo | None = None
    tasks: dict[TaskID, TaskInfo] = field(default_factory=dict)
    task_status_index: dict[TaskStatus, dict[TaskID, TaskInfo]] = field(default_factory=dict)
    task_min_available: dict[str, int] = field(default_factory=dict)
    task_min_available_total: int = 0
    allocated: Resource = field(default_factory=Resource)
    total_request: Resource = field(default_factory=Resource)
    creation_timestamp: str = ""
    schedule_start_timestamp: float = 0.0
    preemptable: bool = False
    revocable_zone: str = ""
    waiting_time: float | None = None
    # Why the job as a whole could not proceed (enqueue refused, gang invalid, ...).
    job_fit_errors: str = ""
    nodes_fit_errors: dict[TaskID, FitErrors] = field(default_factory=dict)
    allocated_hyper_node: str = ""
    network_topology: Mapping[str, Any] | None = None
    # Kept current by add_task/delete_task so the gang checks, asked after every placement,
    # cost O(roles) rather than O(tasks): tasks per (role, status), and best-effort Pending
    # tasks per role.
    role_counts: Counter[tuple[str, TaskStatus]] = field(default_factory=Counter)
    best_effort_pending: Counter[str] = field(default_factory=Counter)
    # Sub-jobs (``subGroupPolicy``). A job without policies has one, its default sub-job,
    # which shares the job's own task containers (nothing to keep in step); with policies
    # every task is filed under exactly one sub-job (the default one if no policy takes it).
    sub_group_policies: tuple[SubGroupPolicy, ...] = ()
    sub_jobs: dict[str, SubJobInfo] = field(default_factory=dict)
    task_to_sub_job: dict[TaskID, str] = field(default_factory=dict)
    # policy group id -> minSubGroups
    min_sub_jobs: dict[str, int] = field(default_factory=dict)
    # Changes with every task added, removed or moved to another status (a number never
    # used before): equal versions mean the same tasks with the same statuses and requests.
    # Copies start with their original's; ``task_sums`` is kept per version.
    tasks_version: int = field(
        default_factory=lambda: next(_TASK_VERSIONS), compare=False, repr=False
    )
    sums_memo: TaskSumsMemo = field(default_factory=TaskSumsMemo, compare=False, repr=False)
    memo: JobMemo = field(default_factory=JobMemo, compare=False, repr=False)

    # ------------------------------------------------------------------ building

    def set_pod_group(self, pod_group: PodGroupInfo) -> None:
        self.name = pod_group.name
        self.namespace = pod_group.namespace
        self.min_available = pod_group.min_member
        self.queue = pod_group.queue
        self.creation_timestamp = pod_group.creation_timestamp
        self.waiting_time = None
        for key in _SLA_KEYS:
            text = pod_group.annotations.get(key)
            if text is not None:
                seconds = parse_go_duration(text)
                if seconds is not None and seconds > 0:
                    self.waiting_time = seconds
                    break
        self.preemptable = _pod_group_preemptable(pod_group)
        self.revocable_zone = _pod_group_revocable_zone(pod_group)
        self.task_min_available = dict(pod_group.min_task_member)
        self.task_min_available_total = sum(pod_group.min_task_member.values())
        self.pod_group = pod_group
        self.network_topology = pod_group.network_topology
        if pod_group.sub_group_policies != self.sub_group_policies:
            self._set_policies(pod_group.sub_group_policies)
        elif not self.sub_group_policies:
            self._refresh_default_sub_job()

    def unset_pod_group(self) -> None:
        self.pod_group = None
        self.network_topology = None
        self._set_policies(())

    # ------------------------------------------------------------------ sub-jobs

    def contains_sub_job_policy(self) -> bool:
        return bool(self.sub_group_policies)

    def default_sub_job(self) -> SubJobInfo:
        """``getOrCreateDefaultSubJob``: the tasks no policy takes (a job without policies:
        every task, sharing the job's containers, and the job's ``minAvailable``)."""
        found = self.sub_jobs.get(self.uid)
        if found is not None:
            return found
        if self.sub_group_policies:
            created = SubJobInfo.for_policy(
                self.uid,
                None,
                (),
                gid=self.uid,
                uid=self.uid,
                min_available=1,
                network_topology=self.network_topology,
            )
        else:
            created = SubJobInfo.for_policy(
                self.uid,
                None,
                (),
                gid=self.uid,
                uid=self.uid,
                min_available=self.min_available,
                network_topology=self.network_topology,
            )
            created.tasks = self.tasks
            created.task_status_index = self.task_status_index
        self.sub_jobs[self.uid] = created
        return created

    def all_sub_jobs(self) -> list[SubJobInfo]:
        if not self.sub_group_policies:
            return [self.default_sub_job()]
        return list(self.sub_jobs.values())

    def sub_job_of(self, task: TaskInfo) -> SubJobInfo:
        if not self.sub_group_policies:
            return self.default_sub_job()
        uid = self.task_to_sub_job.get(task.uid)
        found = self.sub_jobs.get(uid) if uid is not None else None
        return found if found is not None else self.default_sub_job()

    def _refresh_default_sub_job(self) -> None:
        """A job without policies: its default sub-job follows the PodGroup's size and
        topology (the HyperNode it occupies stays)."""
        found = self.sub_jobs.get(self.uid)
        if found is not None:
            found.min_available = self.min_available
            topology = self.network_topology
            found.network_topology = dict(topology) if topology is not None else None

    def _set_policies(self, policies: tuple[SubGroupPolicy, ...]) -> None:
        """The policies changed: every task is filed again (as upstream on a new spec)."""
        self.sub_group_policies = policies
        self.sub_jobs = {}
        self.task_to_sub_job = {}
        self.min_sub_jobs = {sub_job_gid(self.uid, p.name): p.min_sub_groups for p in policies}
        if policies:
            for task in self.tasks.values():
                self._file_task(task)

    def _matching_sub_job(self, task: TaskInfo) -> SubJobInfo:
        """``getOrCreateSubJob``: the first policy whose match values for the pod's labels
        are not empty (a policy without ``matchLabelKeys`` therefore takes no pod, as
        upstream), else the default sub-job."""
        labels = self.pod_group_labels_of(task)
        for policy in self.sub_group_policies:
            values = policy.match_values(labels)
            if not values:
                continue
            uid = sub_job_id(self.uid, policy.name, values)
            found = self.sub_jobs.get(uid)
            if found is None:
                found = self.sub_jobs[uid] = SubJobInfo.for_policy(
                    self.uid,
                    policy,
                    values,
                    gid=sub_job_gid(self.uid, policy.name),
                    uid=uid,
                )
            return found
        return self.default_sub_job()

    @staticmethod
    def pod_group_labels_of(task: TaskInfo) -> Mapping[str, str]:
        meta = task.pod.get("metadata") or {}
        labels = meta.get("labels") or {}
        return labels if isinstance(labels, Mapping) else {}

    def _file_task(self, task: TaskInfo) -> None:
        """Put ``task`` in its sub-job (once matched, a task keeps its sub-job)."""
        uid = self.task_to_sub_job.get(task.uid)
        sub_job = self.sub_jobs.get(uid) if uid is not None else None
        if sub_job is None:
            sub_job = self._matching_sub_job(task)
            self.task_to_sub_job[task.uid] = sub_job.uid
        sub_job.add_task(task)

    def check_sub_job_valid(self) -> bool:
        """``CheckSubJobValid``: every policy has at least ``minSubGroups`` sub-jobs."""
        if not self.min_sub_jobs:
            return True
        counts: Counter[str] = Counter(sub_job.gid for sub_job in self.sub_jobs.values())
        return all(counts[gid] >= minimum for gid, minimum in self.min_sub_jobs.items())

    def _sub_jobs_meet(self, ready: bool) -> bool:
        if not self.min_sub_jobs:
            return True
        counts: Counter[str] = Counter()
        for sub_job in self.sub_jobs.values():
            if sub_job.is_ready() if ready else sub_job.is_pipelined():
                counts[sub_job.gid] += 1
        return all(counts[gid] >= minimum for gid, minimum in self.min_sub_jobs.items() if minimum)

    def check_sub_job_ready(self) -> bool:
        return self._sub_jobs_meet(ready=True)

    def check_sub_job_pipelined(self) -> bool:
        return self._sub_jobs_meet(ready=False)

    def contains_hard_topology(self) -> bool:
        """``ContainsHardTopology``: the job's or any sub-job's constraint is hard."""
        if self.hard_topology()[0]:
            return True
        return any(sub_job.hard_topology()[0] for sub_job in self.all_sub_jobs())

    def contains_network_topology(self) -> bool:
        if self.network_topology is not None:
            return True
        return any(sub_job.with_network_topology() for sub_job in self.sub_jobs.values())

    def _copy_sub_jobs_to(self, copy: JobInfo) -> None:
        """Give a copy its own sub-jobs over its own tasks, with their HyperNodes."""
        copy.sub_group_policies = self.sub_group_policies
        copy.min_sub_jobs = dict(self.min_sub_jobs)
        if not self.sub_group_policies:
            mine = self.sub_jobs.get(self.uid)
            if mine is not None:
                copy.default_sub_job().copy_status_from(mine)
            return
        copy.task_to_sub_job = dict(self.task_to_sub_job)
        for uid, sub_job in self.sub_jobs.items():
            copy.sub_jobs[uid] = SubJobInfo(
                gid=sub_job.gid,
                uid=uid,
                job=sub_job.job,
                min_available=sub_job.min_available,
                match_index=sub_job.match_index,
                network_topology=(
                    dict(sub_job.network_topology) if sub_job.network_topology is not None else None
                ),
                allocated_hyper_node=sub_job.allocated_hyper_node,
                nominated_hyper_node=sub_job.nominated_hyper_node,
            )
        for task in copy.tasks.values():
            copy._file_task(task)

    def add_task(self, task: TaskInfo) -> None:
        self.tasks_version = next(_TASK_VERSIONS)
        self.tasks[task.uid] = task
        self.task_status_index.setdefault(task.status, {})[task.uid] = task
        self.total_request.add(task.resreq)
        if task.status in ALLOCATED_STATUSES:
            self.allocated.add(task.resreq)
        self.role_counts[(task.task_role, task.status)] += 1
        if task.status is TaskStatus.PENDING and task.best_effort:
            self.best_effort_pending[task.task_role] += 1
        if self.sub_group_policies:
            self._file_task(task)

    def delete_task(self, task: TaskInfo) -> None:
        existing = self._unfile_task(task)
        if existing is not None and self.sub_group_policies:
            self.task_to_sub_job.pop(existing.uid, None)

    def _unfile_task(self, task: TaskInfo) -> TaskInfo | None:
        """Take ``task`` out of the job (and of its sub-job, which it stays matched to)."""
        existing = self.tasks.pop(task.uid, None)
        if existing is None:
            return None
        self.tasks_version = next(_TASK_VERSIONS)
        if self.sub_group_policies:
            sub_job = self.sub_jobs.get(self.task_to_sub_job.get(existing.uid, ""))
            if sub_job is not None:
                sub_job.delete_task(existing)
        self.total_request.sub_without_assert(existing.resreq)
        if existing.status in ALLOCATED_STATUSES:
            self.allocated.sub_without_assert(existing.resreq)
        bucket = self.task_status_index.get(existing.status)
        if bucket is not None:
            bucket.pop(existing.uid, None)
            if not bucket:
                del self.task_status_index[existing.status]
        self.role_counts[(existing.task_role, existing.status)] -= 1
        if existing.status is TaskStatus.PENDING and existing.best_effort:
            self.best_effort_pending[existing.task_role] -= 1
        return existing

    def replace_task(self, previous: TaskInfo, task: TaskInfo) -> None:
        """``delete_task(previous)`` then ``add_task(task)`` for a new version of a task with
        ``previous``'s uid, role, request and best-effort mark, whose status is the same or
        another that counts the same (both allocated, neither pending): the same dicts in the
        same orders, the sums left as they are rather than taken off and put back. Not for a
        job with sub-group policies."""
        uid = task.uid
        self.tasks_version = next(_TASK_VERSIONS)
        del self.tasks[uid]
        self.tasks[uid] = task
        index = self.task_status_index
        bucket = index[previous.status]
        if len(bucket) == 1:
            # delete_task drops an emptied bucket, add_task makes it again: at the end.
            del index[previous.status]
        else:
            del bucket[uid]
        index.setdefault(task.status, {})[uid] = task
        if task.status is not previous.status:
            self.role_counts[(previous.task_role, previous.status)] -= 1
            self.role_counts[(task.task_role, task.status)] += 1

    def update_task_status(self, task: TaskInfo, status: TaskStatus) -> None:
        """Move a task to another status, keeping the index and the sums right."""
        if _ONE_CALL_MOVES and not self.sub_group_policies:
            existing = self.tasks.get(task.uid)
            if existing is not None:
                self.refile_task(existing, task, status)
                return
        if task.uid in self.tasks:
            self._unfile_task(task)
        task.status = status
        self.add_task(task)

    def refile_task(self, existing: TaskInfo, task: TaskInfo, status: TaskStatus) -> None:
        """``_unfile_task`` of ``existing`` (the job's task with ``task``'s uid), then
        ``add_task(task)`` at ``status``, in one call: the same dict changes, counter moves
        and Resource additions and subtractions in the same order (a placement moves two
        statuses, a bind one more). Not for a job with sub-group policies."""
        uid = existing.uid
        tasks = self.tasks
        del tasks[uid]
        next(_TASK_VERSIONS)  # the version ``_unfile_task`` takes, never seen
        old = existing.status
        request = existing.resreq
        self.total_request.sub_without_assert(request)
        if old in ALLOCATED_STATUSES:
            self.allocated.sub_without_assert(request)
        index = self.task_status_index
        bucket = index.get(old)
        if bucket is not None:
            bucket.pop(uid, None)
            if not bucket:
                del index[old]
        role_counts = self.role_counts
        role_counts[(existing.task_role, old)] -= 1
        if old is TaskStatus.PENDING and existing.best_effort:
            self.best_effort_pending[existing.task_role] -= 1
        task.status = status
        # add_task(task)
        self.tasks_version = next(_TASK_VERSIONS)
        tasks[task.uid] = task
        index.setdefault(status, {})[task.uid] = task
        request = task.resreq
        self.total_request.add(request)
        if status in ALLOCATED_STATUSES:
            self.allocated.add(request)
        role_counts[(task.task_role, status)] += 1
        if status is TaskStatus.PENDING and task.best_effort:
            self.best_effort_pending[task.task_role] += 1

    def _shell(self) -> JobInfo:
        """A copy of everything but the tasks: own sums, counters and PodGroup status."""
        return self._shell_with({}, {})

    def _shell_with(
        self, tasks: dict[TaskID, TaskInfo], index: dict[TaskStatus, dict[TaskID, TaskInfo]]
    ) -> JobInfo:
        """``_shell`` holding ``tasks`` and their status ``index``. (A snapshot takes one per
        job: arguments by position and counters copied as plain dicts cost half of what
        keywords and ``Counter(counter)`` did.)"""
        return JobInfo(
            self.uid,
            self.name,
            self.namespace,
            self.queue,
            self.priority,
            self.min_available,
            self.pod_group.clone() if self.pod_group is not None else None,
            tasks,
            index,
            dict(self.task_min_available),
            self.task_min_available_total,
            self.allocated.clone(),
            self.total_request.clone(),
            self.creation_timestamp,
            self.schedule_start_timestamp,
            self.preemptable,
            self.revocable_zone,
            self.waiting_time,
            self.job_fit_errors,
            {},
            self.allocated_hyper_node,
            self.network_topology,
            _counter_copy(self.role_counts),
            _counter_copy(self.best_effort_pending),
            self.sub_group_policies,
            {},
            {},
            dict(self.min_sub_jobs),
            self.tasks_version,
            self.sums_memo,
            self.memo,
        )

    def clone(self) -> JobInfo:
        """A fully independent copy: every task cloned."""
        copy = self._shell()
        # Filed anew by status, so possibly in another index order: summed on its own.
        copy.tasks_version = next(_TASK_VERSIONS)
        copy.sums_memo = TaskSumsMemo()
        copy.memo = JobMemo()
        tasks = copy.tasks
        index = copy.task_status_index
        for uid, task in self.tasks.items():
            clone = task.clone()
            tasks[uid] = clone
            bucket = index.get(clone.status)
            if bucket is None:
                bucket = index[clone.status] = {}
            bucket[uid] = clone
        self._copy_sub_jobs_to(copy)
        return copy

    def snapshot_copy(self) -> JobInfo:
        """The copy a session gets: its own containers and sums, its own Pending tasks (the
        only ones a session changes in place: it allocates and pipelines them), and the
        cache's other task objects shared, unchanged. Sessions keep that promise by evicting
        copies (``Statement.evict``). At 60k tasks this is ~10x cheaper than ``clone``."""
        if _FLAT_SNAPSHOT_COPY:
            return self._flat_snapshot_copy()
        copy = self._shell()
        copy.tasks = dict(self.tasks)
        copy.task_status_index = {
            status: dict(tasks) for status, tasks in self.task_status_index.items()
        }
        pending = copy.task_status_index.get(TaskStatus.PENDING)
        if pending:
            tasks = copy.tasks
            for uid, task in pending.items():
                pending[uid] = tasks[uid] = task.clone()
        self._copy_sub_jobs_to(copy)
        return copy

    def _flat_snapshot_copy(self) -> JobInfo:
        """``snapshot_copy`` in one call: the containers built first and handed to the
        constructor with the rest of ``_shell``'s fields, and the sub-jobs copied only when
        there are any to copy (``_copy_sub_jobs_to`` of a job without policies and without
        a default sub-job sets what ``_shell`` already set). A snapshot takes one per job:
        5k running jobs at 5k nodes."""
        tasks = dict(self.tasks)
        index = {status: dict(bucket) for status, bucket in self.task_status_index.items()}
        pending = index.get(TaskStatus.PENDING)
        if pending:
            for uid, task in pending.items():
                pending[uid] = tasks[uid] = task.clone()
        copy = self._shell_with(tasks, index)
        if self.sub_group_policies or self.sub_jobs:
            self._copy_sub_jobs_to(copy)
        return copy

    def task_sums(self) -> TaskSums:
        """``TaskSums`` of the job's tasks as they are now, summed again only when they
        changed since the last time this job or a copy of it was summed."""
        kept = self.sums_memo.sums
        if _KEEP_TASK_SUMS and kept is not None and kept.version == self.tasks_version:
            return kept
        if _ONE_PASS_SUMS:
            sums = TaskSums(self.tasks_version, *self._summed_in_one_pass())
            self.sums_memo.sums = sums
            return sums
        allocated, requested = Resource(), Resource()
        exact = True
        for status, tasks in self.task_status_index.items():
            if status in ALLOCATED_STATUSES:
                allocated.add_all(task.resreq for task in tasks.values())
                requested.add_all(task.resreq for task in tasks.values())
                if exact:
                    exact = all(_whole(task.resreq) for task in tasks.values())
            elif status is TaskStatus.PENDING:
                requested.add_all(task.resreq for task in tasks.values())
        sums = TaskSums(self.tasks_version, allocated, requested, exact)
        self.sums_memo.sums = sums
        return sums

    def _summed_in_one_pass(self) -> tuple[Resource, Resource, bool]:
        """``task_sums``' (allocated, requested, exact) in one pass over the tasks: each
        request added to each sum it counts in, in the same order from the same zeros as
        ``Resource.add_all`` adds them (the same floats, the same scalar names in the same
        order), and ``_whole`` of every allocated request asked in the same pass."""
        allocated_cpu = allocated_memory = requested_cpu = requested_memory = 0.0
        allocated_scalars: dict[str, float] = {}
        requested_scalars: dict[str, float] = {}
        exact = True
        for status, tasks in self.task_status_index.items():
            if status in ALLOCATED_STATUSES:
                for task in tasks.values():
                    request = task.resreq
                    cpu, memory = request.milli_cpu, request.memory
                    allocated_cpu += cpu
                    allocated_memory += memory
                    requested_cpu += cpu
                    requested_memory += memory
                    scalars = request.scalar_resources
                    if exact and not (
                        cpu >= 0.0 and cpu % 1.0 == 0.0 and memory >= 0.0 and memory % 1.0 == 0.0
                    ):
                        exact = False
                    if scalars:
                        for name, value in scalars.items():
                            allocated_scalars[name] = allocated_scalars.get(name, 0.0) + value
                            requested_scalars[name] = requested_scalars.get(name, 0.0) + value
                            if exact and not (value >= 0.0 and value % 1.0 == 0.0):
                                exact = False
            elif status is TaskStatus.PENDING:
                for task in tasks.values():
                    request = task.resreq
                    requested_cpu += request.milli_cpu
                    requested_memory += request.memory
                    scalars = request.scalar_resources
                    if scalars:
                        for name, value in scalars.items():
                            requested_scalars[name] = requested_scalars.get(name, 0.0) + value
        return (
            Resource(allocated_cpu, allocated_memory, allocated_scalars),
            Resource(requested_cpu, requested_memory, requested_scalars),
            exact,
        )

    # ------------------------------------------------------------------ counts

    def _count(self, statuses: frozenset[TaskStatus]) -> int:
        # Over the statuses the job's tasks are in (one or two), not over those asked for:
        # the gang's job order asks each comparison of a 10k-job queue.
        count = 0
        for status, tasks in self.task_status_index.items():
            if status in statuses:
                count += len(tasks)
        return count

    def tasks_in(self, status: TaskStatus) -> dict[TaskID, TaskInfo]:
        return self.task_status_index.get(status, {})

    def ready_task_num(self) -> int:
        return self._count(_READY_STATUSES)

    def waiting_task_num(self) -> int:
        return len(self.tasks_in(TaskStatus.PIPELINED))

    def pending_best_effort_task_num(self) -> int:
        return sum(self.best_effort_pending.values())

    def allocated_task_num(self) -> int:
        return self._count(ALLOCATED_STATUSES)

    def valid_task_num(self) -> int:
        return self._count(_VALID_STATUSES)

    def scheduled_task_num(self) -> int:
        return self._count(SCHEDULED_STATUSES)

    def releasing_scheduled_task_num(self) -> int:
        return sum(1 for task in self.tasks_in(TaskStatus.RELEASING).values() if task.node_name)

    def is_ready(self) -> bool:
        # ``ready_task_num() + pending_best_effort_task_num() >= min_available``, counted in
        # one go: gang's job order asks it twice per comparison of a job queue.
        count = 0
        for status, tasks in self.task_status_index.items():
            if status in _READY_STATUSES:
                count += len(tasks)
        best_effort = self.best_effort_pending
        if best_effort:
            count += sum(best_effort.values())
        return count >= self.min_available

    def is_pipelined(self) -> bool:
        return (
            self.waiting_task_num() + self.ready_task_num() + self.pending_best_effort_task_num()
            >= self.min_available
        )

    def is_starving(self) -> bool:
        return self.waiting_task_num() + self.ready_task_num() < self.min_available

    def is_pending(self) -> bool:
        return self.pod_group is None or self.pod_group.phase in ("", PG_PENDING)

    def has_pending_tasks(self) -> bool:
        return bool(self.tasks_in(TaskStatus.PENDING))

    def is_completed(self) -> bool:
        return bool(self.tasks) and all(t.status in COMPLETED_STATUSES for t in self.tasks.values())

    # ------------------------------------------------------------------ per-role gang checks

    def _roles_counted(
        self, statuses: frozenset[TaskStatus], best_effort_pending: bool
    ) -> Counter[str]:
        """Tasks per role in ``statuses`` (plus best-effort Pending ones, if asked)."""
        counts: Counter[str] = Counter()
        for (role, status), number in self.role_counts.items():
            if status in statuses:
                counts[role] += number
        if best_effort_pending:
            counts.update(self.best_effort_pending)
        return counts

    def _roles_meet_minimum(self, counts: Counter[str], skip_zero: bool) -> bool:
        for role, minimum in self.task_min_available.items():
            if skip_zero and minimum == 0:
                continue
            if counts[role] < minimum:
                return False
        return True

    def check_task_valid(self) -> bool:
        # No role minimum to check (most jobs): nothing to count.
        if not self.task_min_available or self.min_available < self.task_min_available_total:
            return True
        counts = self._roles_counted(
            ALLOCATED_STATUSES | {TaskStatus.SUCCEEDED, TaskStatus.PIPELINED, TaskStatus.PENDING},
            best_effort_pending=False,
        )
        return self._roles_meet_minimum(counts, skip_zero=True)

    def check_task_ready(self) -> bool:
        if not self.task_min_available or self.min_available < self.task_min_available_total:
            return True
        return self._roles_meet_minimum(self._allocated_roles(), skip_zero=False)

    def check_task_pipelined(self) -> bool:
        if not self.task_min_available or self.min_available < self.task_min_available_total:
            return True
        counts = self._roles_counted(
            ALLOCATED_STATUSES | {TaskStatus.SUCCEEDED, TaskStatus.PIPELINED},
            best_effort_pending=True,
        )
        return self._roles_meet_minimum(counts, skip_zero=False)

    def check_task_starving(self) -> bool:
        if self.min_available < self.task_min_available_total:
            return True
        if not self.task_min_available:
            return False
        counts = self._roles_counted(
            ALLOCATED_STATUSES | {TaskStatus.SUCCEEDED, TaskStatus.PIPELINED},
            best_effort_pending=False,
        )
        return not self._roles_meet_minimum(counts, skip_zero=False)

    def _allocated_roles(self) -> Counter[str]:
        return self._roles_counted(
            ALLOCATED_STATUSES | {TaskStatus.SUCCEEDED}, best_effort_pending=True
        )

    def fit_failed_roles(self, sub_job: str | None = None) -> set[str]:
        """Roles of the tasks that found no node in this attempt (of one sub-job, if
        given: ``FitFailedRoles``)."""
        tasks = self.tasks
        if sub_job is None or not self.sub_group_policies:
            return {tasks[uid].task_role for uid in self.nodes_fit_errors if uid in tasks}
        owner = self.task_to_sub_job
        return {
            tasks[uid].task_role
            for uid in self.nodes_fit_errors
            if uid in tasks and owner.get(uid) == sub_job
        }

    def task_has_fit_errors(self, task: TaskInfo, sub_job: str | None = None) -> bool:
        """Another task of the same role already failed in this attempt (role error cache)."""
        return bool(task.task_role) and task.task_role in self.fit_failed_roles(sub_job)

    def reset_sub_job_fit_errors(self, sub_job: str) -> None:
        """``ResetSubJobFitErr``: forget the fit errors of one sub-job's tasks."""
        if not self.sub_group_policies:
            self.nodes_fit_errors = {}
            return
        owner = self.task_to_sub_job
        self.nodes_fit_errors = {
            uid: errors
            for uid, errors in self.nodes_fit_errors.items()
            if owner.get(uid) != sub_job
        }

    def need_continue_allocating(self, sub_job: str | None = None) -> bool:
        """After a task found no node: can the rest of the gang still make it?"""
        # Every task is needed (upstream also stops via the default sub-job, whose
        # MinAvailable >= its task count when pods are still missing).
        if self.min_available >= len(self.tasks):
            return False
        if sub_job is not None and self.sub_group_policies:
            found = self.sub_jobs.get(sub_job)
            if found is not None and found.min_available >= len(found.tasks):
                return False
        # Upstream does not apply the role rules below to jobs with sub-group policies.
        if self.sub_group_policies:
            return True
        failed_roles = self.fit_failed_roles()
        if self.min_available < self.task_min_available_total:
            pending: Counter[str] = Counter(
                t.task_role for t in self.tasks_in(TaskStatus.PENDING).values()
            )
            left = sum(count for role, count in pending.items() if role not in failed_roles)
            return self.ready_task_num() + left >= self.min_available
        allocated = self._allocated_roles()
        for role in failed_roles:
            minimum = self.task_min_available.get(role, 0)
            if minimum and allocated[role] < minimum:
                return False
        return True

    # ------------------------------------------------------------------ resources

    def min_resources(self) -> Resource:
        if self.pod_group is None or self.pod_group.min_resources is None:
            return Resource()
        return Resource.from_list(self.pod_group.min_resources)

    def sch_gated_resources(self) -> Resource:
        """Requests of tasks held by scheduling gates other than Volcano's queue gate."""
        total = Resource()
        for task in self.tasks.values():
            if task.sch_gated and not task.only_volcano_gated:
                total.add(task.resreq)
        return total

    def deduct_sch_gated_resources(self, resource: Resource) -> Resource:
        gated = self.sch_gated_resources()
        if gated.is_empty():
            return resource
        result = resource.clone()
        result.milli_cpu = max(result.milli_cpu - gated.milli_cpu, 0.0)
        result.memory = max(result.memory - gated.memory, 0.0)
        for name, value in resource.scalar_resources.items():
            if name in gated.scalar_resources:
                result.scalar_resources[name] = max(value - gated.scalar_resources[name], 0.0)
        return result

    def elastic_resources(self) -> Resource:
        """What the job holds beyond its PodGroup's minResources."""
        return exceeded_part(self.allocated, self.min_resources())

    # ------------------------------------------------------------------ topology

    def hard_topology(self) -> tuple[bool, int]:
        """(is hard mode, highest tier allowed) of the job's network topology
        (``IsHardTopologyMode``): without ``highestTierAllowed`` there is no hard constraint,
        and a soft one still reports its tier. A missing mode is ``hard``, the CRD default."""
        topology = self.network_topology
        if not topology:
            return False, 0
        tier = topology.get("highestTierAllowed")
        if tier is None:
            return False, 0
        return topology.get("mode") in (None, "", "hard"), int(tier)

    def with_network_topology(self) -> bool:
        return bool(self.network_topology)

    # ------------------------------------------------------------------ "why pending"

    def reset_fit_errors(self) -> None:
        self.job_fit_errors = ""
        self.nodes_fit_errors = {}

    def task_scheduling_reason(self, uid: TaskID) -> tuple[str, str, str]:
        """(reason, message, nominated node) of a task from its last transaction."""
        task = self.tasks.get(uid)
        if task is None:
            return "", "", ""
        context = task.last_transaction or task.transaction_context()
        message = self.job_fit_errors
        if context.status is TaskStatus.ALLOCATED:
            return (
                POD_REASON_SCHEDULABLE,
                f"Pod {task.namespace}/{task.name} can possibly be assigned to"
                f" {context.node_name}, once minAvailable is satisfied",
                "",
            )
        if context.status is TaskStatus.PIPELINED:
            nominated = context.node_name if context.eviction_occurred else ""
            return (
                POD_REASON_UNSCHEDULABLE,
                f"Pod {task.namespace}/{task.name} can possibly be assigned to"
                f" {context.node_name}, once resource is released and minAvailable is satisfied",
                nominated,
            )
        if context.status is TaskStatus.PENDING:
            fit_errors = self.nodes_fit_errors.get(uid)
            if fit_errors is not None:
                return POD_REASON_UNSCHEDULABLE, fit_errors.message(), ""
            return POD_REASON_UNSCHEDULABLE, message, ""
        return str(context.status), message, ""

    def fit_error(self) -> str:
        """The gang's story in one line: task histogram, pending reasons, the first fit error."""
        histogram: Counter[str] = Counter()
        for status, tasks in self.task_status_index.items():
            histogram[str(status)] += len(tasks)
        histogram["minAvailable"] = self.min_available
        state = POD_GROUP_READY if self.is_ready() else POD_GROUP_NOT_READY
        text = f"{state}, " + ", ".join(sorted(f"{n} {k}" for k, n in histogram.items()))
        pending: Counter[str] = Counter(
            self.task_scheduling_reason(uid)[0] for uid in self.tasks_in(TaskStatus.PENDING)
        )
        if pending:
            text += "; Pending: " + ", ".join(sorted(f"{n} {k}" for k, n in pending.items()))
        if self.job_fit_errors:
            text += ". Origin reason is: " + self.job_fit_errors
        else:
            for task in sorted(self.tasks.values(), key=lambda t: t.name):
                fit_errors = self.nodes_fit_errors.get(task.uid)
                if fit_errors is not None:
                    text += f". Origin reason is {task.name}: {fit_errors.message()}"
                    break
        return text

    def __str__(self) -> str:
        return (
            f"Job ({self.uid}): namespace {self.namespace}, name {self.name}, minAvailable"
            f" {self.min_available}, tasks {len(self.tasks)}"
        )


def _pod_group_preemptable(pod_group: PodGroupInfo) -> bool:
    """``volcano.sh/preemptable`` on the PodGroup (annotation, then label); default false."""
    for source in (pod_group.annotations, pod_group.labels):
        if PREEMPTABLE_KEY in source:
            return parse_go_bool(str(source[PREEMPTABLE_KEY])) is True
    return False


def _pod_group_revocable_zone(pod_group: PodGroupInfo) -> str:
    zone = pod_group.annotations.get(REVOCABLE_ZONE_KEY)
    return "*" if zone == "*" else ""


def job_sort_key(job: JobInfo) -> tuple[str, str]:
    """The fallback job order: creation time, then UID."""
    return job.creation_timestamp, job.uid
