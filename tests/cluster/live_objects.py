"""The bare pods the device and topology cluster tests create, and what they read back from
them (node, annotations, pending reason) through the API server."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from test_scheduler_process import SchedulerProcess, list_pods, wait_until

from e2e.controlplane import ControlPlane

# A kwok node's plain capacity, to which a test adds its devices.
KWOK_BASE = {"cpu": "32", "memory": "64Gi", "pods": "110"}


def bare_pod(
    name: str,
    scheduler: str,
    resources: Mapping[str, Any],
    *,
    annotations: Mapping[str, str] | None = None,
    labels: Mapping[str, str] | None = None,
    container: str = "main",
    image: str = "busybox",
    **spec: Any,
) -> dict[str, Any]:
    """A one-container pod for ``scheduler`` (grace 0) whose container has ``resources``
    (``requests``, ``limits``, ``claims``); ``spec`` adds pod spec fields (``nodeName``,
    ``nodeSelector``, ``resourceClaims``)."""
    metadata: dict[str, Any] = {"name": name, "annotations": dict(annotations or {})}
    if labels is not None:
        metadata["labels"] = dict(labels)
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": metadata,
        "spec": {
            "schedulerName": scheduler,
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": container, "image": image, "resources": dict(resources)}],
            **spec,
        },
    }


def node_of(plane: ControlPlane, namespace: str, name: str) -> str:
    """The node the pod is bound to ("" while it is not, or does not exist)."""
    pod = list_pods(plane, namespace).get(name) or {}
    return str((pod.get("spec") or {}).get("nodeName") or "")


def annotations_of(plane: ControlPlane, namespace: str, name: str) -> dict[str, str]:
    pod = list_pods(plane, namespace).get(name) or {}
    found: dict[str, str] = (pod.get("metadata") or {}).get("annotations") or {}
    return found


def pending_reason(plane: ControlPlane, namespace: str, name: str) -> str:
    """The message of the pod's ``PodScheduled=False`` condition ("" without one)."""
    pod = list_pods(plane, namespace).get(name) or {}
    for condition in (pod.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message", ""))
    return ""


def wait_bound(
    plane: ControlPlane,
    namespace: str,
    names: list[str],
    scheduler: SchedulerProcess,
    timeout: float = 60.0,
) -> None:
    wait_until(
        f"{', '.join(names)} bound",
        lambda: all(node_of(plane, namespace, name) for name in names),
        timeout=timeout,
        diagnose=lambda: scheduler.log(60),
    )
