"""Volcano's admission webhooks as pure functions (``pkg/webhooks/admission/``): the defaults
the mutating webhooks add on create, and the job validation (``job_validation``).

Every function returns a new object and leaves its argument untouched.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.types import (
    DEFAULT_QUEUE,
    DEFAULT_SCHEDULER_NAME,
    HIERARCHY_ANNOTATION,
    HIERARCHY_WEIGHTS_ANNOTATION,
    QUEUE_NAME_ANNOTATION,
)
from volcano_py.controllers.job_validation import validate_job
from volcano_py.controllers.raw import deep_copy, integer, mapping, optional_int, text
from volcano_py.controllers.vocabulary import DEFAULT_MAX_RETRY, DEFAULT_TASK_SPEC

__all__ = ["mutate_job", "mutate_pod_group", "mutate_queue", "validate_job"]

# These framework plugins reach their peers through the svc plugin's hosts; mpi also ssh.
_NEEDS_SVC = ("tensorflow", "mpi", "pytorch", "ray")


def _default_task(task: dict[str, Any], index: int) -> None:
    if not text(task.get("name")):
        task["name"] = f"{DEFAULT_TASK_SPEC}{index}"
    template = task.get("template")
    if isinstance(template, dict):
        pod_spec = template.get("spec")
        if (
            isinstance(pod_spec, dict)
            and pod_spec.get("hostNetwork")
            and not pod_spec.get("dnsPolicy")
        ):
            pod_spec["dnsPolicy"] = "ClusterFirstWithHostNet"
    if optional_int(task.get("minAvailable")) is None:
        partition = mapping(task.get("partitionPolicy"))
        min_partitions = integer(partition.get("minPartitions"))
        # minPartitions left at 0 would make the task's gang empty: fall back to replicas.
        if partition and min_partitions > 0:
            task["minAvailable"] = min_partitions * integer(partition.get("partitionSize"))
        else:
            task["minAvailable"] = integer(task.get("replicas"))
    if not integer(task.get("maxRetry")):
        task["maxRetry"] = DEFAULT_MAX_RETRY


def mutate_job(
    job: Mapping[str, Any], scheduler_name: str = DEFAULT_SCHEDULER_NAME
) -> dict[str, Any]:
    """``mutate_job.go`` on create: queue ``default``, the scheduler name, maxRetry 3, task
    names ``default<i>``, task minAvailable (partitions or replicas) and maxRetry 3, the job's
    minAvailable as the sum of its tasks', and the svc/ssh plugins the framework plugins
    need."""
    result = deep_copy(job)
    job_spec = result.get("spec")
    if not isinstance(job_spec, dict):
        job_spec = {}
        result["spec"] = job_spec
    if not text(job_spec.get("queue")):
        job_spec["queue"] = DEFAULT_QUEUE
    if not text(job_spec.get("schedulerName")):
        job_spec["schedulerName"] = scheduler_name
    if not integer(job_spec.get("maxRetry")):
        job_spec["maxRetry"] = DEFAULT_MAX_RETRY
    tasks = job_spec.get("tasks")
    task_list = [t for t in tasks if isinstance(t, dict)] if isinstance(tasks, list) else []
    for index, task in enumerate(task_list):
        _default_task(task, index)
    if not integer(job_spec.get("minAvailable")):
        job_spec["minAvailable"] = sum(integer(t.get("minAvailable")) for t in task_list)
    plugins = job_spec.get("plugins")
    if isinstance(plugins, dict):
        if any(p in plugins for p in _NEEDS_SVC):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
    return result


def mutate_queue(queue: Mapping[str, Any]) -> dict[str, Any]:
    """``mutate_queue.go`` on create: a hierarchy path not starting at ``root`` gets ``root/``
    (and its weights ``1/``); ``reclaimable`` defaults to true and ``weight`` to 1."""
    result = deep_copy(queue)
    metadata = result.setdefault("metadata", {})
    annotations = metadata.get("annotations")
    if isinstance(annotations, dict):
        hierarchy = text(annotations.get(HIERARCHY_ANNOTATION))
        weights = text(annotations.get(HIERARCHY_WEIGHTS_ANNOTATION))
        if hierarchy and weights and not hierarchy.startswith("root"):
            annotations[HIERARCHY_ANNOTATION] = f"root/{hierarchy}"
            annotations[HIERARCHY_WEIGHTS_ANNOTATION] = f"1/{weights}"
    queue_spec = result.get("spec")
    if not isinstance(queue_spec, dict):
        queue_spec = {}
        result["spec"] = queue_spec
    if queue_spec.get("reclaimable") is None:
        queue_spec["reclaimable"] = True
    if not integer(queue_spec.get("weight")):
        queue_spec["weight"] = 1
    return result


def mutate_pod_group(
    pod_group: Mapping[str, Any], namespace_annotations: Mapping[str, str] | None
) -> dict[str, Any]:
    """``mutate_podgroup.go`` on create: a group left in the ``default`` queue goes to the
    queue its namespace names in ``scheduling.volcano.sh/queue-name``. An empty queue is the
    CRD default ``default`` and is written out."""
    result = deep_copy(pod_group)
    pg_spec = result.get("spec")
    if not isinstance(pg_spec, dict):
        pg_spec = {}
        result["spec"] = pg_spec
    queue = text(pg_spec.get("queue")) or DEFAULT_QUEUE
    if queue == DEFAULT_QUEUE:
        queue = (namespace_annotations or {}).get(QUEUE_NAME_ANNOTATION, queue)
    pg_spec["queue"] = queue
    return result
