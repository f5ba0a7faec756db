"""Pod topology spread constraints (kube-scheduler's PodTopologySpread), vectorised.

A constraint counts, per topology domain (the nodes sharing a value of ``topologyKey``), the
pods in the incoming pod's namespace that its selector matches. ``DoNotSchedule`` constraints
filter: ``matches in the node's domain + 1 if the pod matches itself - global minimum`` may not
exceed ``maxSkew`` (the minimum is 0 while fewer than ``minDomains`` domains exist).
``ScheduleAnyway`` constraints score: fewer matches, higher score.

Only nodes with every topology key of the pod's constraints form domains, and by default only
those that match the pod's required node affinity (``nodeAffinityPolicy: Honor``); with
``nodeTaintsPolicy: Honor`` also only those whose taints the pod tolerates. Terminating pods
do not count. ``matchLabelKeys`` add the pod's own values of those labels to the selector.

kube-scheduler's system default constraints need the Services / ReplicaSets / StatefulSets
selecting the pod, which the scheduler cache does not hold: a pod without constraints of its
own is not spread (its default selector would be empty, which kube-scheduler also skips).

The per-node match counts are kept per (namespace, selector) and updated by the session's pod
events, so each check is a few numpy operations over all nodes; ``filter_reference`` and
``score_reference`` state the rules node by node for the property tests.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.framework.hooks import NodeMask
from volcano_py.plugins._kube_scheduling.node_index import NodeIndex, required_affinity_mask
from volcano_py.plugins._kube_scheduling.podspec import (
    Frozen,
    affinity,
    freeze,
    labels,
    mapping,
    node_selector,
    sequence,
    spec,
    tolerations,
)
from volcano_py.plugins._kube_scheduling.selectors import (
    IN,
    RequiredNodeAffinity,
    Requirement,
    Selector,
    SelectorError,
    label_selector,
    required_node_affinity,
)
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods
from volcano_py.plugins._kube_scheduling.taints import Taint, Toleration, first_untolerated

log = logging.getLogger(__name__)

PLUGIN: Final = "PodTopologySpread"
DO_NOT_SCHEDULE: Final = "DoNotSchedule"
SCHEDULE_ANYWAY: Final = "ScheduleAnyway"
HOSTNAME_KEY: Final = "kubernetes.io/hostname"
ERR_CONSTRAINTS: Final = "node(s) didn't match pod topology spread constraints"
ERR_MISSING_LABEL: Final = ERR_CONSTRAINTS + " (missing required label)"
MAX_INT32: Final = 2**31 - 1
UNRESOLVABLE: Final = StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE
MAX_SELECTORS: Final = 256


@dataclass(frozen=True, slots=True)
class SpreadConstraint:
    max_skew: int
    topology_key: str
    selector: Selector
    min_domains: int
    honor_node_affinity: bool
    honor_node_taints: bool


def _merge_match_label_keys(
    selector: Selector, keys: Sequence[Any], pod_labels: Mapping[str, str]
) -> Selector:
    """``mergeLabelSetWithSelector``: the pod's own values of ``matchLabelKeys`` are ANDed in
    (a selector that selects nothing stays so)."""
    pairs = sorted((str(k), pod_labels[str(k)]) for k in keys if str(k) in pod_labels)
    if not pairs or selector.nothing:
        return selector
    added = tuple(Requirement(key, IN, (value,)) for key, value in pairs)
    return Selector(added + selector.requirements)


def spread_constraints(pod: Mapping[str, Any], action: str) -> tuple[SpreadConstraint, ...]:
    """``filterTopologySpreadConstraints`` (raises ``SelectorError`` for a bad selector)."""
    pod_labels = labels(pod)
    result = []
    for raw in sequence(spec(pod).get("topologySpreadConstraints")):
        entry = mapping(raw)
        if entry.get("whenUnsatisfiable") != action:
            continue
        selector = label_selector(entry.get("labelSelector"))
        selector = _merge_match_label_keys(
            selector, sequence(entry.get("matchLabelKeys")), pod_labels
        )
        min_domains = entry.get("minDomains")
        result.append(
            SpreadConstraint(
                max_skew=int(entry.get("maxSkew") or 0),
                topology_key=str(entry.get("topologyKey") or ""),
                selector=selector,
                min_domains=1 if min_domains is None else int(min_domains),
                honor_node_affinity=entry.get("nodeAffinityPolicy", "Honor") == "Honor",
                honor_node_taints=entry.get("nodeTaintsPolicy", "Ignore") == "Honor",
            )
        )
    return tuple(result)


def counts_pod(
    pod: Mapping[str, Any], namespace: str, pod_namespace: str, selector: Selector
) -> bool:
    """``countPodsMatchSelector`` for one pod: same namespace, not terminating, selected (an
    empty selector counts nothing)."""
    if pod_namespace != namespace or mapping(pod.get("metadata")).get("deletionTimestamp"):
        return False
    if not selector.nothing and not selector.requirements:
        return False
    return selector.matches(labels(pod))


class MatchCounts:
    """Per (namespace, selector): how many pods each node holds that the selector counts."""

    def __init__(self, pods: SessionPods, size: int) -> None:
        self.pods = pods
        self.size = size
        self._counts: dict[tuple[str, Selector], IntArray] = {}
        pods.subscribe(self._changed)

    def counts(self, namespace: str, selector: Selector) -> IntArray:
        key = (namespace, selector)
        found = self._counts.get(key)
        if found is None:
            found = np.zeros(self.size, dtype=np.intp)
            for row, task in self.pods.all_pods():
                if counts_pod(task.pod, namespace, task.namespace, selector):
                    found[row] += 1
            if len(self._counts) >= MAX_SELECTORS:
                del self._counts[next(iter(self._counts))]
            self._counts[key] = found
        return found

    def _changed(self, task: TaskInfo, row: int, sign: int) -> None:
        for (namespace, selector), found in self._counts.items():
            if counts_pod(task.pod, namespace, task.namespace, selector):
                found[row] += sign


@dataclass(frozen=True, slots=True)
class _PodSpread:
    """What spreading reads from a pod, parsed once per signature."""

    namespace: str
    pod_labels: Mapping[str, str]
    hard: tuple[SpreadConstraint, ...]
    soft: tuple[SpreadConstraint, ...]
    required: RequiredNodeAffinity
    tolerations: tuple[Toleration, ...]
    # A constraint whose selector does not parse: PreFilter (hard) / PreScore (soft) fail.
    hard_error: str
    soft_error: str


def _parse(pod: Mapping[str, Any], action: str) -> tuple[tuple[SpreadConstraint, ...], str]:
    try:
        return spread_constraints(pod, action), ""
    except SelectorError as failure:
        return (), str(failure)


def _pod_spread(task: TaskInfo) -> _PodSpread:
    pod = task.pod
    required = required_node_affinity(node_selector(pod), affinity(pod).get("nodeAffinity"))
    pod_tolerations = tuple(Toleration.of(t) for t in tolerations(pod))
    hard, hard_error = _parse(pod, DO_NOT_SCHEDULE)
    soft, soft_error = _parse(pod, SCHEDULE_ANYWAY)
    return _PodSpread(
        task.namespace, labels(pod), hard, soft, required, pod_tolerations, hard_error, soft_error
    )


def _signature(task: TaskInfo) -> Frozen:
    pod_spec = spec(task.pod)
    return (
        task.namespace,
        freeze(labels(task.pod)),
        freeze(pod_spec.get("topologySpreadConstraints")),
        freeze(pod_spec.get("nodeSelector")),
        freeze(mapping(pod_spec.get("affinity")).get("nodeAffinity")),
        freeze(pod_spec.get("tolerations")),
    )


_NO_SPREAD_KEY: Final[Frozen] = ("<no spread constraints>",)
_NO_SPREAD: Final = _PodSpread("", {}, (), (), required_node_affinity({}, None), (), "", "")


class TopologySpread:
    """Spreading for one session: hard constraints as a NodeMask, soft ones as scores."""

    def __init__(self, pods: SessionPods, index: NodeIndex) -> None:
        self.pods = pods
        self.index = index
        self.match_counts = MatchCounts(pods, index.size)
        self._parsed: dict[str, tuple[Mapping[str, Any], Frozen, _PodSpread]] = {}
        self._eligible: dict[tuple[Frozen, int, bool], BoolArray] = {}
        self._masks: dict[Frozen, tuple[int, NodeMask]] = {}

    def spread(self, task: TaskInfo) -> tuple[Frozen, _PodSpread]:
        # Most pods declare no spreading at all: answer that without parsing the pod.
        if not spec(task.pod).get("topologySpreadConstraints"):
            return _NO_SPREAD_KEY, _NO_SPREAD
        cached = self._parsed.get(task.uid)
        if cached is None or cached[0] is not task.pod:
            cached = (task.pod, _signature(task), _pod_spread(task))
            self._parsed[task.uid] = cached
        return cached[1], cached[2]

    # ------------------------------------------------------------------ shared pieces

    def _eligible_nodes(self, key: Frozen, pod: _PodSpread, hard: bool, i: int) -> BoolArray:
        """Nodes that form domains for constraint ``i`` of the hard (or soft) set: every
        topology key of the set, and the node inclusion policies."""
        constraints = pod.hard if hard else pod.soft
        cache_key = (key, i, hard)
        found = self._eligible.get(cache_key)
        if found is None:
            found = self._has_all_keys(constraints).copy()
            constraint = constraints[i]
            if constraint.honor_node_affinity and not pod.required.is_empty:
                found &= required_affinity_mask(pod.required, self.index)
            if constraint.honor_node_taints:
                group_of, groups = self.index.taint_groups()
                tolerated = np.fromiter(
                    (first_untolerated(t, pod.tolerations) is None for t in groups),
                    dtype=np.bool_,
                    count=len(groups),
                )
                found &= tolerated[group_of]
            self._eligible[cache_key] = found
        return found

    def _has_all_keys(self, constraints: Sequence[SpreadConstraint]) -> BoolArray:
        present = np.ones(self.index.size, dtype=np.bool_)
        for constraint in constraints:
            present &= self.index.column(constraint.topology_key).slots > 0
        return present

    def _domain_counts(
        self, key: Frozen, pod: _PodSpread, hard: bool, i: int
    ) -> tuple[FloatArray, BoolArray]:
        """Matches per domain slot of constraint ``i``, and which slots are domains."""
        constraint = (pod.hard if hard else pod.soft)[i]
        slots = self.index.column(constraint.topology_key).slots
        eligible = self._eligible_nodes(key, pod, hard, i)
        counts = self.match_counts.counts(pod.namespace, constraint.selector)
        width = len(self.index.column(constraint.topology_key).values) + 1
        per_domain: FloatArray = np.asarray(
            np.bincount(slots[eligible], weights=counts[eligible], minlength=width),
            dtype=np.float64,
        )
        present = np.bincount(slots[eligible], minlength=width) > 0
        return per_domain, present

    # ------------------------------------------------------------------ filter

    def pre_filter_error(self, task: TaskInfo) -> str:
        return self.spread(task)[1].hard_error

    def mask(self, task: TaskInfo) -> NodeMask | None:
        key, pod = self.spread(task)
        if not pod.hard:
            return None  # PreFilter Skip
        cached = self._masks.get(key)
        if cached is not None and cached[0] == self.pods.version:
            return cached[1]
        node_mask = self._build_mask(key, pod)
        self._masks[key] = (self.pods.version, node_mask)
        return node_mask

    def _build_mask(self, key: Frozen, pod: _PodSpread) -> NodeMask:
        passed = np.ones(self.index.size, dtype=np.bool_)
        # Per constraint: the node lacks the key / the skew is too large.
        missing: list[BoolArray] = []
        skewed: list[BoolArray] = []
        for i, constraint in enumerate(pod.hard):
            slots = self.index.column(constraint.topology_key).slots
            per_domain, present = self._domain_counts(key, pod, True, i)
            domains = int(present.sum())
            minimum = int(per_domain[present].min()) if domains else MAX_INT32
            if domains < constraint.min_domains:
                minimum = 0
            self_match = 1 if constraint.selector.matches(pod.pod_labels) else 0
            lacks = slots == 0
            too_far = ~lacks & (per_domain[slots] + self_match - minimum > constraint.max_skew)
            missing.append(lacks)
            skewed.append(too_far)
            passed &= ~lacks & ~too_far

        def reason(row: int) -> Status:
            for lacks, too_far in zip(missing, skewed, strict=True):
                if lacks[row]:
                    return Status(
                        StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_MISSING_LABEL, PLUGIN
                    )
                if too_far[row]:
                    return Status(StatusCode.UNSCHEDULABLE, ERR_CONSTRAINTS, PLUGIN)
            return Status(StatusCode.SUCCESS, "")

        return NodeMask(passed, reason)

    # ------------------------------------------------------------------ score

    def scores(self, task: TaskInfo, rows: IntArray) -> FloatArray | None:
        """Normalised scores (0-100) for ``rows``; None when the pod has no soft constraints
        (PreScore ``Skip``)."""
        key, pod = self.spread(task)
        constraints = pod.soft
        if pod.soft_error:
            log.warning("PodTopologySpread: task %s: %s", task.key, pod.soft_error)
        if not constraints or not len(rows):
            return None
        ignored = ~self._has_all_keys(constraints)[rows]
        raw = np.zeros(len(rows))
        for i, constraint in enumerate(constraints):
            slots = self.index.column(constraint.topology_key).slots
            candidate_slots = slots[rows][~ignored]
            counts = self.match_counts.counts(pod.namespace, constraint.selector)
            if constraint.topology_key == HOSTNAME_KEY:
                size = int((~ignored).sum())
                matched = counts[rows].astype(float)
            else:
                size = len(np.unique(candidate_slots))
                per_domain, _ = self._domain_counts(key, pod, False, i)
                matched = per_domain[slots[rows]]
            weight = math.log(size + 2)
            raw = raw + (matched * weight + float(constraint.max_skew - 1))
        # Go's math.Round: half away from zero (the scores are not negative).
        rounded = np.floor(raw + 0.5)
        return _normalize(rounded, ignored)


def _normalize(scores: FloatArray, ignored: BoolArray) -> FloatArray:
    """PodTopologySpread's ``NormalizeScore``: fewest matches best, ignored nodes 0."""
    valid = ~ignored
    if not valid.any():
        return np.zeros(len(scores))
    low, high = float(scores[valid].min()), float(scores[valid].max())
    if high == 0:
        return np.where(valid, 100.0, 0.0)
    # Integer division of non-negative integers (exact as a float floor at these sizes).
    normalised = np.floor(100 * (high + low - scores) / high)
    result: FloatArray = np.where(valid, normalised, 0.0)
    return result


# ---------------------------------------------------------------------- references


@dataclass(frozen=True, slots=True)
class NodeView:
    """One node as the references see it: labels, taints, and the pods on it as
    (namespace, pod dict) pairs."""

    name: str
    labels: Mapping[str, str]
    taints: tuple[Taint, ...]
    pods: tuple[tuple[str, Mapping[str, Any]], ...]


def _eligible(
    node: NodeView,
    constraint: SpreadConstraint,
    constraints: Sequence[SpreadConstraint],
    required: RequiredNodeAffinity,
    pod_tolerations: Sequence[Toleration],
) -> bool:
    if any(c.topology_key not in node.labels for c in constraints):
        return False
    if constraint.honor_node_affinity and not required.matches(node.labels, node.name):
        return False
    return not (
        constraint.honor_node_taints and first_untolerated(node.taints, pod_tolerations) is not None
    )


def _count(node: NodeView, namespace: str, selector: Selector) -> int:
    return sum(1 for ns, p in node.pods if counts_pod(p, namespace, ns, selector))


def filter_reference(
    pod: Mapping[str, Any], namespace: str, nodes: Sequence[NodeView]
) -> list[Status | None]:
    """PreFilter + Filter, node by node, as kube-scheduler states them."""
    constraints = spread_constraints(pod, DO_NOT_SCHEDULE)
    required = required_node_affinity(node_selector(pod), affinity(pod).get("nodeAffinity"))
    pod_tolerations = [Toleration.of(t) for t in tolerations(pod)]
    match_num: list[dict[str, int]] = [{} for _ in constraints]
    for node in nodes:
        for i, constraint in enumerate(constraints):
            if _eligible(node, constraint, constraints, required, pod_tolerations):
                value = node.labels[constraint.topology_key]
                found = _count(node, namespace, constraint.selector)
                match_num[i][value] = match_num[i].get(value, 0) + found
    result: list[Status | None] = []
    for node in nodes:
        status = None
        for i, constraint in enumerate(constraints):
            node_value = node.labels.get(constraint.topology_key)
            if node_value is None:
                status = Status(UNRESOLVABLE, ERR_MISSING_LABEL, PLUGIN)
                break
            minimum = min(match_num[i].values()) if match_num[i] else MAX_INT32
            if len(match_num[i]) < constraint.min_domains:
                minimum = 0
            self_match = 1 if constraint.selector.matches(labels(pod)) else 0
            if match_num[i].get(node_value, 0) + self_match - minimum > constraint.max_skew:
                status = Status(StatusCode.UNSCHEDULABLE, ERR_CONSTRAINTS, PLUGIN)
                break
        result.append(status)
    return result


def score_reference(
    pod: Mapping[str, Any], namespace: str, nodes: Sequence[NodeView], candidates: Sequence[int]
) -> list[int] | None:
    """PreScore + Score + NormalizeScore for the nodes at ``candidates``."""
    constraints = spread_constraints(pod, SCHEDULE_ANYWAY)
    if not constraints:
        return None
    required = required_node_affinity(node_selector(pod), affinity(pod).get("nodeAffinity"))
    pod_tolerations = [Toleration.of(t) for t in tolerations(pod)]
    chosen = [nodes[i] for i in candidates]
    ignored = {
        i
        for i, n in zip(candidates, chosen, strict=True)
        if any(c.topology_key not in n.labels for c in constraints)
    }
    per_value: list[dict[str, int]] = [{} for _ in constraints]
    sizes = []
    for i, constraint in enumerate(constraints):
        values = {
            n.labels[constraint.topology_key]
            for j, n in zip(candidates, chosen, strict=True)
            if j not in ignored
        }
        if constraint.topology_key == HOSTNAME_KEY:
            sizes.append(len(candidates) - len(ignored))
            continue
        sizes.append(len(values))
        per_value[i] = dict.fromkeys(values, 0)
        for node in nodes:
            if not _eligible(node, constraint, constraints, required, pod_tolerations):
                continue
            value = node.labels[constraint.topology_key]
            if value in per_value[i]:
                per_value[i][value] += _count(node, namespace, constraint.selector)
    raw: list[int] = []
    for j, node in zip(candidates, chosen, strict=True):
        if j in ignored:
            raw.append(0)
            continue
        total = 0.0
        for i, constraint in enumerate(constraints):
            if constraint.topology_key == HOSTNAME_KEY:
                found = _count(node, namespace, constraint.selector)
            else:
                found = per_value[i][node.labels[constraint.topology_key]]
            total += found * math.log(sizes[i] + 2) + float(constraint.max_skew - 1)
        raw.append(math.floor(total + 0.5))
    valid = [s for j, s in zip(candidates, raw, strict=True) if j not in ignored]
    low, high = (min(valid), max(valid)) if valid else (0, 0)
    result = []
    for j, score in zip(candidates, raw, strict=True):
        if j in ignored:
            result.append(0)
        elif high == 0:
            result.append(100)
        else:
            result.append(100 * (high + low - score) // high)
    return result
