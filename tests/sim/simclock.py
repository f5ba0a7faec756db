"""Small builders for the simulated-clock tests: a node, a Volcano Job whose task template
carries run-time annotations, a pod from a dump, and running ``simulate`` on them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from tests.sim.roundtrip import simulate_text


def node(name: str = "n1", cpu: int = 8, gpu: int = 0) -> dict[str, Any]:
    allocatable = {"cpu": str(cpu), "memory": "64Gi", "pods": "110"}
    if gpu:
        allocatable["nvidia.com/gpu"] = str(gpu)
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"allocatable": allocatable},
    }


def container(cpu: int = 1, gpu: int = 0) -> dict[str, Any]:
    requests = {"cpu": str(cpu)}
    if gpu:
        requests["nvidia.com/gpu"] = str(gpu)
    return {"name": "c", "image": "busybox", "resources": {"requests": requests}}


def job(
    name: str,
    annotations: dict[str, str] | None = None,
    *,
    replicas: int = 1,
    cpu: int = 1,
    gpu: int = 0,
    policies: list[dict[str, Any]] | None = None,
    queue: str | None = None,
    namespace: str = "default",
    **spec: Any,
) -> dict[str, Any]:
    template: dict[str, Any] = {
        "spec": {"restartPolicy": "Never", "containers": [container(cpu, gpu)]}
    }
    if annotations:
        template["metadata"] = {"annotations": annotations}
    job_spec: dict[str, Any] = {
        "schedulerName": "volcano",
        "minAvailable": replicas,
        "tasks": [{"name": "w", "replicas": replicas, "template": template}],
        **spec,
    }
    if policies:
        job_spec["policies"] = policies
    if queue:
        job_spec["queue"] = queue
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": namespace},
        "spec": job_spec,
    }


def running_pod(
    name: str,
    node_name: str,
    start_time: str | None,
    annotations: dict[str, str] | None = None,
    cpu: int = 1,
    gpu: int = 0,
) -> dict[str, Any]:
    """A pod as a cluster dump holds it: bound, Running, with its start time."""
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "volcano",
            "nodeName": node_name,
            "containers": [container(cpu, gpu)],
        },
        "status": {"phase": "Running"},
    }
    if start_time is not None:
        pod["status"]["startTime"] = start_time
    if annotations:
        pod["metadata"]["annotations"] = annotations
    return pod


def simulate(tmp_path: Path, objects: list[dict[str, Any]], *args: str) -> dict[str, Any]:
    """The JSON report; the run must succeed."""
    code, out, err = simulate_text(tmp_path, yaml.safe_dump_all(objects), *args)
    assert code == 0, err
    report: dict[str, Any] = json.loads(out)
    return report


def simulate_yaml(tmp_path: Path, objects: list[dict[str, Any]], *args: str) -> dict[str, Any]:
    """The ``--format yaml`` output's objects by (kind, name)."""
    code, out, err = simulate_text(tmp_path, yaml.safe_dump_all(objects), "--format", "yaml", *args)
    assert code == 0, err
    document = yaml.safe_load(out)
    return {(item["kind"], item["metadata"]["name"]): item for item in document["items"]}


def refused(tmp_path: Path, objects: list[dict[str, Any]], *args: str) -> str:
    """Standard error of a run that must exit 2 (without a traceback)."""
    code, _out, err = simulate_text(tmp_path, yaml.safe_dump_all(objects), *args)
    assert code == 2, err
    assert "Traceback" not in err
    return err
