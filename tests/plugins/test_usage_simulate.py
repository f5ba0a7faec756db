"""The usage plugin through ``volcano-py simulate``: node load comes from the documented
``volcano-py.sim/cpu-usage`` / ``memory-usage`` annotations (``sim/node_usage.py``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli.main import main

CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: usage
    arguments:
      thresholds:
        cpu: 80
        mem: 80
"""


def node(name: str, cpu: str | None, memory: str | None) -> dict[str, Any]:
    annotations = {}
    if cpu is not None:
        annotations["volcano-py.sim/cpu-usage"] = cpu
    if memory is not None:
        annotations["volcano-py.sim/memory-usage"] = memory
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "annotations": annotations},
        "status": {"allocatable": {"cpu": "8", "memory": "16Gi", "pods": "20"}},
    }


def pod(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "c",
                    "image": "x",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                }
            ],
        },
    }


def write(tmp_path: Path, documents: list[dict[str, Any]]) -> Path:
    conf_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
        "data": {"volcano-scheduler.conf": CONF},
    }
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all([conf_map, *documents]))
    return path


def test_pods_avoid_the_hot_node_and_prefer_the_idle_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(
        tmp_path,
        [
            node("hot", "95", "20"),
            node("warm", "50", "50"),
            node("cool", "10", "10"),
            node("unmeasured", None, None),
            pod("first"),
        ],
    )
    assert main(["simulate", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["binds"] == {"default/first": "cool"}


def test_all_nodes_over_the_threshold_leave_the_pod_pending_saying_why(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [node("hot", "95", "20"), node("full", "20", "90"), pod("first")])
    assert main(["simulate", str(path)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["binds"] == {}
    reason = next(iter(report["unschedulable"].values()))
    assert "the CPU load of the node exceeds the upper limit." in reason
    assert "the memory load of the node exceeds the upper limit." in reason


def test_a_bad_usage_annotation_is_refused_naming_the_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, [node("hot", "lots", None)])
    assert main(["simulate", str(path)]) == 2
    error = capsys.readouterr().err
    assert "Node hot" in error
    assert "metadata.annotations.volcano-py.sim/cpu-usage" in error
