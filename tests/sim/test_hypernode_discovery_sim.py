"""``simulate`` runs hyperNode-controller's label discovery when the input holds its
ConfigMap, as the HyperNode auto-discovery guide (how_to_use_hypernode_auto_discovery) sets
it up: the guide's eight nodes under two hyperclusters give four tier-1 and two tier-2
HyperNodes, which a hard network-topology job then lands in."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from volcano_py.cli.main import main

CONF_MAP = """
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-controller-configmap, namespace: volcano-system}
data:
  volcano-controller.conf: |
    networkTopologyDiscovery:
      - source: label
        enabled: true
        config:
          networkTopologyTypes:
            topologyA3:
              - nodeLabel: volcano.sh/hypercluster
              - nodeLabel: volcano.sh/hypernode
              - nodeLabel: kubernetes.io/hostname
"""
SCHEDULER_CONF = """
apiVersion: v1
kind: ConfigMap
metadata: {name: volcano-scheduler-configmap, namespace: volcano-system}
data:
  volcano-scheduler.conf: |
    actions: "enqueue, allocate, backfill"
    tiers:
    - plugins: [{name: priority}, {name: gang}, {name: conformance}]
    - plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder},
                {name: network-topology-aware}]
"""
HARD_JOB = """
apiVersion: batch.volcano.sh/v1alpha1
kind: Job
metadata: {name: train}
spec:
  minAvailable: 4
  schedulerName: volcano
  networkTopology: {mode: hard, highestTierAllowed: 1}
  tasks:
    - name: worker
      replicas: 4
      template:
        spec:
          containers: [{name: c, image: x, resources: {requests: {cpu: "2"}}}]
"""


def _nodes() -> str:
    """The guide's cluster: node i under hypernode s(i//2) under hypercluster s(4 + i//4)."""
    return "".join(
        f"""---
apiVersion: v1
kind: Node
metadata:
  name: node{i}
  labels: {{kubernetes.io/hostname: node{i}, volcano.sh/hypernode: s{i // 2},
            volcano.sh/hypercluster: s{4 + i // 4}}}
status: {{allocatable: {{cpu: "4", memory: 8Gi, pods: "110"}}}}
"""
        for i in range(8)
    )


def _simulate(
    capsys: pytest.CaptureFixture[str], path: Path, *args: str
) -> tuple[int, str, str]:
    code = main(["simulate", str(path), *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _hyper_nodes(out: str) -> dict[str, dict[str, Any]]:
    items = yaml.safe_load(out)["items"]
    return {hn["metadata"]["name"]: hn for hn in items if hn["kind"] == "HyperNode"}


def _members(hyper_node: dict[str, Any]) -> list[str]:
    return [m["selector"]["exactMatch"]["name"] for m in hyper_node["spec"]["members"]]


def test_the_guide_s_labels_become_hyper_nodes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(CONF_MAP + _nodes())
    code, out, err = _simulate(capsys, path, "--format", "yaml")
    assert code == 0, err
    found = _hyper_nodes(out)
    by_label = {
        hn["metadata"]["labels"].get("volcano.sh/hypernode")
        or hn["metadata"]["labels"]["volcano.sh/hypercluster"]: hn
        for hn in found.values()
    }
    assert sorted(by_label) == ["s0", "s1", "s2", "s3", "s4", "s5"]
    assert _members(by_label["s1"]) == ["node2", "node3"]
    assert by_label["s1"]["spec"] == {**by_label["s1"]["spec"], "tier": 1,
                                      "tierName": "volcano.sh/hypernode"}  # fmt: skip
    s4 = by_label["s4"]
    assert s4["spec"]["tier"] == 2 and s4["spec"]["members"][0]["type"] == "HyperNode"
    assert sorted(_members(s4)) == sorted(
        by_label[s]["metadata"]["name"] for s in ("s0", "s1")
    )
    for name, hn in found.items():
        assert name.startswith(f"hypernode-topologya3-tier{hn['spec']['tier']}-")
        assert hn["metadata"]["labels"]["volcano.sh/network-topology-source"] == "label"
    # The random suffixes come from --seed: the same seed names them the same.
    assert _hyper_nodes(_simulate(capsys, path, "--format", "yaml")[1]).keys() == found.keys()
    other = _hyper_nodes(_simulate(capsys, path, "--format", "yaml", "--seed", "7")[1])
    assert other.keys() != found.keys()


def test_a_hard_topology_job_lands_in_one_discovered_tier1_hyper_node(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(CONF_MAP + "---" + SCHEDULER_CONF + _nodes() + "---" + HARD_JOB)
    code, out, err = _simulate(capsys, path)
    assert code == 0, err
    nodes = set(json.loads(out)["binds"].values())
    assert len(nodes) == 2
    assert {int(node.removeprefix("node")) // 2 for node in nodes} in ({0}, {1}, {2}, {3})


def test_ufm_stands_as_the_input_says_and_unknown_sources_are_warned(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    conf = CONF_MAP.replace(
        "      - source: label",
        "      - source: ufm\n        enabled: true\n      - source: roce\n"
        "        enabled: true\n      - source: label",
    )
    path = tmp_path / "cluster.yaml"
    path.write_text(conf + _nodes())
    code, _out, err = _simulate(capsys, path)
    assert code == 0
    assert "ufm" not in err  # its HyperNodes are the input's: a dump holds them
    assert "unsupported discoverer type: roce" in err
    assert _simulate(capsys, path, "--strict")[0] == 2


def test_an_unreadable_discovery_configuration_is_an_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text(CONF_MAP.replace("enabled: true", "enabled: maybe") + _nodes())
    code, _out, err = _simulate(capsys, path)
    assert code == 2
    assert "ConfigMap volcano-system/volcano-controller-configmap" in err
    assert "networkTopologyDiscovery[0].enabled: must be true or false" in err
