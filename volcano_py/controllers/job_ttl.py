"""``spec.ttlSecondsAfterFinished``: when a finished Volcano Job is deleted
(``pkg/controllers/garbagecollector``).

A job with a TTL that is Completed, Failed or Terminated expires its TTL seconds after
``status.state.lastTransitionTime``; the collector then deletes it (foreground propagation,
preconditioned on its uid, so a job re-created under the same name is never hit). Pure
functions of the job and the time: the live controllers and the simulator each schedule the
deletion with their own clock.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from volcano_py.controllers.job_status import is_job_finished
from volcano_py.controllers.raw import (
    Raw,
    is_deleting,
    mapping,
    name,
    namespace,
    optional_int,
    spec,
    status,
    text,
)
from volcano_py.controllers.timefmt import parse_timestamp


class TtlError(ValueError):
    """A finished job whose finish time cannot be read (upstream logs and retries)."""


def needs_cleanup(job: Raw) -> bool:
    """``needsCleanup``: a TTL is set and the job has finished."""
    return optional_int(spec(job).get("ttlSecondsAfterFinished")) is not None and is_job_finished(
        job
    )


def finish_and_expire_time(job: Raw) -> tuple[datetime, datetime]:
    """``getFinishAndExpireTime``: when the job finished and when its TTL runs out."""
    if not needs_cleanup(job):
        raise TtlError(f"job {namespace(job)}/{name(job)} should not be cleaned up")
    finished_at = parse_timestamp(text(mapping(status(job).get("state")).get("lastTransitionTime")))
    if finished_at is None:
        raise TtlError(
            f"unable to find the time when the Job {namespace(job)}/{name(job)} finished"
        )
    ttl = optional_int(spec(job).get("ttlSecondsAfterFinished")) or 0
    return finished_at, finished_at + timedelta(seconds=ttl)


def time_left(job: Raw, now: datetime) -> timedelta:
    """``timeLeft``: how long until the TTL expires (zero or negative: expired)."""
    _finished_at, expire_at = finish_and_expire_time(job)
    return expire_at - now


def ttl_expiry(job: Raw) -> datetime | None:
    """When the collector deletes the job, or None when it never will (no TTL, not finished,
    already being deleted, or no readable finish time)."""
    if is_deleting(job) or not needs_cleanup(job):
        return None
    try:
        return finish_and_expire_time(job)[1]
    except TtlError:
        return None


def expired(job: Raw, now: datetime) -> bool:
    """``processTTL``'s answer: delete now."""
    expiry = ttl_expiry(job)
    return expiry is not None and expiry <= now
