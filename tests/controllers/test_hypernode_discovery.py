"""HyperNode auto-discovery without a cluster: the configuration, the label and UFM sources,
what a result changes, and ``status.nodeCount``. Upstream's tables are in
``pkg/controllers/hypernode/**/_test.go``; each test names the one it transcribes."""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from volcano_py.controllers.hypernode_config import (
    NETWORK_TOPOLOGY_SOURCE_LABEL,
    DiscoveryConfigError,
    SecretRef,
    config_from_config_map,
    config_map_location,
    parse_network_topology_config,
)
from volcano_py.controllers.hypernode_label_discovery import (
    clean_type_name,
    discover_from_labels,
    parse_label_topology,
)
from volcano_py.controllers.hypernode_objects import (
    build_hyper_node,
    member_node_count,
    reconcile,
)
from volcano_py.controllers.hypernode_ufm_discovery import (
    UfmDataError,
    discover_from_ufm,
    ports_url,
)

SOURCE = NETWORK_TOPOLOGY_SOURCE_LABEL


def _suffixes() -> Any:
    counter = itertools.count()
    return lambda: f"{next(counter):05d}"


def _members(hyper_node: dict[str, Any]) -> list[str]:
    return [m["selector"]["exactMatch"]["name"] for m in hyper_node["spec"]["members"]]


# ---- config (config/loader_test.go TestLoadConfig, api/types.go GetDiscoveryConfig)


def test_load_config_reads_the_sources() -> None:
    """TestLoadConfig "successfully load config"."""
    config = config_from_config_map(
        {
            "data": {
                "volcano-controller.conf": """
networkTopologyDiscovery:
  - source: ufm
    config:
      url: "http://ufm-host:8080"
      token: "test-token"
"""
            }
        }
    )
    (source,) = config.sources
    assert source.source == "ufm"
    assert dict(source.config) == {"url": "http://ufm-host:8080", "token": "test-token"}
    assert not source.enabled and config.enabled_sources() == []


def test_load_config_without_the_key_is_an_error() -> None:
    """TestLoadConfig "config key not found"."""
    with pytest.raises(
        DiscoveryConfigError, match=r"config key not found in ConfigMap: volcano-controller\.conf"
    ):
        config_from_config_map({"data": {"not-exists-key": "content"}})


def test_load_config_that_is_not_yaml_is_an_error() -> None:
    """TestLoadConfig "yaml parsing error"."""
    with pytest.raises(DiscoveryConfigError, match="failed to parse config"):
        parse_network_topology_config("invalid yaml: :")


def test_the_guide_example_enables_ufm_and_label_with_their_settings() -> None:
    """how_to_use_hypernode_auto_discovery.md's ConfigMap (api/example.yaml)."""
    config = parse_network_topology_config("""
networkTopologyDiscovery:
  - source: ufm
    enabled: true
    interval: 10m
    credentials:
      secretRef: {name: ufm-credentials, namespace: volcano-system}
    config: {endpoint: "https://ufm-server:8080", insecureSkipVerify: true}
  - source: roce
    enabled: false
    interval: 15m
    config: {endpoint: "https://roce-server:9090", token: token}
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        topologyA2:
          - nodeLabel: "volcano.sh/tor"
          - nodeLabel: "kubernetes.io/hostname"
""")
    assert config.enabled_sources() == ["ufm", "label"]
    ufm = config.source("ufm")
    assert ufm is not None and ufm.interval == 600.0
    assert ufm.secret_ref == SecretRef("ufm-credentials", "volcano-system")
    label = config.source("label")
    assert label is not None and label.interval_or_default == 3600.0  # DefaultDiscoveryInterval
    assert config.source("roce") is None and config.warnings == ()


def test_unknown_keys_are_warned_and_wrong_types_refused() -> None:
    config = parse_network_topology_config(
        "networkTopologyDiscovery:\n  - source: label\n    enable: true\n"
    )
    assert config.enabled_sources() == []
    assert config.warnings == ("networkTopologyDiscovery[0].enable: unknown key (ignored)",)
    with pytest.raises(DiscoveryConfigError, match=r"\[0\]\.enabled: must be true or false"):
        parse_network_topology_config(
            "networkTopologyDiscovery:\n  - {source: label, enabled: yes please}\n"
        )
    with pytest.raises(DiscoveryConfigError, match=r"\[0\]\.interval"):
        parse_network_topology_config(
            "networkTopologyDiscovery:\n  - {source: ufm, interval: 10 minutes}\n"
        )


def test_the_config_map_is_the_release_s_in_the_controllers_namespace() -> None:
    assert config_map_location({}) == ("volcano-system", "volcano-controller-configmap")
    assert config_map_location({"KUBE_POD_NAMESPACE": "vc", "HELM_RELEASE_NAME": "v2"}) == (
        "vc",
        "v2-controller-configmap",
    )


# ---- label source (discovery/label/label_test.go TestNewLabelDiscoverer_start)

LABEL_CONFIG = {
    "networkTopologyTypes": {
        topology: [
            {"nodeLabel": f"volcano.sh/tor{topology[-2:]}-2"},
            {"nodeLabel": f"volcano.sh/tor{topology[-2:]}-1"},
            {"nodeLabel": "kubernetes.io/hostname"},
        ]
        for topology in ("topologyA2", "topologyA3", "topologyA5")
    }
}
# Upstream's A2 tier-1 key is spelt with an underscore; kept, to show any key works.
LABEL_CONFIG["networkTopologyTypes"]["topologyA2"][1] = {"nodeLabel": "volcano.sh_torA2-1"}
A2_1, A2_2 = "volcano.sh_torA2-1", "volcano.sh/torA2-2"


def _discover(
    nodes: dict[str, dict[str, str]], existing: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    topology = parse_label_topology(LABEL_CONFIG)
    return discover_from_labels(topology, nodes, existing or [], _suffixes())


def test_label_two_tiers_of_four_tors_under_two_spines() -> None:
    """TestNewLabelDiscoverer_start test1: 8 nodes, 4 tier-1 and 2 tier-2 HyperNodes."""
    nodes = {f"node{i}": {A2_1: f"s{i // 2}", A2_2: f"s{4 + i // 4}"} for i in range(8)}
    found = _discover(nodes)
    assert len(found) == 6
    tier1 = {hn["metadata"]["labels"][A2_1]: hn for hn in found if hn["spec"]["tier"] == 1}
    assert {value: _members(hn) for value, hn in tier1.items()} == {
        "s0": ["node0", "node1"], "s1": ["node2", "node3"],
        "s2": ["node4", "node5"], "s3": ["node6", "node7"],
    }  # fmt: skip
    tier2 = {hn["metadata"]["labels"][A2_2]: hn for hn in found if hn["spec"]["tier"] == 2}
    assert _members(tier2["s4"]) == sorted(_members(tier2["s4"]))
    assert set(_members(tier2["s4"])) == {
        tier1["s0"]["metadata"]["name"],
        tier1["s1"]["metadata"]["name"],
    }
    for hn in found:
        assert hn["metadata"]["name"].startswith(f"hypernode-topologya2-tier{hn['spec']['tier']}-")
        assert hn["metadata"]["labels"][SOURCE] == "label"
        member_type = "Node" if hn["spec"]["tier"] == 1 else "HyperNode"
        assert {m["type"] for m in hn["spec"]["members"]} == {member_type}
    assert tier1["s0"]["spec"]["tierName"] == A2_1 and tier2["s4"]["spec"]["tierName"] == A2_2


def test_label_nodes_with_only_the_tier1_label() -> None:
    """test2: some nodes have no tier-2 label: they are in their tier-1 HyperNode only."""
    nodes = {"node0": {A2_1: "s0"}, "node1": {A2_1: "s0", A2_2: "s2"},
             "node2": {A2_1: "s1"}, "node3": {A2_1: "s1"}}  # fmt: skip
    found = _discover(nodes)
    assert len(found) == 3
    (spine,) = [hn for hn in found if hn["spec"]["tier"] == 2]
    assert len(_members(spine)) == 1


def test_label_nodes_with_only_the_tier2_label_are_in_none() -> None:
    """test3: the walk up stops at the first label a node lacks."""
    nodes = {"node0": {A2_2: "s2"}, "node1": {A2_1: "s0"}, "node2": {A2_2: "s2"},
             "node3": {A2_2: "s2"}}  # fmt: skip
    (only,) = _discover(nodes)
    assert _members(only) == ["node1"]


def test_label_an_existing_hyper_node_of_another_type_is_not_reused() -> None:
    """test4/test5: the existing HyperNode has the label but a topologyA2 name: a topologyA3
    one is named anew (only the count is upstream's assertion)."""
    existing = build_hyper_node(
        "hypernode-topologya2-tier1-mnsx6", 1, ["node0"], member_type="Node",
        labels={SOURCE: "label", "volcano.sh/torA3-1": "s0"},
    )  # fmt: skip
    (found,) = _discover({"node0": {"volcano.sh/torA3-1": "s0"}}, [existing])
    assert found["metadata"]["name"].startswith("hypernode-topologya3-tier1-")


def test_label_rediscovery_keeps_the_names_it_gave() -> None:
    nodes = {f"node{i}": {A2_1: f"s{i // 2}", A2_2: "s4"} for i in range(4)}
    first = _discover(nodes)
    again = discover_from_labels(parse_label_topology(LABEL_CONFIG), nodes, first, lambda: "zzzzz")
    assert [hn["metadata"]["name"] for hn in again] == [hn["metadata"]["name"] for hn in first]
    assert reconcile("label", again, first).create == []


def test_label_config_problems_leave_the_type_out() -> None:
    """parseCfg: a type name over 20 characters, or repeated labels, is skipped."""
    topology = parse_label_topology({"networkTopologyTypes": {
        "a-very-long-topology-type": [{"nodeLabel": "x"}, {"nodeLabel": "h"}],
        "dup": [{"nodeLabel": "x"}, {"nodeLabel": "x"}],
        "ok": [{"nodeLabel": "x"}, {"nodeLabel": "h"}],
    }})  # fmt: skip
    assert dict(topology.tiers_by_type) == {"ok": ("x",)}
    assert len(topology.problems) == 2
    assert clean_type_name("Topo_A2/x") == "topo-a2-x"


# ---- ufm source (discovery/ufm/ufm_test.go TestUFMDiscoverer "Success")


def ufm_ports() -> list[dict[str, Any]]:
    """mockUfmData: hosts 0-3 on leaves 0-3, hosts 4-7 on leaves 4-7 (two groups)."""
    ports = [
        {"system_name": f"node{n}", "peer_node_name": f"leaf{leaf}",
         "node_description": f"node0{n}-x", "description": "Computer IB Port"}
        for n in range(4) for leaf in range(4)
    ]  # fmt: skip
    wiring = {4: (4, 5, 6), 5: (4, 5, 6, 7), 6: (4, 5, 6, 7), 7: (4, 5, 6)}
    ports += [
        {"system_name": f"node{n}", "peer_node_name": f"leaf{leaf}",
         "node_description": f"node1{n}-x", "description": "Computer IB Port"}
        for n, leaves in wiring.items() for leaf in leaves
    ]  # fmt: skip
    ports.append({"system_name": "sw", "peer_node_name": "spine", "description": "Switch IB Port"})
    return ports


def test_ufm_leaf_groups_and_a_spine() -> None:
    found = {hn["metadata"]["name"]: hn for hn in discover_from_ufm(ufm_ports())}
    assert set(found) == {"leaf-hn-0", "leaf-hn-1", "spine-hn"}
    assert _members(found["leaf-hn-0"]) == ["node0", "node1", "node2", "node3"]
    assert _members(found["leaf-hn-1"]) == ["node4", "node5", "node6", "node7"]
    assert _members(found["spine-hn"]) == ["leaf-hn-0", "leaf-hn-1"]
    assert found["spine-hn"]["spec"]["tier"] == 2
    assert {hn["metadata"]["labels"][SOURCE] for hn in found.values()} == {"ufm"}
    assert "tierName" not in found["leaf-hn-0"]["spec"]


def test_ufm_no_host_ports_gives_nothing_and_bad_answers_are_errors() -> None:
    assert discover_from_ufm([]) == []
    with pytest.raises(UfmDataError, match="expected a JSON list"):
        discover_from_ufm({"ports": []})
    with pytest.raises(UfmDataError, match="port 0"):
        discover_from_ufm(["x"])
    assert ports_url("ufm:8080/") == "https://ufm:8080/ufmRest/resources/ports"
    assert ports_url("http://ufm") == "http://ufm/ufmRest/resources/ports"


# ---- reconcile (hypernode_controller_test.go TestHyperNodeController_Run)


def test_reconcile_updates_creates_and_deletes_only_the_source_s_own() -> None:
    def hn(name: str, source: str | None, member: str | None = None) -> dict[str, Any]:
        labels = {SOURCE: source} if source else {}
        return build_hyper_node(
            name, 1, [member] if member else [], member_type="Node", labels=labels
        )

    existing = [hn("existing-node-1", "ufm", "existing-node-1"), hn("existing-node-2", "ufm"),
                hn("existing-node-3", "roce"), hn("by-hand", None)]  # fmt: skip
    # phase 1: one updated, one new
    changes = reconcile(
        "ufm", [hn("existing-node-1", None, "updated-node-1"), hn("new-hypernode", None)], existing
    )
    assert [_members(new) for _old, new in changes.update] == [["updated-node-1"]]
    assert [c["metadata"]["name"] for c in changes.create] == ["new-hypernode"]
    assert changes.create[0]["metadata"]["labels"][SOURCE] == "ufm"
    assert changes.delete == ["existing-node-2"]
    # phase 2: an empty result deletes the source's HyperNodes, never another source's
    assert reconcile("ufm", [], existing).delete == ["existing-node-1", "existing-node-2"]
    # an unchanged HyperNode is not written again
    assert reconcile("ufm", [existing[0]], existing).update == []


# ---- nodeCount (hypernode_handler_test.go TestSyncHyperNodeStatus)

NODES = {"node1": {"zone": "east"}, "node2": {}, "node3": {}, "node4": {"zone": "west"},
         "master": {}}  # fmt: skip


def _hyper_node(*members: dict[str, Any]) -> dict[str, Any]:
    return {"metadata": {"name": "hn"}, "spec": {"tier": 1, "members": list(members)}}


def _exact(name: str, member_type: str = "Node") -> dict[str, Any]:
    return {"type": member_type, "selector": {"exactMatch": {"name": name}}}


@pytest.mark.parametrize(
    ("case", "members", "nodes", "count"),
    [
        ("Normal case: NodeCount needs to be updated",
         [_exact("node1"), _exact("node2"), _exact("node3")], {}, 3),
        ("NodeCount already matches (4 exact members)",
         [_exact(f"node{i}") for i in range(1, 5)], {}, 4),
        ("Exact & Label & Regex Match",
         [_exact("master"),
          {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"zone": "east"}}}},
          {"type": "Node", "selector": {"regexMatch": {"pattern": "node[1-3]"}}}], NODES, 4),
        ("Exact & Nil Label & Regex Match",
         [_exact("master"), {"type": "Node", "selector": {"labelMatch": None}},
          {"type": "HyperNode", "selector": {"regexMatch": {"pattern": "node[2-4]"}}}], NODES, 4),
    ],
)  # fmt: skip
def test_node_count(
    case: str, members: list[dict[str, Any]], nodes: dict[str, dict[str, str]], count: int
) -> None:
    assert member_node_count(_hyper_node(*members), nodes) == count, case
