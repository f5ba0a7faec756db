"""The JobFlow controller as a pure function (upstream ``pkg/controllers/jobflow``): a JobFlow,
the JobTemplates and Jobs of its namespace and the time in; the jobs to create or delete and
the new status out.

Each flow entry names a JobTemplate; its job ``<jobflow>-<template>`` is created from the
template's spec once every dependsOn target's job is Completed (at once when it has none).
The status lists the flow's jobs by phase, keeps each job's phase history, and moves the
flow's phase Pending -> Running -> Succeed, or -> Failed when a job fails or is terminated.
With ``jobRetainPolicy: delete`` the jobs are deleted once the flow has succeeded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from volcano_py.controllers.job_status import state_phase
from volcano_py.controllers.raw import (
    Raw,
    controller_reference,
    deep_copy,
    items,
    labels_of,
    mapping,
    metadata,
    name,
    namespace,
    spec,
    status,
    text,
    uid,
)
from volcano_py.controllers.timefmt import parse_go_duration, parse_timestamp
from volcano_py.controllers.vocabulary import BATCH_API_VERSION

FLOW_API_VERSION: Final = "flow.volcano.sh/v1alpha1"
JOBFLOW_KIND: Final = "JobFlow"
JOBTEMPLATE_KIND: Final = "JobTemplate"
CREATED_BY_JOB_TEMPLATE: Final = "volcano.sh/createdByJobTemplate"
CREATED_BY_JOB_FLOW: Final = "volcano.sh/createdByJobFlow"

# Flow phases (``flow/v1alpha1.Phase``).
PENDING, RUNNING, SUCCEED, FAILED, TERMINATING = (
    "Pending",
    "Running",
    "Succeed",
    "Failed",
    "Terminating",
)
# The job phases the status lists by name; any other phase lands in unKnowJobs. Completing
# and Terminating jobs are counted (upstream's map has them) but listed nowhere.
_LISTED_JOB_PHASES: Final = {
    "Pending": "pendingJobs",
    "Running": "runningJobs",
    "Completing": None,
    "Completed": "completedJobs",
    "Terminating": None,
    "Terminated": "terminatedJobs",
    "Failed": "failedJobs",
}
_STATUS_LISTS: Final = (
    "pendingJobs",
    "runningJobs",
    "failedJobs",
    "completedJobs",
    "terminatedJobs",
    "unKnowJobs",
)


@dataclass(frozen=True, slots=True)
class JobDeletion:
    namespace: str
    name: str
    uid: str


@dataclass
class JobFlowChanges:
    """What one sync asks for. ``error`` set: the sync stopped there (a missing JobTemplate);
    what came before it still applies, the status is not written, and the key is retried."""

    create_jobs: list[dict[str, Any]] = field(default_factory=list)
    delete_jobs: list[JobDeletion] = field(default_factory=list)
    status: dict[str, Any] | None = None
    events: list[tuple[str, str, str]] = field(default_factory=list)
    error: str | None = None


# -- names and ownership (jobflow_controller_util.go) ----------------------------------------


def job_name(jobflow_name: str, template_name: str) -> str:
    """``getJobName``."""
    return f"{jobflow_name}-{template_name}"


def object_string(namespace_name: str, object_name: str) -> str:
    """``GenerateObjectString``: the value of the createdBy labels and annotations."""
    return f"{namespace_name}.{object_name}"


def jobflow_of_job(job: Raw) -> str | None:
    """``getJobFlowNameByJob``: the JobFlow named by a job's owner references (any owner of
    kind JobFlow whose apiVersion mentions volcano), or None."""
    for reference in items(metadata(job).get("ownerReferences")):
        ref = mapping(reference)
        if text(ref.get("kind")) == JOBFLOW_KIND and "volcano" in text(ref.get("apiVersion")):
            return text(ref.get("name"))
    return None


def is_controlled_by_a_jobflow(job: Raw) -> bool:
    """``isControlledBy(job, JobFlowKind)``: the controller reference is a JobFlow's."""
    for reference in items(metadata(job).get("ownerReferences")):
        ref = mapping(reference)
        if ref.get("controller") is True:
            return (
                text(ref.get("apiVersion")) == FLOW_API_VERSION
                and text(ref.get("kind")) == JOBFLOW_KIND
            )
    return False


def jobs_of(jobflow: Raw, jobs: Sequence[Raw]) -> list[Raw]:
    """``getAllJobsCreatedByJobFlow``: the jobs of the JobFlow's namespace labelled as created
    by it."""
    wanted = object_string(namespace(jobflow), name(jobflow))
    return [
        job
        for job in jobs
        if labels_of(job).get(CREATED_BY_JOB_FLOW) == wanted
        and (namespace(job) or namespace(jobflow)) == namespace(jobflow)
    ]


def job_from_template(jobflow: Raw, template: Raw, flow_name: str) -> dict[str, Any]:
    """``loadJobTemplateAndSetJob``: the template's spec as written, the createdBy labels and
    annotations, and the JobFlow as controller."""
    created_by = {
        CREATED_BY_JOB_TEMPLATE: object_string(namespace(jobflow), flow_name),
        CREATED_BY_JOB_FLOW: object_string(namespace(jobflow), name(jobflow)),
    }
    return {
        "apiVersion": BATCH_API_VERSION,
        "kind": "Job",
        "metadata": {
            "name": job_name(name(jobflow), flow_name),
            "namespace": namespace(jobflow),
            "labels": dict(created_by),
            "annotations": dict(created_by),
            "ownerReferences": [controller_reference(jobflow, FLOW_API_VERSION, JOBFLOW_KIND)],
        },
        "spec": deep_copy(spec(template)),
    }


# -- times -------------------------------------------------------------------------------------


def format_time(moment: datetime) -> str:
    """``metav1.Time``: whole seconds, ``Z`` for UTC."""
    return moment.astimezone(UTC).replace(microsecond=0, tzinfo=None).isoformat() + "Z"


def _end_time(job: Raw) -> str | None:
    """Creation time plus ``status.runningDuration``, when the job has one."""
    created = parse_timestamp(text(metadata(job).get("creationTimestamp")))
    duration = text(status(job).get("runningDuration"))
    if created is None or not duration:
        return None
    try:
        nanos = parse_go_duration(duration)
    except ValueError:
        return None
    if created.tzinfo is None:
        created = created.replace(tzinfo=UTC)
    return format_time(created + timedelta(microseconds=nanos // 1_000))


# -- the status (getAllJobStatus, getRunningHistories) ------------------------------------------


def running_histories(
    job_status_list: Sequence[Raw], job: Raw, now: datetime
) -> list[dict[str, Any]]:
    """``getRunningHistories``: the job's phase history; a new entry (the previous one closed
    at ``now``) when its phase changed since the last sync."""
    phase = state_phase(job)
    moment = format_time(now)
    for entry in job_status_list:
        if text(entry.get("name")) != name(job) or entry.get("runningHistories") is None:
            continue
        histories = [dict(mapping(history)) for history in items(entry.get("runningHistories"))]
        if histories and text(histories[-1].get("state")) != phase:
            histories[-1]["endTimestamp"] = moment
            histories.append({"startTimestamp": moment, "state": phase})
        return histories
    return [{"startTimestamp": moment, "state": phase}] if phase else []


def _job_status(job: Raw, histories: list[dict[str, Any]]) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name(job)}
    if state_phase(job):
        entry["state"] = state_phase(job)
    created = text(metadata(job).get("creationTimestamp"))
    if created:
        entry["startTimestamp"] = created
    end = _end_time(job)
    if end:
        entry["endTimestamp"] = end
    retries = status(job).get("retryCount")
    if isinstance(retries, int) and retries:
        entry["restartCount"] = retries
    if histories:
        entry["runningHistories"] = histories
    return entry


def _condition(job: Raw) -> dict[str, Any]:
    condition: dict[str, Any] = {}
    if state_phase(job):
        condition["phase"] = state_phase(job)
    created = text(metadata(job).get("creationTimestamp"))
    if created:
        condition["createTime"] = created
    duration = status(job).get("runningDuration")
    if duration:
        condition["runningDuration"] = duration
    counts = status(job).get("taskStatusCount")
    if counts:
        condition["taskStatusCount"] = deep_copy(mapping(counts))
    return condition


def all_job_status(jobflow: Raw, owned: Sequence[Raw], now: datetime) -> dict[str, Any]:
    """``getAllJobStatus``: the flow's jobs by phase, their conditions and phase histories
    (entries of jobs gone are kept, as upstream), and the flow's phase unchanged. Empty lists
    are left out, as upstream's ``omitempty`` does."""
    lists: dict[str, list[str]] = {key: [] for key in _STATUS_LISTS}
    conditions: dict[str, Any] = {}
    for job in owned:
        phase = state_phase(job)
        if phase in _LISTED_JOB_PHASES:
            listed = _LISTED_JOB_PHASES[phase]
            if listed is not None:
                lists[listed].append(name(job))
        else:
            lists["unKnowJobs"].append(name(job))
        conditions[name(job)] = _condition(job)
    previous = [dict(mapping(entry)) for entry in items(status(jobflow).get("jobStatusList"))]
    job_status_list = list(previous)
    for job in owned:
        entry = _job_status(job, running_histories(previous, job, now))
        replaced = False
        for index, existing in enumerate(job_status_list):
            if text(existing.get("name")) == name(job):
                job_status_list[index] = entry
                replaced = True
        if not replaced:
            job_status_list.append(entry)
    new_status: dict[str, Any] = {key: value for key, value in lists.items() if value}
    if job_status_list:
        new_status["jobStatusList"] = job_status_list
    if conditions:
        new_status["conditions"] = conditions
    new_status["state"] = deep_copy(mapping(status(jobflow).get("state")))
    return new_status


# -- the flow's phase (state/*.go) ---------------------------------------------------------------


def next_phase(phase: str, flow_status: Raw, flows: int) -> str:
    """One step of upstream's state machine from ``phase`` (``''`` is Pending) given the
    status just computed: Pending goes Running once a job runs or completed and none failed,
    Failed once one failed or was terminated; Running goes Succeed once as many jobs completed
    as there are flows, Failed as Pending does; Succeed, Failed and Terminating stay."""
    completed = len(items(flow_status.get("completedJobs")))
    running = len(items(flow_status.get("runningJobs")))
    failed = len(items(flow_status.get("failedJobs")))
    terminated = len(items(flow_status.get("terminatedJobs")))
    if phase in ("", PENDING):
        if (running > 0 or completed > 0) and failed <= 0:
            return RUNNING
        if failed > 0 or terminated > 0:
            return FAILED
        return PENDING
    if phase == RUNNING:
        if completed == flows:
            return SUCCEED
        if failed > 0 or terminated > 0:
            return FAILED
    return phase


def settled_phase(phase: str, flow_status: Raw, flows: int) -> str:
    """``next_phase`` until it stays. Upstream takes one step per sync, and a sync comes only
    from a job's update: a flow whose jobs all completed while it was still Pending went
    Running and waited there for a job event that never came. Settling in one sync reaches
    the phase upstream reaches when one more event does come."""
    for _ in range(3):
        following = next_phase(phase, flow_status, flows)
        if following == phase:
            break
        phase = following
    return phase


# -- one sync (syncJobFlow) --------------------------------------------------------------------


def _dependencies_met(jobflow: Raw, flow: Raw, jobs_by_name: Mapping[str, Raw]) -> bool:
    """``judge``: every target's job exists and is Completed."""
    for target in items(mapping(flow.get("dependsOn")).get("targets")):
        job = jobs_by_name.get(job_name(name(jobflow), text(target)))
        if job is None or state_phase(job) != "Completed":
            return False
    return True


def sync_jobflow(
    jobflow: Mapping[str, Any],
    templates: Mapping[str, Mapping[str, Any]],
    jobs: Sequence[Mapping[str, Any]],
    now: datetime,
) -> JobFlowChanges:
    """One round of upstream's ``handleJobFlow`` for a JobFlow. ``templates`` are the
    JobTemplates of its namespace by name, ``jobs`` the Jobs of its namespace."""
    changes = JobFlowChanges()
    phase = state_phase(jobflow)
    if phase not in ("", PENDING, RUNNING, SUCCEED, FAILED, TERMINATING):
        changes.error = f"jobflow {name(jobflow)} state {phase} is invalid"
        return changes
    if phase in (FAILED, TERMINATING):
        return changes  # upstream's failed and terminating states do nothing
    owned = jobs_of(jobflow, jobs)
    if spec(jobflow).get("jobRetainPolicy") == "delete" and phase == SUCCEED:
        changes.delete_jobs = [JobDeletion(namespace(job), name(job), uid(job)) for job in owned]
        return changes
    jobs_by_name = {name(job): job for job in jobs}
    flows = [mapping(flow) for flow in items(spec(jobflow).get("flows"))]
    for flow in flows:
        flow_name = text(flow.get("name"))
        wanted = job_name(name(jobflow), flow_name)
        if wanted in jobs_by_name:
            continue
        targets = items(mapping(flow.get("dependsOn")).get("targets"))
        if targets and not _dependencies_met(jobflow, flow, jobs_by_name):
            continue
        template = templates.get(flow_name)
        if template is None:
            changes.error = (
                f"JobTemplate {namespace(jobflow)}/{flow_name} of flow {flow_name!r} not found"
            )
            return changes
        job = job_from_template(jobflow, template, flow_name)
        changes.create_jobs.append(job)
        # A duplicate flow entry of the same name must not create the job twice.
        jobs_by_name[wanted] = job
        changes.events.append(("Normal", "Created", f"create a job named {wanted}!"))
    new_status = all_job_status(jobflow, owned, now)
    if phase != SUCCEED:
        new_state = settled_phase(phase, new_status, len(flows))
        new_status["state"] = {**mapping(new_status.get("state")), "phase": new_state}
    changes.status = new_status
    return changes


def job_template_status(template: Raw, jobs: Sequence[Raw]) -> dict[str, Any] | None:
    """The JobTemplate controller (``syncJobTemplate``): the names of the jobs labelled as
    created from the template, or None (status left as it is) when there are none."""
    wanted = object_string(namespace(template), name(template))
    names = [
        name(job)
        for job in jobs
        if labels_of(job).get(CREATED_BY_JOB_TEMPLATE) == wanted
        and (namespace(job) or namespace(template)) == namespace(template)
    ]
    if not names:
        return None
    return {**deep_copy(status(template)), "jobDependsOnList": names}


def template_of_job(job: Raw) -> str | None:
    """``addJob``'s split of the createdByJobTemplate label: ``<namespace>/<template>``, or
    None when the label is missing or not ``<namespace>.<name>``."""
    value = labels_of(job).get(CREATED_BY_JOB_TEMPLATE, "")
    parts = value.split(".")
    if len(parts) != 2:
        return None
    return f"{parts[0]}/{parts[1]}"
