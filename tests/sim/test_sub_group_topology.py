"""Volcano's network-topology user guide, the partitioned job
(docs/user-guide/how_to_use_network_topology_aware_scheduling, block 8): a Volcano Job of 8
replicas of 4 CPU, ``minAvailable: 4``, hard up to tier 2, its task split into partitions of 4
pods that must each sit inside one tier-1 HyperNode, through ``volcano-py simulate``.

The cluster: four tier-1 HyperNodes of two nodes (s0..s3) under two tier-2 ones (s4 over s0 and
s1, s5 over s2 and s3).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli.main import main

GUIDE_JOB = (
    Path(__file__).resolve().parents[3]
    / "shared/upstream-examples/docs/user-guide/how_to_use_network_topology_aware_scheduling/8.yaml"
)

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
"""

JOB: dict[str, Any] = {
    "apiVersion": "batch.volcano.sh/v1alpha1",
    "kind": "Job",
    "metadata": {"name": "network-topology-job", "namespace": "default"},
    "spec": {
        "schedulerName": "volcano",
        "minAvailable": 4,
        "networkTopology": {"mode": "hard", "highestTierAllowed": 2},
        "tasks": [
            {
                "name": "t0",
                "replicas": 8,
                "partitionPolicy": {
                    "totalPartitions": 2,
                    "partitionSize": 4,
                    "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
                },
                "template": {
                    "spec": {
                        "containers": [
                            {
                                "name": "c0",
                                "image": "nginx:latest",
                                "resources": {"requests": {"cpu": "4"}, "limits": {"cpu": "4"}},
                            }
                        ]
                    }
                },
            }
        ],
    },
}


def _node(name: str, cpu: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "labels": {"kubernetes.io/hostname": name}},
        "status": {"allocatable": {"cpu": cpu, "memory": "32Gi", "pods": "110"}},
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


def _simulate(capsys: pytest.CaptureFixture[str], tmp_path: Path, cpu: str) -> dict[str, Any]:
    nodes = [f"n{i}" for i in range(8)]
    objects = [
        *(_node(n, cpu) for n in nodes),
        *(_hyper_node(f"s{j}", 1, nodes[2 * j : 2 * j + 2], "Node") for j in range(4)),
        _hyper_node("s4", 2, ["s0", "s1"], "HyperNode"),
        _hyper_node("s5", 2, ["s2", "s3"], "HyperNode"),
        JOB,
    ]
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump_all(objects))
    conf = tmp_path / "volcano-scheduler.conf"
    conf.write_text(CONF)
    assert main(["simulate", str(path), "--conf", str(conf)]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    return report


def test_the_job_is_the_guides() -> None:
    if not GUIDE_JOB.exists():
        pytest.skip("the shared upstream examples are not on this machine")
    assert yaml.safe_load(GUIDE_JOB.read_text())["spec"] == JOB["spec"]


def test_each_partition_sits_in_one_tier1_hyper_node_and_both_in_one_tier2(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = _simulate(capsys, tmp_path, "8")
    binds = report["binds"]
    assert len(binds) == 8
    tier1 = {f"n{i}": f"s{i // 2}" for i in range(8)}
    partitions: dict[int, set[str]] = {}
    for pod, node in binds.items():
        index = int(pod.rsplit("-", 1)[1])
        partitions.setdefault(index // 4, set()).add(tier1[node])
    assert all(len(leaves) == 1 for leaves in partitions.values()), partitions
    used = set().union(*partitions.values())
    assert used in ({"s0", "s1"}, {"s2", "s3"})
    # No allocated-HyperNode annotation: upstream writes none at bind.
    assert all("annotations" not in pod for pod in report["pods"].values())


def test_a_partition_no_tier1_hyper_node_holds_is_named_with_what_would_help(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    report = _simulate(capsys, tmp_path, "6")
    assert not report["binds"]
    why = report["unschedulable"]["default/network-topology-job"]
    assert why.startswith("sub-group t0-0: its 4 pending pods (cpu 16) must fit inside one")
    assert "HyperNode of tier <= 1" in why
    assert "the roomiest, s0, has cpu 12 free" in why
    assert "raising highestTierAllowed would let it run" in why
