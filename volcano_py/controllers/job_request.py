"""Which request a watch event produces for the job controller
(``pkg/controllers/job/job_controller_handler.go``)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.types import JOB_NAME_KEY, JOB_VERSION_KEY, TASK_SPEC_KEY
from volcano_py.controllers.job_pod_index import JobPods, TaskTally
from volcano_py.controllers.job_types import JobRequest
from volcano_py.controllers.raw import (
    Raw,
    annotations_of,
    controller_of,
    integer,
    items,
    labels_of,
    mapping,
    metadata,
    name,
    pod_phase,
    spec,
    status,
    text,
    uid,
)
from volcano_py.controllers.vocabulary import (
    BATCH_API_VERSION,
    OUT_OF_SYNC_KEY,
    PARTITION_ID_KEY,
    POD_FAILED,
    POD_PENDING,
    POD_RUNNING,
    POD_SUCCEEDED,
    Event,
    PodGroupPhase,
)

_UNLIMITED_RETRY = -1


def _job_owner_uid(pod: Raw) -> str | None:
    """The uid of the Volcano Job controlling the pod, None for anybody else's pod."""
    owner = controller_of(pod)
    if owner is None:
        return None
    if owner.get("apiVersion") != BATCH_API_VERSION or owner.get("kind") != "Job":
        return None
    return text(owner.get("uid"))


def _parse_int32(value: str) -> int | None:
    try:
        number = int(value, 10)
    except ValueError:
        return None
    return number if -(2**31) <= number < 2**31 else None


def _task_of(job: Raw, task_name: str) -> Raw | None:
    for task in items(spec(job).get("tasks")):
        if mapping(task).get("name") == task_name:
            return mapping(task)
    return None


def _task_tally(
    pods: Sequence[Raw] | JobPods | None, new: Raw, job_name: str, task: str
) -> TaskTally:
    """The tally of the task's pods as the controller cache holds them, the updated pod
    included (the cache holds it before it asks these questions)."""
    if isinstance(pods, JobPods):
        held = pods.by_task.get(task, {}) if pods.job_name == job_name else {}
        filed = held.get(name(new))
        if filed is not None and (filed is new or filed == new):
            return pods.tally(task)  # the index already filed this very version
        pods = pods.pods()
    current = {name(p): p for p in pods or () if _belongs(p, job_name, task)}
    current[name(new)] = new
    return TaskTally.of_pods(current.values())


def _belongs(pod: Raw, job_name: str, task: str) -> bool:
    pod_annotations = annotations_of(pod)
    return pod_annotations.get(JOB_NAME_KEY) == job_name and (
        pod_annotations.get(TASK_SPEC_KEY) == task
    )


def task_completed(job: Raw, task_name: str, task_pods: Sequence[Raw] | TaskTally) -> bool:
    """``jobCache.TaskCompleted``: every replica of the task succeeded."""
    task = _task_of(job, task_name)
    replicas = integer(task.get("replicas")) if task is not None else 0
    if replicas <= 0:
        return False
    if not isinstance(task_pods, TaskTally):
        task_pods = TaskTally.of_pods(task_pods)
    return task_pods.succeeded >= replicas


def task_failed(job: Raw, task_name: str, task_pods: Sequence[Raw] | TaskTally) -> bool:
    """``jobCache.TaskFailed``: the live pods of the task restarted their containers at least
    ``maxRetry`` times in total (0 means the old default 3, -1 means never)."""
    task = _task_of(job, task_name)
    if task is None:
        return False
    replicas = integer(task.get("replicas"))
    max_retry = integer(task.get("maxRetry"))
    if replicas == 0 or max_retry == _UNLIMITED_RETRY:
        return False
    if max_retry == 0:
        max_retry = 3
    if not isinstance(task_pods, TaskTally):
        task_pods = TaskTally.of_pods(task_pods)
    return task_pods.live_restarts >= max_retry


def _first_exit_code(pod: Raw) -> int:
    # Upstream reads only the first container: multi-container exit codes are not supported.
    statuses = items(status(pod).get("containerStatuses"))
    if not statuses:
        return 0
    terminated = mapping(mapping(mapping(statuses[0]).get("state")).get("terminated"))
    return integer(terminated.get("exitCode")) if terminated else 0


def job_request_for_pod_change(
    job: Mapping[str, Any],
    old: Mapping[str, Any] | None,
    new: Mapping[str, Any] | None,
    *,
    pods: Sequence[Mapping[str, Any]] | JobPods | None = None,
) -> JobRequest | None:
    """The request a pod add (``old`` None), update or delete (``new`` None) produces, or None
    when the job controller ignores the pod (not controlled by a Volcano Job, or missing the
    job-name/version/task annotations).

    ``pods`` are the job's pods as the controller knows them, or its ``JobPods`` from a
    ``JobPodIndex`` that already holds ``new`` (then the answer costs no scan);
    ``TaskCompleted`` and ``TaskFailed`` look at the changed pod's task among them (without
    them only the changed pod is seen). A pod delete is assumed to be of a pod the controller knew.
    """
    pod = new if new is not None else old
    if pod is None:
        return None
    job_uid = _job_owner_uid(pod)
    if job_uid is None:
        return None
    pod_annotations = annotations_of(pod)
    job_name = pod_annotations.get(JOB_NAME_KEY)
    version_text = pod_annotations.get(JOB_VERSION_KEY)
    task_name = pod_annotations.get(TASK_SPEC_KEY)
    if job_name is None or version_text is None or task_name is None:
        return None
    version = _parse_int32(version_text)
    if version is None:
        return None
    out_of_sync = OUT_OF_SYNC_KEY in pod_annotations
    exit_code: int | None = None
    event: str

    if old is None:
        event = Event.OUT_OF_SYNC if out_of_sync else Event.POD_PENDING
    elif new is None:
        event = Event.OUT_OF_SYNC if out_of_sync else Event.POD_EVICTED
    else:
        old_version = text(metadata(old).get("resourceVersion"))
        if old_version and old_version == text(metadata(new).get("resourceVersion")):
            return None
        event, exit_code = _update_event(job, old, new, job_name, task_name, pods)
        if out_of_sync:
            event = Event.OUT_OF_SYNC

    return JobRequest(
        event=event,
        task_name=task_name,
        pod_name=name(pod),
        exit_code=exit_code,
        job_version=version,
        job_uid=job_uid,
        pod_uid=uid(pod),
        partition_id=labels_of(pod).get(PARTITION_ID_KEY, ""),
    )


def _update_event(
    job: Raw,
    old: Raw,
    new: Raw,
    job_name: str,
    task_name: str,
    pods: Sequence[Raw] | JobPods | None,
) -> tuple[str, int | None]:
    old_phase, new_phase = pod_phase(old), pod_phase(new)
    event: str = Event.OUT_OF_SYNC
    exit_code: int | None = None
    if new_phase == POD_FAILED:
        if old_phase != POD_FAILED:
            event = Event.POD_FAILED
            exit_code = _first_exit_code(new)
    elif new_phase == POD_SUCCEEDED:
        if old_phase != POD_SUCCEEDED and task_completed(
            job, task_name, _task_tally(pods, new, job_name, task_name)
        ):
            event = Event.TASK_COMPLETED
    elif new_phase in (POD_RUNNING, POD_PENDING):
        # A phase transition outranks the restart check.
        if task_failed(job, task_name, _task_tally(pods, new, job_name, task_name)):
            event = Event.TASK_FAILED
        if old_phase != new_phase:
            event = Event.POD_RUNNING if new_phase == POD_RUNNING else Event.POD_PENDING
    return event, exit_code


def job_request_for_command(command: Mapping[str, Any]) -> JobRequest | None:
    """A bus Command whose target is a Volcano Job: ``CommandIssued`` carrying its action.

    The driver deletes the Command before running the request (exactly once, as upstream);
    ``sync_job`` records the ``CommandIssued`` event on the job.
    """
    target = mapping(command.get("target"))
    if target.get("apiVersion") != BATCH_API_VERSION or target.get("kind") != "Job":
        return None
    return JobRequest(event=Event.COMMAND_ISSUED, action=text(command.get("action")))


def job_request_for_job_change(
    old: Mapping[str, Any] | None, new: Mapping[str, Any]
) -> JobRequest | None:
    """A Job add, or an update that changed the spec or the phase: ``OutOfSync``."""
    if old is not None:
        old_version = text(metadata(old).get("resourceVersion"))
        if old_version and old_version == text(metadata(new).get("resourceVersion")):
            return None
        same_phase = mapping(status(old).get("state")).get("phase") == mapping(
            status(new).get("state")
        ).get("phase")
        if spec(old) == spec(new) and same_phase:
            return None
    return JobRequest(event=Event.OUT_OF_SYNC)


def job_request_for_pod_group_change(
    old: Mapping[str, Any] | None, new: Mapping[str, Any]
) -> JobRequest | None:
    """A PodGroup phase change: ``Unknown`` when it became Unknown, else a plain sync (an empty
    event, which the policies never match). None when the phase did not change."""
    old_phase = text(status(old).get("phase")) if old is not None else ""
    new_phase = text(status(new).get("phase"))
    if old is None or old_phase == new_phase:
        return None
    return JobRequest(event=Event.JOB_UNKNOWN if new_phase == PodGroupPhase.UNKNOWN else "")
