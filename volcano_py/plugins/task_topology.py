"""task-topology: keep the tasks of a job that talk to each other on the same nodes, and those
that must not share a node apart (``pkg/scheduler/plugins/task-topology``).

A job says which of its tasks (Volcano Job task names, read from each pod's
``volcano.sh/task-spec``) go together through its PodGroup's annotations (the job controller
copies the Job's annotations there):

* ``volcano.sh/task-topology-affinity: "ps,worker;ps,evaluator"`` groups of tasks to put on
  the same nodes (a group of one: that task's pods together);
* ``volcano.sh/task-topology-anti-affinity: "ps;worker,chief"`` groups to keep apart (a
  group of one: that task's pods on different nodes);
* ``volcano.sh/task-topology-task-order: "ps,worker"`` which tasks to place first.

At session open each job with pending tasks and these annotations is split into *buckets*:
every pod of a task that has affinity or anti-affinity goes, in order (placed pods first, then
by task order and affinity priority, then by name), into the bucket it has the most affinity
with (ties: the bucket asking the least resources), or a new bucket when every bucket repels
it. A bucket is what should share a node.

* Task order: pods in a bucket before pods outside any; within a job, bigger buckets first,
  then older buckets, and within a bucket by task order and affinity priority.
* Node order (batch): ``(pods of the bucket already on the node, less the anti-affinity
  conflicts on it, plus the bucket's pods still to place, less those that would not fit in
  the node's idle + releasing resources) * weight * 100 / the largest bucket``; 0 for a node
  the pod itself does not fit, and for pods outside any bucket.
* Allocate events move the placed pod out of its bucket's pending set onto the node.

Argument: ``task-topology.weight`` (integer, default 1). An annotation naming a task the job
does not have, or naming one twice in a group, disables the plugin for that job (a warning
says which), as upstream.

Divergence: which of a bucket's other pods are counted as not fitting follows the bucket's
order; upstream takes them in Go map order (random).
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Final

import numpy as np

from volcano_py.api.job import JobInfo
from volcano_py.api.node_matrix import FloatArray, IntArray, fit_mask
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import warn_once

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "task-topology"
WEIGHT: Final = "task-topology.weight"
AFFINITY_ANNOTATION: Final = "volcano.sh/task-topology-affinity"
ANTI_AFFINITY_ANNOTATION: Final = "volcano.sh/task-topology-anti-affinity"
TASK_ORDER_ANNOTATION: Final = "volcano.sh/task-topology-task-order"
TASK_SPEC_KEY: Final = "volcano.sh/task-spec"
OUT_OF_BUCKET: Final = -1
MAX_NODE_SCORE: Final = 100.0

ARGUMENTS: Final[frozenset[str]] = frozenset({WEIGHT})


class TopologyType(IntEnum):
    SELF_ANTI_AFFINITY = 0
    INTER_ANTI_AFFINITY = 1
    SELF_AFFINITY = 2
    INTER_AFFINITY = 3


# The larger, the earlier a task with it is placed.
AFFINITY_PRIORITY: Final = {
    TopologyType.SELF_ANTI_AFFINITY: 4,
    TopologyType.INTER_AFFINITY: 3,
    TopologyType.SELF_AFFINITY: 2,
    TopologyType.INTER_ANTI_AFFINITY: 1,
}


class TopologyAnnotationError(ValueError):
    """A task-topology annotation names a task the job lacks, or one task twice."""


@dataclass(frozen=True, slots=True)
class TaskTopology:
    affinity: list[list[str]] | None = None
    anti_affinity: list[list[str]] | None = None
    task_order: list[str] | None = None


def task_name(task: TaskInfo) -> str:
    """The Volcano Job task the pod belongs to (``volcano.sh/task-spec`` annotation)."""
    annotations = (task.pod.get("metadata") or {}).get("annotations") or {}
    return str(annotations.get(TASK_SPEC_KEY, ""))


def _check_groups(job: JobInfo, groups: Sequence[Sequence[str]]) -> None:
    """``affinityCheck``: every named task exists in the job, once per group; empty names
    (from doubled separators) are skipped."""
    roles = {task.task_role for task in job.tasks.values()}
    for group in groups:
        seen: set[str] = set()
        for name in group:
            if not name:
                continue
            if name not in roles:
                raise TopologyAnnotationError(
                    f"task {name} do not exist in job <{job.namespace}/{job.name}>"
                )
            if name in seen:
                raise TopologyAnnotationError(
                    f"task {name} is duplicate in job <{job.namespace}/{job.name}>"
                )
            seen.add(name)


def _split_groups(job: JobInfo, text: str) -> list[list[str]]:
    groups = [part.split(",") for part in text.split(";")]
    _check_groups(job, groups)
    return groups


def read_topology(job: JobInfo) -> TaskTopology | None:
    """``readTopologyFromPgAnnotations``: the job's topology, None without any annotation;
    raises :class:`TopologyAnnotationError`."""
    annotations: Mapping[str, str] = job.pod_group.annotations if job.pod_group else {}
    if not any(
        key in annotations
        for key in (AFFINITY_ANNOTATION, ANTI_AFFINITY_ANNOTATION, TASK_ORDER_ANNOTATION)
    ):
        return None
    affinity = anti_affinity = task_order = None
    if AFFINITY_ANNOTATION in annotations:
        affinity = _split_groups(job, annotations[AFFINITY_ANNOTATION])
    if ANTI_AFFINITY_ANNOTATION in annotations:
        anti_affinity = _split_groups(job, annotations[ANTI_AFFINITY_ANNOTATION])
    if TASK_ORDER_ANNOTATION in annotations:
        task_order = annotations[TASK_ORDER_ANNOTATION].split(",")
        _check_groups(job, [task_order])
    return TaskTopology(affinity, anti_affinity, task_order)


# ---------------------------------------------------------------------- buckets


def request_score(request: Resource) -> float:
    """1 CPU (in millicores), 1 Mi of memory and one unit of any scalar weigh the same."""
    return request.milli_cpu + request.memory / 1024 / 1024 + sum(request.scalar_resources.values())


@dataclass
class Bucket:
    """Pods of one job that should share a node: those still pending and those placed."""

    index: int
    tasks: dict[str, TaskInfo] = field(default_factory=dict)  # pending, by pod uid
    task_name_count: dict[str, int] = field(default_factory=dict)
    request_score: float = 0.0
    request: Resource = field(default_factory=Resource)
    bound_tasks: int = 0
    nodes: dict[str, int] = field(default_factory=dict)  # placed pods per node

    def add_task(self, name: str, task: TaskInfo) -> None:
        self.task_name_count[name] = self.task_name_count.get(name, 0) + 1
        if task.node_name:
            self.nodes[task.node_name] = self.nodes.get(task.node_name, 0) + 1
            self.bound_tasks += 1
            return
        self.tasks[task.uid] = task
        self.request_score += request_score(task.resreq)
        self.request = self.request.clone().add(task.resreq)

    def task_bound(self, task: TaskInfo) -> None:
        self.nodes[task.node_name] = self.nodes.get(task.node_name, 0) + 1
        self.bound_tasks += 1
        if self.tasks.pop(task.uid, None) is not None:
            self.request_score -= request_score(task.resreq)
            self.request = self.request.clone().sub_without_assert(task.resreq)


def _add_pair(pairs: dict[str, set[str]], left: str, right: str) -> None:
    pairs.setdefault(left, set()).add(right)


@dataclass
class JobManager:
    """One job's affinities and buckets (``JobManager``)."""

    job_id: str
    buckets: list[Bucket] = field(default_factory=list)
    pod_in_bucket: dict[str, int] = field(default_factory=dict)
    pod_in_task: dict[str, str] = field(default_factory=dict)
    task_affinity_priority: dict[str, int] = field(default_factory=dict)
    task_exist_order: dict[str, int] = field(default_factory=dict)
    inter_affinity: dict[str, set[str]] = field(default_factory=dict)
    self_affinity: set[str] = field(default_factory=set)
    inter_anti_affinity: dict[str, set[str]] = field(default_factory=dict)
    self_anti_affinity: set[str] = field(default_factory=set)
    bucket_max_size: int = 0
    node_task_set: dict[str, dict[str, int]] = field(default_factory=dict)

    def mark_topology(self, name: str, kind: TopologyType) -> None:
        priority = AFFINITY_PRIORITY[kind]
        if priority > self.task_affinity_priority.get(name, 0):
            self.task_affinity_priority[name] = priority

    def apply_topology(self, topology: TaskTopology) -> None:
        """``ApplyTaskTopology``: the groups as pair relations and priorities."""
        for group in topology.affinity or []:
            if len(group) == 1:
                self.self_affinity.add(group[0])
                self.mark_topology(group[0], TopologyType.SELF_AFFINITY)
                continue
            for index, source in enumerate(group):
                for other in group[:index]:
                    _add_pair(self.inter_affinity, source, other)
                    _add_pair(self.inter_affinity, other, source)
                self.mark_topology(source, TopologyType.INTER_AFFINITY)
        for group in topology.anti_affinity or []:
            if len(group) == 1:
                self.self_anti_affinity.add(group[0])
                self.mark_topology(group[0], TopologyType.SELF_ANTI_AFFINITY)
                continue
            for index, source in enumerate(group):
                for other in group[:index]:
                    _add_pair(self.inter_anti_affinity, source, other)
                    _add_pair(self.inter_anti_affinity, other, source)
                self.mark_topology(source, TopologyType.INTER_ANTI_AFFINITY)
        order = topology.task_order or []
        for index, name in enumerate(order):
            self.task_exist_order[name] = len(order) - index

    def new_bucket(self) -> Bucket:
        bucket = Bucket(index=len(self.buckets))
        self.buckets.append(bucket)
        return bucket

    def add_to_bucket(self, bucket: Bucket, name: str, task: TaskInfo) -> None:
        self.pod_in_bucket[task.uid] = bucket.index
        bucket.add_task(name, task)
        self.bucket_max_size = max(self.bucket_max_size, len(bucket.tasks) + bucket.bound_tasks)

    def affinity_order(self, left: TaskInfo, right: TaskInfo) -> int:
        """``taskAffinityOrder``: 1 when ``left`` should go first, -1 when ``right``."""
        left_name = self.pod_in_task.get(left.uid, "")
        right_name = self.pod_in_task.get(right.uid, "")
        if left_name == right_name:
            return 0
        for ranks in (self.task_exist_order, self.task_affinity_priority):
            left_rank, right_rank = ranks.get(left_name, 0), ranks.get(right_name, 0)
            if left_rank != right_rank:
                return 1 if left_rank > right_rank else -1
        return 0

    def task_set_affinity(self, name: str, counts: Mapping[str, int], only_anti: bool) -> int:
        """``checkTaskSetAffinity``: pods of ``counts`` that attract a pod of task ``name``
        minus those that repel it (attraction ignored with ``only_anti``)."""
        score = 0
        if not name:
            return score
        for other, count in counts.items():
            same = other == name
            if not only_anti:
                attracts = (
                    name in self.self_affinity
                    if same
                    else other in self.inter_affinity.get(name, ())
                )
                if attracts:
                    score += count
            repels = (
                name in self.self_anti_affinity
                if same
                else other in self.inter_anti_affinity.get(name, ())
            )
            if repels:
                score -= count
        return score

    def construct_buckets(self, tasks: Mapping[str, TaskInfo]) -> None:
        """``ConstructBucket``: the job's pods with a topology into buckets, in order."""
        with_topology: list[TaskInfo] = []
        for task in tasks.values():
            name = task_name(task)
            if not name or name not in self.task_affinity_priority:
                self.pod_in_bucket[task.uid] = OUT_OF_BUCKET
                continue
            self.pod_in_task[task.uid] = name
            with_topology.append(task)
        with_topology.sort(key=functools.cmp_to_key(self._bucket_order))
        by_node: dict[str, Bucket] = {}
        for task in with_topology:
            name = task_name(task)
            selected: Bucket | None = None
            if task.node_name:
                best = 0
                selected = by_node.get(task.node_name)
            else:
                best = -(2**31)
                for bucket in self.buckets:
                    affinity = self.task_set_affinity(name, bucket.task_name_count, False)
                    if affinity > best:
                        best, selected = affinity, bucket
                    elif (
                        affinity == best
                        and selected is not None
                        and bucket.request_score < selected.request_score
                    ):
                        selected = bucket
            if best < 0 or selected is None:
                selected = self.new_bucket()
                if task.node_name:
                    by_node[task.node_name] = selected
            self.add_to_bucket(selected, name, task)

    def _bucket_order(self, left: TaskInfo, right: TaskInfo) -> int:
        """The order pods are put into buckets (``TaskOrder`` reversed): placed pods first,
        by node name; then by task order and affinity priority, then by pod name."""
        if left.node_name or right.node_name:
            if bool(left.node_name) != bool(right.node_name):
                return -1 if left.node_name else 1
            return (left.node_name > right.node_name) - (left.node_name < right.node_name)
        order = self.affinity_order(left, right)
        if order != 0:
            return -order
        return (left.name > right.name) - (left.name < right.name)

    def task_bound(self, task: TaskInfo) -> None:
        name = task_name(task)
        if name:
            on_node = self.node_task_set.setdefault(task.node_name, {})
            on_node[name] = on_node.get(name, 0) + 1
        bucket = self.bucket_of(task)
        if bucket is not None:
            bucket.task_bound(task)

    def bucket_of(self, task: TaskInfo) -> Bucket | None:
        index = self.pod_in_bucket.get(task.uid, OUT_OF_BUCKET)
        return None if index == OUT_OF_BUCKET else self.buckets[index]


# ---------------------------------------------------------------------- the plugin


class TaskTopologyPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.weight = arguments.get_int(WEIGHT, 1)
        self.managers: dict[str, JobManager] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.managers = build_managers(ssn.jobs.values())
        if not self.managers:
            return
        ssn.add_task_order_fn(self.name, self.task_order)
        ssn.add_batch_node_order_fn(
            self.name, lambda task, rows: self.batch_node_order(ssn, task, rows)
        )
        ssn.add_event_handler(EventHandler(allocate=self._on_allocate, owner=self.name))

    def task_order(self, left: TaskInfo, right: TaskInfo) -> int:
        """``TaskOrderFn``: -1 puts ``left`` first."""
        left_manager = self.managers.get(left.job)
        right_manager = self.managers.get(right.job)
        if left_manager is None or right_manager is None:
            return 0
        left_bucket = left_manager.bucket_of(left)
        right_bucket = right_manager.bucket_of(right)
        if (left_bucket is None) != (right_bucket is None):
            return -1 if left_bucket is not None else 1
        if left.job != right.job or left_bucket is None or right_bucket is None:
            return 0
        if len(left_bucket.tasks) != len(right_bucket.tasks):
            return -1 if len(left_bucket.tasks) > len(right_bucket.tasks) else 1
        if left_bucket.index == right_bucket.index:
            return -left_manager.affinity_order(left, right)
        return -1 if left_bucket.index < right_bucket.index else 1

    def batch_node_order(self, ssn: Session, task: TaskInfo, rows: IntArray) -> FloatArray:
        """``NodeOrderFn`` over the given rows at once (``calcBucketScore``)."""
        scores: FloatArray = np.zeros(len(rows))
        manager = self.managers.get(task.job)
        bucket = manager.bucket_of(task) if manager is not None else None
        if manager is None or bucket is None:
            return scores
        matrix = ssn.matrix
        request, columns = ssn.task_vector(task.resreq)
        # Registers the bucket's resource names before the matrix is read (it may widen).
        ssn.task_vector(bucket.request)
        most = matrix.idle[rows] + matrix.releasing[rows]
        # The pod itself does not fit (some dimension strictly short): 0.
        fits_task = np.ones(len(rows), dtype=np.bool_)
        for column in columns.tolist():
            fits_task &= ~(most[:, column] < request[column])
        row_position = {int(row): position for position, row in enumerate(rows.tolist())}
        base = np.zeros(len(rows))
        for node_name, count in bucket.nodes.items():
            position = _position(ssn, node_name, row_position)
            if position is not None:
                base[position] += count
        name = task_name(task)
        for node_name, counts in manager.node_task_set.items():
            position = _position(ssn, node_name, row_position)
            if position is None:
                continue
            conflict = manager.task_set_affinity(name, counts, True)
            if conflict < 0:
                base[position] += conflict
        base += len(bucket.tasks)
        base -= self._pods_left_out(ssn, bucket, task, most)
        scores = np.where(fits_task, base * self.weight, 0.0)
        if manager.bucket_max_size:
            scores = scores * MAX_NODE_SCORE / manager.bucket_max_size
        return scores

    @staticmethod
    def _pods_left_out(
        ssn: Session, bucket: Bucket, task: TaskInfo, most: FloatArray
    ) -> FloatArray:
        """Per node, how many of the bucket's other pending pods must be taken out (in order)
        before what remains fits the node."""
        left_out = np.zeros(most.shape[0])
        remains = bucket.request.clone()
        vector, columns = ssn.task_vector(remains)
        undecided = ~fit_mask(vector, columns, most)
        for uid, other in bucket.tasks.items():
            if not undecided.any():
                break
            if uid == task.uid:
                continue
            remains = remains.clone().sub_without_assert(other.resreq)
            left_out[undecided] += 1
            vector, columns = ssn.task_vector(remains)
            undecided &= ~fit_mask(vector, columns, most)
        return left_out

    def _on_allocate(self, event: Event) -> None:
        manager = self.managers.get(event.task.job)
        if manager is not None:
            manager.task_bound(event.task)

    def on_session_close(self, ssn: Session) -> None:
        self.managers = {}


def bucket_score_reference(
    manager: JobManager, task: TaskInfo, node_name: str, most: Resource
) -> int:
    """The readable per-node rule (``calcBucketScore``) that ``batch_node_order`` vectorises,
    before weight and scaling; ``most`` is the node's idle + releasing."""
    if most.less_partly(task.resreq, DimensionDefault.ZERO):
        return 0
    bucket = manager.bucket_of(task)
    if bucket is None:
        return 0
    score = bucket.nodes.get(node_name, 0)
    counts = manager.node_task_set.get(node_name)
    if counts is not None:
        conflict = manager.task_set_affinity(task_name(task), counts, True)
        if conflict < 0:
            score += conflict
    score += len(bucket.tasks)
    if bucket.request.less_equal(most, DimensionDefault.ZERO):
        return score
    remains = bucket.request.clone()
    for uid, other in bucket.tasks.items():
        if uid == task.uid:
            continue
        remains = remains.sub_without_assert(other.resreq)
        score -= 1
        if remains.less_equal(most, DimensionDefault.ZERO):
            break
    return score


def _position(ssn: Session, node_name: str, row_position: Mapping[int, int]) -> int | None:
    node = ssn.nodes.get(node_name)
    return None if node is None else row_position.get(node.row)


def build_managers(jobs: Iterable[JobInfo]) -> dict[str, JobManager]:
    """``initBucket``: a manager for each job with pending pods and a valid topology."""
    managers: dict[str, JobManager] = {}
    for job in jobs:
        if not job.has_pending_tasks():
            continue
        try:
            topology = read_topology(job)
        except TopologyAnnotationError as error:
            warn_once(
                log,
                f"task-topology: PodGroup {job.namespace}/{job.name}: {error}; the job is "
                "scheduled without task topology",
            )
            continue
        if topology is None:
            continue
        manager = JobManager(job.uid)
        manager.apply_topology(topology)
        manager.construct_buckets(job.tasks)
        managers[job.uid] = manager
    return managers


def new(arguments: Arguments) -> TaskTopologyPlugin:
    return TaskTopologyPlugin(arguments)
