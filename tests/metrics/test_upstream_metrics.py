"""Volcano's metrics as its binaries serve them, transcribed from upstream (HEAD of the mirror)
and checked against our registries: every family's exposed name, type, label names and
buckets; Go's exposition details (no ``_total`` on a counter named without it, ``le="1"``);
``DeleteJobMetrics``/``DeleteQueueMetrics`` removing every series of a deleted job or queue;
and the upstream tests of ``pkg/scheduler/metrics`` (metrics_test.go, queue_test.go,
queue_scalar_test.go)."""

from __future__ import annotations

import math
import re

import pytest
from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.registry import Collector

import volcano_py.metrics.controllers as controller_metrics
import volcano_py.runtime.apiclient  # noqa: F401  (its counter is in every registry)
from tests.builders import build_pod_group, build_queue
from volcano_py import metrics
from volcano_py.api.resource import Resource
from volcano_py.cache.cache import SchedulerCache
from volcano_py.metrics import buckets
from volcano_py.metrics.registry import BareCounter, go_float, render

# (min, max, count) of each ``ExponentialBucketsRange`` upstream uses.
R1_5000 = (1, 5000, 20)
R100_120000 = (100, 120000, 30)
R01_100 = (0.1, 100, 15)
R1_2000 = (1, 2000, 20)
R50_60000 = (50, 60000, 30)
R01_500 = (0.1, 500, 20)

JOB3 = ("job_name", "queue", "job_namespace")
Q = ("queue_name",)
QR = ("queue_name", "resource")
PLUGIN_LABELS = ("plugin", "OnSession")

# pkg/scheduler/metrics/{metrics,job,namespace,queue}.go: exposed name, type, labels, buckets.
UPSTREAM_SCHEDULER = [
    ("volcano_e2e_scheduling_latency_milliseconds", "histogram", (), R1_5000),
    ("volcano_open_session_duration_milliseconds", "histogram", (), R1_5000),
    ("volcano_e2e_job_scheduling_latency_milliseconds", "histogram", (), R100_120000),
    ("volcano_e2e_job_scheduling_duration", "gauge", JOB3, None),
    ("volcano_e2e_job_scheduling_start_time", "gauge", JOB3, None),
    ("volcano_e2e_job_scheduling_last_time", "gauge", JOB3, None),
    ("volcano_plugin_scheduling_latency_milliseconds", "histogram", PLUGIN_LABELS, R01_100),
    ("volcano_action_scheduling_latency_milliseconds", "histogram", ("action",), R1_2000),
    ("volcano_task_scheduling_latency_milliseconds", "histogram", ("stage",), R50_60000),
    ("volcano_scheduling_stage_duration_milliseconds", "histogram", ("stage",), R01_500),
    ("volcano_schedule_attempts_total", "counter", ("result",), None),
    ("volcano_pod_preemption_victims", "gauge", (), None),
    ("volcano_total_preemption_attempts", "counter", (), None),
    ("volcano_eviction_transactions_total", "counter", ("action",), None),
    ("volcano_unschedule_task_count", "gauge", ("job_id",), None),
    ("volcano_unschedule_job_count", "gauge", (), None),
    ("volcano_job_share", "gauge", ("job_ns", "job_id"), None),
    ("volcano_job_retry_counts", "counter", ("job_id",), None),
    ("volcano_namespace_share", "gauge", ("namespace_name",), None),
    ("volcano_namespace_weight", "gauge", ("namespace_name",), None),
    ("volcano_namespace_weighted_share", "gauge", ("namespace_name",), None),
    ("volcano_queue_allocated_milli_cpu", "gauge", Q, None),
    ("volcano_queue_allocated_memory_bytes", "gauge", Q, None),
    ("volcano_queue_allocated_scalar_resources", "gauge", QR, None),
    ("volcano_queue_request_milli_cpu", "gauge", Q, None),
    ("volcano_queue_request_memory_bytes", "gauge", Q, None),
    ("volcano_queue_request_scalar_resources", "gauge", QR, None),
    ("volcano_queue_deserved_milli_cpu", "gauge", Q, None),
    ("volcano_queue_deserved_memory_bytes", "gauge", Q, None),
    ("volcano_queue_deserved_scalar_resources", "gauge", QR, None),
    ("volcano_queue_share", "gauge", Q, None),
    ("volcano_queue_weight", "gauge", Q, None),
    ("volcano_queue_overused", "gauge", Q, None),
    ("volcano_queue_capacity_milli_cpu", "gauge", Q, None),
    ("volcano_queue_capacity_memory_bytes", "gauge", Q, None),
    ("volcano_queue_capacity_scalar_resources", "gauge", QR, None),
    ("volcano_queue_real_capacity_milli_cpu", "gauge", Q, None),
    ("volcano_queue_real_capacity_memory_bytes", "gauge", Q, None),
    ("volcano_queue_real_capacity_scalar_resources", "gauge", QR, None),
    ("volcano_queue_inqueue_milli_cpu", "gauge", Q, None),
    ("volcano_queue_inqueue_memory_bytes", "gauge", Q, None),
    ("volcano_queue_inqueue_scalar_resources", "gauge", QR, None),
]  # fmt: skip

# pkg/controllers/metrics/{job,queue}.go, pkg/controllers/{job,jobflow}/state/metrics.go.
UPSTREAM_CONTROLLERS = [
    ("volcano_controller_job_to_pod_creation_latency_milliseconds", "histogram", (), R50_60000),
    ("volcano_queue_pod_group_inqueue_count", "gauge", Q, None),
    ("volcano_queue_pod_group_pending_count", "gauge", Q, None),
    ("volcano_queue_pod_group_running_count", "gauge", Q, None),
    ("volcano_queue_pod_group_unknown_count", "gauge", Q, None),
    ("volcano_queue_pod_group_completed_count", "gauge", Q, None),
    ("volcano_job_completed_phase_count", "counter", ("job_name", "queue_name"), None),
    ("volcano_job_failed_phase_count", "counter", ("job_name", "queue_name"), None),
    ("volcano_jobflow_succeed_phase_count", "counter", ("jobflow_namespace",), None),
    ("volcano_jobflow_failed_phase_count", "counter", ("jobflow_namespace",), None),
]  # fmt: skip

# Ours alone, each documented in docs/metrics.md.
EXTRA_SCHEDULER = {"volcano_scheduler_config_reload_failures_total", "rest_client_requests_total"}
EXTRA_CONTROLLERS = {"rest_client_requests_total"}


def exposed_types(registry: CollectorRegistry) -> dict[str, str]:
    """``# TYPE`` lines of the registry's exposition: exposed name -> type."""
    text = render(registry).decode()
    return dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, flags=re.M))


def collector_named(registry: CollectorRegistry, exposed: str) -> Collector:
    for collector in registry._collector_to_names:  # the registry's own index
        names = registry._collector_to_names[collector]
        if exposed in names or exposed.removesuffix("_total") in names:
            return collector
    raise AssertionError(f"no collector serves {exposed}")


def label_names(collector: Collector) -> tuple[str, ...]:
    if isinstance(collector, BareCounter):
        return collector.labelnames
    return tuple(collector._labelnames)  # type: ignore[attr-defined]


def exponential_buckets_range(low: float, high: float, count: int) -> list[float]:
    factor = (high / low) ** (1 / (count - 1))
    return [low * factor**i for i in range(count)]


def test_upstream_has_42_scheduler_and_10_controller_families() -> None:
    assert len(UPSTREAM_SCHEDULER) == 42
    assert len(UPSTREAM_CONTROLLERS) == 10


@pytest.mark.parametrize(
    ("registry", "table", "extra"),
    [
        (metrics.SCHEDULER_REGISTRY, UPSTREAM_SCHEDULER, EXTRA_SCHEDULER),
        (metrics.CONTROLLERS_REGISTRY, UPSTREAM_CONTROLLERS, EXTRA_CONTROLLERS),
    ],
    ids=["scheduler", "controllers"],
)
def test_each_process_serves_exactly_upstreams_families(
    registry: CollectorRegistry,
    table: list[tuple[str, str, tuple[str, ...], tuple[float, float, int] | None]],
    extra: set[str],
) -> None:
    served = exposed_types(registry)
    assert set(served) - extra == {name for name, *_ in table}
    for name, kind, labels, bucket_range in table:
        assert served[name] == kind, name
        collector = collector_named(registry, name)
        assert label_names(collector) == labels, name
        if bucket_range is not None:
            assert isinstance(collector, Histogram)
            bounds = collector._upper_bounds[:-1]  # without +Inf
            want = exponential_buckets_range(*bucket_range)
            assert len(bounds) == len(want), name
            assert all(math.isclose(b, w, rel_tol=1e-12) for b, w in zip(bounds, want, strict=True))


def test_the_webhooks_serve_only_the_shared_request_counter() -> None:
    assert set(exposed_types(metrics.WEBHOOKS_REGISTRY)) == {"rest_client_requests_total"}


def test_bucket_tables_are_gos_values_of_the_formula() -> None:
    for table, bucket_range in [
        (buckets.MS_1_TO_5000_20, R1_5000),
        (buckets.MS_100_TO_120000_30, R100_120000),
        (buckets.MS_0_1_TO_100_15, R01_100),
        (buckets.MS_1_TO_2000_20, R1_2000),
        (buckets.MS_50_TO_60000_30, R50_60000),
        (buckets.MS_0_1_TO_500_20, R01_500),
    ]:
        want = exponential_buckets_range(*bucket_range)
        assert all(math.isclose(b, w, rel_tol=1e-12) for b, w in zip(table, want, strict=True))
        assert table[0] == bucket_range[0]


def test_exposition_is_gos() -> None:
    """Counters without ``_total`` keep their name (TYPE and sample); le and values print as
    Go's ``strconv.FormatFloat(v, 'g', -1, 64)``; no ``_created`` series."""
    metrics.JOB_RETRY_COUNTS.inc("expo-job")
    metrics.E2E_SCHEDULING_LATENCY.observe(3.0)
    text = render(metrics.REGISTRY).decode()
    assert "# TYPE volcano_job_retry_counts counter\n" in text
    assert 'volcano_job_retry_counts{job_id="expo-job"} 1\n' in text
    assert "# TYPE volcano_total_preemption_attempts counter\n" in text
    assert "# TYPE volcano_schedule_attempts_total counter\n" in text
    assert 'volcano_e2e_scheduling_latency_milliseconds_bucket{le="1"} ' in text
    assert 'volcano_e2e_scheduling_latency_milliseconds_bucket{le="4999.999999999997"} ' in text
    assert 'volcano_e2e_scheduling_latency_milliseconds_bucket{le="+Inf"} ' in text
    assert "_created" not in text
    metrics.JOB_RETRY_COUNTS.remove("expo-job")


@pytest.mark.parametrize(
    ("value", "go"),
    [
        (0.0, "0"),
        (1.0, "1"),
        (0.1, "0.1"),
        (120000.0, "120000"),
        (1e6, "1e+06"),
        (1234567.5, "1.2345675e+06"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-2.5, "-2.5"),
        (4999.999999999997, "4999.999999999997"),
        (math.inf, "+Inf"),
        (-math.inf, "-Inf"),
        (math.nan, "NaN"),
    ],
)
def test_go_float_formatting(value: float, go: str) -> None:
    assert go_float(value) == go


# ---------------------------------------------------------------- upstream metrics_test.go


@pytest.mark.parametrize("action", ["preempt", "reclaim", "gangpreempt", "gangreclaim"])
def test_register_eviction_transaction_upstream(action: str) -> None:
    """upstream TestRegisterEvictionTransaction: each evicting action counts once."""
    sample = "volcano_eviction_transactions_total"
    before = metrics.REGISTRY.get_sample_value(sample, {"action": action}) or 0.0
    metrics.eviction_committed(action)
    assert metrics.REGISTRY.get_sample_value(sample, {"action": action}) == before + 1


def test_register_eviction_transaction_unsupported_action_upstream() -> None:
    """upstream TestRegisterEvictionTransaction: an unsupported action adds no series."""
    metrics.eviction_committed("unsupported-action")
    sample = "volcano_eviction_transactions_total"
    assert metrics.REGISTRY.get_sample_value(sample, {"action": "unsupported-action"}) is None


# ---------------------------------------------------------------- upstream queue_test.go


def series(registry: CollectorRegistry = metrics.REGISTRY) -> dict[str, float]:
    """The exposition as upstream's ``forMetricMap`` reads it: series text -> value."""
    found: dict[str, float] = {}
    for line in render(registry).decode().splitlines():
        if line and not line.startswith("#"):
            key, _, value = line.rpartition(" ")
            found[key] = float(value)
    return found


def gpu(amount: float) -> dict[str, float]:
    return {"nvidia.com/gpu": amount}


def scalar_key(kind: str, queue: str) -> str:
    labels = f'queue_name="{queue}",resource="nvidia.com/gpu"'
    return f"volcano_queue_{kind}_scalar_resources{{{labels}}}"


def test_queue_resource_metric_upstream() -> None:
    """upstream TestQueueResourceMetric: set per kind, read back from the exposition, then
    ``DeleteQueueMetrics`` of three queues leaves only the fourth's series."""
    update = metrics.update_queue_resource
    update("allocated", "queue1", Resource(100, 1024, gpu(0)))
    update("request", "queue2", Resource(200, 2048, gpu(1)))
    update("deserved", "queue3", Resource(300, 3096, gpu(2)))
    update("capacity", "queue1", Resource(200, 2048, gpu(10)))
    update("real_capacity", "queue2", Resource(200, 2048, gpu(10)))
    update("inqueue", "queue4", Resource(500, 5120, gpu(3)))
    m = series()
    want = {
        ("allocated", "queue1"): (100, 1024, 0),
        ("request", "queue2"): (200, 2048, 1),
        ("deserved", "queue3"): (300, 3096, 2),
        ("capacity", "queue1"): (200, 2048, 10),
        ("real_capacity", "queue2"): (200, 2048, 10),
        ("inqueue", "queue4"): (500, 5120, 3),
    }
    for (kind, queue), (cpu, memory, scalar) in want.items():
        assert m[f'volcano_queue_{kind}_milli_cpu{{queue_name="{queue}"}}'] == cpu
        assert m[f'volcano_queue_{kind}_memory_bytes{{queue_name="{queue}"}}'] == memory
        assert m[scalar_key(kind, queue)] == scalar
    for queue in ("queue1", "queue2", "queue4"):
        metrics.forget_queue(queue)
    m = series()
    for kind, queue in want:
        present = queue == "queue3"
        assert (f'volcano_queue_{kind}_milli_cpu{{queue_name="{queue}"}}' in m) is present
        assert (f'volcano_queue_{kind}_memory_bytes{{queue_name="{queue}"}}' in m) is present
        assert (scalar_key(kind, queue) in m) is present
    assert m['volcano_queue_deserved_milli_cpu{queue_name="queue3"}'] == 300
    metrics.forget_queue("queue3")


# ---------------------------------------------------------------- upstream queue_scalar_test.go


def scalar(queue: str, name: str) -> float | None:
    return metrics.REGISTRY.get_sample_value(
        "volcano_queue_allocated_scalar_resources", {"queue_name": queue, "resource": name}
    )


def test_update_scalar_resource_metrics_zero_and_cleanup_upstream() -> None:
    """upstream TestUpdateScalarResourceMetrics_ZeroAndCleanup."""
    queue, a, b = "testqueue", "nvidia.com/gpu", "amd.com/gpu"
    metrics.update_queue_resource("allocated", queue, Resource(0, 0, {a: 5, b: 10}))
    assert (scalar(queue, a), scalar(queue, b)) == (5, 10)
    # A resource missing from the update is set to zero.
    metrics.update_queue_resource("allocated", queue, Resource(0, 0, {a: 3}))
    assert (scalar(queue, a), scalar(queue, b)) == (3, 0)
    # No scalar resources at all: every known one is zero.
    metrics.update_queue_resource("allocated", queue, Resource(0, 0, {}))
    assert (scalar(queue, a), scalar(queue, b)) == (0, 0)
    metrics.forget_queue(queue)
    assert (scalar(queue, a), scalar(queue, b)) == (None, None)


# ---------------------------------------------------------------- deletion through the cache


def job_series(name: str, queue: str, namespace: str) -> list[str]:
    """Every scheduler series that names the job (``DeleteJobMetrics``' families)."""
    needles = (
        f'job_name="{name}"',
        f'job_id="{name}"',
    )
    return [key for key in series() if any(needle in key for needle in needles)]


def test_a_deleted_job_takes_every_series_with_it() -> None:
    """``DeleteJobMetrics``: start/last time and duration, unscheduled tasks, share and retry
    count of a job whose PodGroup is deleted are all gone from /metrics."""
    cache = SchedulerCache()
    pod_group = build_pod_group(
        "del-pg", "del-ns", "del-q", 1, None, "Inqueue", creation_timestamp="2026-01-01T00:00:00Z"
    )
    cache.apply_event("PodGroup", "ADDED", pod_group)  # the start time, as setPodGroup sets it
    start = metrics.REGISTRY.get_sample_value(
        "volcano_e2e_job_scheduling_start_time",
        {"job_name": "del-pg", "queue": "del-q", "job_namespace": "del-ns"},
    )
    assert start == 1767225600
    metrics.job_scheduled("del-pg", "del-q", "del-ns", now=1767225605.5, created=1767225600)
    metrics.UNSCHEDULE_TASK_COUNT.labels(job_id="del-pg").set(2)
    metrics.JOB_SHARE.labels(job_ns="del-ns", job_id="del-pg").set(0.5)
    metrics.JOB_RETRY_COUNTS.inc("del-pg")
    named = job_series("del-pg", "del-q", "del-ns")
    assert len(named) == 6, named
    last = metrics.REGISTRY.get_sample_value(
        "volcano_e2e_job_scheduling_last_time",
        {"job_name": "del-pg", "queue": "del-q", "job_namespace": "del-ns"},
    )
    assert last == 1767225605
    cache.apply_event("PodGroup", "DELETED", pod_group)
    assert job_series("del-pg", "del-q", "del-ns") == []


def test_a_job_deleted_while_a_session_runs_loses_the_series_the_session_wrote() -> None:
    """The session's snapshot still holds a job the cache forgot meanwhile; drf's share (and
    the close's unscheduled count) wrote its series again. After the session they are gone
    (found by ``bench churn``: a few series of deleted jobs stayed every round)."""
    cache = SchedulerCache()
    pod_group = build_pod_group("mid-pg", "mid-ns", "mid-q", 1, None, "Inqueue")
    cache.apply_event("PodGroup", "ADDED", pod_group)
    cache.snapshot()
    cache.apply_event("PodGroup", "DELETED", pod_group)  # while the session runs
    metrics.JOB_SHARE.labels(job_ns="mid-ns", job_id="mid-pg").set(0.5)  # the session's write
    metrics.UNSCHEDULE_TASK_COUNT.labels(job_id="mid-pg").set(1)
    assert len(job_series("mid-pg", "mid-q", "mid-ns")) == 2
    cache.forget_series_of_jobs_gone_during_session()
    assert job_series("mid-pg", "mid-q", "mid-ns") == []
    assert cache.forgotten_jobs == [] and not cache.session_running


def test_jobs_forgotten_outside_a_session_are_not_kept() -> None:
    """A standby scheduler takes no snapshot: the jobs it forgets are not listed for good."""
    cache = SchedulerCache()
    pod_group = build_pod_group("idle-pg", "idle-ns", "idle-q", 1, None, "Inqueue")
    cache.apply_event("PodGroup", "ADDED", pod_group)
    cache.apply_event("PodGroup", "DELETED", pod_group)
    assert cache.forgotten_jobs == []


def test_a_deleted_queue_takes_every_series_with_it() -> None:
    """``DeleteQueueMetrics`` of the scheduler, through the cache's queue deletion."""
    cache = SchedulerCache()
    queue = build_queue("gone-q", 1, None)
    cache.apply_event("Queue", "ADDED", queue)
    for kind in metrics.QUEUE_RESOURCE_GAUGES:
        metrics.update_queue_resource(kind, "gone-q", Resource(1000, 1024, gpu(1)))
    metrics.QUEUE_SHARE.labels(queue_name="gone-q").set(0.5)
    metrics.QUEUE_WEIGHT.labels(queue_name="gone-q").set(1)
    metrics.QUEUE_OVERUSED.labels(queue_name="gone-q").set(0)
    named = [key for key in series() if 'queue_name="gone-q"' in key]
    assert len(named) == 6 * 3 + 3
    cache.apply_event("Queue", "DELETED", queue)
    assert [key for key in series() if 'queue_name="gone-q"' in key] == []


def test_controller_families_live_in_the_controllers_registry_only() -> None:
    controller_metrics.queue_pod_groups_counted("reg-q", {"Running": 2})
    assert 'volcano_queue_pod_group_running_count{queue_name="reg-q"}' in series(
        metrics.CONTROLLERS_REGISTRY
    )
    assert not any("pod_group" in key for key in series(metrics.SCHEDULER_REGISTRY))
    controller_metrics.forget_queue("reg-q")


# Every volcano_* series Volcano's own dashboards select: the Helm chart's Grafana dashboard
# (installer/helm/chart/volcano/templates/grafana.yaml) and the benchmark's
# (benchmark/manifests/monitoring/grafana-dashboard.json). Left out: the agent scheduler's
# volcano_update_snapshot_duration_milliseconds and
# volcano_worker_scheduling_cycle_duration_milliseconds (pkg/agentscheduler, not ported) and
# kube-state-metrics' kube_pod_volcano_* series.
UPSTREAM_DASHBOARD_SERIES = [
    "volcano_action_scheduling_latency_milliseconds_bucket",
    "volcano_controller_job_to_pod_creation_latency_milliseconds_bucket",
    "volcano_e2e_job_scheduling_duration",
    "volcano_e2e_job_scheduling_latency_milliseconds_bucket",
    "volcano_e2e_scheduling_latency_milliseconds_bucket",
    "volcano_open_session_duration_milliseconds_bucket",
    "volcano_plugin_scheduling_latency_milliseconds_bucket",
    "volcano_pod_preemption_victims",
    "volcano_queue_allocated_memory_bytes",
    "volcano_queue_allocated_milli_cpu",
    "volcano_queue_allocated_scalar_resources",
    "volcano_queue_capacity_memory_bytes",
    "volcano_queue_capacity_milli_cpu",
    "volcano_queue_capacity_scalar_resources",
    "volcano_queue_deserved_memory_bytes",
    "volcano_queue_deserved_milli_cpu",
    "volcano_queue_deserved_scalar_resources",
    "volcano_queue_real_capacity_memory_bytes",
    "volcano_queue_real_capacity_milli_cpu",
    "volcano_queue_real_capacity_scalar_resources",
    "volcano_queue_request_memory_bytes",
    "volcano_queue_request_milli_cpu",
    "volcano_queue_request_scalar_resources",
    "volcano_queue_share",
    "volcano_scheduling_stage_duration_milliseconds_bucket",
    "volcano_task_scheduling_latency_milliseconds_bucket",
    "volcano_total_preemption_attempts",
]


def test_volcanos_own_dashboards_find_their_series() -> None:
    served: set[str] = set()
    for registry in (metrics.SCHEDULER_REGISTRY, metrics.CONTROLLERS_REGISTRY):
        for name, kind in exposed_types(registry).items():
            served.add(name)
            if kind == "histogram":
                served.update(f"{name}{suffix}" for suffix in ("_bucket", "_sum", "_count"))
    assert [name for name in UPSTREAM_DASHBOARD_SERIES if name not in served] == []


def stage_count(family: str, stage: str) -> float:
    value = metrics.REGISTRY.get_sample_value(f"{family}_count", {"stage": stage})
    return value or 0.0


def test_a_scheduled_task_passes_through_upstreams_stages() -> None:
    """Where upstream observes them: Watched (a pending pod reaches the cache), Predicate and
    Scoring (allocate's node scan and scores), Assumed (the bind handed over at commit)."""
    from tests.builders import build_node, build_pod
    from tests.builders import resource_list as rl
    from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
    from volcano_py.framework.session import SchedulingState, close_session, open_session
    from volcano_py.scheduler.registry import PluginRegistry, new_action

    task = "volcano_task_scheduling_latency_milliseconds"
    stage = "volcano_scheduling_stage_duration_milliseconds"
    before = {
        name: stage_count(family, name)
        for family, name in ((task, "Watched"), (task, "Assumed"), (stage, "Predicate"))
    }
    scoring = stage_count(stage, "Scoring")

    def watched_sum() -> float:
        value = metrics.REGISTRY.get_sample_value(f"{task}_sum", {"stage": "Watched"})
        return value or 0.0

    watched_before = watched_sum()
    created = "2026-01-01T00:00:00Z"
    cache = SchedulerCache(clock=lambda: 1767225601.0)
    for node in ("n1", "n2"):
        cache.apply_event("Node", "ADDED", build_node(node, rl("4", "8Gi", pods="10")))
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1, None))
    cache.apply_event(
        "PodGroup",
        "ADDED",
        build_pod_group("st-pg", "st", "q1", 1, None, "Inqueue", creation_timestamp=created),
    )
    pod = build_pod("st", "p1", "", "Pending", rl("1", "1Gi"), "st-pg")
    pod["metadata"]["creationTimestamp"] = created
    cache.apply_event("Pod", "ADDED", pod)
    conf = SchedulerConf(actions=["allocate"], tiers=[Tier([PluginOption("gang")])])
    state = SchedulingState(clock=lambda: 1767225602.0)
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
    new_action("allocate").execute(ssn)
    close_session(ssn)
    assert stage_count(task, "Watched") == before["Watched"] + 1
    assert stage_count(task, "Assumed") == before["Assumed"] + 1
    assert stage_count(stage, "Predicate") >= before["Predicate"] + 1
    assert stage_count(stage, "Scoring") >= scoring + 1
    # Watched 1 s after the pod's creation (the cache's clock), assumed 2 s after (the session's).
    assert watched_sum() == watched_before + 1000.0
