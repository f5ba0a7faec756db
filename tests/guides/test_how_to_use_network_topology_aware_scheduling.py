"""User guide ``how_to_use_network_topology_aware_scheduling`` (all but the sub-group
partition example, 3.3.2, left for the sub-group topology work), on the guide's conf (the
plugin with its HyperNode-level bin packing arguments):

* 2.3 ``highestTierAllowed: 2`` / ``highestTierName``: a hard job stays inside one HyperNode of
  that tier or lower, else it waits;
* 2.5 / 3.3.3 bin packing of pods without constraints: they go to the nodes of the busiest
  HyperNodes, leaving idle HyperNodes whole;
* 3.3.1: 8 nodes of 4 CPU in two tier-1 HyperNodes, 8 replicas of 4 CPU, ``minAvailable:
  4``, hard, tier 1. The guide says 4 pods run; Volcano places none, and volcano-py says why
  (docs/migrating-from-volcano.md; tests/sim/test_topology_reasons.py has the reason's text).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guides.guide_sim import bare_pod, conf_map, node, placements, simulate, task, vcjob
from tests.hypernode_fixtures import build_hyper_node

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
      hypernode.binpack.cpu: 5
      hypernode.binpack.memory: 1
      hypernode.binpack.resources: nvidia.com/gpu, example.com/foo
      hypernode.binpack.resources.nvidia.com/gpu: 2
      hypernode.binpack.resources.example.com/foo: 3
      hypernode.binpack.normal-pod.enable: true
      hypernode.binpack.normal-pod.fading: 0.8
"""
NODES = [f"node{index}" for index in range(8)]


def _tree_of_section_2() -> list[dict[str, Any]]:
    """2.1's tree: s0..s3 hold two nodes each (tier 1), s4 = s0+s1 and s5 = s2+s3 (tier 2,
    named ``zone``), s6 = s4+s5 (tier 3)."""
    return [
        *(build_hyper_node(f"s{i}", 1, NODES[2 * i : 2 * i + 2]) for i in range(4)),
        build_hyper_node("s4", 2, hyper_nodes=["s0", "s1"], tier_name="zone"),
        build_hyper_node("s5", 2, hyper_nodes=["s2", "s3"], tier_name="zone"),
        build_hyper_node("s6", 3, hyper_nodes=["s4", "s5"], tier_name="spine"),
    ]


def _tree_of_section_3() -> list[dict[str, Any]]:
    """3.3's tree: HyperNode0 = node0-3, HyperNode1 = node4-7 (tier 1), HyperNode2 both."""
    return [
        build_hyper_node("hypernode0", 1, NODES[:4]),
        build_hyper_node("hypernode1", 1, NODES[4:]),
        build_hyper_node("hypernode2", 2, hyper_nodes=["hypernode0", "hypernode1"]),
    ]


def _cluster(tree: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [conf_map(CONF), *(node(name, cpu="4") for name in NODES), *tree]


def _job(replicas: int, min_available: int, **topology: Any) -> dict[str, Any]:
    spec: dict[str, Any] = {"minAvailable": min_available}
    if topology:
        spec["networkTopology"] = topology
    return vcjob("network-topology-job", [task("t0", replicas, cpu="4")], **spec)


def _nodes_of_job(report: dict[str, Any]) -> set[str | None]:
    return {
        node_name
        for pod_name, node_name in placements(report).items()
        if "network-topology-job" in pod_name
    }


def test_hard_tier_2_stays_inside_one_zone(tmp_path: Path) -> None:
    for topology in ({"highestTierAllowed": 2}, {"highestTierName": "zone"}):
        job = _job(4, 4, mode="hard", **topology)
        report, _, _ = simulate(tmp_path, [*_cluster(_tree_of_section_2()), job])
        assert _nodes_of_job(report) in ({"node0", "node1", "node2", "node3"}, set(NODES[4:]))
        # Five pods fit no zone: the job waits.
        report, _, _ = simulate(
            tmp_path, [*_cluster(_tree_of_section_2()), _job(5, 5, mode="hard", **topology)]
        )
        assert _nodes_of_job(report) == {None}


def test_normal_pods_pack_into_the_busiest_hyper_nodes(tmp_path: Path) -> None:
    """2.5: node0, node2 and node4 are busy; two pods of a whole node go to node1 and node3,
    leaving s3 (node6, node7) and node5 for larger jobs."""
    busy = [bare_pod(f"busy-{name}", "4", nodeName=name) for name in ("node0", "node2", "node4")]
    report, _, _ = simulate(tmp_path, [*_cluster(_tree_of_section_2()), *busy, _job(2, 2)])
    assert _nodes_of_job(report) == {"node1", "node3"}


def test_two_idle_pods_share_one_tier_1_hyper_node(tmp_path: Path) -> None:
    """3.3.3: the first pod goes anywhere, the second to the same tier-1 HyperNode."""
    report, _, _ = simulate(tmp_path, [*_cluster(_tree_of_section_3()), _job(2, 2)])
    placed = _nodes_of_job(report)
    assert len(placed) == 2
    assert placed <= set(NODES[:4]) or placed <= set(NODES[4:])


def test_the_first_example_places_none(tmp_path: Path) -> None:
    """3.3.1 as Volcano decides it (not the guide's 4 running pods)."""
    job = _job(8, 4, mode="hard", highestTierAllowed=1)
    report, _, _ = simulate(tmp_path, [*_cluster(_tree_of_section_3()), job])
    assert _nodes_of_job(report) == {None}
    assert (
        "must fit inside one HyperNode" in report["unschedulable"]["default/network-topology-job"]
    )
