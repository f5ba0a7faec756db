"""The PodGroup a Volcano Job is scheduled as (``job_controller_actions.go``
``createOrUpdatePodGroup``, ``calcPGMinResources``; ``job_controller_util.go``
``TasksPriority``)."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from volcano_py.api.types import TASK_SPEC_KEY
from volcano_py.controllers.job_pods import pod_group_name
from volcano_py.controllers.quota import QuotaList, add_into, format_list, lists_equal, scaled
from volcano_py.controllers.quota import pod_quota_usage as _usage
from volcano_py.controllers.raw import (
    Raw,
    annotations_of,
    controller_reference,
    integer,
    items,
    labels_of,
    mapping,
    namespace,
    optional_int,
    spec,
    text,
)
from volcano_py.controllers.vocabulary import (
    BATCH_API_VERSION,
    PARTITION_ID_KEY,
    SCHEDULING_API_VERSION,
)


def tasks_of(job: Raw) -> list[Raw]:
    return [mapping(task) for task in items(spec(job).get("tasks"))]


def task_min_available(task: Raw) -> int:
    """A task's minAvailable, or its replicas when unset (admission sets it on create)."""
    explicit = optional_int(task.get("minAvailable"))
    return explicit if explicit is not None else integer(task.get("replicas"))


def min_task_member(task: Raw) -> int:
    """``getMinTaskMember``: minAvailable, else minPartitions x partitionSize, else replicas."""
    explicit = optional_int(task.get("minAvailable"))
    if explicit is not None:
        return explicit
    partition = mapping(task.get("partitionPolicy"))
    min_partitions = integer(partition.get("minPartitions"))
    size = integer(partition.get("partitionSize"))
    if min_partitions and size:
        return min_partitions * size
    return integer(task.get("replicas"))


def _template_usage(task: Raw) -> QuotaList:
    return _usage({"spec": spec(mapping(task.get("template")))})


def tasks_by_priority(job: Raw, priority_classes: Mapping[str, int]) -> list[Raw]:
    """Tasks by their template's PriorityClass value, highest first; an unknown or absent
    class counts 0. Stable, like Go's insertion sort on the few tasks a job has."""

    def value(task: Raw) -> int:
        class_name = text(spec(mapping(task.get("template"))).get("priorityClassName"))
        return priority_classes.get(class_name, 0) if class_name else 0

    return sorted(tasks_of(job), key=lambda task: -value(task))


def first_count_resources(tasks: list[Raw], count: int) -> QuotaList:
    """``CalcFirstCountResources``: the first ``count`` pods in task order."""
    total: QuotaList = {}
    for task in tasks:
        replicas = integer(task.get("replicas"))
        if count <= replicas:
            add_into(total, scaled(_template_usage(task), count))
            break
        add_into(total, scaled(_template_usage(task), replicas))
        count -= replicas
    return total


def min_then_fill_resources(tasks: list[Raw], job_min_available: int) -> QuotaList:
    """``CalcPGMinResources``: every task's minAvailable first, then the remaining replicas of
    the higher-priority tasks until the job's minAvailable is reached."""
    total: QuotaList = {}
    counted = 0
    for task in tasks:
        explicit = optional_int(task.get("minAvailable"))
        if explicit is None:
            continue
        take = min(explicit, job_min_available - counted)
        add_into(total, scaled(_template_usage(task), take))
        counted += take
        if counted >= job_min_available:
            break
    if counted >= job_min_available:
        return total
    left = job_min_available - counted
    for task in tasks:
        replicas = integer(task.get("replicas"))
        explicit = optional_int(task.get("minAvailable"))
        spare = replicas
        if explicit is not None:
            if explicit == replicas:
                continue
            spare = replicas - explicit
        take = spare if left >= spare else left
        add_into(total, scaled(_template_usage(task), take))
        left -= take
        if left <= 0:
            break
    return total


def calc_pg_min_resources(
    job: Mapping[str, Any], priority_classes: Mapping[str, int] | None = None
) -> dict[str, str]:
    """What the gang needs to start: the resource quota usage of the job's first
    ``minAvailable`` pods, higher-priority tasks first."""
    classes = priority_classes or {}
    tasks = tasks_by_priority(job, classes)
    job_min = integer(spec(job).get("minAvailable"))
    total_task_min = sum(task_min_available(task) for task in tasks)
    if job_min < total_task_min:
        return format_list(first_count_resources(tasks, job_min))
    return format_list(min_then_fill_resources(tasks, job_min))


def _network_topology(source: Raw, *, copy_all: bool) -> dict[str, Any]:
    topology: dict[str, Any] = {}
    if text(source.get("mode")):
        topology["mode"] = text(source.get("mode"))
    tier = optional_int(source.get("highestTierAllowed"))
    if tier is not None:
        topology["highestTierAllowed"] = tier
    # The job-level copy takes one of the two; a partition's copies both (admission keeps
    # them exclusive anyway).
    if text(source.get("highestTierName")) and (copy_all or tier is None):
        topology["highestTierName"] = text(source.get("highestTierName"))
    return topology


def sub_group_policy(task: Raw) -> dict[str, Any]:
    """``getSubGroupPolicy``: a partitioned task's partitions become sub-gangs."""
    partition = mapping(task.get("partitionPolicy"))
    task_name = text(task.get("name"))
    policy: dict[str, Any] = {
        "name": task_name,
        "subGroupSize": integer(partition.get("partitionSize")),
        "minSubGroups": integer(partition.get("minPartitions")),
        "labelSelector": {"matchLabels": {TASK_SPEC_KEY: task_name}},
        "matchLabelKeys": [PARTITION_ID_KEY],
    }
    topology = partition.get("networkTopology")
    if isinstance(topology, Mapping):
        policy["networkTopology"] = _network_topology(topology, copy_all=True)
    return policy


def sub_group_policies(job: Raw) -> list[dict[str, Any]]:
    return [
        sub_group_policy(t) for t in tasks_of(job) if isinstance(t.get("partitionPolicy"), Mapping)
    ]


def build_pod_group(
    job: Mapping[str, Any], priority_classes: Mapping[str, int] | None = None
) -> dict[str, Any]:
    """The PodGroup ``<job>-<uid>`` for a job that has none."""
    job_spec = spec(job)
    pg_spec: dict[str, Any] = {
        "minMember": integer(job_spec.get("minAvailable")),
        "minTaskMember": {text(t.get("name")): min_task_member(t) for t in tasks_of(job)},
        "queue": text(job_spec.get("queue")),
        "minResources": calc_pg_min_resources(job, priority_classes),
    }
    if text(job_spec.get("priorityClassName")):
        pg_spec["priorityClassName"] = text(job_spec.get("priorityClassName"))
    topology = job_spec.get("networkTopology")
    if isinstance(topology, Mapping):
        pg_spec["networkTopology"] = _network_topology(topology, copy_all=False)
    policies = sub_group_policies(job)
    if policies:
        pg_spec["subGroupPolicy"] = policies
    metadata: dict[str, Any] = {
        "name": pod_group_name(job),
        "namespace": namespace(job),
        "ownerReferences": [controller_reference(job, BATCH_API_VERSION, "Job")],
    }
    if annotations_of(job):
        metadata["annotations"] = annotations_of(job)
    if labels_of(job):
        metadata["labels"] = labels_of(job)
    return {
        "apiVersion": SCHEDULING_API_VERSION,
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": pg_spec,
    }


def _update_sub_groups(pg_spec: dict[str, Any], job: Raw) -> bool:
    old = {text(mapping(p).get("name")): mapping(p) for p in items(pg_spec.get("subGroupPolicy"))}
    changed = False
    fresh = []
    for task in tasks_of(job):
        task_name = text(task.get("name"))
        if not isinstance(task.get("partitionPolicy"), Mapping):
            changed = changed or task_name in old
            continue
        policy = sub_group_policy(task)
        fresh.append(policy)
        changed = changed or old.get(task_name) != policy
    if changed:
        if fresh:
            pg_spec["subGroupPolicy"] = fresh
        else:
            pg_spec.pop("subGroupPolicy", None)
    return changed


def updated_pod_group(
    existing: Mapping[str, Any],
    job: Mapping[str, Any],
    priority_classes: Mapping[str, int] | None = None,
) -> dict[str, Any] | None:
    """``shouldUpdateExistingPodGroup``: the existing group with the fields a job update may
    change (priority class, minMember, minResources, minTaskMember, sub-groups) brought up to
    date, or None when they already are. Queue and network topology are not revisited."""
    pod_group = copy.deepcopy(dict(existing))
    pg_spec: dict[str, Any] = dict(mapping(pod_group.get("spec")))
    job_spec = spec(job)
    changed = False

    priority_class = text(job_spec.get("priorityClassName"))
    if text(pg_spec.get("priorityClassName")) != priority_class:
        if priority_class:
            pg_spec["priorityClassName"] = priority_class
        else:
            pg_spec.pop("priorityClassName", None)
        changed = True

    min_member = integer(job_spec.get("minAvailable"))
    min_resources = calc_pg_min_resources(job, priority_classes)
    old_min = integer(pg_spec.get("minMember"))
    if old_min != min_member or not lists_equal(pg_spec.get("minResources"), min_resources):
        pg_spec["minMember"] = min_member
        pg_spec["minResources"] = min_resources
        changed = True

    raw_members = pg_spec.get("minTaskMember")
    members = {str(k): integer(v) for k, v in mapping(raw_members).items()}
    if not isinstance(raw_members, Mapping):
        changed = True
    for task in tasks_of(job):
        wanted = min_task_member(task)
        if members.get(text(task.get("name"))) != wanted:
            members[text(task.get("name"))] = wanted
            changed = True
    pg_spec["minTaskMember"] = members

    if _update_sub_groups(pg_spec, job):
        changed = True
    if not changed:
        return None
    pod_group["spec"] = pg_spec
    return pod_group
