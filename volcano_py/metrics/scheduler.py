"""The scheduler's metrics: ``pkg/scheduler/metrics`` (metrics.go, job.go, namespace.go,
queue.go) with Volcano's names, types, labels and buckets; durations in milliseconds.

Every family is listed, with the upstream function that sets it, in docs/metrics.md.
``volcano_scheduler_config_reload_failures_total`` is ours alone (Volcano logs a bad reload).
"""

from __future__ import annotations

import contextlib
import functools
import math
import threading
from collections.abc import Mapping
from datetime import datetime
from typing import Final

from prometheus_client import Counter, Gauge, Histogram
from prometheus_client.values import MutexValue

from volcano_py.api.resource import Resource
from volcano_py.metrics import buckets
from volcano_py.metrics.batch import ObservationBatch
from volcano_py.metrics.recording import RECORDING
from volcano_py.metrics.registry import NAMESPACE, SCHEDULER_REGISTRY, BareCounter

_REG: Final = SCHEDULER_REGISTRY

# --------------------------------------------------------------------------- metrics.go

E2E_SCHEDULING_LATENCY: Final = Histogram(
    "e2e_scheduling_latency_milliseconds",
    "Duration of a single scheduling session execution in milliseconds. It covers the "
    "entire cycle from session open, action executions to session close.",
    namespace=NAMESPACE,
    buckets=buckets.MS_1_TO_5000_20,
    registry=_REG,
)
OPEN_SESSION_DURATION: Final = Histogram(
    "open_session_duration_milliseconds",
    "Duration of opening a scheduling session in milliseconds, including cache snapshot "
    "and session initialization.",
    namespace=NAMESPACE,
    buckets=buckets.MS_1_TO_5000_20,
    registry=_REG,
)
E2E_JOB_SCHEDULING_LATENCY: Final = Histogram(
    "e2e_job_scheduling_latency_milliseconds",
    "End-to-end job scheduling latency in milliseconds (histogram of per-job duration from "
    "creation to last task assumed)",
    namespace=NAMESPACE,
    buckets=buckets.MS_100_TO_120000_30,
    registry=_REG,
)
_JOB_LABELS: Final = ("job_name", "queue", "job_namespace")
E2E_JOB_SCHEDULING_DURATION: Final = Gauge(
    "e2e_job_scheduling_duration",
    "Per-job duration from job creation to last task assumed in scheduler cache, in milliseconds",
    _JOB_LABELS,
    namespace=NAMESPACE,
    registry=_REG,
)
E2E_JOB_SCHEDULING_START_TIME: Final = Gauge(
    "e2e_job_scheduling_start_time",
    "E2E job scheduling start time",
    _JOB_LABELS,
    namespace=NAMESPACE,
    registry=_REG,
)
E2E_JOB_SCHEDULING_LAST_TIME: Final = Gauge(
    "e2e_job_scheduling_last_time",
    "E2E job scheduling last time",
    _JOB_LABELS,
    namespace=NAMESPACE,
    registry=_REG,
)
PLUGIN_SCHEDULING_LATENCY: Final = Histogram(
    "plugin_scheduling_latency_milliseconds",
    "Plugin scheduling latency in milliseconds",
    ["plugin", "OnSession"],
    namespace=NAMESPACE,
    buckets=buckets.MS_0_1_TO_100_15,
    registry=_REG,
)
ACTION_SCHEDULING_LATENCY: Final = Histogram(
    "action_scheduling_latency_milliseconds",
    "Action scheduling latency in milliseconds",
    ["action"],
    namespace=NAMESPACE,
    buckets=buckets.MS_1_TO_2000_20,
    registry=_REG,
)
TASK_SCHEDULING_LATENCY: Final = Histogram(
    "task_scheduling_latency_milliseconds",
    "Task scheduling latency from creation to various stages in milliseconds",
    ["stage"],
    namespace=NAMESPACE,
    buckets=buckets.MS_50_TO_60000_30,
    registry=_REG,
)
SCHEDULING_STAGE_DURATION: Final = Histogram(
    "scheduling_stage_duration_milliseconds",
    "Duration of per-task scheduling stages (Predicate, Scoring, PreBind, Bind) in milliseconds",
    ["stage"],
    namespace=NAMESPACE,
    buckets=buckets.MS_0_1_TO_500_20,
    registry=_REG,
)
# The per-task series, bound once: ``labels()`` costs more than the observation itself.
STAGE_PREDICATE: Final = SCHEDULING_STAGE_DURATION.labels("Predicate")
STAGE_SCORING: Final = SCHEDULING_STAGE_DURATION.labels("Scoring")
TASK_WATCHED: Final = TASK_SCHEDULING_LATENCY.labels("Watched")
TASK_ASSUMED: Final = TASK_SCHEDULING_LATENCY.labels("Assumed")

# Served as volcano_schedule_attempts_total. Upstream declares it and never sets it
# (``UpdatePodScheduleStatus`` has no caller); neither do we.
SCHEDULE_ATTEMPTS: Final = Counter(
    "schedule_attempts",
    "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could "
    "not be scheduled, while 'error' means an internal scheduler problem.",
    ["result"],
    namespace=NAMESPACE,
    registry=_REG,
)
POD_PREEMPTION_VICTIMS: Final = Gauge(
    "pod_preemption_victims",
    "Number of selected preemption victims",
    namespace=NAMESPACE,
    registry=_REG,
)
PREEMPTION_ATTEMPTS: Final = BareCounter(
    "total_preemption_attempts",
    "Total preemption attempts in the cluster till now",
    registry=_REG,
)
EVICTION_TRANSACTIONS: Final = Counter(  # served as volcano_eviction_transactions_total
    "eviction_transactions",
    "Total number of committed eviction transactions, by action",
    ["action"],
    namespace=NAMESPACE,
    registry=_REG,
)
# ``RegisterEvictionTransaction`` counts only these actions.
EVICTION_ACTIONS: Final = frozenset({"preempt", "reclaim", "gangpreempt", "gangreclaim"})
UNSCHEDULE_TASK_COUNT: Final = Gauge(
    "unschedule_task_count",
    "Number of tasks could not be scheduled",
    ["job_id"],
    namespace=NAMESPACE,
    registry=_REG,
)
UNSCHEDULE_JOB_COUNT: Final = Gauge(
    "unschedule_job_count",
    "Number of jobs could not be scheduled",
    namespace=NAMESPACE,
    registry=_REG,
)

# --------------------------------------------------------------------------- job.go

JOB_SHARE: Final = Gauge(
    "job_share", "Share for one job", ["job_ns", "job_id"], namespace=NAMESPACE, registry=_REG
)
JOB_RETRY_COUNTS: Final = BareCounter(
    "job_retry_counts", "Number of retry counts for one job", ["job_id"], registry=_REG
)

# --------------------------------------------------------------------------- namespace.go
# Declared upstream with setters nothing calls (the namespace-fairness plugin that fed them is
# gone): the families exist, with no series, as in Volcano.

NAMESPACE_SHARE: Final = Gauge(
    "namespace_share",
    "Share for one namespace",
    ["namespace_name"],
    namespace=NAMESPACE,
    registry=_REG,
)
NAMESPACE_WEIGHT: Final = Gauge(
    "namespace_weight",
    "Weight for one namespace",
    ["namespace_name"],
    namespace=NAMESPACE,
    registry=_REG,
)
NAMESPACE_WEIGHTED_SHARE: Final = Gauge(
    "namespace_weighted_share",
    "Weighted share for one namespace",
    ["namespace_name"],
    namespace=NAMESPACE,
    registry=_REG,
)

# --------------------------------------------------------------------------- queue.go

# kind -> upstream's help text; the families are queue_<kind>_{milli_cpu,memory_bytes,...}.
_QUEUE_KINDS: Final = {
    "allocated": "Allocated {} for one queue",
    "request": "Request {} for one queue",
    "deserved": "Deserved {} for one queue",
    "capacity": "Capacity {} for one queue",
    "real_capacity": "Capacity {} for one queue",
    "inqueue": "Inqueue {} for admitted but not yet running jobs in one queue",
}


def _queue_gauges(kind: str) -> tuple[Gauge, Gauge, Gauge]:
    text = _QUEUE_KINDS[kind]
    cpu_word = "CPU" if kind == "inqueue" else "CPU count"
    return (
        Gauge(
            f"queue_{kind}_milli_cpu",
            text.format(cpu_word),
            ["queue_name"],
            namespace=NAMESPACE,
            registry=_REG,
        ),
        Gauge(
            f"queue_{kind}_memory_bytes",
            text.format("memory"),
            ["queue_name"],
            namespace=NAMESPACE,
            registry=_REG,
        ),
        Gauge(
            f"queue_{kind}_scalar_resources",
            text.format("scalar resources"),
            ["queue_name", "resource"],
            namespace=NAMESPACE,
            registry=_REG,
        ),
    )


QUEUE_RESOURCE_GAUGES: Final = {kind: _queue_gauges(kind) for kind in _QUEUE_KINDS}
QUEUE_SHARE: Final = Gauge(
    "queue_share", "Share for one queue", ["queue_name"], namespace=NAMESPACE, registry=_REG
)
QUEUE_WEIGHT: Final = Gauge(
    "queue_weight", "Weight for one queue", ["queue_name"], namespace=NAMESPACE, registry=_REG
)
QUEUE_OVERUSED: Final = Gauge(
    "queue_overused",
    "If one queue is overused",
    ["queue_name"],
    namespace=NAMESPACE,
    registry=_REG,
)

# volcano-py's own: a scheduler conf that could not be reloaded (the last good one is kept).
CONFIG_RELOAD_FAILURES: Final = Counter(
    "scheduler_config_reload_failures",
    "volcano-py: times the scheduler configuration could not be reloaded (kept the last good)",
    namespace=NAMESPACE,
    registry=_REG,
)

# queue -> the scalar resource names ever set on any of its families
# (``knownScalarResources``, kept per queue as upstream): a name missing from an update is
# set to 0, not left at its last value.
_known_scalars: dict[str, set[str]] = {}
_known_scalars_lock = threading.Lock()


def update_queue_resource(kind: str, queue: str, resource: Resource) -> None:
    """``UpdateQueue<Kind>``: the queue_<kind>_{milli_cpu,memory_bytes,scalar_resources}
    families of one queue."""
    cpu, memory, scalars = QUEUE_RESOURCE_GAUGES[kind]
    cpu.labels(queue_name=queue).set(resource.milli_cpu)
    memory.labels(queue_name=queue).set(resource.memory)
    current: Mapping[str, float] = resource.scalar_resources
    with _known_scalars_lock:
        known = _known_scalars.setdefault(queue, set())
        known.update(current)
        for name in known:
            scalars.labels(queue_name=queue, resource=name).set(current.get(name, 0.0))


def forget_queue(queue: str) -> None:
    """``DeleteQueueMetrics`` of the scheduler: every series of a deleted queue."""
    for cpu, memory, _ in QUEUE_RESOURCE_GAUGES.values():
        for gauge in (cpu, memory):
            with contextlib.suppress(KeyError):
                gauge.remove(queue)
    for gauge in (QUEUE_SHARE, QUEUE_WEIGHT, QUEUE_OVERUSED):
        with contextlib.suppress(KeyError):
            gauge.remove(queue)
    with _known_scalars_lock:
        known = _known_scalars.pop(queue, set())
    for _, _, scalars in QUEUE_RESOURCE_GAUGES.values():
        for name in known:
            with contextlib.suppress(KeyError):
                scalars.remove(queue, name)


# --------------------------------------------------------------------------- per job


def job_pod_group_set(job_name: str, queue: str, namespace: str, created: str) -> None:
    """``UpdateE2eSchedulingStartTimeByJob`` as the cache's ``setPodGroup`` calls it: the
    job's creation time (Unix seconds) whenever its PodGroup is added or updated."""
    if not RECORDING.on:
        return
    seconds = epoch_seconds(created)
    if seconds is not None:
        E2E_JOB_SCHEDULING_START_TIME.labels(job_name, queue, namespace).set(int(seconds))


def job_scheduled(job_name: str, queue: str, namespace: str, now: float, created: float) -> None:
    """A task of the job was just allocated or pipelined at ``now`` (Unix seconds), the job
    created at ``created``: ``UpdateE2eSchedulingDurationByJob`` (the per-job gauge and the
    histogram) and ``UpdateE2eSchedulingLastTimeByJob``."""
    series = JobScheduledSeries(job_name, queue, namespace)
    series.scheduled(now, created)
    series.flush()


# ``JobScheduledSeries`` leaves its gauges alone when they already hold the value it would set
# (False: set for every task, the tests' reference).
_SKIP_UNCHANGED_GAUGES = True


class JobScheduledSeries:
    """``job_scheduled`` for one job, its two gauge series looked up on first use and then
    kept: a gang's tasks are placed one after another, and the label lookup was most of the
    cost of recording each. Kept for one allocation attempt only; if the job is deleted
    meanwhile its removed series are not brought back by the attempt's later tasks. The
    histogram's observations are kept until ``flush`` (``ObservationBatch``): the holder
    flushes at the end of its attempt."""

    __slots__ = ("_duration", "_last", "_latency", "_set_for", "job_name", "namespace", "queue")

    def __init__(self, job_name: str, queue: str, namespace: str) -> None:
        self.job_name, self.queue, self.namespace = job_name, queue, namespace
        self._duration: Gauge | None = None
        self._last: Gauge | None = None
        # The (now, created) the two gauges were last set from: the tasks of one attempt
        # are placed at one session time, and setting a gauge to the value it already
        # holds changes nothing anyone reads (the histogram still counts every task).
        self._set_for: tuple[float, float] | None = None
        self._latency = ObservationBatch(E2E_JOB_SCHEDULING_LATENCY)

    def flush(self) -> None:
        """Hand the kept observations to the histogram."""
        self._latency.flush()

    def scheduled(self, now: float, created: float) -> None:
        if not RECORDING.on:
            return
        elapsed = milliseconds(max(0.0, now - created))
        if self._duration is None or self._last is None:
            labels = (self.job_name, self.queue, self.namespace)
            self._duration = E2E_JOB_SCHEDULING_DURATION.labels(*labels)
            self._duration.set(elapsed)
            self._latency.observe(elapsed)
            self._last = E2E_JOB_SCHEDULING_LAST_TIME.labels(*labels)
            self._last.set(int(now))
            self._set_for = (now, created)
            return
        unchanged = _SKIP_UNCHANGED_GAUGES and self._set_for == (now, created)
        if not unchanged:
            self._duration.set(elapsed)
        self._latency.observe(elapsed)
        if not unchanged:
            self._last.set(int(now))
            self._set_for = (now, created)


# A per-job series already made is taken from the metric's own table of series (False:
# always through ``labels()``, which checks and converts the values and takes the metric's
# lock; the tests' reference). drf sets every job's share at each session's open and close,
# 10k lookups a session at 5k running jobs.
_DIRECT_SERIES = True


def _series(metric: Gauge, *values: str) -> Gauge:
    """``metric.labels(*values)``: a series that exists is read from the table ``labels()``
    keeps it in (keyed by the string values themselves), else made by ``labels()``."""
    if _DIRECT_SERIES:
        # An internal of prometheus_client: read defensively, so that a release that keeps
        # its series elsewhere only takes the general way.
        existing = getattr(metric, "_metrics", {}).get(values)
        if isinstance(existing, Gauge):
            return existing
    return metric.labels(*values)


# A per-job gauge series already holding the value asked for is left alone (False: set
# again, the tests' reference). Setting a series to what it holds changes nothing a scrape
# reads, and drf and gang set each of 5k quiet jobs' series two or three times a session.
_SKIP_EQUAL_SETS = True


def _series_holds(series: Gauge, value: float) -> bool:
    """Does ``series`` hold exactly ``value`` (``holds``), read from the plain value
    ``prometheus_client`` keeps in process (its ``MutexValue``)? Any other keeping (the
    multiprocess mode's files) answers no."""
    holder = getattr(series, "_value", None)
    return type(holder) is MutexValue and holds(holder._value, value)


def _set(series: Gauge, value: float) -> None:
    """``series.set(value)``, unless the series already holds exactly ``value``: the same
    float, a zero of the same sign (they print differently). Read from the plain value
    ``prometheus_client`` keeps in process (its ``MutexValue``); any other keeping (the
    multiprocess mode's files) takes the general way."""
    if _SKIP_EQUAL_SETS and _series_holds(series, value):
        return
    series.set(value)


# ``_set(_series(metric, *values), value)`` in one call (False: the two calls, the tests'
# reference): drf and gang set 10k per-job series a session at 5k running jobs.
_FUSED_SETS = True

# What ``_set_series`` reads where a metric keeps no table of series (never written).
_NO_SERIES: Final[dict[tuple[str, ...], object]] = {}


def _set_series(metric: Gauge, values: tuple[str, ...], value: float) -> None:
    """``_set(_series(metric, *values), value)``: the same reads, the same ``labels()`` call
    for a series not made yet, the same skip of an equal value."""
    if not _FUSED_SETS:
        _set(_series(metric, *values), value)
        return
    series = getattr(metric, "_metrics", _NO_SERIES).get(values) if _DIRECT_SERIES else None
    if not isinstance(series, Gauge):
        series = metric.labels(*values)
    if _SKIP_EQUAL_SETS and _series_holds(series, value):
        return
    series.set(value)


# How many times this module wrote or removed a job_share / unscheduled-tasks series
# (``job_share_token``, ``unschedulable_tasks_token``).
_job_share_changes = 0
_unschedulable_changes = 0

# (writes and removals so far, recording on, the metric's table of series): equal tokens
# (``same_token``) mean no series of the metric was written or removed in between, through
# this module or by ``clear()``. Only this module writes and removes these series.
SeriesToken = tuple[int, bool, object]


def job_share_token() -> SeriesToken:
    """drf takes it when it has set every job's share: while it stays the same, each series
    holds the share drf last set it to."""
    return _job_share_changes, RECORDING.on, getattr(JOB_SHARE, "_metrics", None)


def unschedulable_tasks_token() -> SeriesToken:
    """gang takes it when it has set every job's count: while it stays the same, each series
    holds the count gang last set it to."""
    return _unschedulable_changes, RECORDING.on, getattr(UNSCHEDULE_TASK_COUNT, "_metrics", None)


def same_token(kept: SeriesToken | None, now: SeriesToken) -> bool:
    """``kept`` is ``now``: the same counts and recording, the very same table (a table
    ``clear()`` made anew compares by identity, never by its contents)."""
    return kept is not None and kept[:2] == now[:2] and kept[2] is now[2]


def holds(held: float | None, value: float) -> bool:
    """A series known to hold ``held`` holds ``value``: the same float, a zero of the same
    sign (they print differently); NaN never."""
    if held is None:
        return False
    new = float(value)
    return held == new and (new != 0.0 or math.copysign(1.0, held) == math.copysign(1.0, new))


def job_share(namespace: str, job_name: str, share: float) -> None:
    """``UpdateJobShare``: drf's share of one job (set at every session open and close)."""
    global _job_share_changes
    _job_share_changes += 1
    if RECORDING.on:
        # By position (job_ns, job_id), asked twice a session for every job.
        _set_series(JOB_SHARE, (namespace, job_name), share)


def job_retried(job_name: str) -> None:
    """``RegisterJobRetries``: gang found the job unschedulable at a session's close."""
    if RECORDING.on:
        JOB_RETRY_COUNTS.inc(job_name)


def unschedulable_tasks(job_name: str, count: int) -> None:
    """``UpdateUnscheduleTaskCount``: the job's tasks gang counts unschedulable."""
    global _unschedulable_changes
    _unschedulable_changes += 1
    if RECORDING.on:
        _set_series(UNSCHEDULE_TASK_COUNT, (job_name,), count)  # job_id, by position


def forget_job(job_name: str, queue: str, namespace: str) -> None:
    """``DeleteJobMetrics`` of the scheduler: every series of a deleted job."""
    for gauge in (
        E2E_JOB_SCHEDULING_DURATION,
        E2E_JOB_SCHEDULING_START_TIME,
        E2E_JOB_SCHEDULING_LAST_TIME,
    ):
        with contextlib.suppress(KeyError):
            gauge.remove(job_name, queue, namespace)
    global _job_share_changes, _unschedulable_changes
    _unschedulable_changes += 1
    with contextlib.suppress(KeyError):
        UNSCHEDULE_TASK_COUNT.remove(job_name)
    _job_share_changes += 1
    with contextlib.suppress(KeyError):
        JOB_SHARE.remove(namespace, job_name)
    JOB_RETRY_COUNTS.remove(job_name)


def eviction_committed(action: str) -> None:
    """``RegisterEvictionTransaction``: only Volcano's four evicting actions count."""
    if action in EVICTION_ACTIONS:
        EVICTION_TRANSACTIONS.labels(action=action).inc()


def milliseconds(seconds: float) -> float:
    return seconds * 1000.0


@functools.lru_cache(maxsize=4096)
def epoch_seconds(timestamp: str) -> float | None:
    """An RFC 3339 timestamp as seconds since the epoch (None when absent or bad)."""
    if not timestamp:
        return None
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None
