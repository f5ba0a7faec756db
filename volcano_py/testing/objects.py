"""Raw Kubernetes objects for tests, shaped like upstream's fixtures (``util.BuildPod`` & co.).

Every builder returns a plain dict, exactly what a watch or ``kubectl get -o yaml`` gives, so
tests go through the same conversion code as the live scheduler.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

GROUP = "scheduling.k8s.io/group-name"
"""The pod annotation naming its PodGroup."""


def resource_list(
    cpu: str | None = None, memory: str | None = None, **scalars: str
) -> dict[str, str]:
    """``api.BuildResourceList``: ``resource_list("1", "1G", pods="10")``; scalar names with
    dots or slashes go through ``**{"nvidia.com/gpu": "1"}``."""
    result: dict[str, str] = {}
    if cpu is not None:
        result["cpu"] = cpu
    if memory is not None:
        result["memory"] = memory
    result.update(scalars)
    return result


def build_node(
    name: str,
    allocatable: Mapping[str, str],
    labels: Mapping[str, str] | None = None,
    *,
    taints: list[dict[str, Any]] | None = None,
    unschedulable: bool = False,
    annotations: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """``util.BuildNode``: capacity = allocatable."""
    spec: dict[str, Any] = {}
    if taints:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": dict(labels or {}),
            "annotations": dict(annotations or {}),
        },
        "spec": spec,
        "status": {"allocatable": dict(allocatable), "capacity": dict(allocatable)},
    }


def build_pod(
    namespace: str,
    name: str,
    node_name: str,
    phase: str,
    requests: Mapping[str, str],
    group: str,
    labels: Mapping[str, str] | None = None,
    node_selector: Mapping[str, str] | None = None,
    *,
    priority: int | None = None,
    annotations: Mapping[str, str] | None = None,
    preemption_policy: str | None = None,
    scheduler_name: str = "volcano",
    creation_timestamp: str = "",
    affinity: Mapping[str, Any] | None = None,
    tolerations: list[dict[str, Any]] | None = None,
    priority_class_name: str = "",
    ports: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """``util.BuildPod``: UID ``<ns>-<name>``, one container with ``requests``, the PodGroup
    annotation when ``group`` is given."""
    pod_annotations = dict(annotations or {})
    if group:
        pod_annotations[GROUP] = group
    container: dict[str, Any] = {
        "name": "main",
        "image": "busybox",
        "resources": {"requests": dict(requests)},
    }
    if ports:
        container["ports"] = ports
    spec: dict[str, Any] = {"schedulerName": scheduler_name, "containers": [container]}
    if node_name:
        spec["nodeName"] = node_name
    if node_selector:
        spec["nodeSelector"] = dict(node_selector)
    if priority is not None:
        spec["priority"] = priority
    if preemption_policy:
        spec["preemptionPolicy"] = preemption_policy
    if affinity:
        spec["affinity"] = dict(affinity)
    if tolerations:
        spec["tolerations"] = tolerations
    if priority_class_name:
        spec["priorityClassName"] = priority_class_name
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": f"{namespace}-{name}",
        "labels": dict(labels or {}),
        "annotations": pod_annotations,
    }
    if creation_timestamp:
        metadata["creationTimestamp"] = creation_timestamp
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": phase},
    }


def build_pod_group(
    name: str,
    namespace: str,
    queue: str,
    min_member: int,
    min_task_member: Mapping[str, int] | None = None,
    phase: str = "Inqueue",
    *,
    priority_class_name: str = "",
    min_resources: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    creation_timestamp: str = "",
    network_topology: Mapping[str, Any] | None = None,
    sub_group_policy: Sequence[Mapping[str, Any]] | None = None,
) -> dict[str, Any]:
    """``util.BuildPodGroup`` (+ WithPrio / WithMinResources / WithSubGroupPolicy variants via
    keywords)."""
    spec: dict[str, Any] = {"queue": queue, "minMember": min_member}
    if min_task_member:
        spec["minTaskMember"] = dict(min_task_member)
    if priority_class_name:
        spec["priorityClassName"] = priority_class_name
    if min_resources is not None:
        spec["minResources"] = dict(min_resources)
    if network_topology is not None:
        spec["networkTopology"] = dict(network_topology)
    if sub_group_policy is not None:
        spec["subGroupPolicy"] = [dict(policy) for policy in sub_group_policy]
    metadata: dict[str, Any] = {
        "name": name,
        "namespace": namespace,
        "uid": f"{namespace}-{name}",
        "annotations": dict(annotations or {}),
        "labels": dict(labels or {}),
    }
    if creation_timestamp:
        metadata["creationTimestamp"] = creation_timestamp
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": metadata,
        "spec": spec,
        "status": {"phase": phase},
    }


def build_sub_group_policy(
    name: str,
    match_label_keys: Sequence[str],
    mode: str = "",
    highest_tier_allowed: int = 0,
    sub_group_size: int = 1,
    min_sub_groups: int = 0,
) -> dict[str, Any]:
    """``util.BuildSubGroupPolicyWithMinSubGroups`` (and its shorter variants): a network
    topology only when ``mode`` is given."""
    policy: dict[str, Any] = {
        "name": name,
        "subGroupSize": sub_group_size,
        "minSubGroups": min_sub_groups,
        "matchLabelKeys": list(match_label_keys),
    }
    if mode:
        policy["networkTopology"] = {"mode": mode, "highestTierAllowed": highest_tier_allowed}
    return policy


def build_queue(
    name: str,
    weight: int = 1,
    capability: Mapping[str, str] | None = None,
    *,
    deserved: Mapping[str, str] | None = None,
    guarantee: Mapping[str, str] | None = None,
    state: str = "Open",
    reclaimable: bool | None = None,
    priority: int | None = None,
    parent: str = "",
    annotations: Mapping[str, str] | None = None,
    creation_timestamp: str = "",
) -> dict[str, Any]:
    """``util.BuildQueue`` / ``BuildQueueWithResourcesQuantity`` / ``MakeQueue``."""
    spec: dict[str, Any] = {"weight": weight}
    if capability:
        spec["capability"] = dict(capability)
    if deserved:
        spec["deserved"] = dict(deserved)
    if guarantee:
        spec["guarantee"] = {"resource": dict(guarantee)}
    if reclaimable is not None:
        spec["reclaimable"] = reclaimable
    if priority is not None:
        spec["priority"] = priority
    if parent:
        spec["parent"] = parent
    metadata: dict[str, Any] = {"name": name, "annotations": dict(annotations or {})}
    if creation_timestamp:
        metadata["creationTimestamp"] = creation_timestamp
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": metadata,
        "spec": spec,
        "status": {"state": state},
    }


def build_priority_class(name: str, value: int, global_default: bool = False) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        "globalDefault": global_default,
    }
