"""rescheduling + shuffle through ``volcano-py simulate``, node load from the documented
``volcano-py.sim/*-usage`` annotations."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli.main import main

CONF = """\
actions: "enqueue, allocate, backfill, shuffle"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: rescheduling
    arguments:
      interval: 1s
      metricsPeriod: 10m
      strategies:
      - name: lowNodeUtilization
        params:
          thresholds: {cpu: 20, memory: 20}
          targetThresholds: {cpu: 60, memory: 60}
"""


def node(name: str, cpu: str, memory: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "annotations": {
                "volcano-py.sim/cpu-usage": cpu,
                "volcano-py.sim/memory-usage": memory,
            },
        },
        "status": {"allocatable": {"cpu": "10", "memory": "10Gi", "pods": "20"}},
    }


def running_pod(name: str, node_name: str, priority: int | None) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "schedulerName": "volcano",
        "nodeName": node_name,
        "containers": [
            {"name": "c", "image": "x", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}
        ],
    }
    if priority is not None:
        spec["priority"] = priority
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default"},
        "spec": spec,
        "status": {"phase": "Running"},
    }


def test_shuffle_evicts_from_the_busy_node_once_the_interval_has_passed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    conf = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
        "data": {"volcano-scheduler.conf": CONF},
    }
    documents = [
        conf,
        node("busy", "90", "50"),
        node("idle", "10", "10"),
        node("middle", "50", "50"),
        running_pod("urgent", "busy", 100),
        running_pod("routine", "busy", 1),
        running_pod("unprioritised", "busy", None),
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(documents))
    # The first cycle starts the 1s interval; cycle 3 is the first more than 1s later.
    assert main(["simulate", str(path), "--cycles", "3"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["evictions"] == ["default/unprioritised", "default/routine"]
