"""The Kubernetes objects the in-process benchmarks feed the cache, as a watch delivers them:
all in namespace ``bench``, created at one fixed time (so every run orders them alike)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from volcano_py.cache.cache import SchedulerCache

NAMESPACE = "bench"
CREATED = "2026-01-01T00:00:00Z"


def node(name: str, cpu: str, memory: str) -> dict[str, Any]:
    return {
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": memory, "pods": "110"}},
    }


def queue(name: str) -> dict[str, Any]:
    return {
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "reclaimable": True},
        "status": {"state": "Open"},
    }


def pod_group(
    name: str, min_member: int, phase: str, queue: str = "default", priority_class: str = ""
) -> dict[str, Any]:
    spec: dict[str, Any] = {"queue": queue, "minMember": min_member}
    if priority_class:
        spec["priorityClassName"] = priority_class
    return {
        "kind": "PodGroup",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"pg-{name}",
            "creationTimestamp": CREATED,
        },
        "spec": spec,
        "status": {"phase": phase},
    }


def pod(
    name: str, group: str, cpu: str = "1", node: str = "", priority: int | None = None
) -> dict[str, Any]:
    """A 1Gi pod of ``group``: Running on ``node``, or Pending without one."""
    spec: dict[str, Any] = {
        "schedulerName": "volcano",
        "containers": [{"name": "c", "resources": {"requests": {"cpu": cpu, "memory": "1Gi"}}}],
    }
    if priority is not None:
        spec["priority"] = priority
    if node:
        spec["nodeName"] = node
    return {
        "kind": "Pod",
        "metadata": {
            "name": name,
            "namespace": NAMESPACE,
            "uid": f"uid-{name}",
            "annotations": {"scheduling.k8s.io/group-name": group},
            "creationTimestamp": CREATED,
        },
        "spec": spec,
        "status": {"phase": "Running" if node else "Pending"},
    }


def add_pending_gangs(
    cache: SchedulerCache,
    gangs: int,
    gang_size: int,
    make_pod: Callable[[str, str, int], dict[str, Any]] = lambda name, group, _: pod(name, group),
    prefix: str = "gang",
) -> None:
    """``gangs`` Inqueue PodGroups ``<prefix>-NNN`` of ``gang_size`` pending pods each,
    ``make_pod(<group>-worker-<t>, group, gang index)``, added to ``cache`` group by group."""
    for g in range(gangs):
        group = f"{prefix}-{g:03d}"
        cache.apply_event("PodGroup", "ADDED", pod_group(group, gang_size, "Inqueue"))
        for t in range(gang_size):
            cache.apply_event("Pod", "ADDED", make_pod(f"{group}-worker-{t}", group, g))
