"""What Volcano's CronJob admission webhook refuses (``pkg/webhooks/admission/cronjobs/
validate``), in upstream's words: the model raises them for ``simulate`` and the CLI, the
webhook joins them with "; " as upstream does."""

from __future__ import annotations

import re
from typing import Final

from volcano_py.api.cronschedule import ScheduleError, load_time_zone, parse_standard

MAX_NAME_LENGTH: Final = 63
MAX_SUFFIX_LENGTH: Final = 11
"""``-<minutes since the epoch>``: room upstream keeps for the suffix of the jobs' names."""
MAX_BASE_NAME_LENGTH: Final = MAX_NAME_LENGTH - MAX_SUFFIX_LENGTH

_TIME_ZONE_PART: Final = re.compile(r"[A-Za-z.\-_0-9+]{1,14}")
_QUALIFIED_NAME: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


def schedule_problem(schedule: str) -> str:
    """``validateCronjobSpec``'s schedule half, or ''."""
    if not schedule:
        return "schedule is required, but got empty"
    if "TZ" in schedule:
        return (
            "schedule should not contain TZ or CRON_TZ, TZ should only be set in the timeZone field"
        )
    try:
        parse_standard(schedule)
    except ScheduleError as error:
        # Upstream says only the first half; the parser's reason helps fix it.
        return f"schedule is not a valid cron expression ({error})"
    return ""


def time_zone_problems(time_zone: str | None) -> list[str]:
    """``validateCronjobSpec``'s timeZone half: each check upstream makes, in its order."""
    if time_zone is None:
        return []
    if not time_zone:
        return ["timeZone must be nil or non-empty string, got empty string"]
    problems = []
    for part in time_zone.split("/"):
        if part in (".", "..") or part.startswith("-") or not _TIME_ZONE_PART.fullmatch(part):
            problems.append("unknown timeZone")
    if time_zone.lower() == "local":
        problems.append(
            "timeZone can't be Local, and must be defined in https://www.iana.org/time-zones"
        )
    else:
        try:
            load_time_zone(time_zone)
        except ScheduleError:
            problems.append("invalid timeZone")
    return problems


def name_problem(name: str) -> str:
    """``validateCronJobName``: room for the job-name suffix, and a qualified name."""
    if len(name) > MAX_BASE_NAME_LENGTH:
        return (
            f"cronJob name must be no more than {MAX_BASE_NAME_LENGTH} characters to accommodate"
            f" job name suffix (max {MAX_NAME_LENGTH} total)"
        )
    if not name or not _QUALIFIED_NAME.fullmatch(name):
        return (
            f"invalid cronJob name {name!r}: name part must consist of alphanumeric characters,"
            " '-', '_' or '.', and must start and end with an alphanumeric character"
        )
    return ""
