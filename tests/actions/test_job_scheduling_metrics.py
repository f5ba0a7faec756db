"""``volcano_e2e_job_scheduling_duration`` and ``..._latency_milliseconds``: recorded for a job
each time allocate or backfill places one of its tasks, counted from the job's creation
(upstream ``UpdateE2eSchedulingDurationByJob`` in allocate.go and backfill.go)."""

from __future__ import annotations

from datetime import datetime

from tests.builders import build_node, build_pod, build_pod_group, build_queue
from tests.builders import resource_list as rl
from volcano_py import metrics
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.scheduler.registry import PluginRegistry, new_action

CREATED = "2026-11-22T10:00:00Z"
NOW = datetime.fromisoformat("2026-11-22T10:00:07+00:00").timestamp()


def run(actions: list[str], requests: dict[str, str]) -> None:
    cache = SchedulerCache()
    cache.apply_event("Node", "ADDED", build_node("n1", rl("4", "8Gi", pods="10")))
    cache.apply_event("Queue", "ADDED", build_queue("q1", 1, None))
    cache.apply_event(
        "PodGroup",
        "ADDED",
        build_pod_group(
            "metrics-pg", "metrics-ns", "q1", 1, None, "Inqueue", creation_timestamp=CREATED
        ),
    )
    cache.apply_event(
        "Pod", "ADDED", build_pod("metrics-ns", "p1", "", "Pending", requests, "metrics-pg")
    )
    conf = SchedulerConf(
        actions=actions,
        tiers=[Tier([PluginOption.with_flags("gang", "enableJobReady", "enableJobPipelined")])],
    )
    state = SchedulingState(clock=lambda: NOW)
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
    for name in actions:
        new_action(name).execute(ssn)
    close_session(ssn)


def duration() -> float | None:
    return metrics.REGISTRY.get_sample_value(
        "volcano_e2e_job_scheduling_duration",
        {"job_name": "metrics-pg", "queue": "q1", "job_namespace": "metrics-ns"},
    )


def latency_count() -> float:
    return (
        metrics.REGISTRY.get_sample_value("volcano_e2e_job_scheduling_latency_milliseconds_count")
        or 0.0
    )


def test_allocate_records_the_time_since_the_job_was_created() -> None:
    before = latency_count()
    run(["allocate"], rl("1", "1Gi"))
    assert duration() == 7000.0
    assert latency_count() == before + 1


def test_backfill_records_it_for_a_best_effort_task() -> None:
    metrics.E2E_JOB_SCHEDULING_DURATION.clear()
    before = latency_count()
    run(["backfill"], {})
    assert duration() == 7000.0
    assert latency_count() == before + 1


def test_a_deleted_job_takes_its_series_with_it() -> None:
    """``DeleteJobMetrics``: the cache forgets the job, /metrics forgets its series."""
    cache = SchedulerCache()
    pod_group = build_pod_group(
        "gone-pg", "metrics-ns", "q1", 1, None, "Inqueue", creation_timestamp=CREATED
    )
    cache.apply_event("PodGroup", "ADDED", pod_group)
    metrics.job_scheduled("gone-pg", "q1", "metrics-ns", now=1003.0, created=1000.0)
    labels = {"job_name": "gone-pg", "queue": "q1", "job_namespace": "metrics-ns"}
    assert metrics.REGISTRY.get_sample_value("volcano_e2e_job_scheduling_duration", labels)
    cache.apply_event("PodGroup", "DELETED", pod_group)
    assert metrics.REGISTRY.get_sample_value("volcano_e2e_job_scheduling_duration", labels) is None
