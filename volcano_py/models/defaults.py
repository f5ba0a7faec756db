"""What Volcano's mutating webhooks add to a Job or Queue on creation, for the places where
volcano-py runs without them (simulate, tests, a cluster with no webhook installed).

The models already carry the static defaults (queue ``default``, maxRetry 3, weight 1...);
these functions add the ones that depend on other fields.
"""

from __future__ import annotations

from typing import Final

from volcano_py.models.job import Job, TaskSpec
from volcano_py.models.queue import HIERARCHY_ANNOTATION, HIERARCHY_WEIGHTS_ANNOTATION, Queue

DEFAULT_SCHEDULER_NAME: Final = "volcano"
DEFAULT_MAX_RETRY: Final = 3
ROOT_QUEUE: Final = "root"

# Distributed-training plugins need the svc plugin's headless service; mpi also needs ssh.
_NEEDS_SVC: Final = ("tensorflow", "mpi", "pytorch", "ray")


def _default_task(task: TaskSpec, index: int) -> TaskSpec:
    update: dict[str, object] = {}
    if not task.name:
        update["name"] = task.effective_name(index)
    if task.min_available is None:
        partition = task.partition_policy
        # Only an explicit minPartitions sets the gang; otherwise the whole task is the gang.
        if partition is not None and partition.min_partitions > 0:
            update["min_available"] = partition.min_partitions * partition.partition_size
        else:
            update["min_available"] = task.replicas
    if task.max_retry == 0 or "max_retry" not in task.model_fields_set:
        # Upstream cannot tell an explicit 0 from "unset": both become 3.
        update["max_retry"] = task.max_retry or DEFAULT_MAX_RETRY
    pod_spec = task.template.get("spec")
    if isinstance(pod_spec, dict) and pod_spec.get("hostNetwork") and not pod_spec.get("dnsPolicy"):
        # A host-network pod would otherwise resolve with the node's DNS, not the cluster's.
        template = {**task.template, "spec": {**pod_spec, "dnsPolicy": "ClusterFirstWithHostNet"}}
        update["template"] = template
    return task.model_copy(update=update) if update else task


def default_job(job: Job, scheduler_name: str = DEFAULT_SCHEDULER_NAME) -> Job:
    """The job as Volcano's job mutating webhook would store it."""
    spec = job.spec
    tasks = [_default_task(task, index) for index, task in enumerate(spec.tasks)]
    update: dict[str, object] = {
        "tasks": tasks,
        "queue": spec.queue,
        "scheduler_name": spec.scheduler_name or scheduler_name,
        # Upstream cannot tell an explicit 0 from "unset": both become 3.
        "max_retry": spec.max_retry or DEFAULT_MAX_RETRY,
    }
    if spec.min_available == 0:
        update["min_available"] = sum(
            task.min_available if task.min_available is not None else task.replicas
            for task in tasks
        )
    if spec.plugins:
        plugins = dict(spec.plugins)
        if any(name in plugins for name in _NEEDS_SVC):
            plugins.setdefault("svc", [])
        if "mpi" in plugins:
            plugins.setdefault("ssh", [])
        update["plugins"] = plugins
    return job.model_copy(update={"spec": spec.model_copy(update=update)})


def default_queue(queue: Queue) -> Queue:
    """The queue as Volcano's queue mutating webhook would store it: weight and reclaimable
    made explicit, and hierarchy annotations rooted at ``root``."""
    spec = queue.spec.model_copy(
        update={"weight": queue.spec.weight, "reclaimable": queue.spec.reclaimable}
    )
    annotations = dict(queue.metadata.annotations)
    hierarchy = annotations.get(HIERARCHY_ANNOTATION, "")
    weights = annotations.get(HIERARCHY_WEIGHTS_ANNOTATION, "")
    if hierarchy and weights and not hierarchy.startswith(ROOT_QUEUE):
        annotations[HIERARCHY_ANNOTATION] = f"{ROOT_QUEUE}/{hierarchy}"
        annotations[HIERARCHY_WEIGHTS_ANNOTATION] = f"1/{weights}"
    metadata = queue.metadata
    if annotations != metadata.annotations:
        metadata = metadata.model_copy(update={"annotations": annotations})
    return queue.model_copy(update={"spec": spec, "metadata": metadata})
