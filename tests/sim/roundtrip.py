"""Running ``volcano-py simulate`` in process on YAML text, and small clusters to run it on,
for the ``--format yaml`` round-trip tests."""

from __future__ import annotations

import contextlib
import io
import json
import logging
from pathlib import Path
from typing import Any

import yaml

from volcano_py.cli.main import main


def simulate_text(directory: Path, text: str, *args: str) -> tuple[int, str, str]:
    """(exit status, standard output, standard error) of ``simulate`` on ``text``."""
    path = directory / f"input-{abs(hash(text))}.yaml"
    path.write_text(text, encoding="utf-8")
    out, err = io.StringIO(), io.StringIO()
    # The command sets up root logging on standard error; a handler an earlier test left on a
    # stream since closed would write "--- Logging error ---" into this one.
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    root.handlers = []
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["simulate", str(path), *args])
    finally:
        root.handlers, root.level = handlers, level
    return code, out.getvalue(), err.getvalue()


def yaml_and_report(directory: Path, text: str, *args: str) -> tuple[str, dict[str, Any]]:
    code, listed, err = simulate_text(directory, text, "--format", "yaml", *args)
    assert code == 0, err
    code, report, err = simulate_text(directory, text, *args)
    assert code == 0, err
    return listed, json.loads(report)


def by_key(listed: str) -> dict[tuple[str, str, str], dict[str, Any]]:
    document = yaml.safe_load(listed)
    assert document["kind"] == "List" and document["apiVersion"] == "v1"
    found = {}
    for item in document["items"]:
        meta = item["metadata"]
        found[(item["kind"], meta.get("namespace", ""), meta["name"])] = item
    return found


def without_versions(obj: dict[str, Any]) -> dict[str, Any]:
    """An object minus its resourceVersion (bumped by any write, even one that changes
    nothing a person sees, as in a cluster), and minus the message of a pending pod's
    PodScheduled condition (it names the node the rotating search met first: not settled
    state, see docs/simulate.md)."""
    meta = {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}
    result = {**obj, "metadata": meta}
    status = obj.get("status")
    if obj.get("kind") == "Pod" and isinstance(status, dict) and status.get("phase") == "Pending":
        conditions = [
            {k: v for k, v in c.items() if k != "message"}
            if c.get("type") == "PodScheduled" and c.get("status") == "False"
            else c
            for c in status.get("conditions") or []
        ]
        result["status"] = {**status, "conditions": conditions}
    return result


def node(name: str, cpu: int, memory_gi: int) -> dict[str, Any]:
    allocatable = {"cpu": str(cpu), "memory": f"{memory_gi}Gi", "pods": "110"}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }


def queue(name: str, weight: int, capability_cpu: int | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"weight": weight, "reclaimable": True}
    if capability_cpu is not None:
        spec["capability"] = {"cpu": str(capability_cpu)}
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": spec,
    }


def container(cpu_milli: int, memory_mi: int) -> dict[str, Any]:
    return {
        "name": "main",
        "image": "busybox:1.36",
        "resources": {"requests": {"cpu": f"{cpu_milli}m", "memory": f"{memory_mi}Mi"}},
    }


def volcano_job(
    name: str,
    queue_name: str,
    tasks: list[tuple[int, int]],
    min_available: int,
    plugins: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """``tasks``: (replicas, cpu millis) per task."""
    spec: dict[str, Any] = {
        "minAvailable": min_available,
        "schedulerName": "volcano",
        "queue": queue_name,
        "tasks": [
            {
                "name": f"t{index}",
                "replicas": replicas,
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [container(cpu, 256)],
                    }
                },
            }
            for index, (replicas, cpu) in enumerate(tasks)
        ],
    }
    if plugins:
        spec["plugins"] = plugins
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def plain_pod(name: str, cpu_milli: int, node_name: str | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": "volcano", "containers": [container(cpu_milli, 128)]}
    if node_name:
        spec["nodeName"] = node_name
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def dump(objects: list[dict[str, Any]]) -> str:
    return yaml.safe_dump_all(objects, sort_keys=False)


def _template(labels: dict[str, str], cpu_milli: int, **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"labels": labels},
        "spec": {"schedulerName": "volcano", "containers": [container(cpu_milli, 64)], **spec},
    }


def deployment(name: str, replicas: int, cpu_milli: int) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": _template({"app": name}, cpu_milli),
        },
    }


def stateful_set(name: str, replicas: int, cpu_milli: int, parallel: bool) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "replicas": replicas,
        "serviceName": name,
        "selector": {"matchLabels": {"app": name}},
        "template": _template({"app": name}, cpu_milli),
    }
    if parallel:
        spec["podManagementPolicy"] = "Parallel"
    return {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }


def batch_job(name: str, parallelism: int, completions: int | None, cpu_milli: int):
    """A batch/v1 Job whose pods run two cycles each."""
    template = _template({}, cpu_milli, restartPolicy="Never")
    template["metadata"]["annotations"] = {"volcano-py.sim/run-cycles": "2"}
    spec: dict[str, Any] = {"parallelism": parallelism, "template": template}
    if completions is not None:
        spec["completions"] = completions
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
    }
