"""Running ``volcano-py simulate`` on a user guide's scenario, written by the test itself.

Each test in this package rebuilds one of Volcano's user guides (``docs/user-guide`` upstream)
from the project's own fixtures: the objects are made here, never copied from upstream's files.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.sim.roundtrip import by_key, dump, simulate_text

# (kind, namespace, name) -> the object as simulate left it.
Objects = dict[tuple[str, str, str], dict[str, Any]]


def node(
    name: str,
    cpu: str = "8",
    memory: str = "16Gi",
    labels: dict[str, str] | None = None,
    **scalars: str,
) -> dict[str, Any]:
    allocatable = {"cpu": cpu, "memory": memory, "pods": "110", **scalars}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name, **(labels or {})}},
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }


def container(name: str = "main", cpu: str | None = "1", **extra: Any) -> dict[str, Any]:
    resources = {"requests": {"cpu": cpu}} if cpu is not None else {}
    return {"name": name, "image": "busybox:1.36", "resources": resources, **extra}


def task(
    name: str,
    replicas: int,
    cpu: str | None = "1",
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """One task of a Volcano Job; ``policies`` and ``minAvailable`` go to the task, the rest
    of ``spec`` into its pod template's spec, ``annotations`` on the template (simulate's
    ``volcano-py.sim/*`` run annotations among them)."""
    own = {k: spec.pop(k) for k in ("policies", "minAvailable") if k in spec}
    template: dict[str, Any] = {
        "spec": {"restartPolicy": "Never", "containers": [container(name, cpu)], **spec}
    }
    if annotations:
        template["metadata"] = {"annotations": annotations}
    return {"name": name, "replicas": replicas, **own, "template": template}


def vcjob(name: str, tasks: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedulerName": "volcano", "tasks": tasks, **spec},
    }


def vqueue(name: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"reclaimable": True, **spec},
    }


def conf_map(conf: str) -> dict[str, Any]:
    """The ConfigMap Volcano's scheduler reads its conf from."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
        "data": {"volcano-scheduler.conf": conf},
    }


def simulate(
    directory: Path, objects: list[dict[str, Any]], *args: str
) -> tuple[dict[str, Any], Objects, str]:
    """(the JSON report, the final objects, standard error) of one run on ``objects``."""
    text = dump(objects)
    code, listed, err = simulate_text(directory, text, "--format", "yaml", *args)
    assert code == 0, err
    code, report, err = simulate_text(directory, text, *args)
    assert code == 0, err
    return json.loads(report), by_key(listed), err


def then(
    directory: Path, before: Objects, added: list[dict[str, Any]], *args: str
) -> dict[str, Any]:
    """The report of a guide's second step: the cluster a first run left, plus what the user
    adds (one run: the final objects are not needed)."""
    code, report, err = simulate_text(directory, dump([*before.values(), *added]), *args)
    assert code == 0, err
    result: dict[str, Any] = json.loads(report)
    return result


def deployment(
    name: str, replicas: int, cpu: str, memory: str, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    template: dict[str, Any] = {
        "metadata": {"labels": {"app": name}},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "main",
                    "image": "nginx",
                    "resources": {"requests": {"cpu": cpu, "memory": memory}},
                }
            ],
        },
    }
    if annotations:
        template["metadata"]["annotations"] = annotations
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": template,
        },
    }


def bare_pod(
    name: str, cpu: str, memory: str = "1Gi", annotations: dict[str, str] | None = None, **spec: Any
) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations:
        meta["annotations"] = annotations
    resources = {"requests": {"cpu": cpu, "memory": memory}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": meta,
        "spec": {
            "schedulerName": "volcano",
            "containers": [{"name": "main", "image": "nginx", "resources": resources}],
            **spec,
        },
    }


def count(report: dict[str, Any], prefix: str, phase: str) -> int:
    """How many pods of the report whose name starts with ``prefix`` are in ``phase``."""
    return sum(
        1
        for key, entry in report["pods"].items()
        if key.split("/", 1)[1].startswith(prefix) and entry["phase"] == phase
    )


def pod(objects: Objects, name: str, namespace: str = "default") -> dict[str, Any]:
    return objects[("Pod", namespace, name)]


def env_of(pod_object: dict[str, Any], container_index: int = 0) -> dict[str, str]:
    container_spec = pod_object["spec"]["containers"][container_index]
    return {item["name"]: item.get("value", "") for item in container_spec.get("env") or []}


def placements(report: dict[str, Any]) -> dict[str, str | None]:
    """``namespace/pod`` -> its node (None while pending), as simulate reports them."""
    return {name: entry.get("node") for name, entry in report["pods"].items()}


def pending_reason(objects: Objects, name: str, namespace: str = "default") -> str:
    """The message of a pending pod's ``PodScheduled=False`` condition (why it waits)."""
    conditions = (pod(objects, name, namespace).get("status") or {}).get("conditions") or []
    for condition in conditions:
        if condition.get("type") == "PodScheduled" and condition.get("status") == "False":
            return str(condition.get("message", ""))
    return ""
