"""The CronJob controller (upstream ``pkg/controllers/cronjob``): TestSyncCronJob
(cronjob_controller_test.go), TestGetJobFromTemplate, TestNextScheduleTime,
TestByJobCreationTimestamp, TestMostRecentScheduleTime, TestNextScheduleTimeDuration
(cronjob_controller_util_test.go), TestGetJobsByCronJob and TestUpdateCronJob
(cronjob_controller_handler_test.go).

Upstream's fake job client answers Get with one job whatever the name ("inClient"), and its
lister holds the jobs marked "inLister"; here the lister is ``jobs`` and the client is
``lookup``. Upstream's "nameSpace is terminating" case is about an API error on create: the
live controller handles it (tests/operator), the pure function never sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from volcano_py.api.cronschedule import parse_standard
from volcano_py.controllers.cronjob import (
    NEXT_SCHEDULE_DELTA,
    SCHEDULED_TIMESTAMP_ANNOTATION,
    CronJobSyncError,
    Missed,
    creation_order,
    format_time,
    job_from_template,
    job_reference,
    jobs_of,
    most_recent_schedule_time,
    next_schedule_time,
    next_schedule_time_duration,
    requeue_delay_on_update,
    sync_cronjob,
)

JUST_TEN = datetime(2025, 3, 11, 10, 0, 0, tzinfo=UTC)
TOMORROW_TEN = datetime(2025, 3, 12, 10, 0, 0, tzinfo=UTC)
THREE_AFTER = JUST_TEN + timedelta(minutes=3)
FIVE_AFTER = JUST_TEN + timedelta(minutes=5)
SEVEN_AFTER = JUST_TEN + timedelta(minutes=7)
TEN_HOURS_AFTER = JUST_TEN + timedelta(hours=10)
SIXTY_SECONDS, THREE_MINUTES, LONG = 60, 180, 60060
MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)


def _ts(moment: datetime) -> str:
    return format_time(moment)


# -- TestSyncCronJob --------------------------------------------------------------------------


@dataclass
class Cj:
    schedule: str = ""
    time_zone: str = ""
    suspend: bool = False
    concurrency: str = ""
    starting_deadline_seconds: int | None = None
    successful_limit: int | None = None
    failed_limit: int | None = None


@dataclass
class J:
    status: str
    time: datetime
    in_lister: bool = False
    in_client: bool = False
    active: bool = False
    process_time: timedelta = MINUTE
    not_owned: bool = False


@dataclass
class Expect:
    requeue_after: timedelta | None = None
    update_status: bool = False
    error: bool = False
    last_schedule_time: datetime | None = None
    in_active: int = 0
    events: int = 0
    last_success_time: datetime | None = None
    created: int = 0
    deleted: int = 0


@dataclass
class Case:
    name: str
    cronjob: Cj
    expect: Expect
    now: datetime | None = None
    jobs: list[J] = field(default_factory=list)
    last_schedule_time: datetime | None = None
    get_job_fails: bool = False


def _cronjob(cj: Cj) -> dict[str, Any]:
    """``createTestCronJob``."""
    spec: dict[str, Any] = {
        "schedule": cj.schedule or "*/5 * * * *",
        "suspend": cj.suspend,
        "concurrencyPolicy": cj.concurrency or "Allow",
        "jobTemplate": {
            "metadata": {"labels": {"volcano": "yes"}, "annotations": {"cronjob": "yes"}}
        },
    }
    if cj.time_zone:
        spec["timeZone"] = cj.time_zone
    if cj.starting_deadline_seconds is not None:
        spec["startingDeadlineSeconds"] = cj.starting_deadline_seconds
    if cj.successful_limit is not None:
        spec["successfulJobsHistoryLimit"] = cj.successful_limit
    if cj.failed_limit is not None:
        spec["failedJobsHistoryLimit"] = cj.failed_limit
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "CronJob",
        "metadata": {
            "name": "vccronjob",
            "namespace": "volcano",
            "uid": "test-uid-123",
            "creationTimestamp": _ts(JUST_TEN),
        },
        "spec": spec,
    }


def _job(cronjob: dict[str, Any], spec: J) -> dict[str, Any]:
    """``createTestJob``."""
    job = job_from_template(cronjob, spec.time)
    job["metadata"]["creationTimestamp"] = _ts(spec.time)
    job["metadata"]["uid"] = "test-uid-" + spec.time.strftime("%Y%m%d%H%M%S")
    job["status"] = {
        "state": {"phase": spec.status, "lastTransitionTime": _ts(spec.time + spec.process_time)}
    }
    if spec.not_owned:
        job["metadata"]["ownerReferences"] = []
    return job


SYNC_CASES = [
    Case("Abnormal situation, error schedule", Cj(schedule="wrong shcedlue"), Expect(error=True)),
    Case(
        "Abnormal situation, error TimeZone", Cj(time_zone="error TZ"), Expect(error=True, events=1)
    ),
    Case("Abnormal situation, suspend", Cj(suspend=True), Expect()),
    *[
        Case(
            f"First run, is not time, {policy}",
            Cj(concurrency=policy),
            Expect(requeue_after=2 * MINUTE + NEXT_SCHEDULE_DELTA),
            now=THREE_AFTER,
        )
        for policy in ("Allow", "Forbid", "Replace")
    ],
    Case(
        "First run, is not time in TZ",
        Cj(concurrency="Allow", schedule="0 10 * * *", time_zone="Pacific/Honolulu"),
        Expect(requeue_after=10 * HOUR + NEXT_SCHEDULE_DELTA),
        now=JUST_TEN,
    ),
    *[
        Case(
            name,
            Cj(concurrency=policy),
            Expect(
                requeue_after=5 * MINUTE + NEXT_SCHEDULE_DELTA,
                update_status=True,
                last_schedule_time=FIVE_AFTER,
                in_active=1,
                events=1,
                created=1,
            ),
            now=FIVE_AFTER,
        )
        for name, policy in (
            ("First run, is time, Allow", "Allow"),
            ("First run, is time, Forbid", "Forbid"),
            ("First run, is time, Replace", "Forbid"),
        )
    ],
    Case(
        "First run, is time, has startingDeadlineSeconds, Allow",
        Cj(concurrency="Allow", starting_deadline_seconds=SIXTY_SECONDS),
        Expect(5 * MINUTE + NEXT_SCHEDULE_DELTA, True, False, FIVE_AFTER, 1, 1, None, 1),
        now=FIVE_AFTER,
    ),
    Case(
        "First run, is time in TZ, Allow",
        Cj(concurrency="Allow", schedule="0 10 * * *", time_zone="Pacific/Honolulu"),
        Expect(24 * HOUR + NEXT_SCHEDULE_DELTA, True, False, TEN_HOURS_AFTER, 1, 1, None, 1),
        now=TEN_HOURS_AFTER,
    ),
    Case(
        "First run, is time, uses schedule's TZ despite conflict with TimeZone setting",
        Cj(schedule="TZ=UTC 0 20 * * *", time_zone="Pacific/Honolulu"),
        Expect(24 * HOUR + NEXT_SCHEDULE_DELTA, True, False, TEN_HOURS_AFTER, 1, 2, None, 1),
        now=TEN_HOURS_AFTER,
    ),
    Case(
        "First run, miss Time, no startingDeadlineSeconds, Allow",
        Cj(concurrency="Allow"),
        Expect(3 * MINUTE + NEXT_SCHEDULE_DELTA, True, False, FIVE_AFTER, 1, 1, None, 1),
        now=SEVEN_AFTER,
    ),
    Case(
        "First run, miss Time, no miss deadline, Allow",
        Cj(concurrency="Allow", starting_deadline_seconds=THREE_MINUTES),
        Expect(3 * MINUTE + NEXT_SCHEDULE_DELTA, True, False, FIVE_AFTER, 1, 1, None, 1),
        now=SEVEN_AFTER,
    ),
    Case(
        "First run, miss deadline, Allow",
        Cj(concurrency="Allow", starting_deadline_seconds=SIXTY_SECONDS),
        Expect(3 * MINUTE + NEXT_SCHEDULE_DELTA),
        now=SEVEN_AFTER,
    ),
    Case(
        "First run, manymiss, no startingDeadlineSeconds, Allow",
        Cj(concurrency="Allow"),
        Expect(5 * MINUTE + NEXT_SCHEDULE_DELTA, True, False, TEN_HOURS_AFTER, 1, 2, None, 1),
        now=TEN_HOURS_AFTER,
    ),
    Case(
        "First run, manymiss, has startingDeadlineSeconds, Allow",
        Cj(concurrency="Allow", schedule="* * * * *", starting_deadline_seconds=LONG),
        Expect(MINUTE + NEXT_SCHEDULE_DELTA, True, False, TOMORROW_TEN, 1, 2, None, 1),
        now=TOMORROW_TEN,
    ),
    Case(
        "First run, is time, job exist and done, Allow",
        Cj(concurrency="Allow"),
        Expect(5 * MINUTE + NEXT_SCHEDULE_DELTA),
        now=FIVE_AFTER,
        jobs=[J("Completed", FIVE_AFTER, in_client=True)],
    ),
    Case(
        "First run, is time, job exist but not owned by this CronJob, Allow",
        Cj(concurrency="Allow"),
        Expect(5 * MINUTE + NEXT_SCHEDULE_DELTA, events=1),
        now=FIVE_AFTER,
        jobs=[J("Running", FIVE_AFTER, in_client=True, not_owned=True)],
    ),
    Case(
        "First run, is time, job in active but not in lister, Allow",
        Cj(concurrency="Allow"),
        Expect(5 * MINUTE + NEXT_SCHEDULE_DELTA, True, False, FIVE_AFTER, 1, 2, None, 1),
        now=FIVE_AFTER,
        jobs=[J("Completed", FIVE_AFTER, active=True)],
    ),
    Case(
        "First run, @every schedule, not time, Allow",
        Cj(concurrency="Allow", schedule="@every 1h"),
        Expect(55 * MINUTE + NEXT_SCHEDULE_DELTA),
        now=FIVE_AFTER,
    ),
    Case(
        "First run, @every schedule, is time, Allow",
        Cj(concurrency="Allow", schedule="@every 1h"),
        Expect(HOUR + NEXT_SCHEDULE_DELTA, True, False, JUST_TEN + HOUR, 1, 1, None, 1),
        now=JUST_TEN + HOUR,
    ),
    Case(
        "First run, @every schedule, is time, miss deadline, Allow",
        Cj(concurrency="Allow", schedule="@every 1h", starting_deadline_seconds=SIXTY_SECONDS),
        Expect(30 * MINUTE + NEXT_SCHEDULE_DELTA),
        now=JUST_TEN + HOUR + 30 * MINUTE,
    ),
    Case(
        "First run, @every schedule, is time, no miss deadline, Allow",
        Cj(concurrency="Allow", schedule="@every 1h", starting_deadline_seconds=LONG),
        Expect(30 * MINUTE + NEXT_SCHEDULE_DELTA, True, False, JUST_TEN + HOUR, 1, 1, None, 1),
        now=JUST_TEN + HOUR + 30 * MINUTE,
    ),
    Case(
        "not first run, @every schedule, pre all done, is not time, Allow",
        Cj(concurrency="Allow", schedule="@every 1h", starting_deadline_seconds=LONG),
        Expect(30 * MINUTE + NEXT_SCHEDULE_DELTA, True, last_success_time=JUST_TEN + MINUTE),
        now=JUST_TEN + 30 * MINUTE,
        jobs=[J("Completed", JUST_TEN, in_lister=True)],
    ),
    Case(
        "not first run, @every schedule, pre all done, is time, Allow",
        Cj(concurrency="Allow", schedule="@every 1h", starting_deadline_seconds=LONG),
        Expect(
            HOUR + NEXT_SCHEDULE_DELTA, True, False, JUST_TEN + HOUR, 1, 1, JUST_TEN + MINUTE, 1
        ),
        now=JUST_TEN + HOUR,
        jobs=[J("Completed", JUST_TEN, in_lister=True)],
    ),
    Case(
        "not first run, @every schedule, pre active, is not time, Allow",
        Cj(concurrency="Allow", schedule="@every 1h", starting_deadline_seconds=LONG),
        Expect(30 * MINUTE + NEXT_SCHEDULE_DELTA, in_active=1),
        now=JUST_TEN + 30 * MINUTE,
        jobs=[J("Running", JUST_TEN, in_lister=True, in_client=True, active=True)],
    ),
    Case(
        "not first run, @every schedule, pre activee all done, is time, Allow",
        Cj(concurrency="Allow", schedule="@every 1h", starting_deadline_seconds=LONG),
        Expect(HOUR + NEXT_SCHEDULE_DELTA, True, False, JUST_TEN + HOUR, 2, 1, None, 1),
        now=JUST_TEN + HOUR,
        jobs=[J("Running", JUST_TEN, in_lister=True, in_client=True, active=True)],
    ),
    Case(
        "noy first run, successfulJobHistoryLimit is 0",
        Cj(concurrency="Allow", successful_limit=0),
        Expect(
            3 * MINUTE + NEXT_SCHEDULE_DELTA,
            True,
            False,
            FIVE_AFTER,
            0,
            1,
            FIVE_AFTER + MINUTE,
            0,
            1,
        ),
        now=SEVEN_AFTER,
        jobs=[J("Completed", FIVE_AFTER, in_lister=True)],
        last_schedule_time=FIVE_AFTER,
    ),
    Case(
        "noy first run, successfulJobHistoryLimit is 5",
        Cj(concurrency="Allow", successful_limit=5),
        Expect(
            3 * MINUTE + NEXT_SCHEDULE_DELTA,
            True,
            False,
            FIVE_AFTER + 15 * MINUTE,
            last_success_time=FIVE_AFTER + 16 * MINUTE,
        ),
        now=JUST_TEN + 22 * MINUTE,
        jobs=[J("Completed", FIVE_AFTER + k * 5 * MINUTE, in_lister=True) for k in range(4)],
        last_schedule_time=FIVE_AFTER + 15 * MINUTE,
    ),
    *[
        Case(
            f"not first run, pre all done, is not time, {policy}",
            Cj(concurrency=policy, starting_deadline_seconds=LONG),
            Expect(2 * MINUTE + NEXT_SCHEDULE_DELTA, True, last_success_time=JUST_TEN + MINUTE),
            now=THREE_AFTER,
            jobs=[J("Completed", JUST_TEN, in_lister=True)],
        )
        for policy in ("Allow", "Forbid", "Replace")
    ],
    Case(
        "not first run, pre all done, is not time, Replace (failed job)",
        Cj(concurrency="Replace", starting_deadline_seconds=LONG),
        Expect(2 * MINUTE + NEXT_SCHEDULE_DELTA),
        now=THREE_AFTER,
        jobs=[J("Failed", JUST_TEN, in_lister=True)],
    ),
    Case(
        "not first run, pre all done, one suc and one fail, is not time, Allow",
        Cj(concurrency="Allow"),
        Expect(
            3 * MINUTE + NEXT_SCHEDULE_DELTA,
            True,
            False,
            JUST_TEN + 5 * MINUTE,
            last_success_time=JUST_TEN + MINUTE,
        ),
        now=SEVEN_AFTER,
        jobs=[J("Completed", JUST_TEN, in_lister=True), J("Failed", FIVE_AFTER, in_lister=True)],
        last_schedule_time=FIVE_AFTER,
    ),
    *[
        Case(
            f"not first run, pre all done but in active, is not time, {policy}",
            Cj(concurrency=policy),
            Expect(
                2 * MINUTE + NEXT_SCHEDULE_DELTA,
                True,
                last_success_time=JUST_TEN + MINUTE,
                events=1,
            ),
            now=THREE_AFTER,
            jobs=[J("Completed", JUST_TEN, in_lister=True, active=True)],
        )
        for policy in ("Allow", "Forbid", "Replace")
    ],
    *[
        Case(
            f"not first run, pre all done, is time, {policy}",
            Cj(concurrency=policy),
            Expect(
                5 * MINUTE + NEXT_SCHEDULE_DELTA,
                True,
                False,
                FIVE_AFTER,
                1,
                1,
                JUST_TEN + MINUTE,
                1,
            ),
            now=FIVE_AFTER,
            jobs=[J("Completed", JUST_TEN, in_lister=True)],
        )
        for policy in ("Allow", "Forbid", "Replace")
    ],
    Case(
        "not first run, pre all done, is time, suspend",
        Cj(concurrency="Allow", suspend=True),
        Expect(None, True, last_success_time=JUST_TEN + MINUTE),
        now=FIVE_AFTER,
        jobs=[J("Completed", JUST_TEN, in_lister=True)],
    ),
    Case(
        "not first run, pre all done fail, is time, Allow",
        Cj(concurrency="Allow"),
        Expect(5 * MINUTE + NEXT_SCHEDULE_DELTA, True, False, FIVE_AFTER, 1, 1, None, 1),
        now=FIVE_AFTER,
        jobs=[J("Failed", JUST_TEN, in_lister=True)],
    ),
]


def _upstream_tail_cases() -> list[Case]:
    """The second half of upstream's table (after ``pre all done fail, is time``)."""
    running_active = J("Running", FIVE_AFTER, in_lister=True, in_client=True, active=True)
    done_at_ten = J("Completed", JUST_TEN, in_lister=True)
    cases = [
        Case(
            "not first run, pre all done, one suc and one fail, is time, Allow",
            Cj(concurrency="Allow"),
            Expect(
                5 * MINUTE + NEXT_SCHEDULE_DELTA,
                True,
                False,
                JUST_TEN + 15 * MINUTE,
                1,
                1,
                JUST_TEN + MINUTE,
                1,
            ),
            now=JUST_TEN + 15 * MINUTE,
            jobs=[done_at_ten, J("Failed", FIVE_AFTER, in_lister=True)],
        ),
    ]
    for policy in ("Allow", "Forbid", "Replace"):
        cases.append(
            Case(
                f"not first run, pre all done but in active, is time, {policy}",
                Cj(concurrency=policy),
                Expect(
                    5 * MINUTE + NEXT_SCHEDULE_DELTA,
                    True,
                    False,
                    FIVE_AFTER,
                    1,
                    2,
                    JUST_TEN + MINUTE,
                    1,
                ),
                now=FIVE_AFTER,
                jobs=[J("Completed", JUST_TEN, in_lister=True, active=True)],
            )
        )
    cases += [
        Case(
            "not first run, pre all done, job exist and in active, is time, Allow",
            Cj(concurrency="Allow"),
            Expect(
                5 * MINUTE + NEXT_SCHEDULE_DELTA,
                True,
                last_success_time=JUST_TEN + MINUTE,
                in_active=1,
            ),
            now=FIVE_AFTER,
            jobs=[running_active, done_at_ten],
        ),
        Case(
            "not first run, pre all done, miss deadline, Allow",
            Cj(concurrency="Allow", starting_deadline_seconds=SIXTY_SECONDS),
            Expect(3 * MINUTE + NEXT_SCHEDULE_DELTA, True, last_success_time=JUST_TEN + MINUTE),
            now=SEVEN_AFTER,
            jobs=[done_at_ten],
        ),
        Case(
            "not first run, pre all done, no miss deadline, Allow",
            Cj(concurrency="Allow", starting_deadline_seconds=THREE_MINUTES),
            Expect(
                3 * MINUTE + NEXT_SCHEDULE_DELTA,
                True,
                False,
                FIVE_AFTER,
                1,
                1,
                JUST_TEN + MINUTE,
                1,
            ),
            now=SEVEN_AFTER,
            jobs=[done_at_ten],
        ),
    ]
    for policy in ("Allow", "Forbid", "Replace"):
        cases.append(
            Case(
                f"not first run, pre active, not time, {policy}",
                Cj(concurrency=policy),
                Expect(3 * MINUTE + NEXT_SCHEDULE_DELTA, False, False, FIVE_AFTER, 1),
                now=SEVEN_AFTER,
                jobs=[running_active],
                last_schedule_time=FIVE_AFTER,
            )
        )
    cases += [
        # Upstream names this case "suspend" but does not set suspend.
        Case(
            "not first run, pre active, not time, suspend",
            Cj(concurrency="Allow"),
            Expect(3 * MINUTE + NEXT_SCHEDULE_DELTA, False, False, FIVE_AFTER, 1),
            now=SEVEN_AFTER,
            jobs=[running_active],
            last_schedule_time=FIVE_AFTER,
        ),
        Case(
            "not first run, pre active, is time, Allow",
            Cj(concurrency="Allow"),
            Expect(
                5 * MINUTE + NEXT_SCHEDULE_DELTA, True, False, JUST_TEN + 10 * MINUTE, 2, 1, None, 1
            ),
            now=JUST_TEN + 10 * MINUTE,
            jobs=[running_active],
            last_schedule_time=FIVE_AFTER,
        ),
        Case(
            "not first run, pre active, is time, Forbid",
            Cj(concurrency="Forbid"),
            Expect(5 * MINUTE + NEXT_SCHEDULE_DELTA, False, False, FIVE_AFTER, 1, 1),
            now=JUST_TEN + 10 * MINUTE,
            jobs=[running_active],
            last_schedule_time=FIVE_AFTER,
        ),
        Case(
            "not first run, pre active, is time, Replace",
            Cj(concurrency="Replace"),
            Expect(
                5 * MINUTE + NEXT_SCHEDULE_DELTA,
                True,
                False,
                JUST_TEN + 10 * MINUTE,
                1,
                3,
                None,
                1,
                1,
            ),
            now=JUST_TEN + 10 * MINUTE,
            jobs=[running_active],
            last_schedule_time=FIVE_AFTER,
        ),
        Case(
            "not first run, pre active, is time, suspend",
            Cj(concurrency="Allow", suspend=True),
            Expect(None, False, False, FIVE_AFTER, 1),
            now=JUST_TEN + 10 * MINUTE,
            jobs=[running_active],
            last_schedule_time=FIVE_AFTER,
        ),
        Case(
            "not first run, pre active, is time, Replace, get job failed",
            Cj(concurrency="Replace"),
            Expect(None, False, True, FIVE_AFTER, 1, 2),
            now=JUST_TEN + 10 * MINUTE,
            jobs=[running_active],
            last_schedule_time=FIVE_AFTER,
            get_job_fails=True,
        ),
        Case(
            "not first run, pre active, is time, miss deadline",
            Cj(concurrency="Allow", starting_deadline_seconds=SIXTY_SECONDS),
            Expect(3 * MINUTE + NEXT_SCHEDULE_DELTA, False, False, FIVE_AFTER, 1),
            now=JUST_TEN + 12 * MINUTE,
            jobs=[running_active],
            last_schedule_time=FIVE_AFTER,
        ),
        Case(
            "not first run, pre active, is time, no miss deadline",
            Cj(concurrency="Allow", starting_deadline_seconds=THREE_MINUTES),
            Expect(
                3 * MINUTE + NEXT_SCHEDULE_DELTA, True, False, JUST_TEN + 10 * MINUTE, 2, 1, None, 1
            ),
            now=JUST_TEN + 12 * MINUTE,
            jobs=[running_active],
            last_schedule_time=FIVE_AFTER,
        ),
        Case(
            "not first run, pre all done, manymiss, Allow",
            Cj(concurrency="Allow"),
            Expect(
                5 * MINUTE + NEXT_SCHEDULE_DELTA,
                True,
                False,
                TEN_HOURS_AFTER,
                1,
                2,
                JUST_TEN + 6 * MINUTE,
                1,
            ),
            now=TEN_HOURS_AFTER,
            jobs=[J("Completed", FIVE_AFTER, in_lister=True)],
        ),
        Case(
            "not first run, pre all done, manymiss, has startingDeadlineSeconds, Allow",
            Cj(concurrency="Allow", schedule="* * * * *", starting_deadline_seconds=LONG),
            Expect(
                MINUTE + NEXT_SCHEDULE_DELTA,
                True,
                False,
                TOMORROW_TEN,
                1,
                2,
                JUST_TEN + 6 * MINUTE,
                1,
            ),
            now=TOMORROW_TEN,
            jobs=[J("Completed", FIVE_AFTER, in_lister=True)],
        ),
    ]
    return cases


ALL_SYNC_CASES = SYNC_CASES + _upstream_tail_cases()


@pytest.mark.parametrize("case", ALL_SYNC_CASES, ids=[case.name for case in ALL_SYNC_CASES])
def test_sync_cronjob(case: Case) -> None:
    cronjob = _cronjob(case.cronjob)
    built = [_job(cronjob, spec) for spec in case.jobs]
    lister = [job for job, spec in zip(built, case.jobs, strict=True) if spec.in_lister]
    client_job = built[0] if case.jobs and case.jobs[0].in_client else None
    status: dict[str, Any] = {}
    if case.last_schedule_time is not None:
        status["lastScheduleTime"] = _ts(case.last_schedule_time)
    active = [job_reference(job) for job, spec in zip(built, case.jobs, strict=True) if spec.active]
    if active:
        status["active"] = active
    cronjob["status"] = status
    now = case.now or datetime(1, 1, 1, tzinfo=UTC)

    def lookup(name: str) -> dict[str, Any] | None:
        # Upstream creates first and asks its client only on AlreadyExists (the client's job
        # has the scheduled name) or for the job to replace.
        if case.get_job_fails or client_job is None:
            return None
        return client_job if client_job["metadata"]["name"] == name else None

    changes = sync_cronjob(cronjob, lister, now, lookup)

    expect = case.expect
    assert (changes.error is not None) is expect.error, changes.error
    assert changes.requeue_after == expect.requeue_after
    assert (changes.status is not None) is expect.update_status
    written = changes.status if changes.status is not None else status
    assert written.get("lastScheduleTime") == (
        _ts(expect.last_schedule_time) if expect.last_schedule_time else None
    )
    assert written.get("lastSuccessfulTime") == (
        _ts(expect.last_success_time) if expect.last_success_time else None
    )
    assert len(written.get("active") or []) == expect.in_active
    assert len(changes.events) == expect.events, changes.events
    assert (1 if changes.create_job else 0) == expect.created
    assert len(changes.delete_jobs) == expect.deleted
    if changes.create_job:
        owner = changes.create_job["metadata"]["ownerReferences"][0]
        assert owner == {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "CronJob",
            "name": "vccronjob",
            "uid": "test-uid-123",
            "controller": True,
            "blockOwnerDeletion": True,
        }


def test_created_job_is_named_by_minutes_and_referenced_once_created() -> None:
    cronjob = _cronjob(Cj())
    cronjob["status"] = {}
    changes = sync_cronjob(cronjob, [], FIVE_AFTER)
    assert changes.create_job is not None
    assert (
        changes.create_job["metadata"]["name"] == f"vccronjob-{int(FIVE_AFTER.timestamp()) // 60}"
    )
    assert changes.create_job["metadata"]["namespace"] == "volcano"
    assert changes.status is not None and changes.status["active"][0]["uid"] == ""
    changes.record_created(
        {
            "metadata": {
                "name": changes.create_job["metadata"]["name"],
                "uid": "u1",
                "resourceVersion": "7",
            }
        }
    )
    assert changes.status["active"][0]["uid"] == "u1"
    assert changes.status["active"][0]["resourceVersion"] == "7"


def test_history_limits_delete_the_oldest_finished_jobs() -> None:
    cronjob = _cronjob(Cj(successful_limit=1, failed_limit=0))
    cronjob["status"] = {"lastScheduleTime": _ts(JUST_TEN + 20 * MINUTE)}
    jobs = [_job(cronjob, J("Completed", JUST_TEN + k * 5 * MINUTE)) for k in range(3)]
    jobs.append(_job(cronjob, J("Failed", JUST_TEN + 20 * MINUTE)))
    changes = sync_cronjob(cronjob, jobs, JUST_TEN + 21 * MINUTE)
    deleted = [deletion.name for deletion in changes.delete_jobs]
    assert deleted == [
        jobs[0]["metadata"]["name"],
        jobs[1]["metadata"]["name"],
        jobs[3]["metadata"]["name"],
    ]


def test_a_terminating_cronjob_is_left_alone() -> None:
    cronjob = _cronjob(Cj())
    cronjob["metadata"]["deletionTimestamp"] = _ts(JUST_TEN)
    changes = sync_cronjob(cronjob, [], FIVE_AFTER)
    assert changes.create_job is None and changes.status is None and changes.requeue_after is None


# -- TestGetJobFromTemplate -------------------------------------------------------------------


def _volcano_cronjob() -> dict[str, Any]:
    """``createVolcanoCronJob``."""
    return {
        "metadata": {"name": "mycronjob-", "namespace": "snazzycats", "uid": "1a2b3c"},
        "spec": {
            "schedule": "*/5 * * * *",
            "concurrencyPolicy": "Forbid",
            "startingDeadlineSeconds": 60,
            "jobTemplate": {
                "metadata": {"labels": {"a": "b"}},
                "spec": {
                    "schedulerName": "volcano",
                    "plugins": {"ssh": [], "env": [], "svc": []},
                    "tasks": [
                        {
                            "name": "task-1",
                            "replicas": 1,
                            "template": {
                                "metadata": {"name": "pods", "namespace": "snazzycats"},
                                "spec": {
                                    "containers": [
                                        {"name": "busybox-container", "image": "busybox:latest"}
                                    ],
                                    "restartPolicy": "OnFailure",
                                },
                            },
                        }
                    ],
                    "policies": [{"event": "PodEvicted", "action": "RestartJob"}],
                    "minAvailable": 1,
                },
            },
        },
    }


@pytest.mark.parametrize(
    ("case", "time_zone", "annotations", "expected_stamp", "expected_count"),
    [
        ("UTC timezone and one annotation", "UTC", {"x": "y"}, "2025-03-11T10:00:00Z", 2),
        ("nil timezone and one annotation", None, {"x": "y"}, "2025-03-11T10:00:00Z", 2),
        (
            "correct timezone and multiple annotation",
            "Europe/Rome",
            {"x": "y", "z": "x"},
            "2025-03-11T11:00:00+01:00",
            3,
        ),
    ],
)
def test_get_job_from_template(
    case: str,
    time_zone: str | None,
    annotations: dict[str, str],
    expected_stamp: str,
    expected_count: int,
) -> None:
    cronjob = _volcano_cronjob()
    cronjob["spec"]["jobTemplate"]["metadata"]["annotations"] = annotations
    if time_zone is not None:
        cronjob["spec"]["timeZone"] = time_zone
    job = job_from_template(cronjob, JUST_TEN)
    assert job["metadata"]["name"].startswith("mycronjob-"), case
    assert len(job["metadata"]["labels"]) == 1
    assert len(job["metadata"]["annotations"]) == expected_count
    assert job["metadata"]["annotations"][SCHEDULED_TIMESTAMP_ANNOTATION] == expected_stamp
    assert job["spec"] == cronjob["spec"]["jobTemplate"]["spec"]
    assert job["spec"] is not cronjob["spec"]["jobTemplate"]["spec"]


# -- TestNextScheduleTime ---------------------------------------------------------------------


def test_next_schedule_time() -> None:
    schedule = parse_standard("0 * * * ?")
    t1, t2 = JUST_TEN, JUST_TEN + HOUR
    events: list[tuple[str, str, str]] = []

    def cronjob(
        created: datetime, last: datetime | None = None, deadline: int | None = None
    ) -> dict[str, Any]:
        spec: dict[str, Any] = {"schedule": "0 * * * ?", "concurrencyPolicy": "Allow"}
        if deadline is not None:
            spec["startingDeadlineSeconds"] = deadline
        return {
            "metadata": {
                "name": "mycronjob",
                "namespace": "default",
                "uid": "1a2b3c",
                "creationTimestamp": _ts(created),
            },
            "spec": spec,
            "status": {"lastScheduleTime": _ts(last)} if last else {},
        }

    # Case 1: no known start times, and none needed yet.
    assert next_schedule_time(cronjob(t1 - 10 * MINUTE), t1 - 7 * MINUTE, schedule, events) is None
    # Case 2: no known start times, and one needed.
    assert (
        next_schedule_time(cronjob(t1 - 10 * MINUTE), t1 + timedelta(seconds=2), schedule, events)
        == t1
    )
    # Case 3: known LastScheduleTime, no start needed.
    assert (
        next_schedule_time(cronjob(t1 - 10 * MINUTE, t1), t1 + 2 * MINUTE, schedule, events) is None
    )
    # Case 4: known LastScheduleTime, a start needed.
    assert (
        next_schedule_time(cronjob(t1 - 10 * MINUTE, t1), t2 + 5 * MINUTE, schedule, events) == t2
    )
    # Case 5: known LastScheduleTime, two starts needed.
    assert (
        next_schedule_time(cronjob(t1 - 2 * HOUR, t1 - HOUR), t2 + 5 * MINUTE, schedule, events)
        == t2
    )
    # Case 6: now is way way ahead of last start time, and there is no deadline.
    far = t2 + timedelta(days=10)
    assert next_schedule_time(cronjob(t1 - 2 * HOUR, t1 - HOUR), far, schedule, events) is not None
    # Case 7: ... but there is a short deadline.
    assert (
        next_schedule_time(cronjob(t1 - 2 * HOUR, t1 - HOUR, 2 * 60 * 60), far, schedule, events)
        is not None
    )
    # Case 8: the error of mostRecentScheduleTime comes up.
    with pytest.raises(CronJobSyncError):
        next_schedule_time(
            cronjob(t1 + timedelta(seconds=10)), t2, parse_standard("59 23 31 2 *"), events
        )


# -- TestByJobCreationTimestamp ---------------------------------------------------------------


def test_by_job_creation_timestamp() -> None:
    now = "2018-01-01T02:03:04Z"
    later = "2019-01-01T02:03:04Z"

    def job(name: str, created: str | None = None) -> dict[str, Any]:
        meta: dict[str, Any] = {"name": name}
        if created:
            meta["creationTimestamp"] = created
        return {"metadata": meta}

    a_nil, b_nil = job("a"), job("b")
    a_set, b_set = job("a", now), job("b", now)
    a_set_later = job("a", later)
    cases = [
        ("both have nil creation times", [b_nil, a_nil], [a_nil, b_nil]),
        ("only the first has a nil creation time", [a_nil, b_set], [b_set, a_nil]),
        ("only the second has a nil creation time", [a_set, b_nil], [a_set, b_nil]),
        ("both have non-nil, equal creation time", [b_set, a_set], [a_set, b_set]),
        (
            "both have non-nil, different creation time",
            [a_set_later, b_set, a_nil],
            [b_set, a_set_later, a_nil],
        ),
    ]
    for case, given, expected in cases:
        assert creation_order(given) == expected, case


# -- TestMostRecentScheduleTime ---------------------------------------------------------------


def _at(delta: timedelta) -> datetime:
    return JUST_TEN + delta


def _cj(
    schedule: str, created: datetime, last: datetime | None = None, deadline: int | None = None
) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedule": schedule}
    if deadline is not None:
        spec["startingDeadlineSeconds"] = deadline
    return {
        "metadata": {"creationTimestamp": _ts(created)},
        "spec": spec,
        "status": {"lastScheduleTime": _ts(last)} if last else {},
    }


HALF_PAST = _at(30 * MINUTE)
MOST_RECENT_CASES = [
    (
        "now before next schedule",
        _cj("0 * * * *", JUST_TEN),
        False,
        _at(timedelta(seconds=30)),
        JUST_TEN,
        None,
        Missed.NONE,
    ),
    (
        "now just after next schedule",
        _cj("0 * * * *", JUST_TEN),
        False,
        _at(61 * MINUTE),
        JUST_TEN,
        _at(60 * MINUTE),
        Missed.NONE,
    ),
    (
        "missed 5 schedules",
        _cj("0 * * * *", _at(timedelta(seconds=10))),
        False,
        _at(301 * MINUTE),
        _at(timedelta(seconds=10)),
        _at(300 * MINUTE),
        Missed.FEW,
    ),
    (
        "complex schedule",
        _cj("30 6-16/4 * * 1-5", JUST_TEN, HALF_PAST),
        False,
        _at(24 * HOUR + 31 * MINUTE),
        HALF_PAST,
        _at(24 * HOUR + 30 * MINUTE),
        Missed.FEW,
    ),
    (
        "another complex schedule",
        _cj("30 10,11,12 * * 1-5", JUST_TEN, HALF_PAST),
        False,
        _at(30 * HOUR + 30 * MINUTE),
        HALF_PAST,
        None,
        Missed.FEW,
    ),
    (
        "complex schedule with longer diff between executions",
        _cj("30 6-16/4 * * 1-5", JUST_TEN, HALF_PAST),
        False,
        _at(96 * HOUR + 31 * MINUTE),
        HALF_PAST,
        _at(76 * HOUR + 30 * MINUTE),
        Missed.FEW,
    ),
    (
        "complex schedule with shorter diff between executions",
        _cj("30 6-16/4 * * 1-5", JUST_TEN),
        False,
        _at(24 * HOUR + 31 * MINUTE),
        JUST_TEN,
        _at(24 * HOUR + 30 * MINUTE),
        Missed.FEW,
    ),
    (
        "@every schedule",
        _cj("@every 1h", _at(-59 * MINUTE), _at(MINUTE), 10),
        False,
        _at(7 * 24 * HOUR),
        _at(MINUTE),
        _at(6 * 24 * HOUR + 23 * HOUR + MINUTE),
        Missed.MANY,
    ),
    (
        "earliestTime being CreationTimestamp and LastScheduleTime",
        _cj("0 * * * *", JUST_TEN, JUST_TEN),
        False,
        _at(timedelta(seconds=30)),
        JUST_TEN,
        None,
        Missed.NONE,
    ),
    (
        "earliestTime being LastScheduleTime",
        _cj("*/5 * * * *", JUST_TEN, HALF_PAST),
        False,
        _at(31 * MINUTE),
        HALF_PAST,
        None,
        Missed.NONE,
    ),
    (
        "earliestTime being LastScheduleTime (within StartingDeadlineSeconds)",
        _cj("*/5 * * * *", JUST_TEN, HALF_PAST, 60),
        False,
        _at(31 * MINUTE),
        HALF_PAST,
        None,
        Missed.NONE,
    ),
    (
        "earliestTime being LastScheduleTime (outside StartingDeadlineSeconds)",
        _cj("*/5 * * * *", JUST_TEN, HALF_PAST, 60),
        True,
        _at(32 * MINUTE),
        _at(31 * MINUTE),
        None,
        Missed.NONE,
    ),
]


@pytest.mark.parametrize(
    ("case", "cronjob", "include_deadline", "now", "earliest", "recent", "missed"),
    MOST_RECENT_CASES,
    ids=[case[0] for case in MOST_RECENT_CASES],
)
def test_most_recent_schedule_time(
    case: str,
    cronjob: dict[str, Any],
    include_deadline: bool,
    now: datetime,
    earliest: datetime,
    recent: datetime | None,
    missed: Missed,
) -> None:
    schedule = parse_standard(cronjob["spec"]["schedule"])
    got = most_recent_schedule_time(cronjob, now, schedule, include_deadline)
    assert got == (earliest, recent, missed), case


def test_most_recent_schedule_time_rogue_cronjob() -> None:
    """Case "rogue cronjob": a schedule that never fires is an error."""
    cronjob = _cj("59 23 31 2 *", _at(timedelta(seconds=10)))
    with pytest.raises(CronJobSyncError):
        most_recent_schedule_time(cronjob, _at(HOUR), parse_standard("59 23 31 2 *"), False)


# -- TestNextScheduleTimeDuration -------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "cronjob", "now", "expected"),
    [
        (
            "complex schedule skipping weekend",
            _cj("30 6-16/4 * * 1-5", JUST_TEN, HALF_PAST),
            _at(24 * HOUR + 31 * MINUTE),
            3 * HOUR + 59 * MINUTE + NEXT_SCHEDULE_DELTA,
        ),
        (
            "another complex schedule skipping weekend",
            _cj("30 10,11,12 * * 1-5", JUST_TEN, HALF_PAST),
            _at(30 * HOUR + 30 * MINUTE),
            18 * HOUR + NEXT_SCHEDULE_DELTA,
        ),
        (
            "once a week cronjob, missed two runs",
            _cj("0 12 * * 2", JUST_TEN, _at(2 * HOUR)),
            _at(19 * 24 * HOUR + HOUR + 30 * MINUTE),
            48 * HOUR + 30 * MINUTE + NEXT_SCHEDULE_DELTA,
        ),
        (
            "no previous run of a cronjob",
            _cj("0 12 * * 3", JUST_TEN),
            _at(6 * HOUR),
            20 * HOUR + NEXT_SCHEDULE_DELTA,
        ),
    ],
)
def test_next_schedule_time_duration(
    case: str, cronjob: dict[str, Any], now: datetime, expected: timedelta
) -> None:
    got = next_schedule_time_duration(cronjob, now, parse_standard(cronjob["spec"]["schedule"]))
    assert got is not None and got >= timedelta(0), case
    assert got == expected, case


# -- TestGetJobsByCronJob ---------------------------------------------------------------------


def _owned(
    name: str, namespace: str, kind: str, uid: str, controller: bool | None
) -> dict[str, Any]:
    reference: dict[str, Any] = {
        "apiVersion": "batch/v1",
        "kind": kind,
        "name": "test-cronjob",
        "uid": uid,
    }
    if controller is not None:
        reference["controller"] = controller
    return {"metadata": {"name": name, "namespace": namespace, "ownerReferences": [reference]}}


@pytest.mark.parametrize(
    ("case", "jobs", "expected"),
    [
        (
            "matching controller",
            [
                _owned("job1", "default", "CronJob", "test-uid-123", True),
                _owned("job2", "default", "CronJob", "test-uid-123", True),
            ],
            2,
        ),
        (
            "non-matching controller kind",
            [_owned("job3", "default", "Deployment", "test-uid-123", True)],
            0,
        ),
        (
            "different namespace job",
            [_owned("job4", "other-namespace", "CronJob", "test-uid-123", True)],
            0,
        ),
        (
            "job without controller reference",
            [_owned("job5", "default", "CronJob", "test-uid-123", None)],
            0,
        ),
        (
            "jobs with mismatched UIDs",
            [_owned("job6", "default", "CronJob", "different-uid", True)],
            0,
        ),
        ("empty job list", [], 0),
    ],
)
def test_get_jobs_by_cronjob(case: str, jobs: list[dict[str, Any]], expected: int) -> None:
    cronjob = {"metadata": {"name": "test-cronjob", "namespace": "default", "uid": "test-uid-123"}}
    assert len(jobs_of(cronjob, jobs)) == expected, case


# -- TestUpdateCronJob ------------------------------------------------------------------------


def _update_cj(
    schedule: str = "",
    time_zone: str | None = None,
    labels: dict[str, str] | None = None,
    last: datetime | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "jobTemplate": {"metadata": {"labels": labels or {}, "annotations": {"x": "y"}}}
    }
    if schedule:
        spec["schedule"] = schedule
    if time_zone is not None:
        spec["timeZone"] = time_zone
    return {"metadata": {}, "spec": spec, "status": {"lastScheduleTime": _ts(last)} if last else {}}


@pytest.mark.parametrize(
    ("case", "old", "new", "expected"),
    [
        (
            "spec.template changed",
            _update_cj(labels={"volcano": "yes"}),
            _update_cj(labels={"a": "b"}),
            timedelta(0),
        ),
        (
            "spec.schedule changed",
            _update_cj("0 * * * *", last=JUST_TEN),
            _update_cj("*/1 * * * *", last=JUST_TEN),
            MINUTE + NEXT_SCHEDULE_DELTA,
        ),
        (
            "spec.schedule with @every changed - cadence decrease",
            _update_cj("@every 1m", last=JUST_TEN),
            _update_cj("@every 3m", labels={"a": "foo"}, last=JUST_TEN),
            3 * MINUTE + NEXT_SCHEDULE_DELTA,
        ),
        (
            "spec.schedule with @every changed - cadence increase",
            _update_cj("@every 3m", last=JUST_TEN),
            _update_cj("@every 1m", labels={"a": "foo"}, last=JUST_TEN),
            MINUTE + NEXT_SCHEDULE_DELTA,
        ),
        (
            "spec.timeZone not changed",
            _update_cj(time_zone="Pacific/Honolulu"),
            _update_cj(time_zone="Pacific/Honolulu", labels={"a": "foo"}),
            timedelta(0),
        ),
        # Upstream's fake queue reads 0 when nothing was queued: the empty schedule does not
        # parse, so the update is dropped.
        ("spec.timeZone changed", _update_cj(), _update_cj(time_zone="Pacific/Honolulu"), None),
    ],
)
def test_update_cronjob(
    case: str, old: dict[str, Any], new: dict[str, Any], expected: timedelta | None
) -> None:
    assert requeue_delay_on_update(old, new, JUST_TEN) == expected, case
