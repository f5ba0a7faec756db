"""The HyperNode network-topology tree (``topology.volcano.sh/v1alpha1`` HyperNode).

A HyperNode groups cluster nodes (``type: Node`` members) or lower HyperNodes (``type: HyperNode``
members) into a network domain; a lower ``tier`` means better locality. The scheduler needs, per
session: each HyperNode's parent and children, its *real-node set* (its Node members plus,
recursively, its children's), HyperNodes grouped by tier, and the virtual root
``<cluster-top-hypernode>`` that parents every parentless HyperNode and covers every node.

Upstream facts this module mirrors:

* member resolution, ``pkg/util/hypernode/member_selector.go`` ``GetMembers``: ``exactMatch`` is
  that name; ``regexMatch`` is every node whose name the pattern *finds* (Go ``MatchString`` is an
  unanchored search; an invalid pattern selects nothing); ``labelMatch`` is every node matched by a
  Kubernetes LabelSelector, and an *empty* selector selects nothing (unlike Kubernetes, where it
  selects everything);
* ``pkg/scheduler/api/hyper_node_info.go`` ``BuildHyperNodeCache``: HyperNode members support only
  ``exactMatch``; a HyperNode has at most one parent; a membership cycle is an error; after such an
  error the HyperNode view is *not ready* (``HyperNodesInfo.Ready``), which makes allocate skip
  every job with a network-topology constraint until the error is fixed, while the HyperNodes
  themselves stay in the view (they are not dropped);
* ``pkg/scheduler/framework/session.go`` ``addClusterTopHyperNode``: the virtual root's tier is
  (max real tier + 1), or 1 with no HyperNodes; session real-node sets contain only session nodes
  (``util.GetRealNodesByHyperNode``), so an ``exactMatch`` naming an unknown node counts for
  nothing;
* ``HyperNodeInfoMap.GetAncestors`` / ``GetLCAHyperNode``, ``util.FindHyperNodeForNode`` and the
  network-topology-aware plugin's ``getHighestAllowedHyperNode`` and BFS gradient walk.

Where upstream's result depends on event arrival or Go map order, this module is deterministic:
membership claims are applied in an order that does not depend on input order (see
``_claim_order``), ties between HyperNodes of one tier go to the smallest name.

Two layers:

* :class:`HyperNodeStore`, fed by the cache with raw HyperNode objects (plain dicts, as from
  ``kubectl get -o yaml`` or a watch) and node labels; it keeps parsed specs and the resolved
  regex/label members up to date incrementally (a node event re-tests only that node);
* :class:`HyperNodeTree`, an immutable snapshot derived from the store in one pass (milliseconds
  for thousands of nodes), shared by every session until the next HyperNode or node-label change.

Rebuilding the structure instead of patching it keeps the cache simple: upstream's incremental
update needs parent pointers that block adoption, a "claimers" rescan after a member is released,
a deleting flag and a readiness flag that can be left stale, and its result depends on the order
events arrive. A full derivation from the specs is order-independent and cheap, and the expensive
part (matching regex/label selectors against every node) stays incremental.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal, TypeGuard

__all__ = [
    "CLUSTER_TOP_HYPER_NODE",
    "MEMBER_TYPE_HYPER_NODE",
    "MEMBER_TYPE_NODE",
    "HyperNodeCycleError",
    "HyperNodeError",
    "HyperNodeInfo",
    "HyperNodeMember",
    "HyperNodeParentConflictError",
    "HyperNodeSpec",
    "HyperNodeSpecError",
    "HyperNodeStore",
    "HyperNodeTopologyError",
    "HyperNodeTree",
    "LabelRequirement",
    "LabelSelector",
    "parse_member",
]

CLUSTER_TOP_HYPER_NODE: Final = "<cluster-top-hypernode>"
MEMBER_TYPE_NODE: Final = "Node"
MEMBER_TYPE_HYPER_NODE: Final = "HyperNode"

_LABEL_OPERATORS: Final = frozenset({"In", "NotIn", "Exists", "DoesNotExist"})

SelectorKind = Literal["exact", "regex", "label"]


# ---------------------------------------------------------------------------------- errors


class HyperNodeError(ValueError):
    """Base class of every HyperNode problem a user can cause."""


class HyperNodeSpecError(HyperNodeError):
    """A HyperNode object is malformed (what the API server's CRD validation would reject)."""

    def __init__(self, hyper_node: str, field_path: str, problem: str) -> None:
        self.hyper_node = hyper_node
        self.field_path = field_path
        self.problem = problem
        where = f"{field_path}: " if field_path else ""
        super().__init__(f"HyperNode {hyper_node!r}: {where}{problem}")


class HyperNodeCycleError(HyperNodeError):
    """HyperNode memberships form a cycle; the membership that closes it is ignored."""

    def __init__(self, cycle: Sequence[str]) -> None:
        # cycle[0] contains cycle[1] contains ... contains cycle[-1] == cycle[0]
        self.cycle = tuple(cycle)
        chain = " contains ".join(repr(name) for name in self.cycle)
        super().__init__(
            f"HyperNode membership cycle: {chain}; the membership "
            f"{self.cycle[-2]!r} -> {self.cycle[-1]!r} is ignored"
        )


class HyperNodeParentConflictError(HyperNodeError):
    """A HyperNode is listed as a member of two HyperNodes; it keeps only one parent."""

    def __init__(self, child: str, parent: str, rejected_parent: str) -> None:
        self.child = child
        self.parent = parent
        self.rejected_parent = rejected_parent
        super().__init__(
            f"HyperNode {child!r} is a member of both {parent!r} and {rejected_parent!r}, "
            f"but a HyperNode has at most one parent: it stays under {parent!r} and its "
            f"membership in {rejected_parent!r} is ignored"
        )


class HyperNodeTopologyError(HyperNodeError):
    """Raised by a strict build: every cycle and parent conflict found, one per line."""

    def __init__(self, errors: Sequence[HyperNodeError]) -> None:
        self.errors = tuple(errors)
        lines = "\n".join(f"  - {error}" for error in self.errors)
        super().__init__(f"invalid HyperNode topology ({len(self.errors)} problem(s)):\n{lines}")


# ---------------------------------------------------------------------------- label selectors


@dataclass(slots=True, frozen=True)
class LabelRequirement:
    """One ``matchExpressions`` entry of a Kubernetes LabelSelector."""

    key: str
    operator: str
    values: frozenset[str] = frozenset()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "In":
            return self.key in labels and labels[self.key] in self.values
        if self.operator == "NotIn":
            # Kubernetes: a node without the key satisfies NotIn.
            return self.key not in labels or labels[self.key] not in self.values
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        return False


@dataclass(slots=True, frozen=True)
class LabelSelector:
    """A Kubernetes LabelSelector (``matchLabels`` AND ``matchExpressions``)."""

    match_labels: tuple[tuple[str, str], ...] = ()
    match_expressions: tuple[LabelRequirement, ...] = ()

    @property
    def is_empty(self) -> bool:
        return not self.match_labels and not self.match_expressions

    def matches(self, labels: Mapping[str, str]) -> bool:
        # GetMembers: an empty labelMatch selects nothing (Kubernetes would select everything).
        if self.is_empty:
            return False
        for key, value in self.match_labels:
            if labels.get(key) != value:
                return False
        return all(requirement.matches(labels) for requirement in self.match_expressions)


# ---------------------------------------------------------------------------------- specs


@dataclass(slots=True, frozen=True)
class HyperNodeMember:
    """One ``spec.members[]`` entry.

    ``ignored_reason`` is set when the member is valid YAML but selects nothing (an invalid
    regex or label selector, an empty label selector, a non-exact selector on a HyperNode
    member); upstream logs and skips such members, we keep the reason so it can be reported.
    """

    type: str
    kind: SelectorKind
    name: str = ""
    pattern: str = ""
    label_selector: LabelSelector | None = None
    ignored_reason: str | None = None
    regex: re.Pattern[str] | None = field(default=None, compare=False, repr=False)

    @property
    def is_node_selector(self) -> bool:
        """A Node member whose resolved set depends on the cluster's nodes (regex or label)."""
        return self.type == MEMBER_TYPE_NODE and self.kind != "exact" and not self.ignored_reason

    def selects_node(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """Whether this regex/label Node member selects the node (exact members never do)."""
        if not self.is_node_selector:
            return False
        if self.regex is not None:
            return self.regex.search(node_name) is not None
        return self.label_selector is not None and self.label_selector.matches(labels)


@dataclass(slots=True, frozen=True)
class HyperNodeSpec:
    """The parts of a HyperNode object the scheduler reads. Equality ignores metadata, so an
    update that changes only labels or status is recognised as a no-op."""

    name: str
    tier: int
    tier_name: str = ""
    members: tuple[HyperNodeMember, ...] = ()
    # Derived once: every tree derivation reads them.
    exact_node_names: frozenset[str] = field(init=False, compare=False, repr=False)
    child_names: tuple[str, ...] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        exact_nodes: set[str] = set()
        children: dict[str, None] = {}  # ordered and deduplicated
        for member in self.members:
            if member.kind != "exact":
                continue
            if member.type == MEMBER_TYPE_NODE:
                exact_nodes.add(member.name)
            else:
                children[member.name] = None
        # The dataclass is frozen; these are computed from the fields, never reassigned.
        object.__setattr__(self, "exact_node_names", frozenset(exact_nodes))
        object.__setattr__(self, "child_names", tuple(children))

    @classmethod
    def from_object(cls, obj: Mapping[str, Any]) -> HyperNodeSpec:
        """Parse a raw HyperNode object; raise :class:`HyperNodeSpecError` naming the field."""
        return _parse_hyper_node(obj)

    def select_nodes(self, node_labels: Mapping[str, Mapping[str, str]]) -> set[str]:
        """The nodes its regex/label Node members select among ``node_labels``."""
        selected: set[str] = set()
        for member in self.members:
            if not member.is_node_selector:
                continue
            if member.regex is not None:
                # filter() keeps the loop in C; a match object is truthy.
                selected.update(filter(member.regex.search, node_labels))
            elif member.label_selector is not None:
                matches = member.label_selector.matches
                selected.update(name for name, labels in node_labels.items() if matches(labels))
        return selected

    @property
    def is_leaf(self) -> bool:
        """No HyperNode members at all (upstream ``GetLeafNodes`` / regex-leaf definition)."""
        return all(member.type != MEMBER_TYPE_HYPER_NODE for member in self.members)

    @property
    def has_node_selectors(self) -> bool:
        """Some Node member is a regex or label selector, so node events can change it."""
        return any(
            member.type == MEMBER_TYPE_NODE and member.kind != "exact" for member in self.members
        )

    def selects_node(self, node_name: str, labels: Mapping[str, str]) -> bool:
        """Upstream ``NodeRegexOrLabelMatchLeafHyperNode``: a regex/label Node member selects
        the node. Exact members are deliberately not consulted."""
        return any(member.selects_node(node_name, labels) for member in self.members)

    def warnings(self) -> tuple[str, ...]:
        return tuple(
            f"HyperNode {self.name!r}: spec.members[{index}]: {member.ignored_reason}"
            for index, member in enumerate(self.members)
            if member.ignored_reason
        )


def _is_mapping(value: object) -> TypeGuard[Mapping[str, Any]]:
    # Raw objects are dicts; testing dict first skips the slow ABC check.
    return isinstance(value, (dict, Mapping))


def _type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def _parse_hyper_node(obj: Mapping[str, Any]) -> HyperNodeSpec:
    if not _is_mapping(obj):
        raise HyperNodeSpecError("<unnamed>", "", f"expected a mapping, got {_type_name(obj)}")
    metadata = obj.get("metadata")
    name = metadata.get("name") if _is_mapping(metadata) else None
    if not isinstance(name, str) or not name:
        raise HyperNodeSpecError("<unnamed>", "metadata.name", "a non-empty string is required")
    spec = obj.get("spec")
    if not _is_mapping(spec):
        raise HyperNodeSpecError(name, "spec", f"expected a mapping, got {_type_name(spec)}")

    tier = spec.get("tier")
    # bool is an int subclass; a YAML "true" is not a tier.
    if isinstance(tier, bool) or not isinstance(tier, int):
        raise HyperNodeSpecError(name, "spec.tier", f"an integer is required, got {tier!r}")
    if tier < 0:
        raise HyperNodeSpecError(name, "spec.tier", f"must be >= 0, got {tier}")

    tier_name = spec.get("tierName") or ""
    if not isinstance(tier_name, str):
        raise HyperNodeSpecError(name, "spec.tierName", f"a string is required, got {tier_name!r}")

    raw_members = spec.get("members")
    if raw_members is None:
        raw_members = []
    if not isinstance(raw_members, list):
        raise HyperNodeSpecError(
            name, "spec.members", f"expected a list, got {_type_name(raw_members)}"
        )
    members = tuple(
        _parse_member(name, f"spec.members[{index}]", raw) for index, raw in enumerate(raw_members)
    )
    return HyperNodeSpec(name=name, tier=tier, tier_name=tier_name, members=members)


def parse_member(hyper_node: str, path: str, raw: object) -> HyperNodeMember | None:
    """One ``spec.members[]`` entry, or None when it is malformed (no selector, two kinds,
    a wrong type): for readers that take each member on its own, as ``GetMembers`` does."""
    try:
        return _parse_member(hyper_node, path, raw)
    except HyperNodeSpecError:
        return None


def _parse_member(hyper_node: str, path: str, raw: object) -> HyperNodeMember:
    if not _is_mapping(raw):
        raise HyperNodeSpecError(hyper_node, path, f"expected a mapping, got {_type_name(raw)}")
    member_type = raw.get("type")
    if member_type not in (MEMBER_TYPE_NODE, MEMBER_TYPE_HYPER_NODE):
        raise HyperNodeSpecError(
            hyper_node, f"{path}.type", f"must be 'Node' or 'HyperNode', got {member_type!r}"
        )
    selector = raw.get("selector")
    if not _is_mapping(selector):
        raise HyperNodeSpecError(
            hyper_node, f"{path}.selector", f"expected a mapping, got {_type_name(selector)}"
        )
    kinds = [
        key for key in ("exactMatch", "regexMatch", "labelMatch") if selector.get(key) is not None
    ]
    if len(kinds) != 1:
        # The CRD's CEL rules: exactly one selector kind.
        raise HyperNodeSpecError(
            hyper_node,
            f"{path}.selector",
            f"exactly one of exactMatch, regexMatch, labelMatch must be set, got {kinds or 'none'}",
        )
    kind = kinds[0]
    body = selector[kind]
    body_path = f"{path}.selector.{kind}"
    if not _is_mapping(body):
        raise HyperNodeSpecError(hyper_node, body_path, f"expected a mapping, got {body!r}")

    if kind == "exactMatch":
        member_name = body.get("name")
        if not isinstance(member_name, str) or not member_name:
            raise HyperNodeSpecError(
                hyper_node, f"{body_path}.name", "a non-empty string is required"
            )
        return HyperNodeMember(type=member_type, kind="exact", name=member_name)

    # BuildHyperNodeCache resolves HyperNode members through exactMatch only.
    ignored_for_hyper_node = (
        "HyperNode members support only exactMatch; this member is ignored"
        if member_type == MEMBER_TYPE_HYPER_NODE
        else None
    )

    if kind == "regexMatch":
        pattern = body.get("pattern")
        if not isinstance(pattern, str) or not pattern:
            raise HyperNodeSpecError(
                hyper_node, f"{body_path}.pattern", "a non-empty string is required"
            )
        try:
            compiled: re.Pattern[str] | None = re.compile(pattern)
        except re.error as error:
            # GetMembers logs and selects nothing; the API server does not validate patterns.
            return HyperNodeMember(
                type=member_type,
                kind="regex",
                pattern=pattern,
                ignored_reason=ignored_for_hyper_node
                or f"invalid regexMatch pattern {pattern!r} ({error}); it selects no node",
            )
        return HyperNodeMember(
            type=member_type,
            kind="regex",
            pattern=pattern,
            ignored_reason=ignored_for_hyper_node,
            regex=compiled,
        )

    label_selector, problem = _parse_label_selector(hyper_node, body_path, body)
    if problem is None and label_selector.is_empty:
        problem = "labelMatch is empty; Volcano treats an empty selector as selecting no node"
    return HyperNodeMember(
        type=member_type,
        kind="label",
        label_selector=label_selector,
        ignored_reason=ignored_for_hyper_node or problem,
    )


def _parse_label_selector(
    hyper_node: str, path: str, body: Mapping[str, Any]
) -> tuple[LabelSelector, str | None]:
    """Structural errors raise; semantic ones (what ``LabelSelectorAsSelector`` rejects, which
    upstream logs and turns into "selects nothing") come back as a reason."""
    raw_labels = body.get("matchLabels") or {}
    if not _is_mapping(raw_labels):
        raise HyperNodeSpecError(hyper_node, f"{path}.matchLabels", "expected a mapping")
    for key, value in raw_labels.items():
        if not isinstance(key, str) or not isinstance(value, str):
            raise HyperNodeSpecError(
                hyper_node,
                f"{path}.matchLabels",
                f"keys and values must be strings, got {key!r}: {value!r}",
            )
    raw_expressions = body.get("matchExpressions") or []
    if not isinstance(raw_expressions, list):
        raise HyperNodeSpecError(hyper_node, f"{path}.matchExpressions", "expected a list")

    problem: str | None = None
    requirements: list[LabelRequirement] = []
    for index, raw in enumerate(raw_expressions):
        entry_path = f"{path}.matchExpressions[{index}]"
        if not _is_mapping(raw):
            raise HyperNodeSpecError(hyper_node, entry_path, "expected a mapping")
        requirement_key = raw.get("key")
        operator = raw.get("operator")
        values = raw.get("values") or []
        if not isinstance(requirement_key, str) or not requirement_key:
            raise HyperNodeSpecError(
                hyper_node, f"{entry_path}.key", "a non-empty string is required"
            )
        if not isinstance(operator, str):
            raise HyperNodeSpecError(hyper_node, f"{entry_path}.operator", "a string is required")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise HyperNodeSpecError(
                hyper_node, f"{entry_path}.values", "a list of strings is required"
            )
        if problem is None:
            if operator not in _LABEL_OPERATORS:
                problem = f"matchExpressions[{index}]: unknown operator {operator!r}"
            elif operator in ("In", "NotIn") and not values:
                problem = f"matchExpressions[{index}]: operator {operator} needs values"
            elif operator in ("Exists", "DoesNotExist") and values:
                problem = f"matchExpressions[{index}]: operator {operator} takes no values"
        requirements.append(LabelRequirement(requirement_key, operator, frozenset(values)))
    selector = LabelSelector(
        match_labels=tuple(sorted(raw_labels.items())),
        match_expressions=tuple(requirements),
    )
    if problem is not None:
        problem = f"invalid labelMatch ({problem}); it selects no node"
    return selector, problem


# ----------------------------------------------------------------------------------- tree


@dataclass(slots=True, frozen=True)
class HyperNodeInfo:
    """One HyperNode in a :class:`HyperNodeTree` (the virtual root included)."""

    name: str
    tier: int
    tier_name: str
    # The virtual root for a parentless real HyperNode; None only for the virtual root.
    parent: str | None
    children: tuple[str, ...]
    # Node members (resolved, restricted to the tree's nodes) and the recursive union.
    node_members: frozenset[str] = field(repr=False)
    real_nodes: frozenset[str] = field(repr=False)

    @property
    def is_virtual_root(self) -> bool:
        return self.name == CLUSTER_TOP_HYPER_NODE


@dataclass(slots=True, frozen=True)
class HyperNodeTree:
    """An immutable HyperNode forest under the session's virtual root.

    Build it with :meth:`build` (from raw objects) or :meth:`HyperNodeStore.tree`. Never mutate
    its mappings: one tree is shared by every session until the HyperNodes or nodes change.
    """

    hyper_nodes: Mapping[str, HyperNodeInfo] = field(repr=False)
    # Ascending, the virtual root's tier last (``HyperNodesTiers``).
    tiers: tuple[int, ...]
    hyper_nodes_by_tier: Mapping[int, frozenset[str]] = field(repr=False)
    tier_name_to_tier: Mapping[str, int]
    # Cycles and parent conflicts; any of them makes the tree not ready.
    errors: tuple[HyperNodeError, ...] = ()
    # Members that select nothing, missing HyperNode members, tier inconsistencies.
    warnings: tuple[str, ...] = ()
    # tier -> {node -> the HyperNode of that tier containing it}, filled on first use: a
    # session that schedules no topology-aware job never pays for it. Racing fills are benign.
    _node_index: dict[int, dict[str, str]] = field(
        default_factory=dict, init=False, compare=False, repr=False
    )

    # ---------------------------------------------------------------- construction

    @classmethod
    def build(
        cls,
        hyper_nodes: Iterable[Mapping[str, Any] | HyperNodeSpec],
        nodes: Mapping[str, Mapping[str, str] | None],
        *,
        schedulable_nodes: Collection[str] | None = None,
        strict: bool = True,
    ) -> HyperNodeTree:
        """The tree of ``hyper_nodes`` (raw objects or parsed specs) over ``nodes`` (name ->
        labels). Selectors are resolved against all ``nodes``; real-node sets and the virtual
        root keep only ``schedulable_nodes`` (default: all), as a session keeps only its ready
        nodes. A malformed object raises :class:`HyperNodeSpecError`; with ``strict`` a cycle or
        parent conflict raises :class:`HyperNodeTopologyError`, otherwise it is recorded in
        ``errors`` and the tree is not ``ready`` (what the scheduler cache does)."""
        store = HyperNodeStore()
        for node_name, labels in nodes.items():
            store.set_node(node_name, labels)
        for obj in hyper_nodes:
            spec = obj if isinstance(obj, HyperNodeSpec) else HyperNodeSpec.from_object(obj)
            if spec.name in store.specs:
                raise HyperNodeSpecError(spec.name, "metadata.name", "duplicate HyperNode name")
            store.set_hyper_node(spec)
        return store.tree(schedulable_nodes, strict=strict)

    # ---------------------------------------------------------------- basic lookups

    @property
    def ready(self) -> bool:
        """Upstream ``HyperNodesReadyToSchedule``: topology-constrained jobs wait while False."""
        return not self.errors

    @property
    def root(self) -> HyperNodeInfo:
        return self.hyper_nodes[CLUSTER_TOP_HYPER_NODE]

    @property
    def min_tier(self) -> int:
        return self.tiers[0]

    @property
    def max_tier(self) -> int:
        """The virtual root's tier."""
        return self.tiers[-1]

    @property
    def nodes(self) -> frozenset[str]:
        """Every node of the tree (the virtual root's real-node set)."""
        return self.root.real_nodes

    def get(self, name: str) -> HyperNodeInfo | None:
        return self.hyper_nodes.get(name)

    def tier_of(self, name: str) -> int | None:
        info = self.hyper_nodes.get(name)
        return None if info is None else info.tier

    def real_nodes(self, name: str) -> frozenset[str]:
        info = self.hyper_nodes.get(name)
        return frozenset() if info is None else info.real_nodes

    def contains_node(self, hyper_node: str, node: str) -> bool:
        info = self.hyper_nodes.get(hyper_node)
        return info is not None and node in info.real_nodes

    # ---------------------------------------------------------------- structure walks

    def ancestors(self, name: str) -> tuple[str, ...]:
        """``name`` then its parent, grandparent, ... up to the virtual root (``GetAncestors``).
        Empty for an unknown name."""
        result: list[str] = []
        info = self.hyper_nodes.get(name)
        while info is not None:
            result.append(info.name)
            info = None if info.parent is None else self.hyper_nodes.get(info.parent)
        return tuple(result)

    def descendants(self, name: str) -> tuple[str, ...]:
        """``name`` and every HyperNode below it, breadth-first, children by name (the order of
        the topology plugin's gradient walk). Empty for an unknown name."""
        if name not in self.hyper_nodes:
            return ()
        order: list[str] = []
        queue = deque([name])
        while queue:
            current = queue.popleft()
            order.append(current)
            queue.extend(self.hyper_nodes[current].children)
        return tuple(order)

    def leaf_hyper_nodes(self, name: str) -> frozenset[str]:
        """HyperNodes under ``name`` (itself included) without HyperNode children."""
        return frozenset(
            hyper_node
            for hyper_node in self.descendants(name)
            if not self.hyper_nodes[hyper_node].children
        )

    def lca(self, first: str | None, second: str | None) -> str | None:
        """Lowest common ancestor (``GetLCAHyperNode``): a missing side yields the other; two
        equal names yield that name; None when nothing is shared (an unknown name)."""
        if not first:
            return second or None
        if not second or first == second:
            return first
        first_ancestors = set(self.ancestors(first))
        for ancestor in self.ancestors(second):
            if ancestor in first_ancestors:
                return ancestor
        return None

    def highest_ancestor_within_tier(self, name: str, tier: int) -> str | None:
        """The highest of ``name`` and its ancestors whose tier is <= ``tier``, walking up and
        stopping at the first one above it (``getHighestAllowedHyperNode``); None if ``name``
        itself is above ``tier`` or unknown."""
        best: str | None = None
        for ancestor in self.ancestors(name):
            if self.hyper_nodes[ancestor].tier > tier:
                break
            best = ancestor
        return best

    # ---------------------------------------------------------------- node lookups

    def lowest_tier_hyper_node(self, node: str) -> str | None:
        """The lowest-tier HyperNode containing ``node`` (smallest name on a tie), the virtual
        root when no real HyperNode does, None for a node outside the tree."""
        if node not in self.root.real_nodes:
            return None
        for tier in self.tiers:
            found = self._nodes_at_tier(tier).get(node)
            if found is not None:
                return found
        return None  # unreachable: the root's tier is the last one and it holds every node

    def find_hyper_node_for_node(self, node: str) -> str | None:
        """Upstream ``util.FindHyperNodeForNode``: the HyperNode *at the lowest tier of the
        whole tree* containing ``node``, else None. It differs from
        :meth:`lowest_tier_hyper_node` only for a node whose lowest HyperNode sits above the
        tree's lowest tier; the topology plugin's node scores use this one."""
        return self._nodes_at_tier(self.tiers[0]).get(node)

    def hyper_node_at_tier(self, node: str, tier: int) -> str | None:
        """The HyperNode of ``tier`` containing ``node`` (smallest name on a tie), or None."""
        return self._nodes_at_tier(tier).get(node)

    def _nodes_at_tier(self, tier: int) -> Mapping[str, str]:
        at_tier = self._node_index.get(tier)
        if at_tier is None:
            at_tier = {}
            # Descending names so the smallest name writes last and wins a tie;
            # dict.update(dict.fromkeys(...)) keeps the per-node work in C.
            for name in sorted(self.hyper_nodes_by_tier.get(tier, ()), reverse=True):
                at_tier.update(dict.fromkeys(self.hyper_nodes[name].real_nodes, name))
            self._node_index[tier] = at_tier
        return at_tier

    def lca_tier(self, first_node: str, second_node: str) -> int | None:
        """Tier of the LCA of the two nodes' lowest-tier HyperNodes; None for an unknown node."""
        first = self.lowest_tier_hyper_node(first_node)
        second = self.lowest_tier_hyper_node(second_node)
        if first is None or second is None:
            return None
        common = self.lca(first, second)
        return None if common is None else self.hyper_nodes[common].tier


# ---------------------------------------------------------------------------------- store


class HyperNodeStore:
    """The cache's HyperNode state: parsed specs, node labels and resolved selector members.

    Every mutator returns whether anything the tree depends on changed; :meth:`tree` derives
    a new :class:`HyperNodeTree` only after such a change (or for a new set of schedulable
    nodes) and otherwise returns the same object.
    """

    __slots__ = ("_cached", "_node_labels", "_selector_matches", "_specs", "_version")

    def __init__(self) -> None:
        self._specs: dict[str, HyperNodeSpec] = {}
        self._node_labels: dict[str, Mapping[str, str]] = {}
        # Only HyperNodes with regex/label Node members: the nodes those members select.
        self._selector_matches: dict[str, set[str]] = {}
        self._version = 0
        self._cached: tuple[int, frozenset[str] | None, HyperNodeTree] | None = None

    @property
    def specs(self) -> Mapping[str, HyperNodeSpec]:
        return self._specs

    @property
    def node_names(self) -> Collection[str]:
        return self._node_labels.keys()

    # ---------------------------------------------------------------- HyperNode events

    def set_hyper_node(self, obj: Mapping[str, Any] | HyperNodeSpec) -> bool:
        """Add or update a HyperNode. A malformed object raises :class:`HyperNodeSpecError`
        and leaves the store unchanged."""
        spec = obj if isinstance(obj, HyperNodeSpec) else HyperNodeSpec.from_object(obj)
        if self._specs.get(spec.name) == spec:
            return False
        self._specs[spec.name] = spec
        if any(member.is_node_selector for member in spec.members):
            self._selector_matches[spec.name] = spec.select_nodes(self._node_labels)
        else:
            self._selector_matches.pop(spec.name, None)
        self._version += 1
        return True

    def delete_hyper_node(self, name: str) -> bool:
        if self._specs.pop(name, None) is None:
            return False
        self._selector_matches.pop(name, None)
        self._version += 1
        return True

    # ---------------------------------------------------------------- node events

    def set_node(self, name: str, labels: Mapping[str, str] | None) -> bool:
        """Add a node or update its labels. Status-only node updates (same labels) are free."""
        labels = dict(labels or {})
        old = self._node_labels.get(name)
        if old is not None and old == labels:
            return False
        self._node_labels[name] = labels
        for hyper_node, matches in self._selector_matches.items():
            if self._specs[hyper_node].selects_node(name, labels):
                matches.add(name)
            else:
                matches.discard(name)
        self._version += 1
        return True

    def delete_node(self, name: str) -> bool:
        if self._node_labels.pop(name, None) is None:
            return False
        for matches in self._selector_matches.values():
            matches.discard(name)
        self._version += 1
        return True

    # ---------------------------------------------------------------- snapshot

    def tree(
        self, schedulable_nodes: Collection[str] | None = None, *, strict: bool = False
    ) -> HyperNodeTree:
        """The current tree over ``schedulable_nodes`` (default: every known node; unknown
        names are ignored). Not strict by default: the scheduler keeps running with a broken
        topology and only holds back topology-constrained jobs (``tree.ready``)."""
        all_nodes = self._node_labels.keys()
        # Unknown names are dropped before the cache lookup, so equal node sets share a tree.
        key = None if schedulable_nodes is None else frozenset(all_nodes & set(schedulable_nodes))
        cached = self._cached
        if cached is not None and cached[0] == self._version and cached[1] == key:
            tree = cached[2]
        else:
            schedulable = frozenset(all_nodes) if key is None else key
            node_members: dict[str, frozenset[str]] = {}
            for name, spec in self._specs.items():
                members = spec.exact_node_names
                selected = self._selector_matches.get(name)
                if selected:
                    members = members.union(selected)
                node_members[name] = members & schedulable
            tree = _derive_tree(self._specs, node_members, schedulable)
            self._cached = (self._version, key, tree)
        if strict and tree.errors:
            raise HyperNodeTopologyError(tree.errors)
        return tree


# ---------------------------------------------------------------------------- derivation


def _claim_order(
    specs: Mapping[str, HyperNodeSpec],
) -> tuple[list[tuple[bool, int, str, int, str]], list[str]]:
    """Every "parent contains child" membership, in the order they are granted, plus warnings.

    Memberships that go down in tier come first, closest parent (lowest tier) first. Such
    memberships alone cannot form a cycle, so when a cycle or a second parent appears the
    membership that is refused is one that goes sideways or up in tier, the likely mistake.
    The order never depends on input order, so the live cache and a simulation agree whatever
    order the watch delivered the objects in (upstream: first come, first served).
    """
    claims: list[tuple[bool, int, str, int, str]] = []
    warnings: list[str] = []
    for parent in specs.values():
        for index, child in enumerate(parent.child_names):
            child_spec = specs.get(child)
            if child_spec is None:
                warnings.append(
                    f"HyperNode {parent.name!r}: member HyperNode {child!r} does not exist; "
                    "it is ignored until it is created"
                )
                continue
            upward = child_spec.tier >= parent.tier
            if upward and child != parent.name:
                warnings.append(
                    f"HyperNode {parent.name!r} (tier {parent.tier}) contains {child!r} "
                    f"(tier {child_spec.tier}): a member should have a lower tier than its parent"
                )
            claims.append((upward, parent.tier, parent.name, index, child))
    claims.sort()
    return claims, warnings


def _derive_tree(
    specs: Mapping[str, HyperNodeSpec],
    node_members: Mapping[str, frozenset[str]],
    schedulable: frozenset[str],
) -> HyperNodeTree:
    warnings: list[str] = [warning for spec in specs.values() for warning in spec.warnings()]
    errors: list[HyperNodeError] = []

    claims, claim_warnings = _claim_order(specs)
    warnings.extend(claim_warnings)
    parent_of: dict[str, str] = {}
    children_of: dict[str, list[str]] = {name: [] for name in specs}
    for _upward, _tier, parent, _index, child in claims:
        if child == parent:
            errors.append(HyperNodeCycleError((parent, parent)))
            continue
        current_parent = parent_of.get(child)
        if current_parent is not None:
            errors.append(HyperNodeParentConflictError(child, current_parent, parent))
            continue
        # Granting parent -> child closes a cycle iff child is already an ancestor of parent.
        chain = [parent]
        ancestor = parent_of.get(parent)
        while ancestor is not None and ancestor != child:
            chain.append(ancestor)
            ancestor = parent_of.get(ancestor)
        if ancestor == child:
            errors.append(HyperNodeCycleError([child, *reversed(chain), child]))
            continue
        parent_of[child] = parent
        children_of[parent].append(child)

    top_level = sorted(name for name in specs if name not in parent_of)

    # Breadth-first from the root; the reverse order visits children before their parents.
    order: list[str] = []
    queue = deque(top_level)
    while queue:
        current = queue.popleft()
        order.append(current)
        children_of[current].sort()
        queue.extend(children_of[current])
    real_nodes: dict[str, frozenset[str]] = {}
    for name in reversed(order):
        children = children_of[name]
        if not children:
            real_nodes[name] = node_members[name]
            continue
        real_nodes[name] = node_members[name].union(*(real_nodes[child] for child in children))

    by_tier: dict[int, set[str]] = {}
    for spec in specs.values():
        by_tier.setdefault(spec.tier, set()).add(spec.name)
    # Tiers are >= 0, so this is also the upstream "max tier + 1, at least 1".
    root_tier = max(by_tier) + 1 if by_tier else 1

    tier_names: dict[str, int] = {}
    for spec in sorted(specs.values(), key=lambda spec: spec.name):
        if not spec.tier_name:
            continue
        known = tier_names.get(spec.tier_name)
        if known is not None and known != spec.tier:
            warnings.append(
                f"tierName {spec.tier_name!r} is used for tiers {known} and {spec.tier} "
                f"(HyperNode {spec.name!r}); tier {spec.tier} is used"
            )
        tier_names[spec.tier_name] = spec.tier

    infos: dict[str, HyperNodeInfo] = {
        name: HyperNodeInfo(
            name=name,
            tier=spec.tier,
            tier_name=spec.tier_name,
            parent=parent_of.get(name, CLUSTER_TOP_HYPER_NODE),
            children=tuple(children_of[name]),
            node_members=node_members[name],
            real_nodes=real_nodes[name],
        )
        for name, spec in specs.items()
    }
    infos[CLUSTER_TOP_HYPER_NODE] = HyperNodeInfo(
        name=CLUSTER_TOP_HYPER_NODE,
        tier=root_tier,
        tier_name="",
        parent=None,
        children=tuple(top_level),
        node_members=frozenset(),
        real_nodes=schedulable,
    )

    frozen_by_tier = {tier: frozenset(names) for tier, names in by_tier.items()}
    frozen_by_tier[root_tier] = frozenset({CLUSTER_TOP_HYPER_NODE})
    return HyperNodeTree(
        hyper_nodes=infos,
        tiers=tuple(sorted(frozen_by_tier)),
        hyper_nodes_by_tier=frozen_by_tier,
        tier_name_to_tier=tier_names,
        errors=tuple(errors),
        warnings=tuple(warnings),
    )
