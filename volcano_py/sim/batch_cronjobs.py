"""Kubernetes' batch/v1 CronJob in the simulated cluster: checked as the API server checks it,
and run as Kubernetes' cronjob controller (``pkg/controller/cronjob``, v2) runs it, making
batch/v1 Jobs that the simulated Job controller (``sim/workloads.py``) expands into pods.

Volcano's CronJob controller is a port of that very controller (the same schedule, missed
times, ``startingDeadlineSeconds``, concurrency policies, history limits, ``status.active``
and job names ``<cronjob>-<scheduled minutes since the epoch>``), so the pure
``controllers.cronjob.sync_cronjob`` runs both. What differs is said here: a batch Job has
finished when its ``Complete`` or ``Failed`` condition is True (its ``completionTime``, or the
condition's time, is when), the job made is a ``batch/v1`` Job owned through ``batch/v1``, and
its scheduled time annotation is ``batch.kubernetes.io/cronjob-scheduled-timestamp``.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Callable, Mapping
from typing import Any, Final

from volcano_py.controllers.cronjob import (
    NEXT_SCHEDULE_DELTA,
    SCHEDULED_TIMESTAMP_ANNOTATION,
    sync_cronjob,
)
from volcano_py.controllers.cronjob_validation import cronjob_problems
from volcano_py.controllers.raw import Raw, items, mapping, metadata, status, text, uid
from volcano_py.sim.clock import seconds_since_epoch
from volcano_py.sim.cluster import BATCH_CRONJOB, BATCH_JOB, InMemoryCluster
from volcano_py.sim.loader import Document, SimInputError

BATCH: Final = "batch/v1"
K8S_SCHEDULED_TIMESTAMP: Final = "batch.kubernetes.io/cronjob-scheduled-timestamp"
_FINISHED_CONDITIONS: Final = {"Complete": "Completed", "Failed": "Failed"}

WorkloadCheck = Callable[[Document], tuple[dict[str, Any], list[str]]]


# ---------------------------------------------------------------------- input


def check_batch_cronjob(
    document: Document, check_job: WorkloadCheck
) -> tuple[dict[str, Any], list[str]]:
    """The API server's checks (schedule, time zone, name length: the same rules Volcano's
    webhook copied), the CRD-less defaults Kubernetes fills in, and the job template checked
    as a batch/v1 Job (``check_job``), its messages placed under ``spec.jobTemplate``."""
    cronjob = copy.deepcopy(document.obj)
    cron_spec = cronjob.setdefault("spec", {})
    if not isinstance(cron_spec, dict):
        raise document.error("spec", "expected an object")
    problems = cronjob_problems(cronjob)
    if problems:
        raise document.error("spec.schedule", "; ".join(problems))
    template = cron_spec.get("jobTemplate")
    if not isinstance(template, dict):
        raise document.error("spec.jobTemplate", "Required value")
    for field, default in (
        ("concurrencyPolicy", "Allow"),
        ("suspend", False),
        ("successfulJobsHistoryLimit", 3),
        ("failedJobsHistoryLimit", 1),
    ):
        cron_spec.setdefault(field, default)
    if cron_spec["concurrencyPolicy"] not in ("Allow", "Forbid", "Replace"):
        raise document.error(
            "spec.concurrencyPolicy",
            f'Unsupported value: "{cron_spec["concurrencyPolicy"]}": supported values:'
            ' "Allow", "Forbid", "Replace"',
        )
    as_job = Document(
        {
            "apiVersion": BATCH,
            "kind": "Job",
            "metadata": dict(mapping(cronjob.get("metadata"))),
            "spec": dict(mapping(template.get("spec"))),
        },
        document.source,
        document.position,
        document.item,
    )
    prefix = f"{as_job.where}: {as_job.label}: "
    try:
        _job, notes = check_job(as_job)
    except SimInputError as error:
        raise document.error("", _under_template(str(error), prefix)) from None
    return cronjob, [
        f"{document.where}: {document.label}: {_under_template(n, prefix)}" for n in notes
    ]


def _under_template(message: str, prefix: str) -> str:
    rest = message[len(prefix) :] if message.startswith(prefix) else message
    return f"spec.jobTemplate.{rest}" if rest.startswith("spec.") else rest


# ---------------------------------------------------------------------- controller


def _finished(job: Raw) -> tuple[str, str]:
    """(Volcano-style phase, when) of a batch Job: Completed or Failed once its condition is
    True, else Running."""
    for condition in items(status(job).get("conditions")):
        kind = text(mapping(condition).get("type"))
        if kind in _FINISHED_CONDITIONS and mapping(condition).get("status") == "True":
            when = text(status(job).get("completionTime")) if kind == "Complete" else ""
            return _FINISHED_CONDITIONS[kind], when or text(
                mapping(condition).get("lastTransitionTime")
            )
    return "Running", ""


def _as_seen(job: Raw) -> dict[str, Any]:
    """The batch Job as the shared controller reads a job (``status.state``)."""
    phase, when = _finished(job)
    state = {"phase": phase, "lastTransitionTime": when} if when else {"phase": phase}
    return {**job, "status": {**dict(status(job)), "state": state}}


def _as_batch_job(job: dict[str, Any]) -> dict[str, Any]:
    made = copy.deepcopy(job)
    made["apiVersion"] = BATCH
    annotations = made["metadata"].setdefault("annotations", {})
    if SCHEDULED_TIMESTAMP_ANNOTATION in annotations:
        annotations[K8S_SCHEDULED_TIMESTAMP] = annotations.pop(SCHEDULED_TIMESTAMP_ANNOTATION)
    for reference in made["metadata"].get("ownerReferences") or []:
        reference["apiVersion"] = BATCH
    return made


def _delete_job(cluster: InMemoryCluster, key: str) -> None:
    """What Kubernetes' garbage collector does after the controller's delete (background
    propagation): the job's pods go too."""
    job = cluster.get(BATCH_JOB, key)
    if job is None:
        return
    namespace = key.partition("/")[0]
    job_uid = uid(job)
    for pod_key, pod in list(cluster.in_namespace("Pod", namespace).items()):
        references = metadata(pod).get("ownerReferences") or []
        if any(isinstance(ref, Mapping) and ref.get("uid") == job_uid for ref in references):
            cluster.delete("Pod", pod_key)
    cluster.delete(BATCH_JOB, key)


def run_batch_cronjobs(cluster: InMemoryCluster, now: dt.datetime) -> dict[str, float]:
    """One round of the batch/v1 CronJob controller; per CronJob, when it is next due."""
    due: dict[str, float] = {}
    for key, cronjob in list(cluster.items(BATCH_CRONJOB)):
        namespace, _, name = key.partition("/")

        def lookup(job_name: str, namespace: str = namespace) -> Raw | None:
            found = cluster.get(BATCH_JOB, f"{namespace}/{job_name}")
            return None if found is None else _as_seen(found)

        jobs = [_as_seen(job) for job in cluster.in_namespace(BATCH_JOB, namespace).values()]
        changes = sync_cronjob(cronjob, jobs, now, lookup)
        for deletion in changes.delete_jobs:
            job_key = f"{deletion.namespace or namespace}/{deletion.name}"
            found = cluster.get(BATCH_JOB, job_key)
            if found is not None and (not deletion.uid or uid(found) == deletion.uid):
                _delete_job(cluster, job_key)
                cluster.changes += 1
        if changes.create_job is not None:
            made = cluster.create(_as_batch_job(changes.create_job))
            changes.record_created(made)
            cluster.changes += 1
        for event_type, reason, message in changes.events:
            cluster.record("CronJob", namespace, name, event_type, reason, message)
        if changes.error is None and changes.status is not None:
            new_status = copy.deepcopy(changes.status)
            for reference in new_status.get("active") or []:
                reference["apiVersion"] = BATCH
            if new_status != cronjob.get("status"):
                cluster.update({**cronjob, "status": new_status})
        if changes.requeue_after is not None:
            wake = now + changes.requeue_after - NEXT_SCHEDULE_DELTA
            due[key] = seconds_since_epoch(wake)
    return due


__all__ = ["check_batch_cronjob", "run_batch_cronjobs"]
