"""Why a hard-topology job waits, as Volcano's network-topology user guide sets it up
(docs/user-guide/how_to_use_network_topology_aware_scheduling, first example), built here with
our own objects: 8 nodes of 4 CPU in two tier-1 HyperNodes, a job of 8 replicas of 4 CPU with
``minAvailable: 4``, hard mode, ``highestTierAllowed: 1``.

The guide says 4 pods run inside one tier-1 HyperNode. Volcano's scheduler places none (run
side by side on one API server): its sub-job pre-filter asks one HyperNode for every pending
pod (32 CPU), not the gang's minimum (16 CPU). volcano-py decides the same, and says why and
what would let the job run.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli.main import main


def _node(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": "4", "memory": "16Gi", "pods": "110"}},
    }


def _hyper_node(name: str, tier: int, members: list[str], kind: str) -> dict[str, Any]:
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {
            "tier": tier,
            "members": [{"type": kind, "selector": {"exactMatch": {"name": m}}} for m in members],
        },
    }


def _job(replicas: int, min_available: int, highest_tier: int) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": "network-topology-job", "namespace": "default"},
        "spec": {
            "schedulerName": "volcano",
            "minAvailable": min_available,
            "networkTopology": {"mode": "hard", "highestTierAllowed": highest_tier},
            "tasks": [
                {
                    "name": "t0",
                    "replicas": replicas,
                    "template": {
                        "spec": {
                            "containers": [
                                {
                                    "name": "c",
                                    "image": "nginx",
                                    "resources": {"requests": {"cpu": "4"}},
                                }
                            ]
                        }
                    },
                }
            ],
        },
    }


# The guide's scheduler configuration: the default tiers plus binpack and the plugin.
CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
    arguments:
      weight: 10
"""


def _simulate(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, job: dict[str, Any]
) -> dict[str, Any]:
    nodes = [f"node{i}" for i in range(8)]
    objects = [
        *(_node(n) for n in nodes),
        _hyper_node("s0", 1, nodes[:4], "Node"),
        _hyper_node("s1", 1, nodes[4:], "Node"),
        job,
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(CONF)
    assert main(["simulate", str(path), "--conf", str(conf)]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_the_guides_job_waits_and_says_what_blocks_it(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = _simulate(capsys, tmp_path, _job(8, 4, 1))
    assert not [pod for pod in report["binds"] if "network-topology-job" in pod]
    why = report["unschedulable"]["default/network-topology-job"]
    assert "all 8 pending pods (cpu 32) must fit inside one HyperNode of tier <= 1" in why
    assert "the roomiest, s0, has cpu 16 free" in why
    assert "lowering replicas to what minAvailable needs (cpu 16)" in why
    assert "raising highestTierAllowed would let it run" in why


def test_replicas_lowered_to_min_available_run_inside_one_hyper_node(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = _simulate(capsys, tmp_path, _job(4, 4, 1))
    placed = {node for pod, node in report["binds"].items() if "network-topology-job" in pod}
    assert placed in ({"node0", "node1", "node2", "node3"}, {"node4", "node5", "node6", "node7"})


def test_raising_the_tier_lets_all_eight_run(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = _simulate(capsys, tmp_path, _job(8, 4, 2))
    assert len([pod for pod in report["binds"] if "network-topology-job" in pod]) == 8
