"""User guide ``how_to_use_hypernode_auto_discovery``: the guide's controller ConfigMap (ufm
enabled, roce disabled, label with ``topologyA2`` and ``topologyA3``) on its eight nodes
labelled with ``volcano.sh/hypernode`` (s0..s3) and ``volcano.sh/hypercluster`` (s4, s5). The
label discoverer builds the tree bottom up: four tier-1 HyperNodes of two nodes, two tier-2
HyperNodes of two tier-1 each, every one labelled ``volcano.sh/network-topology-source:
label``. The ufm source's HyperNodes are the input's (a dump holds them): simulate does not
call UFM, and says nothing of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guides.guide_sim import node, simulate

DISCOVERY = """\
networkTopologyDiscovery:
  - source: ufm
    enabled: true
    interval: 10m
    credentials:
      secretRef:
        name: ufm-credentials
        namespace: volcano-system
    config:
      endpoint: https://ufm-server:8080
      insecureSkipVerify: true
  - source: roce
    enabled: false
    interval: 15m
    config:
      endpoint: https://roce-server:9090
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        topologyA2:
          - nodeLabel: "volcano.sh/tor"
          - nodeLabel: "kubernetes.io/hostname"
        topologyA3:
          - nodeLabel: "volcano.sh/hypercluster"
          - nodeLabel: "volcano.sh/hypernode"
          - nodeLabel: "kubernetes.io/hostname"
"""


def _members(hyper_node: dict[str, Any]) -> set[str]:
    return {m["selector"]["exactMatch"]["name"] for m in hyper_node["spec"]["members"]}


def test_label_discovery_builds_the_guides_tree(tmp_path: Path) -> None:
    config_map = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "volcano-controller-configmap", "namespace": "volcano-system"},
        "data": {"volcano-controller.conf": DISCOVERY},
    }
    nodes = [
        node(
            f"node{i}",
            cpu="4",
            labels={
                "kubernetes.io/hostname": f"192.168.1.{10 + i}",
                "volcano.sh/hypernode": f"s{i // 2}",
                "volcano.sh/hypercluster": f"s{4 + i // 4}",
            },
        )
        for i in range(8)
    ]
    _, objects, err = simulate(tmp_path, [config_map, *nodes])
    assert "ufm" not in err
    hyper_nodes = [obj for key, obj in objects.items() if key[0] == "HyperNode"]
    assert {h["metadata"]["labels"]["volcano.sh/network-topology-source"] for h in hyper_nodes} == {
        "label"
    }
    by_label = {}
    for hyper_node in hyper_nodes:
        labels = hyper_node["metadata"]["labels"]
        key = labels.get("volcano.sh/hypernode") or labels.get("volcano.sh/hypercluster")
        by_label[key] = hyper_node
    assert sorted(by_label) == ["s0", "s1", "s2", "s3", "s4", "s5"]
    for index in range(4):
        tier_1 = by_label[f"s{index}"]
        assert tier_1["spec"]["tier"] == 1
        assert _members(tier_1) == {f"node{2 * index}", f"node{2 * index + 1}"}
    name_of = {label: h["metadata"]["name"] for label, h in by_label.items()}
    assert by_label["s4"]["spec"]["tier"] == 2
    assert _members(by_label["s4"]) == {name_of["s0"], name_of["s1"]}
    assert _members(by_label["s5"]) == {name_of["s2"], name_of["s3"]}
