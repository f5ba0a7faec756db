"""Raw objects for the controller tests: Volcano Jobs, the pods the job controller made for
them, PodGroups and Queues, as plain dicts."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.controllers.job_podgroup import build_pod_group

NOW = "2024-05-01T10:00:00Z"
LATER = "2024-05-01T10:05:00Z"
CREATED = "2024-05-01T09:59:00Z"


def container(cpu: str | None = None, memory: str | None = None, **extra: str) -> dict[str, Any]:
    requests: dict[str, str] = {}
    if cpu is not None:
        requests["cpu"] = cpu
    if memory is not None:
        requests["memory"] = memory
    requests.update(extra)
    return {"name": "main", "image": "busybox", "resources": {"requests": requests}}


def task(
    name: str,
    replicas: int,
    *,
    min_available: int | None = None,
    cpu: str | None = "1",
    memory: str | None = None,
    priority_class: str | None = None,
    policies: list[dict[str, Any]] | None = None,
    depends_on: dict[str, Any] | None = None,
    partition: dict[str, Any] | None = None,
    max_retry: int | None = None,
    template_meta: dict[str, Any] | None = None,
    **spec_extra: Any,
) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"containers": [container(cpu, memory)], **spec_extra}
    if priority_class is not None:
        pod_spec["priorityClassName"] = priority_class
    result: dict[str, Any] = {
        "name": name,
        "replicas": replicas,
        "template": {"metadata": dict(template_meta or {}), "spec": pod_spec},
    }
    if min_available is not None:
        result["minAvailable"] = min_available
    if policies is not None:
        result["policies"] = policies
    if depends_on is not None:
        result["dependsOn"] = depends_on
    if partition is not None:
        result["partitionPolicy"] = partition
    if max_retry is not None:
        result["maxRetry"] = max_retry
    return result


def job(
    name: str = "job1",
    *tasks: dict[str, Any],
    namespace: str = "default",
    uid: str = "uid-1",
    min_available: int | None = None,
    phase: str | None = None,
    status: dict[str, Any] | None = None,
    queue: str = "default",
    max_retry: int = 3,
    policies: list[dict[str, Any]] | None = None,
    plugins: dict[str, list[str]] | None = None,
    annotations: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    **spec_extra: Any,
) -> dict[str, Any]:
    """A Job as admission leaves it (queue, scheduler, maxRetry, minAvailable set)."""
    all_tasks = list(tasks) or [task("worker", 2)]
    spec: dict[str, Any] = {
        "schedulerName": "volcano",
        "queue": queue,
        "maxRetry": max_retry,
        "minAvailable": (
            min_available
            if min_available is not None
            else sum(t.get("minAvailable", t["replicas"]) for t in all_tasks)
        ),
        "tasks": all_tasks,
        **spec_extra,
    }
    if policies is not None:
        spec["policies"] = policies
    if plugins is not None:
        spec["plugins"] = plugins
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": uid,
        "creationTimestamp": CREATED,
    }
    if annotations:
        metadata["annotations"] = dict(annotations)
    if labels:
        metadata["labels"] = dict(labels)
    result: dict[str, Any] = {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": metadata,
        "spec": spec,
    }
    job_status = dict(status or {})
    if phase is not None:
        job_status.setdefault("state", {})["phase"] = phase
    if job_status:
        result["status"] = job_status
    return result


def job_pod(
    owner: Mapping[str, Any],
    task_name: str,
    index: int,
    phase: str = "Running",
    *,
    version: int = 0,
    deleting: bool = False,
    out_of_sync: bool = False,
    ready: bool | None = None,
    restarts: int = 0,
    exit_code: int | None = None,
    resource_version: str | None = None,
    labels: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """A pod as the job controller made it, in ``phase``."""
    job_name = owner["metadata"]["name"]
    pod_annotations = {
        "volcano.sh/task-spec": task_name,
        "volcano.sh/task-index": str(index),
        "volcano.sh/job-name": job_name,
        "volcano.sh/job-version": str(version),
        "scheduling.k8s.io/group-name": f"{job_name}-{owner['metadata']['uid']}",
    }
    if out_of_sync:
        pod_annotations["volcano.sh/controller-out-of-sync"] = "true"
    metadata: dict[str, Any] = {
        "name": f"{job_name}-{task_name}-{index}",
        "namespace": owner["metadata"]["namespace"],
        "uid": f"pod-{job_name}-{task_name}-{index}",
        "annotations": pod_annotations,
        "labels": {"volcano.sh/task-spec": task_name, **dict(labels or {})},
        "ownerReferences": [
            {
                "apiVersion": "batch.volcano.sh/v1alpha1",
                "kind": "Job",
                "name": job_name,
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ],
    }
    if deleting:
        metadata["deletionTimestamp"] = NOW
    if resource_version is not None:
        metadata["resourceVersion"] = resource_version
    status: dict[str, Any] = {"phase": phase}
    container_status: dict[str, Any] = {"name": "main", "restartCount": restarts}
    if ready is not None:
        container_status["ready"] = ready
    if exit_code is not None:
        container_status["state"] = {"terminated": {"exitCode": exit_code}}
    status["containerStatuses"] = [container_status]
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {"containers": [container("1")]},
        "status": status,
    }


def pod_group(owner: Mapping[str, Any], phase: str = "", **spec: Any) -> dict[str, Any]:
    """The job's PodGroup as the controller made it, in ``phase`` ('' = not yet seen by the
    scheduler)."""
    result = build_pod_group(owner)
    result["spec"].update(spec)
    if phase:
        result["status"] = {"phase": phase}
    return result


def queue(
    name: str,
    state: str | None = "Open",
    parent: str | None = None,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": 1}
    if parent is not None:
        spec["parent"] = parent
    result: dict[str, Any] = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name, "annotations": dict(annotations or {})},
        "spec": spec,
    }
    if state is not None:
        result["status"] = {"state": state}
    return result
