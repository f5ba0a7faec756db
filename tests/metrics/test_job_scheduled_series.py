"""``JobScheduledSeries`` leaves its two gauges alone when they already hold what it would set
(issue 14, "Session": a gang of 100 set both gauges 100 times to one value). After every call
the served samples must be those of setting them each time
(``scheduler._SKIP_UNCHANGED_GAUGES = False``, the reference): the gauges, the histogram's
count, sum and buckets."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py import metrics
from volcano_py.metrics import scheduler

LABELS = {"job_name": "series-job", "queue": "q", "job_namespace": "ns"}


def _samples() -> list[tuple[str, float | None]]:
    names = [
        ("volcano_e2e_job_scheduling_duration", LABELS),
        ("volcano_e2e_job_scheduling_last_time", LABELS),
        ("volcano_e2e_job_scheduling_latency_milliseconds_count", {}),
        ("volcano_e2e_job_scheduling_latency_milliseconds_sum", {}),
        ("volcano_e2e_job_scheduling_latency_milliseconds_bucket", {"le": "+Inf"}),
    ]
    return [(name, metrics.REGISTRY.get_sample_value(name, labels)) for name, labels in names]


def _play(calls: list[tuple[float, float]], skip: bool) -> list[list[tuple[str, float | None]]]:
    metrics.E2E_JOB_SCHEDULING_DURATION.clear()
    metrics.E2E_JOB_SCHEDULING_LAST_TIME.clear()
    before = _samples()
    seen = []
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(scheduler, "_SKIP_UNCHANGED_GAUGES", skip)
        series = scheduler.JobScheduledSeries("series-job", "q", "ns")
        for now, created in calls:
            series.scheduled(now, created)
            seen.append(
                [
                    (name, None if value is None else value - (start or 0.0))
                    if name.endswith(("_count", "_bucket"))
                    else (name, value)
                    for (name, value), (_, start) in zip(_samples(), before, strict=True)
                    if not name.endswith("_sum")
                ]
            )
    return seen


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([100.0, 100.5, 250.0]), st.sampled_from([0.0, 50.0, 99.0])),
        min_size=1,
        max_size=12,
    )
)
def test_gauges_left_alone_serve_what_setting_them_serves(calls: list[tuple[float, float]]) -> None:
    assert _play(calls, skip=True) == _play(calls, skip=False)
