"""HyperNode objects for tests, shaped like upstream's ``api.BuildHyperNode`` fixtures.

Raw ``topology.volcano.sh/v1alpha1`` dicts (what a watch delivers), so tests go through the
cache's own parsing; members are ``exactMatch`` selectors unless a test builds its own.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def build_hyper_node(
    name: str,
    tier: int,
    nodes: Iterable[str] = (),
    hyper_nodes: Iterable[str] = (),
    *,
    tier_name: str = "",
) -> dict[str, Any]:
    """A HyperNode whose members are the named nodes, then the named HyperNodes."""
    members: list[dict[str, Any]] = [
        {"type": "Node", "selector": {"exactMatch": {"name": node}}} for node in nodes
    ]
    members += [
        {"type": "HyperNode", "selector": {"exactMatch": {"name": child}}} for child in hyper_nodes
    ]
    spec: dict[str, Any] = {"tier": tier, "members": members}
    if tier_name:
        spec["tierName"] = tier_name
    return {
        "apiVersion": "topology.volcano.sh/v1alpha1",
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": spec,
    }


def hyper_nodes_from_sets(
    tiers: Mapping[int, Iterable[str]], members: Mapping[str, Iterable[str]]
) -> list[dict[str, Any]]:
    """Upstream cases give ``HyperNodesSetByTier`` (tier -> names) and ``HyperNodes`` (name ->
    real nodes). Each HyperNode becomes a member of the lowest higher-tier HyperNode whose real
    nodes include all of its own (the tree those sets describe); lowest-tier HyperNodes list
    their nodes, higher ones their child HyperNodes plus any node no child holds."""
    tier_of = {name: tier for tier, names in tiers.items() for name in names}
    real = {name: frozenset(nodes) for name, nodes in members.items()}
    parent: dict[str, str] = {}
    for name, tier in tier_of.items():
        above = [
            other
            for other, other_tier in tier_of.items()
            if other_tier > tier and real[name] <= real[other]
        ]
        if above:
            parent[name] = min(above, key=lambda other: (tier_of[other], other))
    result = []
    for name in sorted(tier_of):
        children = sorted(child for child, up in parent.items() if up == name)
        covered = frozenset().union(*(real[child] for child in children))
        result.append(build_hyper_node(name, tier_of[name], sorted(real[name] - covered), children))
    return result
