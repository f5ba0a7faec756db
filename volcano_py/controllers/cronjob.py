"""The Volcano CronJob controller as a pure function (``pkg/controllers/cronjob/``): the
CronJob, the Jobs the informer knows and ``now`` in; the jobs to create and delete, the status
to write, the events and when to look again out.

``sync_cronjob`` is upstream's ``syncCronJob``: retire finished jobs (history limits,
``lastSuccessfulTime``), drop stale ``status.active`` references, then, unless suspended, find
the most recent unmet schedule time (``startingDeadlineSeconds``, too many missed), apply the
``concurrencyPolicy`` and create ``<cronjob>-<scheduled minutes since the epoch>``. Where
upstream asks the API server (a job that already exists, the job to replace), this reads
``lookup``: the same jobs the caller knows, by name.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from volcano_py.api.cronschedule import Schedule, ScheduleError, load_time_zone, parse_standard
from volcano_py.controllers.job_status import is_job_finished, state_phase
from volcano_py.controllers.raw import (
    Raw,
    controller_of,
    controller_reference,
    deep_copy,
    is_deleting,
    items,
    mapping,
    metadata,
    name,
    namespace,
    optional_int,
    spec,
    status,
    text,
    uid,
)
from volcano_py.controllers.timefmt import parse_timestamp
from volcano_py.controllers.vocabulary import BATCH_API_VERSION, EVENT_NORMAL, EVENT_WARNING

CRONJOB_KIND: Final = "CronJob"
SCHEDULED_TIMESTAMP_ANNOTATION: Final = "volcano.sh/cronjob-scheduled-timestamp"
NEXT_SCHEDULE_DELTA: Final = timedelta(milliseconds=100)
"""Padding on every requeue, for clock skew between the controller and the API server."""
TOO_MANY_MISSED: Final = 100
JobLookup = Callable[[str], Raw | None]


class Missed(enum.Enum):
    """``missedSchedulesType``."""

    NONE = "none"
    FEW = "few"
    MANY = "many"


class CronJobSyncError(RuntimeError):
    """What upstream returns as an error from ``syncCronJob`` (it retries rate-limited)."""


@dataclass(frozen=True, slots=True)
class JobDeletion:
    namespace: str
    name: str
    uid: str


@dataclass
class CronJobChanges:
    """The writes one sync asks for. Apply in order: ``delete_jobs``, ``create_job`` (then
    ``record_created`` with what the API server returned), ``status``; record ``events``.

    * ``status``: the CronJob's new ``.status`` when upstream would write it (``updateStatus``).
    * ``requeue_after``: look again after this long (the next schedule time, plus 100 ms); None
      when upstream does not requeue (suspended, or an error: then ``error`` says why and the
      caller retries with back-off).
    """

    create_job: dict[str, Any] | None = None
    delete_jobs: list[JobDeletion] = field(default_factory=list)
    status: dict[str, Any] | None = None
    events: list[tuple[str, str, str]] = field(default_factory=list)
    requeue_after: timedelta | None = None
    error: str | None = None

    def record_created(self, created: Raw) -> None:
        """Put the uid and resourceVersion of the job the API server created into the
        ``status.active`` reference that stands for it."""
        if self.status is None:
            return
        for reference in self.status.get("active") or []:
            if reference.get("name") == name(created) and not reference.get("uid"):
                reference["uid"] = uid(created)
                version = text(metadata(created).get("resourceVersion"))
                if version:
                    reference["resourceVersion"] = version


# -- times ------------------------------------------------------------------------------------


def format_time(moment: datetime) -> str:
    """``metav1.Time`` / Go's RFC 3339: whole seconds, ``Z`` for UTC."""
    text_form = moment.replace(microsecond=0).isoformat()
    return text_form.removesuffix("+00:00") + "Z" if text_form.endswith("+00:00") else text_form


def _time(value: object) -> datetime | None:
    moment = parse_timestamp(text(value))
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment


def _creation_time(obj: Raw) -> datetime | None:
    return _time(metadata(obj).get("creationTimestamp"))


def format_schedule(cronjob: Raw, events: list[tuple[str, str, str]] | None) -> str:
    """``formatSchedule``: a ``TZ=`` in the schedule wins (with a warning); else a loadable
    ``timeZone`` becomes the ``TZ=`` prefix."""
    schedule = text(spec(cronjob).get("schedule"))
    time_zone = spec(cronjob).get("timeZone")
    if "TZ" in schedule:
        if events is not None:
            events.append(
                (
                    EVENT_WARNING,
                    "UnsupportedSchedule",
                    f"CRON_TZ or TZ in the schedule {schedule!r} is not officially supported. "
                    "If set, the TimeZone field will be ignored during execution.",
                )
            )
        return schedule
    if isinstance(time_zone, str):
        try:
            load_time_zone(time_zone)
        except ScheduleError:
            return schedule
        return f"TZ={time_zone} {schedule}"
    return schedule


def most_recent_schedule_time(
    cronjob: Raw, now: datetime, schedule: Schedule, include_starting_deadline: bool
) -> tuple[datetime, datetime | None, Missed]:
    """``mostRecentScheduleTime``: the earliest time considered (last schedule, creation or
    the starting deadline), the most recent unmet schedule time at or before ``now`` (or
    None) and how many were missed. Raises CronJobSyncError for a schedule that never fires
    twice (``59 23 31 2 *``)."""
    earliest = _creation_time(cronjob) or now
    missed = Missed.NONE
    last = _time(status(cronjob).get("lastScheduleTime"))
    if last is not None:
        earliest = last
    deadline_seconds = optional_int(spec(cronjob).get("startingDeadlineSeconds"))
    if include_starting_deadline and deadline_seconds is not None:
        scheduling_deadline = now - timedelta(seconds=deadline_seconds)
        if scheduling_deadline > earliest:
            earliest = scheduling_deadline
    first = schedule.next(earliest)
    second = schedule.next(first) if first is not None else None
    if first is not None and now < first:
        return earliest, None, missed
    if first is not None and second is not None and now < second:
        return earliest, first, missed
    between = (
        round((second - first).total_seconds()) if first is not None and second is not None else 0
    )
    if first is None or second is None or between < 1:
        raise CronJobSyncError("time difference between two schedules is less than 1 second")
    elapsed = int((now - first).total_seconds())
    missed_count = elapsed // between + 1
    # Back off one interval more than the estimate and let the schedule find the real
    # times: exact for @every and for irregular schedules (30 6-16/4 * * 1-5).
    potential_earliest = first + timedelta(seconds=(missed_count - 2) * between)
    most_recent: datetime | None = None
    moment = schedule.next(potential_earliest)
    while moment is not None and moment <= now:
        most_recent = moment
        moment = schedule.next(moment)
    if missed_count > TOO_MANY_MISSED:
        missed = Missed.MANY
    elif missed_count > 0:
        missed = Missed.FEW
    return earliest, most_recent, missed


def next_schedule_time_duration(
    cronjob: Raw, now: datetime, schedule: Schedule
) -> timedelta | None:
    """``nextScheduleTimeDuration``: how long until the next schedule time after the most
    recent one (or after ``now`` when schedules were missed), plus 100 ms."""
    try:
        earliest, most_recent, missed = most_recent_schedule_time(cronjob, now, schedule, False)
    except CronJobSyncError:
        most_recent = now
    else:
        if most_recent is None:
            most_recent = earliest if missed is Missed.NONE else now
    upcoming = schedule.next(most_recent)
    if upcoming is None:
        return None
    return upcoming + NEXT_SCHEDULE_DELTA - now


def next_schedule_time(
    cronjob: Raw, now: datetime, schedule: Schedule, events: list[tuple[str, str, str]]
) -> datetime | None:
    """``nextScheduleTime``: the unmet schedule time to run now (None: none), honouring
    ``startingDeadlineSeconds``; warns when more than 100 were missed."""
    _earliest, most_recent, missed = most_recent_schedule_time(cronjob, now, schedule, True)
    if most_recent is None or most_recent > now:
        return None
    if missed is Missed.MANY:
        events.append(
            (
                EVENT_WARNING,
                "TooManyMissedTimes",
                "too many missed start times. Set or decrease .spec.startingDeadlineSeconds or "
                "check clock skew",
            )
        )
    return most_recent


# -- jobs -------------------------------------------------------------------------------------


def job_name(cronjob: Raw, scheduled: datetime) -> str:
    """``getJobName``: ``<cronjob>-<scheduled time in minutes since the epoch>``, the same for
    a given schedule time so a job is never created twice."""
    return f"{name(cronjob)}-{int(scheduled.timestamp()) // 60}"


def job_from_template(cronjob: Raw, scheduled: datetime) -> dict[str, Any]:
    """``getJobFromTemplate``: the template's labels and annotations, the scheduled time
    annotation (in the CronJob's time zone), the controller reference and the spec."""
    template = mapping(spec(cronjob).get("jobTemplate"))
    template_meta = mapping(template.get("metadata"))
    annotations = {str(k): str(v) for k, v in mapping(template_meta.get("annotations")).items()}
    zone = load_time_zone(text(spec(cronjob).get("timeZone")))
    annotations[SCHEDULED_TIMESTAMP_ANNOTATION] = format_time(scheduled.astimezone(zone))
    return {
        "apiVersion": BATCH_API_VERSION,
        "kind": "Job",
        "metadata": {
            "name": job_name(cronjob, scheduled),
            "namespace": namespace(cronjob),
            "labels": {str(k): str(v) for k, v in mapping(template_meta.get("labels")).items()},
            "annotations": annotations,
            "ownerReferences": [controller_reference(cronjob, BATCH_API_VERSION, CRONJOB_KIND)],
        },
        "spec": deep_copy(mapping(template.get("spec"))),
    }


def job_reference(job: Raw) -> dict[str, Any]:
    """``getRef``: the ``status.active`` entry of a job."""
    reference = {
        "apiVersion": BATCH_API_VERSION,
        "kind": "Job",
        "name": name(job),
        "namespace": namespace(job),
        "uid": uid(job),
    }
    version = text(metadata(job).get("resourceVersion"))
    if version:
        reference["resourceVersion"] = version
    return reference


def is_controlled_by(job: Raw, cronjob: Raw) -> bool:
    """``metav1.IsControlledBy``: the job's controller reference carries the CronJob's uid."""
    owner = controller_of(job)
    return owner is not None and text(owner.get("uid")) == uid(cronjob)


def jobs_of(cronjob: Raw, jobs: Sequence[Raw]) -> list[Raw]:
    """``getJobsByCronJob``: the jobs in the CronJob's namespace it controls (kind, name and
    uid of the controller reference)."""
    owned = []
    for job in jobs:
        owner = controller_of(job)
        if (
            owner is None
            or text(owner.get("kind")) != CRONJOB_KIND
            or text(owner.get("name")) != name(cronjob)
            or text(owner.get("uid")) != uid(cronjob)
            or (namespace(job) and namespace(job) != namespace(cronjob))
        ):
            continue
        owned.append(job)
    return owned


def cronjob_of_job(job: Raw) -> str | None:
    """The key (namespace/name) of the CronJob controlling ``job`` (``isControlledBy``'s
    first half), so a job's events requeue its CronJob."""
    owner = controller_of(job)
    if owner is None or text(owner.get("apiVersion")) != BATCH_API_VERSION:
        return None
    if text(owner.get("kind")) != CRONJOB_KIND:
        return None
    return f"{namespace(job) or 'default'}/{text(owner.get('name'))}"


def creation_order(jobs: Sequence[Raw]) -> list[Raw]:
    """``byJobCreationTimestamp``: oldest first, jobs without a creation time last, equal
    times by name."""
    far_future = datetime.max.replace(tzinfo=UTC)

    def key(job: Raw) -> tuple[bool, datetime, str]:
        created = _creation_time(job)
        return created is None, created or far_future, name(job)

    return sorted(jobs, key=key)


# -- the sync ---------------------------------------------------------------------------------


@dataclass
class _Sync:
    cronjob: Raw
    status: dict[str, Any]
    changes: CronJobChanges
    update_status: bool = False

    def active(self) -> list[dict[str, Any]]:
        references: list[dict[str, Any]] = self.status.setdefault("active", [])
        return references

    def in_active_list(self, job_uid: str) -> bool:
        return bool(job_uid) and any(ref.get("uid") == job_uid for ref in self.active())

    def in_active_list_by_name(self, job_namespace: str, job_name_: str) -> bool:
        return any(
            ref.get("name") == job_name_ and (ref.get("namespace") or "") == job_namespace
            for ref in self.active()
        )

    def delete_from_active_list(self, job_uid: str) -> None:
        if job_uid:
            self.status["active"] = [ref for ref in self.active() if ref.get("uid") != job_uid]

    def event(self, kind: str, reason: str, message: str) -> None:
        self.changes.events.append((kind, reason, message))

    def delete_job(self, job: Raw) -> None:
        """``deleteJobByClient``: delete, and forget it in ``status.active``."""
        self.changes.delete_jobs.append(JobDeletion(namespace(job), name(job), uid(job)))
        self.delete_from_active_list(uid(job))
        self.event(EVENT_NORMAL, "SuccessfulDelete", f"Deleted job {name(job)!r}")


def _process_finished_jobs(sync: _Sync, owned: Sequence[Raw]) -> None:
    """``processFinishedJobs``."""
    successful: list[Raw] = []
    failed: list[Raw] = []
    for job in owned:
        if not is_job_finished(job):
            continue
        if sync.in_active_list(uid(job)):
            sync.delete_from_active_list(uid(job))
            sync.event(
                EVENT_NORMAL, "SawCompletedJob", f"Saw completed job: {name(job)} in active, remove"
            )
            sync.update_status = True
        phase = state_phase(job)
        if phase == "Completed":
            finished_text = text(mapping(status(job).get("state")).get("lastTransitionTime"))
            finished_at = _time(finished_text)
            last_success = _time(sync.status.get("lastSuccessfulTime"))
            if sync.status.get("lastSuccessfulTime") is None:
                # Upstream copies the job's time even when it is unset (a zero time).
                sync.status["lastSuccessfulTime"] = finished_text or None
                sync.update_status = True
            if finished_at is not None and (last_success is None or finished_at > last_success):
                sync.status["lastSuccessfulTime"] = format_time(finished_at)
                sync.update_status = True
            successful.append(job)
        elif phase == "Failed":
            failed.append(job)

    cron_spec = spec(sync.cronjob)
    for jobs, limit in (
        (successful, optional_int(cron_spec.get("successfulJobsHistoryLimit"))),
        (failed, optional_int(cron_spec.get("failedJobsHistoryLimit"))),
    ):
        if limit is None:
            continue
        excess = len(jobs) - limit
        for job in creation_order(jobs)[: max(excess, 0)]:
            sync.delete_job(job)
            sync.update_status = True


def _process_active_references(sync: _Sync, owned: Sequence[Raw], lookup: JobLookup) -> None:
    """``processCtlJobAndActiveJob``: warn of running jobs missing from ``status.active``,
    and drop references to jobs that are gone or were re-created under the same name."""
    owned_uids = {uid(job) for job in owned}
    for job in owned:
        if not sync.in_active_list(uid(job)) and not is_job_finished(job):
            sync.event(
                EVENT_WARNING,
                "OrphanedJob",
                f"Detected orphaned job forgotten or not managed by controller: {name(job)} "
                f"(UID: {uid(job)})",
            )
    for reference in list(sync.active()):
        reference_uid = text(reference.get("uid"))
        if reference_uid in owned_uids:
            continue
        found = lookup(text(reference.get("name")))
        reference_name = text(reference.get("name"))
        if found is None:
            sync.event(
                EVENT_WARNING,
                "StaleReference",
                f"Active job {reference_name!r} no longer exists (UID: {reference_uid})",
            )
            sync.delete_from_active_list(reference_uid)
            sync.update_status = True
        elif uid(found) != reference_uid:
            sync.event(
                EVENT_WARNING,
                "StaleReference",
                f"Active job reference {reference_name!r} points to a different UID (expected: "
                f"{reference_uid}, actual: {uid(found)})",
            )
            sync.delete_from_active_list(reference_uid)
            sync.update_status = True


def _schedule(sync: _Sync) -> Schedule:
    """``validateTZandSchedule``."""
    time_zone = spec(sync.cronjob).get("timeZone")
    if isinstance(time_zone, str):
        try:
            load_time_zone(time_zone)
        except ScheduleError as error:
            sync.event(
                EVENT_WARNING, "InvalidTimeZone", f"Invalid time zone {time_zone!r}: {error}"
            )
            raise CronJobSyncError(str(error)) from None
    try:
        return parse_standard(format_schedule(sync.cronjob, sync.changes.events))
    except ScheduleError as error:
        raise CronJobSyncError(f"unparseable schedule: {error}") from None


def _concurrency_policy(sync: _Sync, lookup: JobLookup) -> bool:
    """``processConcurrencyPolicy``: True when this run is skipped (Forbid with a job
    running); Replace deletes the running jobs first."""
    policy = text(spec(sync.cronjob).get("concurrencyPolicy"))
    if policy == "Forbid" and sync.active():
        sync.event(
            EVENT_WARNING,
            "ForbidConcurrent",
            "Skipping job creation because another job is already running",
        )
        return True
    if policy == "Replace" and sync.active():
        sync.event(EVENT_WARNING, "ReplaceConcurrent", "Replacing active job for CronJob")
        for reference in list(sync.active()):
            job = lookup(text(reference.get("name")))
            if job is None:
                sync.event(
                    EVENT_WARNING, "FailedGet", f"Get job: {text(reference.get('name'))} not found"
                )
                raise CronJobSyncError(
                    f"could not replace job {text(reference.get('namespace'))}/"
                    f"{text(reference.get('name'))}: not found"
                )
            sync.delete_job(job)
            sync.update_status = True
    return False


def _create_job(sync: _Sync, scheduled: datetime, lookup: JobLookup) -> Raw | None:
    """``createJob``: the job to create, or the existing one of that name when it is this
    CronJob's and still running; None when a finished or foreign one holds the name."""
    job = job_from_template(sync.cronjob, scheduled)
    existing = lookup(name(job))
    if existing is None:
        sync.changes.create_job = job
        sync.event(
            EVENT_NORMAL,
            "SuccessfulCreate",
            f"Created job {name(job)} for CronJob {namespace(sync.cronjob)}/{name(sync.cronjob)}",
        )
        return job
    if not is_controlled_by(existing, sync.cronjob):
        owner = controller_of(existing)
        sync.event(
            EVENT_WARNING,
            "ForeignJob",
            f"Job {name(existing)} exists but is not owned by this CronJob (current owner: "
            f"{text(owner.get('name')) if owner else 'none'})",
        )
        return None
    if is_job_finished(existing):
        return None
    return existing


def sync_cronjob(
    cronjob: Mapping[str, Any],
    jobs: Sequence[Mapping[str, Any]],
    now: datetime,
    lookup: JobLookup | None = None,
) -> CronJobChanges:
    """One ``syncCronJob`` of ``cronjob`` at ``now``.

    ``jobs``: the Volcano Jobs the informer knows in the CronJob's namespace (those the
    CronJob controls are picked out here). ``lookup``: a job by name, as the API server would
    answer (default: from ``jobs``).
    """
    changes = CronJobChanges()
    if is_deleting(cronjob):
        return changes
    by_name = {name(job): job for job in jobs}
    find: JobLookup = lookup if lookup is not None else by_name.get
    original = deep_copy(status(cronjob))
    sync = _Sync(cronjob, deep_copy(original), changes)
    sync.status["active"] = [dict(mapping(ref)) for ref in items(sync.status.get("active"))]
    owned = jobs_of(cronjob, jobs)

    _process_finished_jobs(sync, owned)
    _process_active_references(sync, owned, find)
    try:
        _run_schedule(sync, now, find)
    except CronJobSyncError as error:
        changes.error = str(error)
        changes.requeue_after = None
    if sync.update_status:
        if not sync.status.get("active"):
            sync.status.pop("active", None)
        changes.status = sync.status
    return changes


def _run_schedule(sync: _Sync, now: datetime, lookup: JobLookup) -> None:
    cronjob, changes = sync.cronjob, sync.changes
    if spec(cronjob).get("suspend") is True:
        return
    schedule = _schedule(sync)
    try:
        scheduled = next_schedule_time(cronjob, now, schedule, changes.events)
    except CronJobSyncError as error:
        sync.event(EVENT_WARNING, "InvalidSchedule", f"Error getting schedule time: {error}")
        raise

    def requeue() -> None:
        changes.requeue_after = next_schedule_time_duration(
            {**cronjob, "status": sync.status}, now, schedule
        )

    if scheduled is None:
        requeue()
        return
    last = _time(sync.status.get("lastScheduleTime"))
    if sync.in_active_list_by_name(namespace(cronjob), job_name(cronjob, scheduled)) or (
        last is not None and last == scheduled
    ):
        requeue()
        return
    if _concurrency_policy(sync, lookup):
        requeue()
        return
    job = _create_job(sync, scheduled, lookup)
    if job is None or sync.in_active_list(uid(job)):
        requeue()
        return
    sync.active().append(job_reference(job))
    sync.status["lastScheduleTime"] = format_time(scheduled)
    sync.update_status = True
    requeue()


def requeue_delay_on_update(old: Raw, new: Raw, now: datetime) -> timedelta | None:
    """``updateCronJob``: when a CronJob's spec changes, how long until it is synced. A new
    schedule or time zone waits for its next schedule time; anything else syncs at once
    (zero); None: the new schedule does not parse, nothing is queued (upstream records an
    ``UnParseableCronJobSchedule`` event)."""
    if text(spec(old).get("schedule")) == text(spec(new).get("schedule")) and spec(old).get(
        "timeZone"
    ) == spec(new).get("timeZone"):
        return timedelta(0)
    try:
        schedule = parse_standard(format_schedule(new, None))
    except ScheduleError:
        return None
    return next_schedule_time_duration(new, now, schedule)
