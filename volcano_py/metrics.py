"""Volcano's scheduler metrics, with Volcano's names, types and labels (subsystem ``volcano``;
durations in milliseconds), so the dashboards written for Volcano work unchanged.

prometheus_client appends ``_total`` to every counter name; Volcano's
``volcano_total_preemption_attempts`` has no such suffix, so that one series is served by a
small custom collector. Everything lives in one registry (``REGISTRY``) that ``/metrics``
serves and tests can read.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import Metric, UntypedMetricFamily
from prometheus_client.registry import Collector

from volcano_py.api.resource import Resource

NAMESPACE: Final = "volcano"
REGISTRY: Final = CollectorRegistry(auto_describe=True)


def _exponential(start: float, factor: float, count: int) -> list[float]:
    return [start * factor**i for i in range(count)]


def _buckets(low: float, high: float, count: int) -> list[float]:
    """``prometheus.ExponentialBucketsRange``: ``count`` buckets from ``low`` to ``high``."""
    factor = (high / low) ** (1 / (count - 1))
    return _exponential(low, factor, count)


E2E_SCHEDULING_LATENCY: Final = Histogram(
    "e2e_scheduling_latency_milliseconds",
    "E2e scheduling latency in milliseconds (scheduling algorithm + binding)",
    namespace=NAMESPACE,
    buckets=_buckets(1, 5000, 20),
    registry=REGISTRY,
)
OPEN_SESSION_DURATION: Final = Histogram(
    "open_session_duration_milliseconds",
    "Duration of opening a session in milliseconds",
    namespace=NAMESPACE,
    buckets=_buckets(1, 5000, 20),
    registry=REGISTRY,
)
E2E_JOB_SCHEDULING_LATENCY: Final = Histogram(
    "e2e_job_scheduling_latency_milliseconds",
    "E2e job scheduling latency in milliseconds",
    namespace=NAMESPACE,
    buckets=_buckets(100, 120000, 30),
    registry=REGISTRY,
)
PLUGIN_SCHEDULING_LATENCY: Final = Histogram(
    "plugin_scheduling_latency_milliseconds",
    "Plugin scheduling latency in milliseconds",
    ["plugin", "OnSession"],
    namespace=NAMESPACE,
    buckets=_buckets(0.1, 100, 15),
    registry=REGISTRY,
)
ACTION_SCHEDULING_LATENCY: Final = Histogram(
    "action_scheduling_latency_milliseconds",
    "Action scheduling latency in milliseconds",
    ["action"],
    namespace=NAMESPACE,
    buckets=_buckets(1, 2000, 20),
    registry=REGISTRY,
)
TASK_SCHEDULING_LATENCY: Final = Histogram(
    "task_scheduling_latency_milliseconds",
    "Task scheduling latency in milliseconds",
    ["stage"],
    namespace=NAMESPACE,
    buckets=_buckets(50, 60000, 30),
    registry=REGISTRY,
)
SCHEDULING_STAGE_DURATION: Final = Histogram(
    "scheduling_stage_duration_milliseconds",
    "Scheduling stage duration in milliseconds",
    ["stage"],
    namespace=NAMESPACE,
    buckets=_buckets(0.1, 500, 20),
    registry=REGISTRY,
)
SCHEDULE_ATTEMPTS: Final = Counter(
    "schedule_attempts",
    "Number of attempts to schedule pods, by result",
    ["result"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
POD_PREEMPTION_VICTIMS: Final = Gauge(
    "pod_preemption_victims",
    "Number of selected preemption victims",
    namespace=NAMESPACE,
    registry=REGISTRY,
)
EVICTION_TRANSACTIONS: Final = Counter(
    "eviction_transactions",
    "Number of committed statements that evicted tasks",
    ["action"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
UNSCHEDULE_TASK_COUNT: Final = Gauge(
    "unschedule_task_count",
    "Number of tasks could not be scheduled",
    ["job_id"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
UNSCHEDULE_JOB_COUNT: Final = Gauge(
    "unschedule_job_count",
    "Number of jobs could not be scheduled",
    namespace=NAMESPACE,
    registry=REGISTRY,
)
JOB_SHARE: Final = Gauge(
    "job_share",
    "Share for one job",
    ["job_ns", "job_id"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
JOB_RETRY_COUNTS: Final = Counter(
    "job_retry_counts",
    "Number of retry counts for one job",
    ["job_id"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
E2E_JOB_SCHEDULING_DURATION: Final = Gauge(
    "e2e_job_scheduling_duration",
    "E2e job scheduling duration",
    ["job_name", "queue", "job_namespace"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)
CONFIG_RELOAD_FAILURES: Final = Counter(
    "scheduler_config_reload_failures",
    "volcano-py: times the scheduler configuration could not be reloaded (kept the last good)",
    namespace=NAMESPACE,
    registry=REGISTRY,
)


def _queue_gauges(kind: str, help_text: str) -> tuple[Gauge, Gauge, Gauge]:
    return (
        Gauge(
            f"queue_{kind}_milli_cpu",
            f"{help_text} cpu of one queue",
            ["queue_name"],
            namespace=NAMESPACE,
            registry=REGISTRY,
        ),
        Gauge(
            f"queue_{kind}_memory_bytes",
            f"{help_text} memory of one queue",
            ["queue_name"],
            namespace=NAMESPACE,
            registry=REGISTRY,
        ),
        Gauge(
            f"queue_{kind}_scalar_resources",
            f"{help_text} scalar resources of one queue",
            ["queue_name", "resource"],
            namespace=NAMESPACE,
            registry=REGISTRY,
        ),
    )


QUEUE_RESOURCE_GAUGES: Final = {
    kind: _queue_gauges(kind, text)
    for kind, text in (
        ("allocated", "Allocated"),
        ("request", "Request"),
        ("deserved", "Deserved"),
        ("capacity", "Capacity"),
        ("real_capacity", "Real capacity"),
        ("inqueue", "Inqueue"),
    )
}
QUEUE_SHARE: Final = Gauge(
    "queue_share", "Share for one queue", ["queue_name"], namespace=NAMESPACE, registry=REGISTRY
)
QUEUE_WEIGHT: Final = Gauge(
    "queue_weight", "Weight for one queue", ["queue_name"], namespace=NAMESPACE, registry=REGISTRY
)
QUEUE_OVERUSED: Final = Gauge(
    "queue_overused",
    "If one queue is overused",
    ["queue_name"],
    namespace=NAMESPACE,
    registry=REGISTRY,
)


def update_queue_resource(kind: str, queue: str, resource: Resource) -> None:
    """Set one of the queue_<kind>_{milli_cpu,memory_bytes,scalar_resources} families."""
    cpu, memory, scalars = QUEUE_RESOURCE_GAUGES[kind]
    cpu.labels(queue_name=queue).set(resource.milli_cpu)
    memory.labels(queue_name=queue).set(resource.memory)
    for name, value in resource.scalar_resources.items():
        scalars.labels(queue_name=queue, resource=name).set(value)


class _PreemptionAttempts(Collector):
    """``volcano_total_preemption_attempts``: a counter without the ``_total`` suffix."""

    def __init__(self) -> None:
        self.value = 0.0

    def collect(self) -> Iterator[Metric]:
        # Untyped: the text format would rename a counter's series to ..._total.
        family = UntypedMetricFamily(
            f"{NAMESPACE}_total_preemption_attempts",
            "Total preemption attempts in the cluster till now",
            value=self.value,
        )
        yield family


PREEMPTION_ATTEMPTS: Final = _PreemptionAttempts()
REGISTRY.register(PREEMPTION_ATTEMPTS)


def job_scheduled(job_name: str, queue: str, namespace: str, seconds: float) -> None:
    """A task of the job was just allocated or pipelined, ``seconds`` after the job was
    created (``UpdateE2eSchedulingDurationByJob``: the per-job gauge and the histogram)."""
    elapsed = milliseconds(max(0.0, seconds))
    E2E_JOB_SCHEDULING_DURATION.labels(job_name, queue, namespace).set(elapsed)
    E2E_JOB_SCHEDULING_LATENCY.observe(elapsed)


def forget_job(job_name: str, queue: str, namespace: str) -> None:
    """Drop a deleted job's series (``DeleteJobMetrics``)."""
    with contextlib.suppress(KeyError):
        E2E_JOB_SCHEDULING_DURATION.remove(job_name, queue, namespace)
    with contextlib.suppress(KeyError):
        UNSCHEDULE_TASK_COUNT.remove(job_name)


def milliseconds(seconds: float) -> float:
    return seconds * 1000.0
