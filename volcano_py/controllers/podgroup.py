"""The PodGroup controller: a PodGroup for every pod of ours that has none, so plain pods and
workloads (Deployments, StatefulSets, batch Jobs) are gang-scheduled too
(``pkg/controllers/podgroup/``)."""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Mapping
from typing import Any, Final

from volcano_py.api.types import (
    DEFAULT_QUEUE,
    DEFAULT_SCHEDULER_NAME,
    GROUP_MIN_MEMBER_ANNOTATION,
    GROUP_NAME_ANNOTATION,
    NETWORK_TOPOLOGY_HIGHEST_TIER_ANNOTATION,
    NETWORK_TOPOLOGY_MODE_ANNOTATION,
    PREEMPTABLE_KEY,
    QUEUE_NAME_ANNOTATION,
    REVOCABLE_ZONE_KEY,
)
from volcano_py.controllers.quota import min_resources
from volcano_py.controllers.raw import (
    Raw,
    annotations_of,
    controller_of,
    controller_reference,
    items,
    labels_of,
    metadata,
    namespace,
    spec,
    text,
    uid,
)
from volcano_py.controllers.vocabulary import (
    COOLDOWN_TIME_KEY,
    JDB_MAX_UNAVAILABLE_KEY,
    JDB_MIN_AVAILABLE_KEY,
    PODGROUP_NAME_PREFIX,
    SCHEDULING_API_VERSION,
    VOLCANO_ANNOTATION_PREFIX,
    PodGroupPhase,
)

# Owners whose group-min-member annotation sets the gang size (the kinds upstream looks up).
_WORKLOAD_KINDS: Final = frozenset({"ReplicaSet", "DaemonSet", "StatefulSet"})
_MODES: Final = frozenset({"hard", "soft"})


def pod_group_name_for_pod(pod: Raw) -> str:
    """``GeneratePodgroupName``: ``podgroup-<controller owner uid>``, else the pod's uid."""
    owner = controller_of(pod)
    if owner is not None:
        return PODGROUP_NAME_PREFIX + text(owner.get("uid"))
    return PODGROUP_NAME_PREFIX + uid(pod)


def _is_workload(owner: Raw) -> bool:
    kind = text(owner.get("kind"))
    if kind in _WORKLOAD_KINDS:
        return True
    # Only a Kubernetes batch Job: a Volcano Job makes its own PodGroup.
    return kind == "Job" and text(owner.get("apiVersion")).startswith("batch/")


def _min_member(owner_annotations: Mapping[str, str]) -> int:
    """The owner's ``group-min-member``; 1 when absent, not a number or negative."""
    raw = owner_annotations.get(GROUP_MIN_MEMBER_ANNOTATION)
    if raw is None:
        return 1
    try:
        value = int(raw, 10)
    except ValueError:
        return 1
    return value if 0 <= value < 2**31 else 1


def network_topology_from_pod(pod: Raw) -> dict[str, Any] | None:
    """``parseNetworkTopologyFromPod``: mode (``hard`` unless a valid ``soft``) and highest
    tier from the pod's annotations; None when it has neither."""
    pod_annotations = annotations_of(pod)
    mode = pod_annotations.get(NETWORK_TOPOLOGY_MODE_ANNOTATION)
    tier = pod_annotations.get(NETWORK_TOPOLOGY_HIGHEST_TIER_ANNOTATION)
    if mode is None and tier is None:
        return None
    topology: dict[str, Any] = {"mode": "hard"}
    if mode is not None and mode.lower() in _MODES:
        topology["mode"] = mode.lower()
    if tier is not None:
        # A tier that is not a number is ignored (upstream logs it and leaves it unset).
        with contextlib.suppress(ValueError):
            topology["highestTierAllowed"] = int(tier, 10)
    return topology


def _owner_references(pod: Raw) -> list[Any]:
    if controller_of(pod) is not None:
        return list(items(metadata(pod).get("ownerReferences")))
    return [controller_reference(pod, "v1", "Pod")]


def build_pod_group_for_pod(
    pod: Raw, owner: Raw | None, inherit_owner_annotations: bool = True
) -> dict[str, Any]:
    """``buildPodGroupFromPod``: the group a plain pod (or its workload) is scheduled as."""
    owner_annotations = annotations_of(owner) if owner is not None and _is_workload(owner) else {}
    min_member = _min_member(owner_annotations) if inherit_owner_annotations else 1
    pg_annotations: dict[str, str] = {}
    pg_labels: dict[str, str] = {}
    if inherit_owner_annotations:
        pg_annotations.update(
            (k, v) for k, v in owner_annotations.items() if k.startswith(VOLCANO_ANNOTATION_PREFIX)
        )
    pod_annotations = annotations_of(pod)
    pod_labels = labels_of(pod)
    # The pod's own settings override what the owner passed down.
    for key in (PREEMPTABLE_KEY, COOLDOWN_TIME_KEY, REVOCABLE_ZONE_KEY):
        if key in pod_annotations:
            pg_annotations[key] = pod_annotations[key]
    for key in (PREEMPTABLE_KEY, COOLDOWN_TIME_KEY):
        if key in pod_labels:
            pg_labels[key] = pod_labels[key]
    if JDB_MIN_AVAILABLE_KEY in pod_annotations:
        pg_annotations[JDB_MIN_AVAILABLE_KEY] = pod_annotations[JDB_MIN_AVAILABLE_KEY]
    elif JDB_MAX_UNAVAILABLE_KEY in pod_annotations:
        pg_annotations[JDB_MAX_UNAVAILABLE_KEY] = pod_annotations[JDB_MAX_UNAVAILABLE_KEY]

    pg_spec: dict[str, Any] = {
        "minMember": min_member,
        "minResources": min_resources(pod, min_member),
        # The CRD default, written out since no API server fills it in offline.
        "queue": pod_annotations.get(QUEUE_NAME_ANNOTATION, DEFAULT_QUEUE),
    }
    priority_class = text(spec(pod).get("priorityClassName"))
    if priority_class:
        pg_spec["priorityClassName"] = priority_class
    topology = network_topology_from_pod(pod)
    if topology is not None:
        pg_spec["networkTopology"] = topology

    pg_metadata: dict[str, Any] = {
        "name": pod_group_name_for_pod(pod),
        "namespace": namespace(pod),
        "ownerReferences": _owner_references(pod),
    }
    if pg_annotations:
        pg_metadata["annotations"] = pg_annotations
    if pg_labels:
        pg_metadata["labels"] = pg_labels
    return {
        "apiVersion": SCHEDULING_API_VERSION,
        "kind": "PodGroup",
        "metadata": pg_metadata,
        "spec": pg_spec,
        "status": {"phase": PodGroupPhase.PENDING.value},
    }


def pod_group_for_pod(
    pod: Mapping[str, Any],
    owner: Mapping[str, Any] | None,
    scheduler_names: Collection[str],
) -> tuple[dict[str, Any], dict[str, str]] | None:
    """For a pod of ours (its scheduler is one of ``scheduler_names``) without the
    ``scheduling.k8s.io/group-name`` annotation: the PodGroup to create (if absent) and the
    annotations to patch onto the pod. None when the pod needs nothing.

    ``owner`` is the pod's controlling object (ReplicaSet, StatefulSet, DaemonSet, batch Job)
    when the caller has it. A pod without ``spec.schedulerName`` counts as Volcano's, as the
    simulated cluster defines it (the API server always fills the field in live).
    """
    scheduler = text(spec(pod).get("schedulerName")) or DEFAULT_SCHEDULER_NAME
    if scheduler not in scheduler_names:
        return None
    if annotations_of(pod).get(GROUP_NAME_ANNOTATION):
        return None
    pod_group = build_pod_group_for_pod(pod, owner)
    return pod_group, {GROUP_NAME_ANNOTATION: pod_group["metadata"]["name"]}
