"""``ttlSecondsAfterFinished`` (upstream ``garbagecollector/garbagecollector_test.go``:
TestGarbageCollector_ProcessTTL, _NeedsCleanup, _IsJobFinished, _GetFinishAndExpireTime,
_TimeLeft, _JobFinishTime)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from volcano_py.controllers.job_status import is_job_finished
from volcano_py.controllers.job_ttl import (
    TtlError,
    expired,
    finish_and_expire_time,
    needs_cleanup,
    time_left,
    ttl_expiry,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, tzinfo=UTC)
TEST_TIME = datetime(1, 1, 1, 1, 1, 1, tzinfo=UTC)


def _job(
    phase: str | None = None, ttl: int | None = None, finished: datetime | None = None
) -> dict[str, Any]:
    state: dict[str, Any] = {}
    if phase is not None:
        state["phase"] = phase
    if finished is not None:
        state["lastTransitionTime"] = finished.isoformat().replace("+00:00", "Z")
    job: dict[str, Any] = {
        "metadata": {"name": "job1", "namespace": "test"},
        "spec": {},
        "status": {"state": state},
    }
    if ttl is not None:
        job["spec"]["ttlSecondsAfterFinished"] = ttl
    return job


@pytest.mark.parametrize(
    ("case", "ttl", "expected"), [("False Case", 3, False), ("True Case", 0, True)]
)
def test_process_ttl(case: str, ttl: int, expected: bool) -> None:
    assert expired(_job("Completed", ttl, NOW), NOW) is expected, case


@pytest.mark.parametrize(
    ("case", "ttl", "expected"), [("Success Case", 3, True), ("Failure Case", None, False)]
)
def test_needs_cleanup(case: str, ttl: int | None, expected: bool) -> None:
    assert needs_cleanup(_job("Completed", ttl)) is expected, case


@pytest.mark.parametrize(
    ("case", "phase", "expected"),
    [
        ("True Case", "Completed", True),
        ("False Case", "Running", False),
        ("Failed finishes", "Failed", True),
        ("Terminated finishes", "Terminated", True),
        ("Aborted does not", "Aborted", False),
    ],
)
def test_is_job_finished(case: str, phase: str, expected: bool) -> None:
    assert is_job_finished(_job(phase)) is expected, case


@pytest.mark.parametrize(("case", "ttl"), [("Success case", 3), ("Failure case", 2)])
def test_get_finish_and_expire_time(case: str, ttl: int) -> None:
    finished, expires = finish_and_expire_time(_job("Completed", ttl, TEST_TIME))
    assert finished == TEST_TIME, case
    assert expires == TEST_TIME + timedelta(seconds=ttl), case


def test_time_left() -> None:
    assert time_left(_job("Completed", 3, TEST_TIME), TEST_TIME) == timedelta(seconds=3)
    with pytest.raises(TtlError, match="job test/job1 should not be cleaned up"):
        time_left(_job(None, 3, TEST_TIME), TEST_TIME)


def test_job_finish_time() -> None:
    with pytest.raises(TtlError, match="unable to find the time when the Job test/job1 finished"):
        finish_and_expire_time(_job("Completed", 3))


def test_expiry_is_none_for_a_deleting_or_unfinished_job() -> None:
    assert ttl_expiry(_job("Running", 3, NOW)) is None
    deleting = _job("Completed", 3, NOW)
    deleting["metadata"]["deletionTimestamp"] = "2026-01-01T12:00:01Z"
    assert ttl_expiry(deleting) is None
    assert ttl_expiry(_job("Completed", 3, NOW)) == NOW + timedelta(seconds=3)
    assert not expired(_job("Completed", 3, NOW), NOW + timedelta(seconds=2))
    assert expired(_job("Completed", 3, NOW), NOW + timedelta(seconds=3))
