"""Sub-jobs: the sub-gangs a PodGroup's ``subGroupPolicy`` cuts a job into
(``api/sub_job_info.go``).

Each policy selects pods (``labelSelector``; none selects every pod) and groups them by the
values of ``matchLabelKeys`` (a pod missing one of those labels is not in the policy); every
group is a sub-job of ``subGroupSize`` pods that must start together and, with a
``networkTopology``, sit inside one HyperNode of the allowed tier. ``minSubGroups`` sub-jobs of
a policy must be ready before the job is. A pod that no policy takes belongs to the job's
*default* sub-job, which, for a job without policies, is the whole job.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.hypernode import LabelRequirement
from volcano_py.api.resource import Resource
from volcano_py.api.task import JobID, TaskID, TaskInfo
from volcano_py.api.types import ALLOCATED_STATUSES, TaskStatus

log = logging.getLogger(__name__)

_OPERATORS = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})
# Upstream hashes a sub-job id built from longer label values (FNV-32a there).
_MAX_ID_LENGTH = 128


@dataclass(frozen=True, slots=True)
class PodSelector:
    """A Kubernetes LabelSelector as ``LabelSelectorAsSelector`` reads it: empty selects
    every pod; an invalid one (unknown operator, In without values, ...) selects none."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelRequirement, ...] = ()
    valid: bool = True

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> PodSelector:
        labels = raw.get("matchLabels") or {}
        requirements: list[LabelRequirement] = []
        valid = isinstance(labels, Mapping)
        for entry in raw.get("matchExpressions") or []:
            if not isinstance(entry, Mapping):
                valid = False
                continue
            operator = str(entry.get("operator") or "")
            values = [str(v) for v in entry.get("values") or []]
            if operator not in _OPERATORS or (operator in ("In", "NotIn")) != bool(values):
                valid = False
            requirements.append(
                LabelRequirement(str(entry.get("key") or ""), operator, frozenset(values))
            )
        pairs = tuple(sorted((str(k), str(v)) for k, v in labels.items())) if valid else ()
        return cls(pairs, tuple(requirements), valid)

    def matches(self, labels: Mapping[str, str]) -> bool:
        if not self.valid:
            return False
        if any(labels.get(key) != value for key, value in self.match_labels):
            return False
        return all(requirement.matches(labels) for requirement in self.match_expressions)


@dataclass(frozen=True, slots=True)
class SubGroupPolicy:
    """One entry of ``PodGroup.spec.subGroupPolicy``, as the scheduler reads it."""

    name: str
    sub_group_size: int = 1
    min_sub_groups: int = 0
    match_label_keys: tuple[str, ...] = ()
    selector: PodSelector | None = None
    network_topology: Mapping[str, Any] | None = None

    @classmethod
    def from_raw(cls, raw: Mapping[str, Any]) -> SubGroupPolicy:
        selector = raw.get("labelSelector")
        size = raw.get("subGroupSize")
        return cls(
            name=str(raw.get("name") or ""),
            sub_group_size=int(size) if size is not None else 1,
            min_sub_groups=int(raw.get("minSubGroups") or 0),
            match_label_keys=tuple(str(key) for key in raw.get("matchLabelKeys") or ()),
            selector=PodSelector.from_raw(selector) if isinstance(selector, Mapping) else None,
            network_topology=raw.get("networkTopology"),
        )

    def match_values(self, labels: Mapping[str, str]) -> list[str] | None:
        """``getSubJobMatchValues``: None when the pod is not in this policy; the values of
        ``matchLabelKeys`` otherwise (an empty list: the policy has no keys)."""
        if self.selector is not None and not self.selector.matches(labels):
            return None
        values: list[str] = []
        for key in self.match_label_keys:
            value = labels.get(key)
            if not value:
                return None
            values.append(value)
        return values


def parse_sub_group_policies(raw: object) -> tuple[SubGroupPolicy, ...]:
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        return ()
    return tuple(SubGroupPolicy.from_raw(p) for p in raw if isinstance(p, Mapping))


def sub_job_gid(job: JobID, policy: str) -> str:
    return f"{job}/{policy}"


def sub_job_id(job: JobID, policy: str, values: Sequence[str]) -> str:
    joined = "-".join(values)
    if len(joined) > _MAX_ID_LENGTH:
        joined = hashlib.sha256(joined.encode()).hexdigest()[:16]
    return f"{job}/{policy}-{joined}"


def _topology_copy(spec: Mapping[str, Any] | None) -> dict[str, Any] | None:
    return dict(spec) if spec is not None else None


@dataclass(slots=True)
class SubJobInfo:
    """A sub-gang of a job: its tasks (by status), its size, its own network topology (a
    copy the session may rewrite), and the HyperNode its placed tasks occupy."""

    gid: str
    uid: str
    job: JobID
    min_available: int = 1
    match_index: int = 0
    network_topology: dict[str, Any] | None = None
    tasks: dict[TaskID, TaskInfo] = field(default_factory=dict)
    task_status_index: dict[TaskStatus, dict[TaskID, TaskInfo]] = field(default_factory=dict)
    # The highest priority of its tasks (the priority plugin's sub-job order).
    priority: int = 0
    allocated_hyper_node: str = ""
    # Chosen by gangpreempt/gangreclaim; allocate tries it first and clears it on commit.
    nominated_hyper_node: str = ""

    @classmethod
    def for_policy(
        cls,
        job: JobID,
        policy: SubGroupPolicy | None,
        values: Sequence[str],
        *,
        gid: str,
        uid: str,
        min_available: int = 1,
        network_topology: Mapping[str, Any] | None = None,
    ) -> SubJobInfo:
        index = 0
        if values:
            try:
                index = int(values[0])
            except ValueError:
                index = 0
        if policy is not None:
            min_available = policy.sub_group_size
            network_topology = policy.network_topology
        return cls(
            gid=gid,
            uid=uid,
            job=job,
            min_available=min_available,
            match_index=index,
            network_topology=_topology_copy(network_topology),
        )

    # ------------------------------------------------------------------ tasks

    def add_task(self, task: TaskInfo) -> None:
        self.tasks[task.uid] = task
        self.task_status_index.setdefault(task.status, {})[task.uid] = task
        if task.priority > self.priority:
            self.priority = task.priority

    def delete_task(self, task: TaskInfo) -> None:
        existing = self.tasks.pop(task.uid, None)
        if existing is None:
            return
        bucket = self.task_status_index.get(existing.status)
        if bucket is not None:
            bucket.pop(existing.uid, None)
            if not bucket:
                del self.task_status_index[existing.status]
        if existing.priority >= self.priority:
            # Upstream's highest priority starts from 0: negative ones never raise it.
            self.priority = max(
                (t.priority for t in self.tasks.values() if t.priority > 0), default=0
            )

    def tasks_in(self, status: TaskStatus) -> dict[TaskID, TaskInfo]:
        return self.task_status_index.get(status, {})

    # ------------------------------------------------------------------ gang

    def ready_task_num(self) -> int:
        index = self.task_status_index
        return sum(
            len(index.get(status, ()))
            for status in (
                TaskStatus.BOUND,
                TaskStatus.BINDING,
                TaskStatus.RUNNING,
                TaskStatus.ALLOCATED,
                TaskStatus.SUCCEEDED,
            )
        )

    def waiting_task_num(self) -> int:
        return len(self.tasks_in(TaskStatus.PIPELINED))

    def pending_best_effort_task_num(self) -> int:
        return sum(1 for task in self.tasks_in(TaskStatus.PENDING).values() if task.best_effort)

    def allocated_task_num(self) -> int:
        index = self.task_status_index
        return sum(len(index.get(status, ())) for status in ALLOCATED_STATUSES)

    def is_ready(self) -> bool:
        return self.ready_task_num() + self.pending_best_effort_task_num() >= self.min_available

    def is_pipelined(self) -> bool:
        return (
            self.waiting_task_num() + self.ready_task_num() + self.pending_best_effort_task_num()
            >= self.min_available
        )

    # ------------------------------------------------------------------ topology

    def hard_topology(self) -> tuple[bool, int]:
        """``IsHardTopologyMode``: hard only with a highest tier; a missing mode is the CRD's
        default, ``hard``."""
        topology = self.network_topology
        if topology is None:
            return False, 0
        tier = topology.get("highestTierAllowed")
        if tier is None:
            return False, 0
        return topology.get("mode") in (None, "", "hard"), int(tier)

    def soft_topology(self) -> bool:
        return self.network_topology is not None and self.network_topology.get("mode") == "soft"

    def with_network_topology(self) -> bool:
        return self.network_topology is not None

    def convert_to_hard_topology(self, max_tier: int) -> None:
        """``ConvertToHardTopology``: a soft constraint becomes hard up to ``max_tier`` (the
        session's way of giving soft sub-jobs the hard search with no real restriction)."""
        spec = self.network_topology
        if spec is None or spec.get("mode") != "soft":
            return
        spec.update(mode="hard", highestTierAllowed=max_tier)
        spec.pop("highestTierName", None)

    def min_resources(self) -> Resource:
        """What its Pending tasks ask for (``GetMinResources``): a sub-job is placed whole,
        so this is the resource pre-filter of its HyperNode search."""
        total = Resource()
        for task in self.tasks_in(TaskStatus.PENDING).values():
            total.add(task.init_resreq)
        return total

    def copy_status_from(self, other: SubJobInfo) -> None:
        """``CloneStatusFrom``: what outlives a session."""
        self.allocated_hyper_node = other.allocated_hyper_node
        self.nominated_hyper_node = other.nominated_hyper_node
