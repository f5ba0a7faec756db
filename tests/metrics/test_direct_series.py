"""Per-job gauges set through the metric's own table of series (``_DIRECT_SERIES``) expose
what ``labels()`` gives: a series set, reset, removed with its job and set again (issue 14:
drf sets every job's share at each session's open and close)."""

from __future__ import annotations

import pytest
from prometheus_client import generate_latest

from volcano_py.metrics import scheduler
from volcano_py.metrics.registry import SCHEDULER_REGISTRY


def _lines(job: str) -> list[str]:
    text = generate_latest(SCHEDULER_REGISTRY).decode()
    return [line for line in text.splitlines() if f'"{job}"' in line]


def _story(job: str) -> list[list[str]]:
    seen = []
    scheduler.job_share("ns", job, 0.25)
    scheduler.unschedulable_tasks(job, 3)
    seen.append(_lines(job))
    scheduler.job_share("ns", job, 0.5)
    scheduler.unschedulable_tasks(job, 0)
    seen.append(_lines(job))
    scheduler.forget_job(job, "q", "ns")
    seen.append(_lines(job))
    scheduler.job_share("ns", job, 0.75)  # the series comes back
    scheduler.unschedulable_tasks(job, 1)
    seen.append(_lines(job))
    scheduler.forget_job(job, "q", "ns")
    return seen


@pytest.mark.parametrize("direct", [True, False])
def test_per_job_series_expose_what_labels_gives(
    direct: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(scheduler, "_DIRECT_SERIES", direct)
    seen = _story(f"direct-series-{direct}")
    monkeypatch.setattr(scheduler, "_DIRECT_SERIES", False)
    reference = _story(f"direct-series-{direct}")
    assert seen == reference
    assert seen[0] and not seen[2] and seen[3]
