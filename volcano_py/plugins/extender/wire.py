"""The extender protocol's JSON, shaped as Volcano's Go ``encoding/json`` writes it.

Upstream posts its own scheduler structs (``api.TaskInfo``, ``NodeInfo``, ``JobInfo``,
``QueueInfo``); they carry no JSON tags, so the keys are the Go field names (``UID``,
``Resreq``, ``MilliCPU``...), task statuses are Volcano's bit-flag integers, Kubernetes objects
(``Pod``, ``Node``, ``PodGroup``, ``Queue``) are their API JSON. An extender written against
Volcano reads these bodies unchanged. Fields volcano-py does not model are written with Go's
zero value (``null``, ``false``, ``0``, ``{}``): DRA requests, NUMA information, revocable
nodes, namespace quota status, sub-jobs, disruption budgets.

Responses are read as Go reads them: keys match case-insensitively, unknown keys are ignored,
a value of the wrong type is an error.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_usage import NO_USAGE, NodeUsage
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TransactionContext

GO_ZERO_TIME: Final = "0001-01-01T00:00:00Z"
POD_GROUP_VERSION: Final = "v1beta1"


class WireError(ValueError):
    """A response body that does not decode into the expected shape."""


def resource(value: Resource | None) -> dict[str, Any] | None:
    if value is None:
        return None
    return {
        "MilliCPU": value.milli_cpu,
        "Memory": value.memory,
        "ScalarResources": dict(value.scalar_resources) or None,
        "MaxTaskNum": value.max_task_num,
    }


def _transaction(context: TransactionContext) -> dict[str, Any]:
    return {
        "NodeName": context.node_name,
        "EvictionOccurred": context.eviction_occurred,
        "JobAllocatedHyperNode": context.job_allocated_hyper_node,
        "Status": int(context.status),
    }


def _has_restartable_init_container(pod: Mapping[str, Any]) -> bool:
    init = (pod.get("spec") or {}).get("initContainers") or []
    return any(c.get("restartPolicy") == "Always" for c in init if isinstance(c, Mapping))


def task(value: TaskInfo) -> dict[str, Any]:
    last = value.last_transaction
    return {
        "UID": value.uid,
        "Job": value.job,
        "Name": value.name,
        "Namespace": value.namespace,
        "TaskRole": value.task_role,
        "Resreq": resource(value.resreq),
        "InitResreq": resource(value.init_resreq),
        "DRAResreq": None,
        "ResourceClaimKeys": None,
        "ResourceClaimDRAResreq": None,
        **_transaction(value.transaction_context()),
        "LastTransaction": _transaction(last) if last is not None else None,
        "Priority": value.priority,
        "VolumeReady": False,
        "Preemptable": value.preemptable,
        "BestEffort": value.best_effort,
        "HasRestartableInitContainer": _has_restartable_init_container(value.pod),
        "SchGated": value.sch_gated,
        "RevocableZone": value.revocable_zone,
        "NumaInfo": None,
        "Pod": value.pod,
        "PodAnnotations": dict(value.pod_annotations),
        "CustomBindErrHandlerSucceeded": False,
    }


def go_time(seconds: float) -> str:
    """A Go ``time.Time`` as JSON writes it (RFC 3339 with nanoseconds); the zero time for a
    moment never set."""
    if seconds == float("-inf") or seconds != seconds:
        return GO_ZERO_TIME
    return datetime.fromtimestamp(seconds, tz=UTC).isoformat().replace("+00:00", "Z")


def node_usage(value: NodeUsage) -> dict[str, Any]:
    return {
        "MetricsTime": go_time(value.metrics_time),
        "CPUUsageAvg": dict(value.cpu_usage_avg),
        "MEMUsageAvg": dict(value.mem_usage_avg),
    }


def node(value: NodeInfo, usage: NodeUsage = NO_USAGE) -> dict[str, Any]:
    return {
        "Name": value.name,
        "Node": value.node,
        "State": {"Phase": int(value.phase), "Reason": value.phase_reason},
        "Releasing": resource(value.releasing),
        "Pipelined": resource(value.pipelined),
        "Idle": resource(value.idle),
        "Used": resource(value.used),
        "Allocatable": resource(value.allocatable),
        "Capacity": resource(value.capacity),
        "ResourceUsage": node_usage(usage),
        "Tasks": {key: task(t) for key, t in value.tasks.items()},
        "NumaInfo": None,
        "UnassignedNumaPods": None,
        "NumaSchedulerInfo": None,
        "RevocableZone": value.revocable_zone,
        "Others": None,
        "OversubscriptionNode": False,
        "OfflineJobEvicting": False,
        "OversubscriptionResource": None,
        "ImageStates": None,
        "Generation": 0,
        "BindGeneration": 0,
    }


def _meta_time(value: str) -> str | None:
    """A ``metav1.Time``: its RFC 3339 text, ``null`` when unset."""
    return value or None


def job(value: JobInfo) -> dict[str, Any]:
    pod_group = value.pod_group
    return {
        "UID": value.uid,
        "PgUID": pod_group.uid if pod_group is not None else "",
        "Name": value.name,
        "Namespace": value.namespace,
        "Queue": value.queue,
        "Priority": value.priority,
        "MinAvailable": value.min_available,
        "WaitingTime": (int(value.waiting_time * 1e9) if value.waiting_time is not None else None),
        "JobFitErrors": value.job_fit_errors,
        # FitErrors has only unexported fields: Go writes each as an empty object.
        "NodesFitErrors": {key: {} for key in value.nodes_fit_errors},
        "AllocatedHyperNode": value.allocated_hyper_node,
        "NetworkTopology": value.network_topology,
        "SubJobs": {},
        "TaskToSubJob": {},
        "MinSubJobs": {},
        "TaskStatusIndex": {
            str(int(status)): {uid: task(t) for uid, t in tasks.items()}
            for status, tasks in value.task_status_index.items()
            if tasks
        },
        "Tasks": {uid: task(t) for uid, t in value.tasks.items()},
        "TaskMinAvailable": dict(value.task_min_available),
        "TaskMinAvailableTotal": value.task_min_available_total,
        "Allocated": resource(value.allocated),
        "TotalRequest": resource(value.total_request),
        "CreationTimestamp": _meta_time(value.creation_timestamp),
        # api.PodGroup embeds the PodGroup object, so its fields sit at the top level.
        "PodGroup": (
            {**pod_group.raw, "Version": POD_GROUP_VERSION} if pod_group is not None else None
        ),
        "ScheduleStartTimestamp": (
            go_time(value.schedule_start_timestamp) if value.schedule_start_timestamp else None
        ),
        "Preemptable": value.preemptable,
        "RevocableZone": value.revocable_zone,
        "Budget": None,
    }


def queue(value: QueueInfo) -> dict[str, Any]:
    return {
        "UID": value.uid,
        "Name": value.name,
        "Weight": value.weight,
        "Weights": value.hierarchy_weights,
        "Hierarchy": value.hierarchy,
        "Queue": value.raw or None,
    }


# ---------------------------------------------------------------------- responses


def field(body: object, name: str) -> Any:
    """``body[name]`` matched as Go's decoder does (exact key first, else case-insensitive);
    None when absent."""
    if body is None:
        return None
    if not isinstance(body, Mapping):
        raise WireError(f"expected a JSON object, got {type(body).__name__}")
    if name in body:
        return body[name]
    lowered = name.lower()
    for key, value in body.items():
        if isinstance(key, str) and key.lower() == lowered:
            return value
    return None


def as_str(value: object, name: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise WireError(f"{name}: expected a string, got {value!r}")
    return value


def as_int(value: object, name: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise WireError(f"{name}: expected an integer, got {value!r}")
    return int(value)


def as_bool(value: object, name: str) -> bool:
    if value is None:
        return False
    if not isinstance(value, bool):
        raise WireError(f"{name}: expected true or false, got {value!r}")
    return value


def as_scores(value: object, name: str) -> dict[str, float] | None:
    if value is None:
        return None
    if not isinstance(value, Mapping):
        raise WireError(f"{name}: expected an object of node scores, got {value!r}")
    scores: dict[str, float] = {}
    for key, score in value.items():
        if isinstance(score, bool) or not isinstance(score, (int, float)):
            raise WireError(f"{name}.{key}: expected a number, got {score!r}")
        scores[str(key)] = float(score)
    return scores


def victim_uids(value: object, name: str) -> list[str]:
    """The ``UID`` of every task in a victims list."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise WireError(f"{name}: expected a list of tasks, got {value!r}")
    return [as_str(field(item, "UID"), f"{name}[{i}].UID") for i, item in enumerate(value)]
