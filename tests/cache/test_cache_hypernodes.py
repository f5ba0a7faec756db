"""The cache's HyperNode wiring: HyperNode and Node events feed one ``HyperNodeStore``; a
snapshot carries the tree over its ready nodes, shared between snapshots until something it
depends on changes; a malformed HyperNode is logged and left out, never a crash."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.builders import build_node, build_pod
from tests.builders import resource_list as rl
from tests.hypernode_fixtures import build_hyper_node
from volcano_py.api.hypernode import CLUSTER_TOP_HYPER_NODE
from volcano_py.cache.cache import SchedulerCache


def node(name: str, labels: dict[str, str] | None = None) -> dict[str, Any]:
    return build_node(name, rl("4", "8Gi", pods="10"), labels)


def cache_with(*names: str) -> SchedulerCache:
    cache = SchedulerCache()
    for name in names:
        cache.apply_event("Node", "ADDED", node(name))
    return cache


def test_no_hyper_node_means_no_tree() -> None:
    assert cache_with("n1").snapshot().hyper_node_tree is None


def test_hyper_node_events_shape_the_snapshot_tree() -> None:
    cache = cache_with("n1", "n2", "n3")
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("leaf-a", 1, ["n1", "n2"]))
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("leaf-b", 1, ["n3"]))
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("spine", 2, [], ["leaf-a", "leaf-b"]))
    tree = cache.snapshot().hyper_node_tree
    assert tree is not None and tree.ready
    assert tree.real_nodes("spine") == {"n1", "n2", "n3"}
    assert tree.hyper_nodes["leaf-a"].parent == "spine"
    assert tree.tier_of(CLUSTER_TOP_HYPER_NODE) == 3

    cache.apply_event("HyperNode", "MODIFIED", build_hyper_node("leaf-a", 1, ["n1"]))
    assert cache.snapshot().hyper_node_tree.real_nodes("spine") == {"n1", "n3"}  # type: ignore[union-attr]

    cache.apply_event("HyperNode", "DELETED", build_hyper_node("spine", 2))
    tree = cache.snapshot().hyper_node_tree
    assert tree is not None and "spine" not in tree.hyper_nodes
    assert tree.hyper_nodes["leaf-b"].parent == CLUSTER_TOP_HYPER_NODE
    # The raw objects are still kept as they came.
    assert [obj["metadata"]["name"] for obj in cache.snapshot().hyper_nodes] == [
        "leaf-a",
        "leaf-b",
    ]


def test_the_tree_covers_only_ready_nodes() -> None:
    cache = cache_with("n1", "n2")
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("leaf", 1, ["n1", "n2", "n9"]))
    # A pod naming an unknown node makes a NotReady placeholder: not in the session, not in
    # the tree.
    cache.apply_event("Pod", "ADDED", build_pod("ns", "p", "n9", "Running", rl("1", "1Gi"), ""))
    tree = cache.snapshot().hyper_node_tree
    assert tree is not None
    assert tree.real_nodes("leaf") == {"n1", "n2"}
    assert tree.nodes == {"n1", "n2"}
    cache.apply_event("Node", "DELETED", node("n2"))
    assert cache.snapshot().hyper_node_tree.real_nodes("leaf") == {"n1"}  # type: ignore[union-attr]


def test_snapshots_share_the_tree_until_something_changes() -> None:
    cache = cache_with("n1", "n2")
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("leaf", 1, ["n1", "n2"]))
    first = cache.snapshot().hyper_node_tree
    assert cache.snapshot().hyper_node_tree is first
    # A node status update (same labels) changes nothing the tree depends on.
    updated = node("n1")
    updated["status"]["conditions"] = [{"type": "Ready", "status": "True"}]
    cache.apply_event("Node", "MODIFIED", updated)
    assert cache.snapshot().hyper_node_tree is first
    cache.apply_event("Node", "ADDED", node("n3"))
    assert cache.snapshot().hyper_node_tree is not first


def test_label_selected_members_follow_node_labels() -> None:
    cache = cache_with("n1", "n2")
    selector = {
        "metadata": {"name": "rack"},
        "spec": {
            "tier": 1,
            "members": [
                {"type": "Node", "selector": {"labelMatch": {"matchLabels": {"rack": "a"}}}}
            ],
        },
    }
    cache.apply_event("HyperNode", "ADDED", selector)
    assert cache.snapshot().hyper_node_tree.real_nodes("rack") == set()  # type: ignore[union-attr]
    cache.apply_event("Node", "MODIFIED", node("n2", {"rack": "a"}))
    assert cache.snapshot().hyper_node_tree.real_nodes("rack") == {"n2"}  # type: ignore[union-attr]
    cache.apply_event("Node", "ADDED", node("n3", {"rack": "a"}))
    assert cache.snapshot().hyper_node_tree.real_nodes("rack") == {"n2", "n3"}  # type: ignore[union-attr]


def test_a_malformed_hyper_node_is_logged_and_left_out(caplog: pytest.LogCaptureFixture) -> None:
    cache = cache_with("n1")
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("leaf", 1, ["n1"]))
    broken = build_hyper_node("leaf", 1, ["n1"])
    broken["spec"]["tier"] = "one"
    with caplog.at_level(logging.ERROR, logger="volcano_py.cache.cache"):
        cache.apply_event("HyperNode", "MODIFIED", broken)
    assert "HyperNode 'leaf': spec.tier" in caplog.text
    assert cache.snapshot().hyper_node_tree is None  # the stale version is not used either
    cache.apply_event("HyperNode", "ADDED", {"metadata": {}, "spec": {"tier": 1}})
    cache.apply_event("HyperNode", "MODIFIED", build_hyper_node("leaf", 1, ["n1"]))
    tree = cache.snapshot().hyper_node_tree
    assert tree is not None and tree.real_nodes("leaf") == {"n1"}


def test_a_membership_cycle_makes_the_tree_not_ready() -> None:
    cache = cache_with("n1")
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("a", 1, ["n1"], ["b"]))
    cache.apply_event("HyperNode", "ADDED", build_hyper_node("b", 1, [], ["a"]))
    tree = cache.snapshot().hyper_node_tree
    assert tree is not None and not tree.ready
