"""Inter-pod affinity and anti-affinity (kube-scheduler's InterPodAffinity), scalar.

Filtering needs three counts keyed by topology pair ``(topologyKey, node label value)``:

* ``affinity``: existing pods matching *all* the incoming pod's required affinity terms;
* ``anti``: existing pods matching one of the incoming pod's required anti-affinity terms;
* ``existing_anti``: existing pods whose required anti-affinity terms match the incoming pod
  (the symmetric rule: a pod may not land next to a pod that refuses it).

kube-scheduler computes them in PreFilter from every pod on every node, per pod. Here they
are computed once per incoming-pod *signature* (namespace, labels, affinity) and then kept
current by the session's pod events, as kube-scheduler's ``AddPod``/``RemovePod`` do, so a
gang of identical pods pays for one scan.

Namespaces: a term without ``namespaces`` and ``namespaceSelector`` means the pod's own
namespace. The scheduler cache holds no Namespace objects, so a ``namespaceSelector`` is
evaluated against the one label every namespace carries, ``kubernetes.io/metadata.name``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.pod_facts import has_pod_affinity
from volcano_py.api.types import Status, StatusCode
from volcano_py.plugins._kube_scheduling.podspec import (
    affinity,
    labels,
    mapping,
    namespace,
    sequence,
)
from volcano_py.plugins._kube_scheduling.selectors import (
    NOTHING,
    Selector,
    SelectorError,
    label_selector,
)

PLUGIN: Final = "InterPodAffinity"
ERR_AFFINITY: Final = "node(s) didn't match pod affinity rules"
ERR_ANTI_AFFINITY: Final = "node(s) didn't match pod anti-affinity rules"
ERR_EXISTING_ANTI_AFFINITY: Final = "node(s) didn't satisfy existing pods anti-affinity rules"
NAMESPACE_NAME_LABEL: Final = "kubernetes.io/metadata.name"

TopologyPair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class AffinityTerm:
    selector: Selector
    namespaces: frozenset[str]
    namespace_selector: Selector
    topology_key: str

    def matches(self, pod_namespace: str, pod_labels: Mapping[str, str]) -> bool:
        """``AffinityTerm.Matches``: the pod's namespace is selected, then its labels."""
        if pod_namespace in self.namespaces or self.namespace_selector.matches(
            {NAMESPACE_NAME_LABEL: pod_namespace}
        ):
            return self.selector.matches(pod_labels)
        return False


@dataclass(frozen=True, slots=True)
class WeightedTerm:
    weight: int
    term: AffinityTerm


@dataclass(frozen=True, slots=True)
class PodAffinityInfo:
    """A pod's identity for matching (namespace, labels) and its parsed affinity terms
    (``framework.PodInfo``). A list that failed to parse is left empty and named in ``error``."""

    namespace: str
    labels: Mapping[str, str]
    required_affinity: tuple[AffinityTerm, ...] = ()
    required_anti: tuple[AffinityTerm, ...] = ()
    preferred_affinity: tuple[WeightedTerm, ...] = ()
    preferred_anti: tuple[WeightedTerm, ...] = ()
    error: str = ""

    def matches_all(self, terms: Iterable[AffinityTerm]) -> bool:
        """``podMatchesAllAffinityTerms`` (false for no terms)."""
        terms = tuple(terms)
        return bool(terms) and all(t.matches(self.namespace, self.labels) for t in terms)


def _term(pod_namespace: str, raw: Mapping[str, Any]) -> AffinityTerm:
    names = frozenset(str(n) for n in sequence(raw.get("namespaces")))
    raw_namespace_selector = raw.get("namespaceSelector")
    if not names and raw_namespace_selector is None:
        names = frozenset({pod_namespace})
    return AffinityTerm(
        selector=label_selector(raw.get("labelSelector")),
        namespaces=names,
        namespace_selector=(
            label_selector(raw_namespace_selector)
            if raw_namespace_selector is not None
            else NOTHING
        ),
        topology_key=str(raw.get("topologyKey") or ""),
    )


def parse_pod_affinity(pod: Mapping[str, Any]) -> PodAffinityInfo:
    pod_namespace, pod_labels = namespace(pod), labels(pod)
    section = affinity(pod)
    errors: list[str] = []

    def required(kind: str, what: str) -> tuple[AffinityTerm, ...]:
        raw_terms = sequence(
            mapping(section.get(kind)).get("requiredDuringSchedulingIgnoredDuringExecution")
        )
        try:
            return tuple(_term(pod_namespace, mapping(raw)) for raw in raw_terms)
        except SelectorError as error:
            errors.append(f"{what}: {error}")
            return ()

    def preferred(kind: str, what: str) -> tuple[WeightedTerm, ...]:
        raw_terms = sequence(
            mapping(section.get(kind)).get("preferredDuringSchedulingIgnoredDuringExecution")
        )
        try:
            return tuple(
                WeightedTerm(
                    int(mapping(raw).get("weight") or 0),
                    _term(pod_namespace, mapping(mapping(raw).get("podAffinityTerm"))),
                )
                for raw in raw_terms
            )
        except SelectorError as error:
            errors.append(f"{what}: {error}")
            return ()

    return PodAffinityInfo(
        namespace=pod_namespace,
        labels=pod_labels,
        required_affinity=required("podAffinity", "requiredAffinityTerms"),
        required_anti=required("podAntiAffinity", "requiredAntiAffinityTerms"),
        preferred_affinity=preferred("podAffinity", "preferredAffinityTerms"),
        preferred_anti=preferred("podAntiAffinity", "preferredAntiAffinityTerms"),
        error="; ".join(errors),
    )


def _bump(
    counts: Counter[TopologyPair], node_labels: Mapping[str, str], key: str, value: int
) -> None:
    """``topologyToMatchedTermCount.update``: nodes without the key do not count."""
    topology_value = node_labels.get(key)
    if topology_value is None:
        return
    pair = (key, topology_value)
    counts[pair] += value
    if counts[pair] == 0:
        del counts[pair]


# ---------------------------------------------------------------------- filtering


@dataclass(slots=True)
class FilterState:
    """kube-scheduler's InterPodAffinity ``preFilterState`` for one incoming pod."""

    incoming: PodAffinityInfo
    affinity_counts: Counter[TopologyPair] = field(default_factory=Counter)
    anti_counts: Counter[TopologyPair] = field(default_factory=Counter)
    existing_anti_counts: Counter[TopologyPair] = field(default_factory=Counter)

    @property
    def has_own_terms(self) -> bool:
        return bool(self.incoming.required_affinity or self.incoming.required_anti)

    def copy(self) -> FilterState:
        """An independent state to move pods in and out of (a preemption dry run)."""
        return FilterState(
            self.incoming,
            Counter(self.affinity_counts),
            Counter(self.anti_counts),
            Counter(self.existing_anti_counts),
        )

    @property
    def skip(self) -> bool:
        """PreFilter's ``Skip``: nothing to check for this pod anywhere."""
        return not self.existing_anti_counts and not self.has_own_terms

    def add_existing(self, pod: PodAffinityInfo, node_labels: Mapping[str, str], sign: int) -> None:
        """``updateWithPod``: account one existing pod (sign +1) or forget it (-1)."""
        self.add_existing_anti(pod, node_labels, sign)
        self.add_matching(pod.namespace, pod.labels, node_labels, sign)

    def add_existing_anti(
        self, pod: PodAffinityInfo, node_labels: Mapping[str, str], sign: int
    ) -> None:
        """The existing pod's required anti-affinity terms that reject the incoming pod."""
        incoming = self.incoming
        for term in pod.required_anti:
            if term.matches(incoming.namespace, incoming.labels):
                _bump(self.existing_anti_counts, node_labels, term.topology_key, sign)

    def add_matching(
        self,
        pod_namespace: str,
        pod_labels: Mapping[str, str],
        node_labels: Mapping[str, str],
        sign: int,
    ) -> None:
        """The incoming pod's own required terms against one existing pod."""
        incoming = self.incoming
        if incoming.required_affinity and all(
            t.matches(pod_namespace, pod_labels) for t in incoming.required_affinity
        ):
            for term in incoming.required_affinity:
                _bump(self.affinity_counts, node_labels, term.topology_key, sign)
        for term in incoming.required_anti:
            if term.matches(pod_namespace, pod_labels):
                _bump(self.anti_counts, node_labels, term.topology_key, sign)

    def check(self, node_labels: Mapping[str, str]) -> Status | None:
        """Filter: affinity, then the pod's anti-affinity, then existing pods' anti-affinity."""
        if not self._satisfies_affinity(node_labels):
            return Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_AFFINITY, PLUGIN)
        if self.anti_counts:
            for term in self.incoming.required_anti:
                value = node_labels.get(term.topology_key)
                if value is not None and self.anti_counts[(term.topology_key, value)] > 0:
                    return Status(StatusCode.UNSCHEDULABLE, ERR_ANTI_AFFINITY, PLUGIN)
        if self.existing_anti_counts:
            for key, value in self.existing_anti_counts:
                if node_labels.get(key) == value and self.existing_anti_counts[(key, value)] > 0:
                    return Status(StatusCode.UNSCHEDULABLE, ERR_EXISTING_ANTI_AFFINITY, PLUGIN)
        return None

    def _satisfies_affinity(self, node_labels: Mapping[str, str]) -> bool:
        terms = self.incoming.required_affinity
        if not terms:
            return True
        pods_exist = True
        for term in terms:
            value = node_labels.get(term.topology_key)
            if value is None:
                return False  # every topology key must be on the node
            if self.affinity_counts[(term.topology_key, value)] <= 0:
                pods_exist = False
        if pods_exist:
            return True
        # The first pod of a group with affinity to itself may go anywhere its topology
        # keys exist, as long as no pod anywhere matches yet.
        return not self.affinity_counts and self.incoming.matches_all(terms)


# ---------------------------------------------------------------------- scoring


@dataclass(slots=True)
class ScoreState:
    """kube-scheduler's InterPodAffinity ``preScoreState``: a score per topology pair.

    Volcano builds the plugin with ``InterPodAffinityArgs{}``, so ``HardPodAffinityWeight`` is
    0: existing pods' *required* affinity terms do not score.
    """

    incoming: PodAffinityInfo
    topology_score: dict[str, dict[str, int]] = field(default_factory=dict)

    @property
    def has_constraints(self) -> bool:
        """With preferred terms of its own the pod is scored against every pod; otherwise
        only pods with affinity can contribute."""
        return bool(self.incoming.preferred_affinity or self.incoming.preferred_anti)

    def considers(self, pod: Mapping[str, Any]) -> bool:
        return self.has_constraints or has_pod_affinity(pod)

    def add_existing(self, pod: PodAffinityInfo, node_labels: Mapping[str, str], sign: int) -> None:
        """``processExistingPod`` (sign -1 undoes it)."""
        if not node_labels:
            return
        incoming = self.incoming
        self._terms(incoming.preferred_affinity, pod, node_labels, sign)
        self._terms(incoming.preferred_anti, pod, node_labels, -sign)
        self._terms(pod.preferred_affinity, incoming, node_labels, sign)
        self._terms(pod.preferred_anti, incoming, node_labels, -sign)

    def _terms(
        self,
        terms: Iterable[WeightedTerm],
        target: PodAffinityInfo,
        node_labels: Mapping[str, str],
        multiplier: int,
    ) -> None:
        for weighted in terms:
            term = weighted.term
            if not term.matches(target.namespace, target.labels):
                continue
            value = node_labels.get(term.topology_key)
            if value is None:
                continue
            values = self.topology_score.setdefault(term.topology_key, {})
            values[value] = values.get(value, 0) + weighted.weight * multiplier

    def score(self, node_labels: Mapping[str, str]) -> int:
        """``Score``: the node's topology pairs' scores, summed."""
        total = 0
        for key, values in self.topology_score.items():
            value = node_labels.get(key)
            if value is not None:
                total += values.get(value, 0)
        return total
