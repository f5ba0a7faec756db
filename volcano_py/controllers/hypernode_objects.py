"""HyperNode objects as the discovery sources build them, what a rediscovery changes in the
cluster (``reconcileTopology``), and the ``status.nodeCount`` the controller keeps
(``syncHyperNodeStatus``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.hypernode import parse_member
from volcano_py.controllers import raw
from volcano_py.controllers.hypernode_config import NETWORK_TOPOLOGY_SOURCE_LABEL

API_VERSION: Final = "topology.volcano.sh/v1alpha1"


def build_hyper_node(
    name: str,
    tier: int,
    member_names: Sequence[str],
    *,
    member_type: str,
    labels: Mapping[str, str],
    tier_name: str = "",
) -> dict[str, Any]:
    """``BuildHyperNode``/``BuildHyperNodeWithTierName``: exact-match members, sorted."""
    spec: dict[str, Any] = {
        "tier": tier,
        "members": [
            {"type": member_type, "selector": {"exactMatch": {"name": member}}}
            for member in sorted(member_names)
        ],
    }
    if tier_name:
        spec["tierName"] = tier_name
    return {
        "apiVersion": API_VERSION,
        "kind": "HyperNode",
        "metadata": {"name": name, "labels": dict(labels)},
        "spec": spec,
    }


@dataclass
class TopologyChanges:
    """What one source's discovery result asks of the cluster."""

    create: list[dict[str, Any]] = field(default_factory=list)
    # (the object as it is, the object to PUT): spec replaced, labels/annotations merged.
    update: list[tuple[Mapping[str, Any], dict[str, Any]]] = field(default_factory=list)
    delete: list[str] = field(default_factory=list)


def reconcile(
    source: str, discovered: Iterable[Mapping[str, Any]], existing: Iterable[Mapping[str, Any]]
) -> TopologyChanges:
    """Create what is new, update what exists (only when it differs: upstream writes every
    one each round, which changes nothing but the resourceVersion), delete this source's
    HyperNodes that were not discovered again. HyperNodes of other sources and hand-made ones
    are never touched."""
    ours = {
        raw.name(hyper_node): hyper_node
        for hyper_node in existing
        if raw.labels_of(hyper_node).get(NETWORK_TOPOLOGY_SOURCE_LABEL) == source
    }
    changes = TopologyChanges()
    for hyper_node in discovered:
        wanted = dict(hyper_node)
        meta = dict(wanted.get("metadata") or {})
        meta["labels"] = {**(meta.get("labels") or {}), NETWORK_TOPOLOGY_SOURCE_LABEL: source}
        wanted["metadata"] = meta
        current = ours.pop(meta["name"], None)
        if current is None:
            changes.create.append(wanted)
            continue
        updated = _merged(current, wanted)
        if updated != current:
            changes.update.append((current, updated))
    changes.delete = sorted(ours)
    return changes


def _merged(current: Mapping[str, Any], wanted: Mapping[str, Any]) -> dict[str, Any]:
    """``UpdateHyperNode``: the discovered spec, labels and annotations added to the current
    ones (never removed)."""
    meta = dict(current.get("metadata") or {})
    wanted_meta = wanted.get("metadata") or {}
    meta["labels"] = {**(meta.get("labels") or {}), **(wanted_meta.get("labels") or {})}
    annotations = {**(meta.get("annotations") or {}), **(wanted_meta.get("annotations") or {})}
    if annotations:
        meta["annotations"] = annotations
    merged = dict(current)
    merged["metadata"] = meta
    merged["spec"] = wanted.get("spec") or {}
    return merged


def member_node_count(
    hyper_node: Mapping[str, Any], node_labels: Mapping[str, Mapping[str, str]]
) -> int:
    """``status.nodeCount`` as upstream counts it (``GetMembers`` over each member on its
    own): every exact-match name, of any member type and whether or not such a node exists,
    plus the nodes a regex or label member selects (of either member type). A malformed
    member, an invalid pattern or an empty label selector adds nothing."""
    hyper_node_name = raw.name(hyper_node)
    members = raw.items(raw.spec(hyper_node).get("members"))
    names: set[str] = set()
    for index, entry in enumerate(members):
        member = parse_member(hyper_node_name, f"spec.members[{index}]", entry)
        if member is None:
            continue
        if member.kind == "exact":
            names.add(member.name)
        elif member.regex is not None:
            names.update(filter(member.regex.search, node_labels))
        elif member.label_selector is not None:
            matches = member.label_selector.matches
            names.update(node for node, labels in node_labels.items() if matches(labels))
    return len(names)
