"""HyperNodes from node labels: the ``label`` discovery source
(``pkg/controllers/hypernode/discovery/label``).

Its config names, per network topology type, node label keys from the top tier down to the
node itself::

    config:
      networkTopologyTypes:
        topologyA3:
          - nodeLabel: volcano.sh/hypercluster    # tier 2
          - nodeLabel: volcano.sh/hypernode       # tier 1
          - nodeLabel: kubernetes.io/hostname     # the node (not a tier)

Nodes sharing a tier-1 label value form one tier-1 HyperNode (members: the nodes); tier-1
HyperNodes whose nodes share a tier-2 value form a tier-2 HyperNode, and so on. A node
without the tier-1 label is in none; the walk up stops at the first label a node lacks.

Names are ``hypernode-<type>-tier<N>-<5 random characters>``; an existing HyperNode of this
source carrying the same label and value and the ``hypernode-<type>-tier<N>`` prefix keeps
its name, so rediscovery updates rather than replaces. The suffix source is a parameter
(random live, as upstream's; seeded where a run must repeat).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.controllers import raw
from volcano_py.controllers.hypernode_config import NETWORK_TOPOLOGY_SOURCE_LABEL
from volcano_py.controllers.hypernode_objects import build_hyper_node

SOURCE: Final = "label"
MAX_TYPE_NAME_LENGTH: Final = 20
NAME_ATTEMPTS: Final = 20
# k8s.io/apimachinery/pkg/util/rand's alphabet (no vowels, no confusable characters).
_SUFFIX_ALPHABET: Final = "bcdfghjklmnpqrstvwxz2456789"

NodeLabels = Mapping[str, Mapping[str, str]]


def random_suffix(rng: random.Random | None = None) -> str:
    chooser = rng or random.SystemRandom()
    return "".join(chooser.choice(_SUFFIX_ALPHABET) for _ in range(5))


@dataclass(frozen=True)
class LabelTopology:
    """Per topology type, the tier label keys from tier 1 upwards."""

    tiers_by_type: Mapping[str, tuple[str, ...]]
    problems: tuple[str, ...] = ()

    def keys(self) -> frozenset[str]:
        return frozenset(key for keys in self.tiers_by_type.values() for key in keys)

    def topology_labels(self, labels: Mapping[str, str]) -> dict[str, str]:
        """The node's labels this configuration reads: a change in them means rediscovery."""
        return {key: labels[key] for key in self.keys() if key in labels}


def parse_label_topology(config: Mapping[str, Any]) -> LabelTopology:
    """``parseCfg``: a type whose name is over 20 characters, or that repeats a label, is left
    out (upstream logs it as an error; here it is a problem the caller logs)."""
    types = config.get("networkTopologyTypes")
    if types is None:
        return LabelTopology({})
    if not isinstance(types, Mapping):
        return LabelTopology({}, ("networkTopologyTypes: must be a mapping of type to labels",))
    tiers: dict[str, tuple[str, ...]] = {}
    problems: list[str] = []
    for type_name, entries in types.items():
        where = f"networkTopologyTypes.{type_name}"
        if len(str(type_name)) > MAX_TYPE_NAME_LENGTH:
            problems.append(f"{where}: the type name is longer than {MAX_TYPE_NAME_LENGTH}")
            continue
        keys = _label_keys(entries)
        if keys is None:
            problems.append(f"{where}: must be a list of {{nodeLabel: KEY}}")
            continue
        if len(set(keys)) != len(keys):
            problems.append(f"{where}: there are duplicate labels")
            continue
        # The last label names the node itself; the others are tiers, top first.
        tiers[str(type_name)] = tuple(reversed(keys[:-1]))
    return LabelTopology(tiers, tuple(problems))


def _label_keys(entries: object) -> list[str] | None:
    if not isinstance(entries, list):
        return None
    keys = []
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("nodeLabel", ""), str):
            return None
        keys.append(str(entry.get("nodeLabel", "")))
    return keys


@dataclass
class _Group:
    tier: int
    tier_name: str
    labels: dict[str, str]
    members: set[str] = field(default_factory=set)


def clean_type_name(name: str) -> str:
    """Lower-case letters, digits, '.' and '-' kept; anything else becomes '-'."""
    return "".join(
        c.lower() if c.isalpha() else c if c.isdigit() or c in ".-" else "-" for c in name
    )


def discover_from_labels(
    topology: LabelTopology,
    node_labels: NodeLabels,
    existing: Iterable[Mapping[str, Any]],
    suffix: Callable[[], str] = random_suffix,
) -> list[dict[str, Any]]:
    """The HyperNodes the nodes' labels describe, sorted by name."""
    namer = _Namer(existing, suffix)
    groups: dict[str, _Group] = {}
    by_label_value: dict[tuple[str, str], str] = {}
    for node in sorted(node_labels):
        labels = node_labels[node]
        for type_name in sorted(topology.tiers_by_type):
            member = node
            for tier, key in enumerate(topology.tiers_by_type[type_name], start=1):
                if key not in labels:
                    break
                value = labels[key]
                name = by_label_value.get((key, value))
                if name is None:
                    name = namer.name(type_name, key, value, tier, groups)
                    by_label_value[(key, value)] = name
                group = groups.setdefault(name, _Group(tier, key, {key: value}))
                group.members.add(member)
                member = name
    return [
        build_hyper_node(
            name,
            group.tier,
            sorted(group.members),
            member_type="Node" if group.tier == 1 else "HyperNode",
            labels={NETWORK_TOPOLOGY_SOURCE_LABEL: SOURCE, **group.labels},
            tier_name=group.tier_name,
        )
        for name, group in sorted(groups.items())
    ]


class _Namer:
    """``buildHyperNodeName``: an existing HyperNode of this source with the label, else a new
    name no HyperNode (existing or just named) has."""

    def __init__(self, existing: Iterable[Mapping[str, Any]], suffix: Callable[[], str]) -> None:
        self.names: set[str] = set()
        # (label key, value) -> this source's HyperNodes carrying it, by name: the lookup
        # upstream makes with a label selector, without scanning every HyperNode per name.
        self.by_label: dict[tuple[str, str], list[str]] = {}
        for hyper_node in existing:
            hyper_node_name = raw.name(hyper_node)
            self.names.add(hyper_node_name)
            labels = raw.labels_of(hyper_node)
            if labels.get(NETWORK_TOPOLOGY_SOURCE_LABEL) != SOURCE:
                continue
            for label in labels.items():
                self.by_label.setdefault(label, []).append(hyper_node_name)
        for found in self.by_label.values():
            found.sort()
        self.suffix = suffix

    def name(
        self, type_name: str, key: str, value: str, tier: int, taken: Mapping[str, object]
    ) -> str:
        prefix = f"hypernode-{clean_type_name(type_name)}-tier{tier}"
        for candidate in self.by_label.get((key, value), ()):
            if candidate.startswith(prefix):
                return candidate
        for _ in range(NAME_ATTEMPTS):
            candidate = f"{prefix}-{self.suffix()}"
            if candidate not in self.names and candidate not in taken:
                return candidate
        raise RuntimeError(f"unable to get unique hyperNodeName after {NAME_ATTEMPTS} attempts")


__all__ = [
    "SOURCE",
    "LabelTopology",
    "clean_type_name",
    "discover_from_labels",
    "parse_label_topology",
    "random_suffix",
]
