"""TaskInfo: the scheduler's view of one pod (``pkg/scheduler/api/job_info.go`` ``NewTaskInfo``).

Built once per pod event from the raw pod dict; the session works on cheap clones of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, cast

from volcano_py.api.resource import Resource, pod_request
from volcano_py.api.types import (
    GROUP_NAME_ANNOTATION,
    PREEMPTABLE_KEY,
    QUEUE_ALLOCATION_GATE,
    REVOCABLE_ZONE_KEY,
    TASK_PRIORITY_ANNOTATION,
    TASK_SPEC_KEY,
    TaskStatus,
    TransactionContext,
)

TaskID = str
JobID = str

_TRUE_STRINGS = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_FALSE_STRINGS = frozenset({"0", "f", "F", "false", "FALSE", "False"})


def parse_go_bool(value: str) -> bool | None:
    """``strconv.ParseBool``: the spellings Go accepts, else None."""
    if value in _TRUE_STRINGS:
        return True
    if value in _FALSE_STRINGS:
        return False
    return None


_GO_DECIMAL_INT = re.compile(r"[+-]?[0-9]+")
_INT32_MIN, _INT32_MAX = -(2**31), 2**31 - 1


def parse_go_int32(value: object) -> int | None:
    """``strconv.ParseInt(value, 10, 32)``: an optional sign and decimal digits within int32,
    else None (Python's ``int`` would also take spaces, underscores and other digits)."""
    if not isinstance(value, str) or not _GO_DECIMAL_INT.fullmatch(value):
        return None
    number = int(value)
    return number if _INT32_MIN <= number <= _INT32_MAX else None


def _meta(pod: Mapping[str, Any]) -> Mapping[str, Any]:
    return pod.get("metadata") or {}


def pod_key(pod: Mapping[str, Any]) -> str:
    meta = _meta(pod)
    return f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"


def task_status_of_pod(pod: Mapping[str, Any]) -> TaskStatus:
    """``getTaskStatus``: the task status a pod's phase and deletion mark imply."""
    return _status_of(pod, _meta(pod), pod.get("spec") or {})


def _status_of(
    pod: Mapping[str, Any], meta: Mapping[str, Any], spec: Mapping[str, Any]
) -> TaskStatus:
    phase = (pod.get("status") or {}).get("phase") or ""
    deleting = bool(meta.get("deletionTimestamp"))
    if phase == "Running":
        return TaskStatus.RELEASING if deleting else TaskStatus.RUNNING
    if phase == "Pending":
        if deleting:
            return TaskStatus.RELEASING
        return TaskStatus.BOUND if spec.get("nodeName") else TaskStatus.PENDING
    if phase == "Succeeded":
        return TaskStatus.SUCCEEDED
    if phase == "Failed":
        return TaskStatus.FAILED
    return TaskStatus.UNKNOWN


def task_status_from(
    pod: Mapping[str, Any], meta: Mapping[str, Any], spec: Mapping[str, Any]
) -> TaskStatus:
    """``task_status_of_pod(pod)`` given the pod's metadata and spec already read."""
    return _status_of(pod, meta, spec)


def job_id_of_pod(pod: Mapping[str, Any]) -> JobID:
    """``<namespace>/<group-name annotation>``, or "" for a pod that belongs to no PodGroup."""
    meta = _meta(pod)
    group = (meta.get("annotations") or {}).get(GROUP_NAME_ANNOTATION)
    if not group:
        return ""
    return f"{meta.get('namespace') or 'default'}/{group}"


def task_role_of_pod(pod: Mapping[str, Any]) -> str:
    meta = _meta(pod)
    role = (meta.get("annotations") or {}).get(TASK_SPEC_KEY)
    if role:
        return str(role)
    return str((meta.get("labels") or {}).get(TASK_SPEC_KEY) or "")


def pod_preemptable(pod: Mapping[str, Any]) -> bool:
    """``volcano.sh/preemptable`` (annotation first, then label); default true, an
    unparseable value means false."""
    meta = _meta(pod)
    for source in (meta.get("annotations") or {}, meta.get("labels") or {}):
        if PREEMPTABLE_KEY in source:
            return parse_go_bool(str(source[PREEMPTABLE_KEY])) is True
    return True


def pod_revocable_zone(pod: Mapping[str, Any]) -> str:
    annotations = _meta(pod).get("annotations") or {}
    if REVOCABLE_ZONE_KEY in annotations:
        return "*" if annotations[REVOCABLE_ZONE_KEY] == "*" else ""
    if parse_go_bool(str(annotations.get(PREEMPTABLE_KEY, ""))) is True:
        return "*"
    return ""


def scheduling_gates(pod: Mapping[str, Any]) -> list[str]:
    gates = (pod.get("spec") or {}).get("schedulingGates") or []
    return [str(gate.get("name", "")) for gate in gates]


def has_only_volcano_gate(pod: Mapping[str, Any]) -> bool:
    return scheduling_gates(pod) == [QUEUE_ALLOCATION_GATE]


@dataclass(slots=True)
class TaskInfo:
    uid: TaskID
    job: JobID
    name: str
    namespace: str
    pod: Mapping[str, Any]
    resreq: Resource
    init_resreq: Resource
    status: TaskStatus = TaskStatus.PENDING
    node_name: str = ""
    task_role: str = ""
    priority: int = 1
    preemptable: bool = True
    best_effort: bool = False
    sch_gated: bool = False
    revocable_zone: str = ""
    creation_timestamp: str = ""
    # Where the last in-session transaction put the task (drives the "why pending" texts).
    last_transaction: TransactionContext | None = None
    eviction_occurred: bool = False
    job_allocated_hyper_node: str = ""
    # Annotations the scheduler adds on the Binding (device decisions and the like).
    pod_annotations: dict[str, str] = field(default_factory=dict)
    # Facts plugins derive from the (immutable) pod, computed once per pod rather than once
    # per session: every copy of the task shares this memo. See ``derived_fact``.
    derived: dict[str, Any] = field(default_factory=dict)
    # Node locks (annotation names, ``api.node_lock``) the binder takes on the task's node
    # before the Binding: deviceshare's NodeLockEnable.
    bind_node_locks: tuple[str, ...] = ()
    # DRA: what the bind writes into the pod's ResourceClaims, by claim key (namespace/name):
    # the allocation the session made, or None for a claim allocated before (only reserved
    # for the pod). Empty for a pod without claims.
    claim_allocations: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    @classmethod
    def from_pod(cls, pod: Mapping[str, Any], request: Resource | None = None) -> TaskInfo:
        """``request``: ``pod_request(pod)`` when the caller already knows it.

        What ``job_id_of_pod``, ``task_role_of_pod``, ``pod_preemptable``,
        ``pod_revocable_zone`` and ``task_status_of_pod`` read, read here once (the same
        expressions): a pod event costs one of these, 100k+ in a 5k-node simulate."""
        meta = _meta(pod)
        spec = pod.get("spec") or {}
        if request is None:
            request = pod_request(pod)
        annotations = meta.get("annotations") or {}
        labels = meta.get("labels") or {}
        namespace = meta.get("namespace") or "default"
        priority = spec.get("priority")
        group = annotations.get(GROUP_NAME_ANNOTATION)
        role = annotations.get(TASK_SPEC_KEY)
        preemptable = True
        for source in (annotations, labels):
            if PREEMPTABLE_KEY in source:
                preemptable = parse_go_bool(str(source[PREEMPTABLE_KEY])) is True
                break
        if REVOCABLE_ZONE_KEY in annotations:
            revocable_zone = "*" if annotations[REVOCABLE_ZONE_KEY] == "*" else ""
        elif parse_go_bool(str(annotations.get(PREEMPTABLE_KEY, ""))) is True:
            revocable_zone = "*"
        else:
            revocable_zone = ""
        # Positional, in the fields' order (uid ... creation time, then last_transaction,
        # eviction_occurred, job_allocated_hyper_node at their defaults): keywords cost a
        # name lookup each, 130k+ times in a 5k-node simulate.
        task = cls(
            str(meta.get("uid") or f"{namespace}/{meta.get('name', '')}"),
            f"{namespace}/{group}" if group else "",
            str(meta.get("name", "")),
            str(namespace),
            pod,
            request,
            request,
            _status_of(pod, meta, spec),
            str(spec.get("nodeName") or ""),
            str(role) if role else str(labels.get(TASK_SPEC_KEY) or ""),
            int(priority) if priority is not None else 1,
            preemptable,
            request.is_empty(),
            bool(scheduling_gates(pod)) if spec.get("schedulingGates") else False,
            revocable_zone,
            str(meta.get("creationTimestamp") or ""),
            None,
            False,
            "",
            dict(annotations),
        )
        override = parse_go_int32(annotations.get(TASK_PRIORITY_ANNOTATION))
        if override is not None:
            task.priority = override
        return task

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def preemption_policy_never(self) -> bool:
        return (self.pod.get("spec") or {}).get("preemptionPolicy") == "Never"

    @property
    def nominated_node_name(self) -> str:
        return str((self.pod.get("status") or {}).get("nominatedNodeName") or "")

    @property
    def only_volcano_gated(self) -> bool:
        return self.sch_gated and has_only_volcano_gate(self.pod)

    def transaction_context(self) -> TransactionContext:
        return TransactionContext(
            node_name=self.node_name,
            eviction_occurred=self.eviction_occurred,
            job_allocated_hyper_node=self.job_allocated_hyper_node,
            status=self.status,
        )

    def remember_transaction(self) -> None:
        self.last_transaction = self.transaction_context()

    def clone(self) -> TaskInfo:
        """An independent copy for a session; the pod dict and resources are shared because
        nobody mutates them after construction. The binding annotations and the last
        transaction are the copy's own (plugins write them during a session)."""
        last = self.last_transaction
        if last is not None:
            last = TransactionContext(
                last.node_name, last.eviction_occurred, last.job_allocated_hyper_node, last.status
            )
        copy = TaskInfo(
            self.uid,
            self.job,
            self.name,
            self.namespace,
            self.pod,
            self.resreq,
            self.init_resreq,
            self.status,
            self.node_name,
            self.task_role,
            self.priority,
            self.preemptable,
            self.best_effort,
            self.sch_gated,
            self.revocable_zone,
            self.creation_timestamp,
            last,
            self.eviction_occurred,
            self.job_allocated_hyper_node,
            dict(self.pod_annotations),
            self.derived,
            self.bind_node_locks,
            dict(self.claim_allocations) if self.claim_allocations else {},
        )
        return copy

    def __str__(self) -> str:
        return (
            f"Task ({self.uid}:{self.namespace}/{self.name}): job {self.job}, status {self.status},"
            f" pri {self.priority}, resreq {self.resreq}"
        )


def derived_fact(task: TaskInfo, name: str, compute: Callable[[TaskInfo], Any]) -> Any:
    """``compute(task)`` memoised on the task for facts that depend only on its pod."""
    found = task.derived.get(name, _MISSING)
    if found is _MISSING:
        found = task.derived[name] = compute(task)
    return found


_MISSING: Any = object()


def same_pod_template(left: TaskInfo, right: TaskInfo) -> bool:
    """Do the two tasks ask alike: the same pod spec, namespace, labels and annotations (the
    pod's and the Binding's), request, role and priority? Two members of a gang usually do;
    they then differ only in name, uid and status. A plugin that lets allocate place such a
    run in one pass (``batch_safe``) answers from these alone."""
    if left.pod is right.pod:
        return True
    left_meta, right_meta = _meta(left.pod), _meta(right.pod)
    return (
        _alike_but_annotations(left, right, left_meta, right_meta)
        and left_meta.get("annotations") == right_meta.get("annotations")
        and left.pod_annotations == right.pod_annotations
    )


def same_pod_template_but_group(left: TaskInfo, right: TaskInfo) -> bool:
    """``same_pod_template`` for tasks of two jobs: alike in everything it compares but the
    group-name annotation, which names each pod's job (bare pods the PodGroup controller gave
    a group each, one-pod jobs). Only a plugin whose answers read nothing of the task's job
    may let a run of like tasks go on across jobs (``Session.runs_across_jobs``)."""
    left_meta, right_meta = _meta(left.pod), _meta(right.pod)
    return (
        _alike_but_annotations(left, right, left_meta, right_meta)
        and _but_group(left_meta.get("annotations")) == _but_group(right_meta.get("annotations"))
        and _but_group(left.pod_annotations) == _but_group(right.pod_annotations)
    )


def _alike_but_annotations(
    left: TaskInfo,
    right: TaskInfo,
    left_meta: Mapping[str, Any],
    right_meta: Mapping[str, Any],
) -> bool:
    """What both template tests compare before the annotations, in the same order."""
    return (
        left.namespace == right.namespace
        and left.task_role == right.task_role
        and left.priority == right.priority
        and left.resreq == right.resreq
        and left.init_resreq == right.init_resreq
        and left.pod.get("spec") == right.pod.get("spec")
        and left_meta.get("labels") == right_meta.get("labels")
    )


def _but_group(annotations: Mapping[str, Any] | None) -> Mapping[str, Any]:
    if not annotations:
        return {}
    if GROUP_NAME_ANNOTATION not in annotations:
        return annotations
    return {key: value for key, value in annotations.items() if key != GROUP_NAME_ANNOTATION}


def pod_index_of_name(name: str) -> int | None:
    """The numeric index at the end of a pod name made by a controller (``job-worker-3``)."""
    parts = name.split("-")
    if len(parts) < 3:
        return None
    try:
        return int(parts[-1])
    except ValueError:
        return None


_POD_INDEX = "pod_index"


def pod_index(task: TaskInfo) -> int | None:
    """``pod_index_of_name`` of the task's pod, parsed once per pod: sorting asks it of the same
    tasks every session. Kept in the task's memo, not in a cache keyed by name, so it goes
    with the pod (a process-wide memo kept the names of deleted pods: 14 MiB at 65,536)."""
    derived = task.derived
    found = derived.get(_POD_INDEX, _MISSING)
    if found is _MISSING:
        found = derived[_POD_INDEX] = pod_index_of_name(task.name)
    return cast("int | None", found)


def compare_tasks_key(tasks: Iterable[TaskInfo]) -> Callable[[TaskInfo], tuple[Any, ...]] | None:
    """A sort key that orders ``tasks`` exactly as ``compare_tasks`` does, or None.

    ``compare_tasks`` reads the pod index only when both tasks have one, so over tasks of
    which some have an index and some not it is not a lexicographic order (it need not even
    be transitive): no key then. Otherwise (pod index,) creation time, UID: the UID makes the
    key unique within a job, whose tasks are keyed by it."""
    indexed = [pod_index(task) is not None for task in tasks]
    if all(indexed):
        return _indexed_task_key
    if not any(indexed):
        return _unindexed_task_key
    return None


def _indexed_task_key(task: TaskInfo) -> tuple[Any, ...]:
    return (pod_index(task), task.creation_timestamp, task.uid)


def _unindexed_task_key(task: TaskInfo) -> tuple[Any, ...]:
    return (task.creation_timestamp, task.uid)


def compare_tasks(left: TaskInfo, right: TaskInfo) -> int:
    """The fallback task order (``CompareTask``): pod index, then creation time, then UID.
    Negative means ``left`` goes first."""
    left_index, right_index = pod_index(left), pod_index(right)
    if left_index is not None and right_index is not None and left_index != right_index:
        return -1 if left_index < right_index else 1
    if left.creation_timestamp != right.creation_timestamp:
        return -1 if left.creation_timestamp < right.creation_timestamp else 1
    if left.uid != right.uid:
        return -1 if left.uid < right.uid else 1
    return 0
