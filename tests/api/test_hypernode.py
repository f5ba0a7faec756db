"""HyperNode tree: upstream hyper_node_info_test.go / member_selector_test.go transcribed, the
spec's S6 fixture, selectors, cycles, parent conflicts, LCA, the store's incremental updates,
and a Hypothesis property test over random trees."""

from __future__ import annotations

import itertools
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.hypernode import (
    CLUSTER_TOP_HYPER_NODE,
    HyperNodeCycleError,
    HyperNodeParentConflictError,
    HyperNodeSpec,
    HyperNodeSpecError,
    HyperNodeStore,
    HyperNodeTopologyError,
    HyperNodeTree,
)

ROOT = CLUSTER_TOP_HYPER_NODE
NODE = "Node"
HYPER = "HyperNode"


# ------------------------------------------------------------------------------- builders


def member(name: str, member_type: str = NODE, selector: str = "exact", labels=None) -> dict:
    """Upstream ``MemberConfig{Name, Type, Selector, LabelSelector}``."""
    if selector == "exact":
        body: dict[str, Any] = {"exactMatch": {"name": name}}
    elif selector == "regex":
        body = {"regexMatch": {"pattern": name}}
    else:
        body = {"labelMatch": labels if labels is not None else {}}
    return {"type": member_type, "selector": body}


def build_hyper_node(name: str, tier: int, members: list[dict], tier_name: str = "") -> dict:
    """Upstream ``api.BuildHyperNode`` as a raw object (what ``kubectl get -o yaml`` gives)."""
    spec: dict[str, Any] = {"tier": tier, "members": members}
    if tier_name:
        spec["tierName"] = tier_name
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": spec,
    }


def nodes_named(*names: str) -> dict[str, dict[str, str]]:
    return {name: {} for name in names}


def summary(tree: HyperNodeTree) -> dict[str, tuple[int, str, str | None]]:
    """Upstream ``HyperNodesInfo()`` strings as (tier, tierName, parent), real HyperNodes only."""
    return {
        name: (info.tier, info.tier_name, info.parent)
        for name, info in tree.hyper_nodes.items()
        if name != ROOT
    }


def real_sets(tree: HyperNodeTree) -> dict[str, set[str]]:
    return {name: set(info.real_nodes) for name, info in tree.hyper_nodes.items() if name != ROOT}


def by_tier(tree: HyperNodeTree) -> dict[int, set[str]]:
    return {tier: set(names) for tier, names in tree.hyper_nodes_by_tier.items()}


# ------------------------------------------------- upstream: TestHyperNodesInfo_UpdateHyperNode_*


def normal_fixture() -> list[dict]:
    s0 = build_hyper_node("s0", 1, [member("node-0"), member("node-1")])
    s1 = build_hyper_node("s1", 1, [member("node-2"), member("node-3")])
    s2 = build_hyper_node("s2", 2, [member("s1", HYPER), member("s0", HYPER)])
    return [s2, s0, s1]


def test_update_hyper_node_normal__update_successfully():
    """TestHyperNodesInfo_UpdateHyperNode_Normal / "update successfully". Upstream's lister is
    empty and its cache keeps unknown exact names; a session keeps only its nodes
    (GetRealNodesByHyperNode), so the nodes are given here."""
    tree = HyperNodeTree.build(
        normal_fixture(), nodes_named("node-0", "node-1", "node-2", "node-3")
    )
    assert summary(tree) == {"s0": (1, "", "s2"), "s1": (1, "", "s2"), "s2": (2, "", ROOT)}
    assert real_sets(tree) == {
        "s0": {"node-0", "node-1"},
        "s1": {"node-2", "node-3"},
        "s2": {"node-0", "node-1", "node-2", "node-3"},
    }
    assert by_tier(tree) == {1: {"s0", "s1"}, 2: {"s2"}, 3: {ROOT}}
    assert tree.ready


def test_exact_members_naming_unknown_nodes_count_for_nothing_in_a_session():
    tree = HyperNodeTree.build(normal_fixture(), {})
    assert real_sets(tree) == {"s0": set(), "s1": set(), "s2": set()}
    assert tree.ready


def test_update_hyper_node_no_spec_change():
    """TestHyperNodesInfo_UpdateHyperNode_NoSpecChange: a metadata-only update rebuilds nothing."""
    s0 = build_hyper_node("s0", 1, [member("node-0")])
    store = HyperNodeStore()
    store.set_node("node-0", {})
    assert store.set_hyper_node(s0)
    before = store.tree()
    updated = build_hyper_node("s0", 1, [member("node-0")])
    updated["metadata"]["labels"] = {"env": "test"}
    assert not store.set_hyper_node(updated)
    assert store.tree() is before
    assert real_sets(before) == {"s0": {"node-0"}}
    assert by_tier(before) == {1: {"s0"}, 2: {ROOT}}


def test_update_hyper_node_regex_member_always_rebuilds():
    """TestHyperNodesInfo_UpdateHyperNode_RegexMember_AlwaysRebuilds. Upstream re-submits the
    unchanged regex HyperNode on node events; the store re-tests the node itself instead."""
    s0 = build_hyper_node("s0", 1, [member("node-.*", NODE, "regex")])
    store = HyperNodeStore()
    assert store.set_hyper_node(s0)
    tree = store.tree()
    assert tree.ready
    assert real_sets(tree) == {"s0": set()}
    assert not store.set_hyper_node(build_hyper_node("s0", 1, [member("node-.*", NODE, "regex")]))
    assert store.set_node("node-7", {})
    assert real_sets(store.tree()) == {"s0": {"node-7"}}
    assert store.tree().ready


def test_update_hyper_node_tier_only_change():
    """TestHyperNodesInfo_UpdateHyperNode_TierOnlyChange."""
    store = HyperNodeStore()
    store.set_node("node-0", {})
    store.set_hyper_node(build_hyper_node("s0", 1, [member("node-0")]))
    assert store.set_hyper_node(build_hyper_node("s0", 2, [member("node-0")]))
    tree = store.tree()
    assert real_sets(tree) == {"s0": {"node-0"}}
    assert by_tier(tree) == {2: {"s0"}, 3: {ROOT}}
    assert tree.tier_of("s0") == 2


def test_update_hyper_node_members_change_triggers_rebuild():
    """TestHyperNodesInfo_UpdateHyperNode_MembersChangeTriggersRebuild."""
    store = HyperNodeStore()
    for name in ("node-0", "node-1"):
        store.set_node(name, {})
    store.set_hyper_node(build_hyper_node("s0", 1, [member("node-0")]))
    assert store.tree().real_nodes("s0") == {"node-0"}
    store.set_hyper_node(build_hyper_node("s0", 1, [member("node-0"), member("node-1")]))
    assert store.tree().ready
    assert store.tree().real_nodes("s0") == {"node-0", "node-1"}


def test_update_hyper_node_with_cycle__cycle_dependency_and_finally_corrected():
    """TestHyperNodesInfo_UpdateHyperNode_WithCycle / "cycle dependency and finally corrected".
    Upstream: an error and Ready() false until s1 is corrected; then ready with a chain."""
    s0 = build_hyper_node("s0", 1, [member("node-0"), member("node-1")])
    s1 = build_hyper_node("s1", 2, [member("s0", HYPER), member("s3", HYPER)])
    s11 = build_hyper_node("s1", 2, [member("s0", HYPER)])
    s2 = build_hyper_node("s2", 3, [member("s1", HYPER)])
    s3 = build_hyper_node("s3", 4, [member("s2", HYPER)])
    store = HyperNodeStore()
    store.set_node("node-0", {})
    store.set_node("node-1", {})
    for obj in (s2, s0, s1, s3):
        store.set_hyper_node(obj)
    broken = store.tree()
    assert not broken.ready
    assert len(broken.errors) == 1
    error = broken.errors[0]
    assert isinstance(error, HyperNodeCycleError)
    # The membership that goes up in tier (s1, tier 2, contains s3, tier 4) is the one refused.
    assert error.cycle == ("s3", "s2", "s1", "s3")
    assert "'s3' contains 's2' contains 's1' contains 's3'" in str(error)
    assert "'s1' -> 's3' is ignored" in str(error)
    with pytest.raises(HyperNodeTopologyError, match="membership cycle"):
        store.tree(strict=True)

    store.set_hyper_node(s11)
    fixed = store.tree()
    assert fixed.ready
    assert summary(fixed) == {
        "s0": (1, "", "s1"),
        "s1": (2, "", "s2"),
        "s2": (3, "", "s3"),
        "s3": (4, "", ROOT),
    }
    assert real_sets(fixed) == {name: {"node-0", "node-1"} for name in ("s0", "s1", "s2", "s3")}


def test_update_hyper_node_multiple_parents__multi_parents():
    """TestHyperNodesInfo_UpdateHyperNode_MultipleParents / "multi parents"."""
    s0 = build_hyper_node("s0", 1, [member("node-0"), member("node-1")])
    s1 = build_hyper_node("s1", 2, [member("s0", HYPER)])
    s2 = build_hyper_node("s2", 3, [member("s0", HYPER)])
    s22 = build_hyper_node("s2", 3, [member("s1", HYPER)])
    store = HyperNodeStore()
    store.set_node("node-0", {})
    store.set_node("node-1", {})
    for obj in (s0, s1, s2):
        store.set_hyper_node(obj)
    broken = store.tree()
    assert not broken.ready
    (error,) = broken.errors
    assert isinstance(error, HyperNodeParentConflictError)
    assert (error.child, error.parent, error.rejected_parent) == ("s0", "s1", "s2")
    assert "'s0' is a member of both 's1' and 's2'" in str(error)
    # The HyperNodes stay (upstream does not drop them); s2 simply does not get s0.
    assert summary(broken) == {"s0": (1, "", "s1"), "s1": (2, "", ROOT), "s2": (3, "", ROOT)}
    assert broken.real_nodes("s2") == frozenset()

    store.set_hyper_node(s22)
    fixed = store.tree()
    assert fixed.ready
    assert real_sets(fixed) == {name: {"node-0", "node-1"} for name in ("s0", "s1", "s2")}
    assert summary(fixed) == {"s0": (1, "", "s1"), "s1": (2, "", "s2"), "s2": (3, "", ROOT)}


# ------------------------------------------------------- upstream: leaves and selector matching


def test_get_regex_selector_leaf_hyper_nodes__get_all_leaf_hyper_nodes_correctly():
    """TestHyperNodesInfo_GetRegexSelectorLeafHyperNodes / "get all leaf hyperNodes correctly"."""
    objects = [
        build_hyper_node("s0", 1, [member("node-1"), member("node-1")]),
        build_hyper_node(
            "s1", 1, [member("node-2", NODE, "regex"), member("node-3", NODE, "regex")]
        ),
        build_hyper_node("s2", 1, [member("node-4", NODE, "regex"), member("node-5", HYPER)]),
        build_hyper_node("s3", 1, [member("node-6", NODE, "regex"), member("node-7")]),
        build_hyper_node("s4", 2, [member("s0", HYPER), member("s1", HYPER)]),
        build_hyper_node("s5", 2, [member("s2", HYPER, "regex"), member("s3", HYPER)]),
        build_hyper_node("s6", 3, [member("s4", HYPER), member("s5", HYPER)]),
    ]
    specs = [HyperNodeSpec.from_object(obj) for obj in objects]
    assert {spec.name for spec in specs if spec.is_leaf and spec.has_node_selectors} == {"s1", "s3"}


def test_get_leaf_nodes__get_correct_leaf_hyper_nodes():
    """TestHyperNodesInfo_GetLeafNodes / "Get correct leaf hyperNodes"."""
    objects = [
        build_hyper_node("s0", 1, [member("node-0"), member("node-1")]),
        build_hyper_node("s1", 1, [member("node-2"), member("node-3")]),
        build_hyper_node("s2", 2, [member("s1", HYPER), member("s0", HYPER)]),
        build_hyper_node("s3", 3, [member("s2", HYPER)]),
    ]
    tree = HyperNodeTree.build([objects[1], objects[2], objects[3], objects[0]], {})
    assert tree.leaf_hyper_nodes("s3") == {"s0", "s1"}


def node_match_fixture() -> dict[str, HyperNodeSpec]:
    objects = [
        build_hyper_node("s0", 1, [member("node-0"), member("node-1")]),
        build_hyper_node(
            "s1", 1, [member("^prefix", NODE, "regex"), member("node-2", NODE, "regex")]
        ),
        build_hyper_node(
            "s2", 1, [member("^not-match-prefix", HYPER, "regex"), member("node-3", NODE, "regex")]
        ),
        build_hyper_node("s3", 1, [member("node-4", HYPER, "regex")]),
        build_hyper_node("s4", 1, [member("", NODE, "label", {"matchLabels": {"role": "worker"}})]),
        build_hyper_node(
            "s5", 1, [member("", NODE, "label", {"matchLabels": {"role": "invalid-role"}})]
        ),
        build_hyper_node(
            "s6",
            1,
            [
                member(
                    "",
                    NODE,
                    "label",
                    {"matchExpressions": [{"key": "role", "operator": "In", "values": ["master"]}]},
                )
            ],
        ),
    ]
    return {obj["metadata"]["name"]: HyperNodeSpec.from_object(obj) for obj in objects}


NODE_LABELS = {"node-5": {"role": "worker"}, "node-6": {"role": "master"}}


@pytest.mark.parametrize(
    ("case", "node", "hyper_node", "expected"),
    [
        ("match", "node-5", "s4", True),
        ("not match", "node-0", "s0", False),
        ("not match", "node-1", "s0", False),
        ("match", "prefix-1", "s1", True),
        ("match", "node-2", "s1", True),
        ("not match", "not-match-prefix", "s2", False),
        ("not match", "node-4", "s3", False),
        ("not match", "node-5", "s5", False),
        ("match", "node-6", "s6", True),
    ],
)
def test_node_regex_or_label_match_hyper_node(case, node, hyper_node, expected):
    """TestHyperNodesInfo_NodeRegexOrLabelMatchHyperNode (cases in upstream order; exact
    members are not consulted, HyperNode members with regex are ignored)."""
    spec = node_match_fixture()[hyper_node]
    assert spec.selects_node(node, NODE_LABELS.get(node, {})) is expected, case


# ---------------------------------------------------- upstream: ancestors and LCA


def ancestors_fixture() -> list[dict]:
    exact = [member("node-0"), member("node-1")]
    return [
        build_hyper_node("s0", 1, exact),
        build_hyper_node("s4", 4, [member("s3", HYPER)]),
        build_hyper_node("s1", 1, exact),
        build_hyper_node("s2", 2, [member("s0", HYPER), member("s1", HYPER)]),
        build_hyper_node("s3", 3, [member("s2", HYPER)]),
    ]


@pytest.mark.parametrize(
    ("case", "name", "expected"),
    [
        ("Get ancestors for leaf node", "s0", ("s0", "s2", "s3", "s4")),
        ("Get ancestors for intermediate node", "s2", ("s2", "s3", "s4")),
        ("Get ancestors for root node", "s4", ("s4",)),
    ],
)
def test_get_ancestors(case, name, expected):
    """TestHyperNodesInfo_GetAncestors; in a session the virtual root ends every chain."""
    tree = HyperNodeTree.build(ancestors_fixture(), nodes_named("node-0", "node-1"))
    assert tree.ancestors(name) == (*expected, ROOT), case


def lca_fixture() -> HyperNodeTree:
    def pair(a: str, b: str) -> list[dict]:
        return [member(a), member(b)]

    objects = [
        build_hyper_node("s0", 1, pair("node-0", "node-1")),
        build_hyper_node("s1", 1, pair("node-2", "node-3")),
        build_hyper_node("s2", 1, pair("node-4", "node-5")),
        build_hyper_node("s3", 1, pair("node-6", "node-7")),
        build_hyper_node("s4", 2, [member("s0", HYPER), member("s1", HYPER)]),
        build_hyper_node("s5", 2, [member("s2", HYPER), member("s3", HYPER)]),
        build_hyper_node("s6", 3, [member("s4", HYPER), member("s5", HYPER)]),
        # an orphan HyperNode without parent
        build_hyper_node("s-orphan", 1, pair("node-8", "node-9")),
    ]
    return HyperNodeTree.build(objects, nodes_named(*(f"node-{i}" for i in range(10))))


@pytest.mark.parametrize(
    ("case", "hyper_node", "job_hyper_node", "expected"),
    [
        ("Sibling hypernode", "s0", "s1", "s4"),
        # Upstream's bare map has no root and answers "". In a session the virtual root parents
        # s6 and s-orphan, so it is their LCA.
        ("No common ancestor", "s0", "s-orphan", ROOT),
        ("One is ancestor of the other", "s4", "s0", "s4"),
        ("Both are the same node", "node6", "node6", "node6"),
    ],
)
def test_get_lca_hyper_node(case, hyper_node, job_hyper_node, expected):
    """TestGetLCAHyperNode."""
    assert lca_fixture().lca(hyper_node, job_hyper_node) == expected, case


def test_lca_is_none_safe_and_unknown_names_share_nothing():
    tree = lca_fixture()
    assert tree.lca(None, "s0") == "s0"
    assert tree.lca("s0", None) == "s0"
    assert tree.lca("", "s0") == "s0"
    assert tree.lca(None, None) is None
    assert tree.lca("missing", "s0") is None
    assert tree.lca("s2", "s1") == "s6"
    assert tree.lca("s0", ROOT) == ROOT


# -------------------------------------------------------- upstream: TestGetMembers (both files)


def resolve(selector: dict, nodes: dict[str, dict[str, str]]) -> set[str]:
    obj = build_hyper_node("hn", 1, [{"type": NODE, "selector": selector}])
    return set(HyperNodeTree.build([obj], nodes).real_nodes("hn"))


WORKER_MASTER = {"node1": {"role": "worker"}, "node2": {"role": "master"}}
WORKER_BARE = {"node1": {"role": "worker"}, "node2": {}}


@pytest.mark.parametrize(
    ("case", "label_match", "nodes", "expected"),
    [
        ("Label match success with MatchLabels", {"matchLabels": {"role": "worker"}},
         WORKER_MASTER, {"node1"}),
        ("Label match failure with MatchLabels", {"matchLabels": {"role": "invalid-role"}},
         WORKER_MASTER, set()),
        ("MatchExpressions In operator match success",
         {"matchExpressions": [{"key": "role", "operator": "In", "values": ["worker"]}]},
         WORKER_MASTER, {"node1"}),
        ("MatchExpressions In operator match failure",
         {"matchExpressions": [{"key": "role", "operator": "In", "values": ["invalid-role"]}]},
         WORKER_MASTER, set()),
        ("MatchExpressions NotIn operator match success",
         {"matchExpressions": [{"key": "role", "operator": "NotIn", "values": ["master"]}]},
         WORKER_MASTER, {"node1"}),
        ("MatchExpressions Exists operator match success",
         {"matchExpressions": [{"key": "role", "operator": "Exists"}]}, WORKER_BARE, {"node1"}),
        ("MatchExpressions DoesNotExist operator match success",
         {"matchExpressions": [{"key": "role", "operator": "DoesNotExist"}]}, WORKER_BARE,
         {"node2"}),
    ],
)  # fmt: skip
def test_get_members_label_match(case, label_match, nodes, expected):
    """api.TestGetMembers (hyper_node_info_test.go), label cases."""
    assert resolve({"labelMatch": label_match}, nodes) == expected, case


@pytest.mark.parametrize(
    "case", ["Label selector is nil", "Label selector is not nil, but MatchLabels and ..."]
)
def test_get_members_nil_selector_is_rejected(case):
    """api.TestGetMembers nil-selector cases: upstream resolves a member with no selector to
    nothing; the CRD's CEL rule rejects such an object, and so does our parser."""
    with pytest.raises(HyperNodeSpecError, match=r"spec.members\[0\].selector: exactly one"):
        resolve({"labelMatch": None}, WORKER_MASTER)


UTIL_NODES = {
    "worker-1": {"role": "worker"},
    "worker-2": {"role": "worker"},
    "control-plane-1": {"role": "control-plane"},
}


@pytest.mark.parametrize(
    ("case", "selector", "expected"),
    [
        ("exact", {"exactMatch": {"name": "worker-1"}}, {"worker-1"}),
        ("regex", {"regexMatch": {"pattern": "^worker-"}}, {"worker-1", "worker-2"}),
        ("invalid regex", {"regexMatch": {"pattern": "["}}, set()),
        ("label", {"labelMatch": {"matchLabels": {"role": "worker"}}}, {"worker-1", "worker-2"}),
        ("empty label", {"labelMatch": {}}, set()),
    ],
)
def test_util_get_members(case, selector, expected):
    """hypernode.TestGetMembers (pkg/util/hypernode/member_selector_test.go)."""
    assert resolve(selector, UTIL_NODES) == expected, case


def test_selectors_that_select_nothing_are_reported_not_silently_skipped():
    objects = [
        build_hyper_node("bad-regex", 1, [member("[", NODE, "regex")]),
        build_hyper_node("empty-label", 1, [member("", NODE, "label", {})]),
        build_hyper_node(
            "bad-op", 1, [member("", NODE, "label", {"matchExpressions": [
                {"key": "role", "operator": "Gt", "values": ["1"]}]})]
        ),
        build_hyper_node(
            "in-without-values", 1, [member("", NODE, "label", {"matchExpressions": [
                {"key": "role", "operator": "In"}]})]
        ),
        build_hyper_node("regex-hyper", 2, [member("bad-.*", HYPER, "regex")]),
    ]  # fmt: skip
    tree = HyperNodeTree.build(objects, UTIL_NODES)
    assert tree.ready  # upstream logs these and carries on
    text = "\n".join(tree.warnings)
    assert "HyperNode 'bad-regex': spec.members[0]: invalid regexMatch pattern '['" in text
    assert "HyperNode 'empty-label': spec.members[0]: labelMatch is empty" in text
    assert "unknown operator 'Gt'" in text
    assert "operator In needs values" in text
    assert "HyperNode 'regex-hyper': spec.members[0]: HyperNode members support only" in text
    assert all(not tree.real_nodes(obj["metadata"]["name"]) for obj in objects)


# ----------------------------------------------------------------------- spec §7.3 S6 fixture


def s6_tree() -> HyperNodeTree:
    objects = [
        build_hyper_node("s0", 1, [member("s0-n1"), member("s0-n2")]),
        build_hyper_node("s1", 1, [member("s1-n3"), member("s1-n4")]),
        build_hyper_node("s2", 2, [member("s0", HYPER), member("s1", HYPER)]),
    ]
    return HyperNodeTree.build(objects, nodes_named("s0-n1", "s0-n2", "s1-n3", "s1-n4"))


def test_s6_fixture_tree():
    tree = s6_tree()
    assert tree.ready and not tree.warnings
    assert tree.tiers == (1, 2, 3)
    assert tree.root.tier == 3
    assert tree.min_tier == 1 and tree.max_tier == 3
    assert summary(tree) == {"s0": (1, "", "s2"), "s1": (1, "", "s2"), "s2": (2, "", ROOT)}
    assert tree.root.children == ("s2",)
    assert tree.root.parent is None
    assert tree.nodes == {"s0-n1", "s0-n2", "s1-n3", "s1-n4"}
    assert tree.real_nodes("s2") == tree.nodes
    assert tree.get("s2") is not None and tree.get("s2").children == ("s0", "s1")
    assert by_tier(tree) == {1: {"s0", "s1"}, 2: {"s2"}, 3: {ROOT}}


def test_s6_fixture_node_lookups():
    tree = s6_tree()
    assert tree.lowest_tier_hyper_node("s0-n2") == "s0"
    assert tree.lowest_tier_hyper_node("s1-n3") == "s1"
    assert tree.lowest_tier_hyper_node("ghost") is None
    assert tree.find_hyper_node_for_node("s1-n4") == "s1"
    assert tree.hyper_node_at_tier("s1-n4", 2) == "s2"
    assert tree.hyper_node_at_tier("s1-n4", 3) == ROOT
    assert tree.hyper_node_at_tier("s1-n4", 7) is None
    assert tree.contains_node("s0", "s0-n1")
    assert not tree.contains_node("s0", "s1-n3")
    assert not tree.contains_node("ghost", "s1-n3")
    assert tree.lca_tier("s0-n1", "s0-n2") == 1
    assert tree.lca_tier("s0-n1", "s1-n3") == 2
    assert tree.lca_tier("s0-n1", "ghost") is None


def test_s6_fixture_walks():
    tree = s6_tree()
    assert tree.descendants(ROOT) == (ROOT, "s2", "s0", "s1")
    assert tree.descendants("s0") == ("s0",)
    assert tree.descendants("ghost") == ()
    assert tree.ancestors("s1") == ("s1", "s2", ROOT)
    assert tree.ancestors("ghost") == ()
    # variant A (highestTierAllowed 1) keeps s0 as the search root; B (2) widens to s2.
    assert tree.highest_ancestor_within_tier("s0", 1) == "s0"
    assert tree.highest_ancestor_within_tier("s0", 2) == "s2"
    assert tree.highest_ancestor_within_tier("s0", 3) == ROOT
    assert tree.highest_ancestor_within_tier("s2", 1) is None
    assert tree.highest_ancestor_within_tier("ghost", 5) is None


# -------------------------------------------------------------------- virtual root and tiers


def test_virtual_root_without_hyper_nodes_is_tier_one_over_all_nodes():
    tree = HyperNodeTree.build([], nodes_named("a", "b"))
    assert tree.tiers == (1,)
    assert by_tier(tree) == {1: {ROOT}}
    assert tree.root.real_nodes == {"a", "b"}
    assert tree.lowest_tier_hyper_node("a") == ROOT
    assert tree.find_hyper_node_for_node("a") == ROOT
    assert tree.lca_tier("a", "b") == 1
    assert tree.ready


def test_virtual_root_tier_over_tier_zero_hyper_nodes_is_one():
    tree = HyperNodeTree.build([build_hyper_node("z", 0, [member("a")])], nodes_named("a"))
    assert tree.tiers == (0, 1)
    assert tree.root.tier == 1


def test_find_hyper_node_for_node_only_looks_at_the_lowest_tier():
    """Upstream FindHyperNodeForNode searches only HyperNodesTiers[0]; a node that hangs
    directly under a tier-2 HyperNode has no answer, while its lowest HyperNode is that one."""
    objects = [
        build_hyper_node("leaf", 1, [member("a")]),
        build_hyper_node("spine", 2, [member("leaf", HYPER), member("b")]),
    ]
    tree = HyperNodeTree.build(objects, nodes_named("a", "b", "c"))
    assert tree.find_hyper_node_for_node("b") is None
    assert tree.lowest_tier_hyper_node("b") == "spine"
    assert tree.lowest_tier_hyper_node("c") == ROOT
    assert tree.get("spine").node_members == {"b"}
    assert tree.real_nodes("spine") == {"a", "b"}


def test_a_node_in_two_hyper_nodes_of_one_tier_resolves_to_the_smallest_name():
    objects = [build_hyper_node(name, 1, [member("a")]) for name in ("zz", "aa", "mm")]
    tree = HyperNodeTree.build(objects, nodes_named("a"))
    assert tree.lowest_tier_hyper_node("a") == "aa"
    assert tree.find_hyper_node_for_node("a") == "aa"


def test_tier_names_map_to_tiers_and_conflicts_are_reported():
    objects = [
        build_hyper_node("s0", 1, [member("a")], tier_name="tor"),
        build_hyper_node("s1", 2, [member("s0", HYPER)], tier_name="spine"),
        build_hyper_node("s9", 3, [member("b")], tier_name="tor"),
    ]
    tree = HyperNodeTree.build(objects, nodes_named("a", "b"))
    assert tree.tier_name_to_tier == {"tor": 3, "spine": 2}
    assert tree.get("s0").tier_name == "tor"
    assert any("tierName 'tor' is used for tiers 1 and 3" in w for w in tree.warnings)


# ----------------------------------------------------------------------- regex and labels


def test_regex_members_search_like_go_match_string():
    nodes = nodes_named("a-rack1-b", "rack10", "rack2")
    assert resolve({"regexMatch": {"pattern": "rack1"}}, nodes) == {"a-rack1-b", "rack10"}
    assert resolve({"regexMatch": {"pattern": "^rack1$"}}, nodes) == set()


def test_label_members_combine_match_labels_and_expressions():
    nodes = {
        "n1": {"zone": "a", "gpu": "true"},
        "n2": {"zone": "a"},
        "n3": {"zone": "b", "gpu": "true"},
        "n4": {"gpu": "false"},
    }
    selector = {
        "labelMatch": {
            "matchLabels": {"zone": "a"},
            "matchExpressions": [{"key": "gpu", "operator": "Exists"}],
        }
    }
    assert resolve(selector, nodes) == {"n1"}
    not_in = {"labelMatch": {"matchExpressions": [
        {"key": "zone", "operator": "NotIn", "values": ["a"]}]}}  # fmt: skip
    assert resolve(not_in, nodes) == {"n3", "n4"}  # NotIn matches a node without the key


# ------------------------------------------------------------------------------ spec errors


@pytest.mark.parametrize(
    ("obj", "message"),
    [
        ({"metadata": {}, "spec": {"tier": 1}}, r"HyperNode '<unnamed>': metadata.name"),
        ({"metadata": {"name": "x"}}, r"HyperNode 'x': spec: expected a mapping"),
        ({"metadata": {"name": "x"}, "spec": {}}, r"HyperNode 'x': spec.tier: an integer"),
        ({"metadata": {"name": "x"}, "spec": {"tier": -1}}, r"spec.tier: must be >= 0"),
        ({"metadata": {"name": "x"}, "spec": {"tier": True}}, r"spec.tier: an integer"),
        ({"metadata": {"name": "x"}, "spec": {"tier": "1"}}, r"spec.tier: an integer"),
        ({"metadata": {"name": "x"}, "spec": {"tier": 1, "tierName": 3}}, r"spec.tierName"),
        ({"metadata": {"name": "x"}, "spec": {"tier": 1, "members": {}}}, r"spec.members: exp"),
        (build_hyper_node("x", 1, [{"type": "Rack", "selector": {"exactMatch": {"name": "a"}}}]),
         r"spec.members\[0\].type: must be 'Node' or 'HyperNode'"),
        (build_hyper_node("x", 1, [{"type": NODE}]), r"spec.members\[0\].selector: expected"),
        (build_hyper_node("x", 1, [{"type": NODE, "selector": {
            "exactMatch": {"name": "a"}, "regexMatch": {"pattern": "a"}}}]),
         r"exactly one of exactMatch, regexMatch, labelMatch must be set"),
        (build_hyper_node("x", 1, [member("")]), r"spec.members\[0\].selector.exactMatch.name"),
        (build_hyper_node("x", 1, [member("", NODE, "regex")]), r"regexMatch.pattern"),
        (build_hyper_node("x", 1, [member("", NODE, "label", {"matchLabels": {"rack": 1}})]),
         r"labelMatch.matchLabels: keys and values must be strings"),
        (build_hyper_node("x", 1, [member("", NODE, "label", {"matchExpressions": [
            {"operator": "Exists"}]})]), r"labelMatch.matchExpressions\[0\].key"),
    ],
)  # fmt: skip
def test_malformed_hyper_nodes_raise_naming_the_object_and_field(obj, message):
    with pytest.raises(HyperNodeSpecError, match=message):
        HyperNodeTree.build([obj], {})


def test_duplicate_names_in_a_build_are_rejected():
    obj = build_hyper_node("x", 1, [member("a")])
    with pytest.raises(HyperNodeSpecError, match=r"'x': metadata\.name: duplicate"):
        HyperNodeTree.build([obj, obj], {})


def test_a_malformed_update_leaves_the_store_unchanged():
    store = HyperNodeStore()
    store.set_node("a", {})
    store.set_hyper_node(build_hyper_node("x", 1, [member("a")]))
    before = store.tree()
    with pytest.raises(HyperNodeSpecError):
        store.set_hyper_node(build_hyper_node("x", -2, [member("a")]))
    assert store.tree() is before
    assert store.specs["x"].tier == 1


# ------------------------------------------------------------- cycles and parent conflicts


def test_self_membership_is_a_cycle():
    tree = HyperNodeTree.build([build_hyper_node("a", 1, [member("a", HYPER)])], {}, strict=False)
    (error,) = tree.errors
    assert isinstance(error, HyperNodeCycleError)
    assert error.cycle == ("a", "a")
    assert tree.get("a").parent == ROOT
    assert tree.get("a").children == ()


def test_two_cycle_between_same_tier_hyper_nodes_names_both_and_keeps_a_forest():
    objects = [
        build_hyper_node("a", 2, [member("b", HYPER), member("n1")]),
        build_hyper_node("b", 2, [member("a", HYPER), member("n2")]),
    ]
    with pytest.raises(HyperNodeTopologyError) as raised:
        HyperNodeTree.build(objects, nodes_named("n1", "n2"))
    assert "'a'" in str(raised.value) and "'b'" in str(raised.value)
    tree = HyperNodeTree.build(objects, nodes_named("n1", "n2"), strict=False)
    assert not tree.ready
    # 'a' contains 'b' is granted first (same tier, smaller parent name); 'b' contains 'a' closes
    # the cycle and is refused.
    assert tree.errors[0].cycle == ("a", "b", "a")
    assert summary(tree) == {"a": (2, "", ROOT), "b": (2, "", "a")}
    assert tree.real_nodes("a") == {"n1", "n2"}
    assert any("'a' (tier 2) contains 'b' (tier 2)" in w for w in tree.warnings)


def test_cycle_and_conflict_outcome_does_not_depend_on_input_order():
    objects = [
        build_hyper_node("s0", 1, [member("n0")]),
        build_hyper_node("s1", 2, [member("s0", HYPER), member("s3", HYPER)]),
        build_hyper_node("s2", 3, [member("s1", HYPER), member("s0", HYPER)]),
        build_hyper_node("s3", 4, [member("s2", HYPER)]),
    ]
    outcomes = set()
    for permutation in itertools.permutations(objects):
        tree = HyperNodeTree.build(permutation, nodes_named("n0"), strict=False)
        outcomes.add((tuple(sorted(summary(tree).items())), tuple(map(str, tree.errors))))
    assert len(outcomes) == 1
    ((structure, errors),) = outcomes
    assert dict(structure)["s0"] == (1, "", "s1")  # closest claimer keeps it
    assert len(errors) == 2


def test_missing_hyper_node_member_is_reported_and_adopted_once_created():
    store = HyperNodeStore()
    store.set_node("a", {})
    store.set_hyper_node(build_hyper_node("spine", 2, [member("leaf", HYPER)]))
    tree = store.tree()
    assert tree.ready
    assert any("member HyperNode 'leaf' does not exist" in w for w in tree.warnings)
    store.set_hyper_node(build_hyper_node("leaf", 1, [member("a")]))
    tree = store.tree()
    assert not tree.warnings
    assert tree.get("leaf").parent == "spine"
    assert tree.real_nodes("spine") == {"a"}


# -------------------------------------------------------------------------- store updates


def test_deleting_a_parent_frees_its_child_for_the_other_claimer():
    """Upstream rebuilds every HyperNode that claims a released member
    (hyperNodesThatClaimMember); a full derivation does it by construction."""
    store = HyperNodeStore()
    store.set_node("n", {})
    store.set_hyper_node(build_hyper_node("leaf", 1, [member("n")]))
    store.set_hyper_node(build_hyper_node("near", 2, [member("leaf", HYPER)]))
    store.set_hyper_node(build_hyper_node("far", 3, [member("leaf", HYPER)]))
    assert store.tree().get("leaf").parent == "near"
    assert not store.tree().ready
    assert store.delete_hyper_node("near")
    assert not store.delete_hyper_node("near")
    tree = store.tree()
    assert tree.ready
    assert tree.get("leaf").parent == "far"
    assert tree.real_nodes("far") == {"n"}


def test_node_events_update_selector_members_and_the_root():
    store = HyperNodeStore()
    store.set_hyper_node(
        build_hyper_node("gpu", 1, [member("", NODE, "label", {"matchLabels": {"gpu": "true"}})])
    )
    store.set_hyper_node(build_hyper_node("rack", 1, [member("^rack-", NODE, "regex")]))
    store.set_node("rack-1", {"gpu": "true"})
    store.set_node("other", {})
    tree = store.tree()
    assert tree.real_nodes("gpu") == {"rack-1"}
    assert tree.real_nodes("rack") == {"rack-1"}
    assert tree.nodes == {"rack-1", "other"}

    assert not store.set_node("other", {})  # a status-only update changes nothing
    assert store.tree() is tree
    assert store.set_node("other", {"gpu": "true"})
    assert store.set_node("rack-1", {"gpu": "false"})
    tree = store.tree()
    assert tree.real_nodes("gpu") == {"other"}
    assert tree.real_nodes("rack") == {"rack-1"}

    assert store.delete_node("rack-1")
    assert not store.delete_node("rack-1")
    tree = store.tree()
    assert tree.real_nodes("rack") == frozenset()
    assert tree.nodes == {"other"}
    assert set(store.node_names) == {"other"}


def test_schedulable_nodes_restrict_real_sets_but_not_selector_resolution():
    """Upstream resolves members against every node and the session keeps only ready nodes."""
    store = HyperNodeStore()
    for name in ("a", "b", "c"):
        store.set_node(name, {})
    store.set_hyper_node(build_hyper_node("s", 1, [member(".", NODE, "regex")]))
    ready = store.tree(["a", "b", "ghost"])
    assert ready.nodes == {"a", "b"}
    assert ready.real_nodes("s") == {"a", "b"}
    assert store.tree(["b", "a"]) is ready  # same set, same cached tree
    assert store.tree().real_nodes("s") == {"a", "b", "c"}


def test_deleting_an_unknown_hyper_node_or_adding_an_identical_one_changes_nothing():
    store = HyperNodeStore()
    tree = store.tree()
    assert not store.delete_hyper_node("nope")
    spec = HyperNodeSpec.from_object(build_hyper_node("x", 1, [member("a")]))
    assert store.set_hyper_node(spec)
    assert not store.set_hyper_node(spec)
    assert store.tree() is not tree


# ------------------------------------------------------------------------- property test


@st.composite
def random_topologies(draw):
    """A random tree of HyperNodes over random nodes, Node members by exact, regex or label
    selector, plus a few random extra HyperNode memberships that may create cycles or
    second parents."""
    node_count = draw(st.integers(min_value=1, max_value=20))
    nodes = {f"n{i}": {"grp": f"g{i % 3}"} for i in range(node_count)}
    hyper_count = draw(st.integers(min_value=0, max_value=10))
    tiers = [draw(st.integers(min_value=0, max_value=4)) for _ in range(hyper_count)]
    names = [f"h{i}" for i in range(hyper_count)]
    members: dict[str, list[dict]] = {name: [] for name in names}
    for index, name in enumerate(names):
        higher = [other for j, other in enumerate(names) if tiers[j] > tiers[index]]
        if higher and draw(st.booleans()):
            members[draw(st.sampled_from(higher))].append(member(name, HYPER))
    for node in nodes:
        if names and draw(st.booleans()):
            owner = draw(st.sampled_from(names))
            kind = draw(st.sampled_from(["exact", "regex", "label"]))
            if kind == "exact":
                members[owner].append(member(node))
            elif kind == "regex":
                members[owner].append(member(f"^{node}$", NODE, "regex"))
            else:
                members[owner].append(
                    member("", NODE, "label", {"matchLabels": {"grp": nodes[node]["grp"]}})
                )
    if len(names) >= 2:
        for _ in range(draw(st.integers(min_value=0, max_value=3))):
            parent, child = draw(st.permutations(names))[:2]
            members[parent].append(member(child, HYPER))
    objects = [
        build_hyper_node(name, tier, members[name]) for name, tier in zip(names, tiers, strict=True)
    ]
    return objects, nodes


@settings(max_examples=200, deadline=None)
@given(random_topologies(), st.data())
def test_property_lowest_hyper_node_contains_node_and_lca_contains_both(topology, data):
    objects, nodes = topology
    tree = HyperNodeTree.build(objects, nodes, strict=False)
    if tree.errors:
        with pytest.raises(HyperNodeTopologyError):
            HyperNodeTree.build(objects, nodes)

    # The structure is a forest under the root, whatever memberships were refused.
    for name, info in tree.hyper_nodes.items():
        assert tree.ancestors(name)[-1] == ROOT
        for child in info.children:
            assert tree.hyper_nodes[child].parent == name
            assert tree.hyper_nodes[child].real_nodes <= info.real_nodes
        assert info.node_members <= info.real_nodes
    assert tree.root.real_nodes == set(nodes)

    for node in nodes:
        lowest = tree.lowest_tier_hyper_node(node)
        assert lowest is not None and tree.contains_node(lowest, node)
        containing = [info.tier for info in tree.hyper_nodes.values() if node in info.real_nodes]
        assert tree.hyper_nodes[lowest].tier == min(containing)

    names = sorted(tree.hyper_nodes)
    first = data.draw(st.sampled_from(names))
    second = data.draw(st.sampled_from(names))
    common = tree.lca(first, second)
    assert common is not None
    assert tree.real_nodes(first) | tree.real_nodes(second) <= tree.real_nodes(common)
    assert common in tree.ancestors(first) and common in tree.ancestors(second)
    for child in tree.hyper_nodes[common].children:  # and it is the lowest such ancestor
        assert not (child in tree.ancestors(first) and child in tree.ancestors(second))

    node_a = data.draw(st.sampled_from(sorted(nodes)))
    node_b = data.draw(st.sampled_from(sorted(nodes)))
    node_lca = tree.lca(tree.lowest_tier_hyper_node(node_a), tree.lowest_tier_hyper_node(node_b))
    assert node_lca is not None
    assert tree.contains_node(node_lca, node_a) and tree.contains_node(node_lca, node_b)
    assert tree.lca_tier(node_a, node_b) == tree.hyper_nodes[node_lca].tier
