"""The controllers' metrics: ``pkg/controllers/metrics`` (job.go, queue.go) and the job and
jobflow state machines' (``pkg/controllers/{job,jobflow}/state/metrics.go``), with Volcano's
names, types and labels."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping
from typing import Final

from prometheus_client import Gauge, Histogram

from volcano_py.metrics import buckets
from volcano_py.metrics.registry import CONTROLLERS_REGISTRY, NAMESPACE, BareCounter

_REG: Final = CONTROLLERS_REGISTRY

JOB_TO_POD_CREATION_LATENCY: Final = Histogram(
    "controller_job_to_pod_creation_latency_milliseconds",
    "Latency from VCJob creation to pod created in milliseconds",
    namespace=NAMESPACE,
    buckets=buckets.MS_50_TO_60000_30,
    registry=_REG,
)

# PodGroup phase -> volcano_queue_pod_group_<phase>_count (``UpdateQueueMetrics``).
QUEUE_POD_GROUP_COUNTS: Final = {
    phase: Gauge(
        f"queue_pod_group_{phase.lower()}_count",
        f"The number of {phase} PodGroup in this queue",
        ["queue_name"],
        namespace=NAMESPACE,
        registry=_REG,
    )
    for phase in ("Inqueue", "Pending", "Running", "Unknown", "Completed")
}

# job_name is "<namespace>/<name>", queue_name the job's spec.queue (as upstream).
JOB_COMPLETED_PHASE_COUNT: Final = BareCounter(
    "job_completed_phase_count",
    "Number of job completed phase",
    ["job_name", "queue_name"],
    registry=_REG,
)
JOB_FAILED_PHASE_COUNT: Final = BareCounter(
    "job_failed_phase_count",
    "Number of job failed phase",
    ["job_name", "queue_name"],
    registry=_REG,
)
JOBFLOW_SUCCEED_PHASE_COUNT: Final = BareCounter(
    "jobflow_succeed_phase_count",
    "Number of jobflow succeed phase",
    ["jobflow_namespace"],
    registry=_REG,
)
JOBFLOW_FAILED_PHASE_COUNT: Final = BareCounter(
    "jobflow_failed_phase_count",
    "Number of jobflow failed phase",
    ["jobflow_namespace"],
    registry=_REG,
)


def queue_pod_groups_counted(queue: str, counts: Mapping[str, int]) -> None:
    """``UpdateQueueMetrics``: the queue's PodGroups by phase; a phase none is in is 0."""
    for phase, gauge in QUEUE_POD_GROUP_COUNTS.items():
        gauge.labels(queue_name=queue).set(counts.get(phase, 0))


def forget_queue(queue: str) -> None:
    """``DeleteQueueMetrics`` of the queue controller."""
    for gauge in QUEUE_POD_GROUP_COUNTS.values():
        with contextlib.suppress(KeyError):
            gauge.remove(queue)


def job_finished(namespace: str, name: str, queue: str, phase: str) -> None:
    """``UpdateJobCompleted`` / ``UpdateJobFailed``: the job reached Completed or Failed."""
    if phase == "Completed":
        JOB_COMPLETED_PHASE_COUNT.inc(f"{namespace}/{name}", queue)
    elif phase == "Failed":
        JOB_FAILED_PHASE_COUNT.inc(f"{namespace}/{name}", queue)


def forget_job(namespace: str, name: str, queue: str) -> None:
    """``state.DeleteJobMetrics``: a deleted job's series."""
    JOB_COMPLETED_PHASE_COUNT.remove(f"{namespace}/{name}", queue)
    JOB_FAILED_PHASE_COUNT.remove(f"{namespace}/{name}", queue)


def jobflow_finished(namespace: str, phase: str) -> None:
    """``UpdateJobFlowSucceed`` / ``UpdateJobFlowFailed`` (by namespace, as upstream)."""
    if phase == "Succeed":
        JOBFLOW_SUCCEED_PHASE_COUNT.inc(namespace)
    elif phase == "Failed":
        JOBFLOW_FAILED_PHASE_COUNT.inc(namespace)
