"""Cron schedules as Volcano's CronJob reads them: robfig/cron v3's ``ParseStandard``.

The grammar is robfig's (checked here, so what upstream refuses is refused with robfig's
words): five fields (minute, hour, day of month, month, day of week), each a comma list of
``*``/``?``, ``N``, ``N-M``, with an optional ``/step`` (``N/step`` means ``N-max/step``);
month and weekday names (``jan``, ``mon``) in any case; weekday 0-6 (7 is refused, as robfig
does); the descriptors ``@yearly @annually @monthly @weekly @daily @midnight @hourly`` and
``@every <Go duration>``; an optional ``TZ=<zone>`` or ``CRON_TZ=<zone>`` prefix.

The times are computed by croniter, fed a canonical form of the parsed fields: every field an
explicit value list, or ``*`` when robfig marks it as a star (``*``, ``?`` or a step-1 range
starting with ``*``). That keeps croniter's extensions (``L``, ``W``, ``#``, ``H``, ``R``, a
sixth field) out, sidesteps its ``N-N`` ranges (read as ``*``), and gives the day-of-month /
day-of-week rule robfig's meaning: both restricted -> either matches; one a star -> both
must. ``@every`` (robfig's ``ConstantDelaySchedule``, which croniter lacks) is done here.
Daylight saving time as robfig: a time in the spring-forward gap is skipped that day (croniter
alone would move it to the hour after), one in the repeated fall-back hour fires twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Final, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from croniter import CroniterBadDateError, croniter

from volcano_py.api.go_duration import DurationError, parse_go_duration_nanos

__all__ = [
    "ConstantDelaySchedule",
    "CronSchedule",
    "Schedule",
    "ScheduleError",
    "load_time_zone",
    "parse_standard",
]


class ScheduleError(ValueError):
    """A schedule robfig's ``ParseStandard`` refuses; the message says why (robfig's words)."""


class Schedule(Protocol):
    def next(self, after: datetime) -> datetime | None:
        """The first activation strictly after ``after`` (whole seconds), or None when there
        is none within five years (robfig returns the zero time: ``59 23 31 2 *``)."""


@dataclass(frozen=True, slots=True)
class _Bounds:
    low: int
    high: int
    names: dict[str, int] | None = None


_MONTHS: Final = {
    name: index + 1
    for index, name in enumerate(
        ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
    )
}
_WEEKDAYS: Final = {
    name: index for index, name in enumerate(("sun", "mon", "tue", "wed", "thu", "fri", "sat"))
}
_FIELDS: Final = (
    _Bounds(0, 59),
    _Bounds(0, 23),
    _Bounds(1, 31),
    _Bounds(1, 12, _MONTHS),
    _Bounds(0, 6, _WEEKDAYS),
)
_DESCRIPTORS: Final = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}
# Five years, as robfig's SpecSchedule.Next gives up after.
_SEARCH_YEARS: Final = 5
_GO_INT: Final = re.compile(r"[+-]?[0-9]+")


def load_time_zone(name: str) -> tzinfo:
    """``time.LoadLocation``: "" and "UTC" are UTC; ``Local`` is the controller's zone, which
    is UTC in volcano-py's images (and the admission webhook refuses it anyway)."""
    if name in ("", "UTC", "Local"):
        return UTC
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise ScheduleError(f"unknown time zone {name}") from None


def _integer(text: str) -> int:
    if not _GO_INT.fullmatch(text):
        raise ScheduleError(f"failed to parse int from {text}: strconv.Atoi: invalid syntax")
    value = int(text)
    if value < 0:
        raise ScheduleError(f"negative number ({value}) not allowed: {text}")
    return value


def _int_or_name(text: str, bounds: _Bounds) -> int:
    if bounds.names is not None and text.lower() in bounds.names:
        return bounds.names[text.lower()]
    return _integer(text)


def _range(expression: str, bounds: _Bounds) -> tuple[set[int], bool]:
    """robfig's ``getRange``: the values of one comma item, and whether it is a star."""
    range_and_step = expression.split("/")
    low_and_high = range_and_step[0].split("-")
    single = len(low_and_high) == 1
    star = False
    if low_and_high[0] in ("*", "?"):
        start, end, star = bounds.low, bounds.high, True
    else:
        start = _int_or_name(low_and_high[0], bounds)
        if len(low_and_high) == 1:
            end = start
        elif len(low_and_high) == 2:
            end = _int_or_name(low_and_high[1], bounds)
        else:
            raise ScheduleError(f"too many hyphens: {expression}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _integer(range_and_step[1])
        if single:
            end = bounds.high
        if step > 1:
            star = False
    else:
        raise ScheduleError(f"too many slashes: {expression}")
    if start < bounds.low:
        raise ScheduleError(
            f"beginning of range ({start}) below minimum ({bounds.low}): {expression}"
        )
    if end > bounds.high:
        raise ScheduleError(f"end of range ({end}) above maximum ({bounds.high}): {expression}")
    if start > end:
        raise ScheduleError(
            f"beginning of range ({start}) beyond end of range ({end}): {expression}"
        )
    if step == 0:
        raise ScheduleError(f"step of range should be a positive number: {expression}")
    return set(range(start, end + 1, step)), star


def _canonical_field(field: str, bounds: _Bounds) -> str:
    values: set[int] = set()
    star = False
    for item in field.split(","):
        item_values, item_star = _range(item, bounds)
        values |= item_values
        star = star or item_star
    return "*" if star else ",".join(str(value) for value in sorted(values))


@dataclass(frozen=True, slots=True)
class CronSchedule:
    """robfig's ``SpecSchedule``: five canonical fields, evaluated in ``zone``."""

    expression: str
    zone: tzinfo

    def next(self, after: datetime) -> datetime | None:
        # robfig starts at the next whole second; croniter returns times strictly after.
        start = after.astimezone(self.zone).replace(microsecond=0)
        try:
            times = croniter(self.expression, start, max_years_between_matches=_SEARCH_YEARS)
            found: datetime = times.get_next(datetime)
            # In a spring-forward gap croniter moves 02:30 to 03:00; robfig skips the day
            # (it steps whole hours, and 02:xx never comes): keep only true wall-clock matches.
            while not self._wall_clock_matches(found):
                found = times.get_next(datetime)
        except CroniterBadDateError:
            return None
        if found.year > start.year + _SEARCH_YEARS:
            return None
        return found.astimezone(after.tzinfo or UTC)

    def _wall_clock_matches(self, moment: datetime) -> bool:
        minute, hour = self.expression.split()[:2]
        return (minute == "*" or str(moment.minute) in minute.split(",")) and (
            hour == "*" or str(moment.hour) in hour.split(",")
        )


@dataclass(frozen=True, slots=True)
class ConstantDelaySchedule:
    """robfig's ``@every``: ``delay`` (whole seconds, at least one) after the given time,
    rounded down to its second."""

    delay: timedelta

    def next(self, after: datetime) -> datetime | None:
        return after.replace(microsecond=0) + self.delay


def _every(text: str) -> ConstantDelaySchedule:
    nanos = _go_duration_nanos(text)
    seconds = max(nanos // 1_000_000_000, 1)
    return ConstantDelaySchedule(timedelta(seconds=seconds))


def _go_duration_nanos(text: str) -> int:
    """``time.ParseDuration`` for ``@every``, with robfig's wording of a refusal."""
    try:
        return parse_go_duration_nanos(text)
    except DurationError:
        raise ScheduleError(
            f"failed to parse duration @every {text}: time: invalid duration {text!r}"
        ) from None


def parse_standard(spec: str) -> Schedule:
    """``cron.ParseStandard(spec)``; raises ScheduleError with robfig's reason."""
    if not spec:
        raise ScheduleError("empty spec string")
    zone: tzinfo = UTC
    if spec.startswith(("TZ=", "CRON_TZ=")):
        space = spec.find(" ")
        if space < 0:
            raise ScheduleError(f"provided bad location {spec[spec.find('=') + 1 :]}")
        name = spec[spec.find("=") + 1 : space]
        try:
            zone = load_time_zone(name)
        except ScheduleError:
            raise ScheduleError(f"provided bad location {name}: unknown time zone {name}") from None
        spec = spec[space:].strip()
    if spec.startswith("@"):
        if spec.startswith("@every "):
            return _every(spec[len("@every ") :])
        if spec not in _DESCRIPTORS:
            raise ScheduleError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != len(_FIELDS):
        raise ScheduleError(f"expected exactly 5 fields, found {len(fields)}: {fields}")
    canonical = " ".join(
        _canonical_field(field, bounds) for field, bounds in zip(fields, _FIELDS, strict=True)
    )
    return CronSchedule(canonical, zone)
