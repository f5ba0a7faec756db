"""CronJob schedules read as robfig/cron v3's ParseStandard reads them (the parser upstream's
controller and webhook use), with croniter computing the times: the grammar, the refusals,
the day-of-month / day-of-week rule, ``@every``, descriptors and ``TZ=``."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from volcano_py.api.cronschedule import ScheduleError, parse_standard

START = datetime(2025, 3, 11, 10, 0, 0, tzinfo=UTC)  # a Tuesday


def _times(spec: str, count: int = 3, start: datetime = START) -> list[str]:
    schedule = parse_standard(spec)
    found, moment = [], start
    for _ in range(count):
        upcoming = schedule.next(moment)
        assert upcoming is not None
        found.append(upcoming.astimezone(UTC).strftime("%m-%d %a %H:%M:%S"))
        moment = upcoming
    return found


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("*/5 * * * *", ["03-11 Tue 10:05:00", "03-11 Tue 10:10:00", "03-11 Tue 10:15:00"]),
        ("0 * * * ?", ["03-11 Tue 11:00:00", "03-11 Tue 12:00:00", "03-11 Tue 13:00:00"]),
        # N/step is N-max/step.
        ("50/5 * * * *", ["03-11 Tue 10:50:00", "03-11 Tue 10:55:00", "03-11 Tue 11:50:00"]),
        # A one-value range is that value (croniter alone reads "2-2" as every day).
        ("0 0 2-2 * *", ["04-02 Wed 00:00:00", "05-02 Fri 00:00:00", "06-02 Mon 00:00:00"]),
        ("0 0 1 JAN mon-FRI", ["01-01 Thu 00:00:00", "01-02 Fri 00:00:00", "01-05 Mon 00:00:00"]),
        ("30 6-16/4 * * 1-5", ["03-11 Tue 10:30:00", "03-11 Tue 14:30:00", "03-12 Wed 06:30:00"]),
        # Both day fields restricted: either matches (the 13th, or any Friday).
        ("0 0 13 * 5", ["03-13 Thu 00:00:00", "03-14 Fri 00:00:00", "03-21 Fri 00:00:00"]),
        # A stepped star is restricted too (robfig drops the star bit when step > 1).
        ("0 0 */10 * 1", ["03-17 Mon 00:00:00", "03-21 Fri 00:00:00", "03-24 Mon 00:00:00"]),
        # One a star: both must match (only Mondays).
        ("0 0 * * 1", ["03-17 Mon 00:00:00", "03-24 Mon 00:00:00", "03-31 Mon 00:00:00"]),
        ("@hourly", ["03-11 Tue 11:00:00", "03-11 Tue 12:00:00", "03-11 Tue 13:00:00"]),
        ("@daily", ["03-12 Wed 00:00:00", "03-13 Thu 00:00:00", "03-14 Fri 00:00:00"]),
        ("@midnight", ["03-12 Wed 00:00:00", "03-13 Thu 00:00:00", "03-14 Fri 00:00:00"]),
        ("@weekly", ["03-16 Sun 00:00:00", "03-23 Sun 00:00:00", "03-30 Sun 00:00:00"]),
        ("@monthly", ["04-01 Tue 00:00:00", "05-01 Thu 00:00:00", "06-01 Sun 00:00:00"]),
        ("@yearly", ["01-01 Thu 00:00:00", "01-01 Fri 00:00:00", "01-01 Sat 00:00:00"]),
        ("@annually", ["01-01 Thu 00:00:00", "01-01 Fri 00:00:00", "01-01 Sat 00:00:00"]),
        ("@every 90s", ["03-11 Tue 10:01:30", "03-11 Tue 10:03:00", "03-11 Tue 10:04:30"]),
        (
            "TZ=Pacific/Honolulu 0 10 * * *",
            ["03-11 Tue 20:00:00", "03-12 Wed 20:00:00", "03-13 Thu 20:00:00"],
        ),
        (
            "CRON_TZ=Asia/Tokyo 0 9 * * *",
            ["03-12 Wed 00:00:00", "03-13 Thu 00:00:00", "03-14 Fri 00:00:00"],
        ),
    ],
)
def test_activation_times(spec: str, expected: list[str]) -> None:
    assert _times(spec) == expected


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        ("", "empty spec string"),
        ("* * * *", "expected exactly 5 fields, found 4"),
        ("0 * * * * *", "expected exactly 5 fields, found 6"),  # no seconds field
        ("0 0 * * 7", "end of range (7) above maximum (6)"),
        ("60 * * * *", "end of range (60) above maximum (59)"),
        ("0 0 0 * *", "beginning of range (0) below minimum (1)"),
        ("5-3 * * * *", "beginning of range (5) beyond end of range (3)"),
        ("*/0 * * * *", "step of range should be a positive number"),
        ("1-2-3 * * * *", "too many hyphens"),
        ("*/2/3 * * * *", "too many slashes"),
        ("0 0 L * *", "failed to parse int from L"),  # croniter's extensions are refused
        ("0 0 * * 1#2", "failed to parse int from 1#2"),
        ("H * * * *", "failed to parse int from H"),
        ("0 0 * * mon-funday", "failed to parse int from funday"),
        ("@reboot", "unrecognized descriptor: @reboot"),
        ("@every", "unrecognized descriptor"),
        ("@every 1x", "failed to parse duration"),
        ("TZ=Nowhere/City * * * * *", "provided bad location Nowhere/City"),
    ],
)
def test_refusals_say_robfigs_reason(spec: str, reason: str) -> None:
    with pytest.raises(ScheduleError, match="^" + reason.replace("(", r"\(").replace(")", r"\)")):
        parse_standard(spec)


def test_every_rounds_to_whole_seconds_and_at_least_one() -> None:
    at = START.replace(microsecond=700_000)
    assert parse_standard("@every 1500ms").next(at) == START + timedelta(seconds=1)
    assert parse_standard("@every 10ms").next(at) == START + timedelta(seconds=1)


def test_a_schedule_that_never_fires_has_no_next_time() -> None:
    assert parse_standard("59 23 31 2 *").next(START) is None


def test_next_is_strictly_after_and_keeps_the_callers_zone() -> None:
    schedule = parse_standard("0 10 * * *")
    assert schedule.next(START) == START + timedelta(days=1)
    rome = START.astimezone(ZoneInfo("Europe/Rome"))
    upcoming = schedule.next(rome)
    assert upcoming is not None and upcoming.tzinfo == rome.tzinfo


def test_daylight_saving_time_as_robfig_steps_through_it() -> None:
    """robfig walks whole hours in the zone: a time in the spring-forward gap does not exist
    that day (croniter alone would fire at 03:00), and one in the repeated fall-back hour
    fires twice."""
    new_york = ZoneInfo("America/New_York")
    spring = parse_standard("TZ=America/New_York 30 2 * * *")
    upcoming = spring.next(datetime(2025, 3, 8, 12, tzinfo=UTC))
    assert upcoming is not None
    assert upcoming.astimezone(new_york).isoformat() == "2025-03-10T02:30:00-04:00"
    fall = parse_standard("TZ=America/New_York 30 1 * * *")
    first = fall.next(datetime(2025, 11, 1, 12, tzinfo=UTC))
    assert first is not None
    second = fall.next(first)
    assert second is not None
    assert [first.astimezone(new_york).isoformat(), second.astimezone(new_york).isoformat()] == [
        "2025-11-02T01:30:00-04:00",
        "2025-11-02T01:30:00-05:00",
    ]
