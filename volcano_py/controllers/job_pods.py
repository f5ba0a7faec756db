"""The pod the job controller creates for replica ``index`` of a task
(``job_controller_util.go`` ``createJobPod``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from volcano_py.api.types import (
    GROUP_NAME_ANNOTATION,
    JOB_NAME_KEY,
    JOB_NAMESPACE_KEY,
    JOB_RETRY_COUNT_KEY,
    JOB_VERSION_KEY,
    PREEMPTABLE_KEY,
    QUEUE_NAME_KEY,
    REVOCABLE_ZONE_KEY,
    TASK_INDEX_KEY,
    TASK_SPEC_KEY,
    TEMPLATE_UID_KEY,
)
from volcano_py.controllers.job_plugins import make_pod_name
from volcano_py.controllers.job_status import JobStatus
from volcano_py.controllers.job_volumes import job_volumes, pod_volume_name
from volcano_py.controllers.raw import (
    Raw,
    annotations_of,
    controller_reference,
    integer,
    labels_of,
    mapping,
    name,
    namespace,
    spec,
    text,
    uid,
)
from volcano_py.controllers.vocabulary import (
    BATCH_API_VERSION,
    COOLDOWN_TIME_KEY,
    DEFAULT_TASK_SPEC,
    JDB_MAX_UNAVAILABLE_KEY,
    JDB_MIN_AVAILABLE_KEY,
    JOB_FORWARDING_KEY,
    NUMA_POLICY_KEY,
    PARTITION_ID_KEY,
    POD_PENDING,
)


def pod_group_name(job: Raw) -> str:
    """``<job>-<uid>``: the uid keeps a re-created job of the same name off the old group. A
    job without a uid (never stored by an API server) gets the legacy name ``<job>``, which
    upstream still finds, rather than an invalid name ending in ``-``."""
    job_uid = uid(job)
    return f"{name(job)}-{job_uid}" if job_uid else name(job)


def _mount_volumes(job: Raw, pod_spec: dict[str, Any]) -> None:
    seen: set[str] = set()
    for claim, mount_path in job_volumes(job):
        if claim in seen:
            continue  # admission refuses duplicates; the first one wins
        seen.add(claim)
        volume_name = pod_volume_name(job, claim)
        volume = {"name": volume_name, "persistentVolumeClaim": {"claimName": claim}}
        pod_spec["volumes"] = [*(pod_spec.get("volumes") or []), volume]
        for container in pod_spec.get("containers") or []:
            if isinstance(container, dict):
                mount = {"mountPath": mount_path, "name": volume_name}
                container["volumeMounts"] = [*(container.get("volumeMounts") or []), mount]


def build_job_pod(
    job: Raw, task: Raw, index: int, status: JobStatus, *, forwarding: bool = False
) -> dict[str, Any]:
    """Replica ``index`` of ``task``: the template plus every link the scheduler and the
    controller read back (group name, task role and index, job version and retry count)."""
    job_spec = spec(job)
    task_name = text(task.get("name"))
    template = mapping(task.get("template"))
    pod_annotations = dict(annotations_of(template))
    pod_labels = dict(labels_of(template))
    pod_spec: dict[str, Any] = copy.deepcopy(dict(spec(template)))

    if not pod_spec.get("schedulerName"):
        pod_spec["schedulerName"] = text(job_spec.get("schedulerName"))
    if not pod_spec.get("priorityClassName") and text(job_spec.get("priorityClassName")):
        pod_spec["priorityClassName"] = text(job_spec.get("priorityClassName"))
    _mount_volumes(job, pod_spec)

    task_key = task_name or DEFAULT_TASK_SPEC
    queue = text(job_spec.get("queue"))
    index_text = str(index)
    pod_annotations.update(
        {
            TASK_INDEX_KEY: index_text,
            TASK_SPEC_KEY: task_key,
            GROUP_NAME_ANNOTATION: pod_group_name(job),
            JOB_NAME_KEY: name(job),
            QUEUE_NAME_KEY: queue,
            JOB_VERSION_KEY: str(status.version),
            TEMPLATE_UID_KEY: f"{name(job)}-{task_name}",
            JOB_RETRY_COUNT_KEY: str(status.retry_count),
        }
    )
    if text(task.get("topologyPolicy")):
        pod_annotations[NUMA_POLICY_KEY] = text(task.get("topologyPolicy"))
    job_annotations = annotations_of(job)
    for key in (PREEMPTABLE_KEY, COOLDOWN_TIME_KEY, REVOCABLE_ZONE_KEY):
        if key in job_annotations:
            pod_annotations[key] = job_annotations[key]
    # A job disruption budget is either a minimum or a maximum, the minimum winning.
    if JDB_MIN_AVAILABLE_KEY in job_annotations:
        pod_annotations[JDB_MIN_AVAILABLE_KEY] = job_annotations[JDB_MIN_AVAILABLE_KEY]
    elif JDB_MAX_UNAVAILABLE_KEY in job_annotations:
        pod_annotations[JDB_MAX_UNAVAILABLE_KEY] = job_annotations[JDB_MAX_UNAVAILABLE_KEY]

    # Labels serve selectors: the svc plugin's Service and NetworkPolicy match on them.
    pod_labels.update(
        {
            TASK_INDEX_KEY: index_text,
            JOB_NAME_KEY: name(job),
            TASK_SPEC_KEY: task_key,
            JOB_NAMESPACE_KEY: namespace(job),
            QUEUE_NAME_KEY: queue,
        }
    )
    job_labels = labels_of(job)
    for key in (PREEMPTABLE_KEY, COOLDOWN_TIME_KEY):
        if key in job_labels:
            pod_labels[key] = job_labels[key]
    if forwarding:
        pod_annotations[JOB_FORWARDING_KEY] = "true"
        pod_labels[JOB_FORWARDING_KEY] = "true"
    partition = task.get("partitionPolicy")
    if isinstance(partition, Mapping):
        size = integer(mapping(partition).get("partitionSize"))
        pod_labels[PARTITION_ID_KEY] = str(index // size if size > 0 and index >= 0 else 0)

    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": make_pod_name(name(job), task_name, index),
            "namespace": namespace(job),
            "ownerReferences": [controller_reference(job, BATCH_API_VERSION, "Job")],
            "labels": pod_labels,
            "annotations": pod_annotations,
        },
        "spec": pod_spec,
        # What the API server answers a create with: the new pod is Pending.
        "status": {"phase": POD_PENDING},
    }
