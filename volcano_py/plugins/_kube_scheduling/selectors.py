"""Label selectors and node affinity, as Kubernetes evaluates them (scalar, readable).

Ported from apimachinery ``labels.Requirement`` / ``metav1.LabelSelectorAsSelector`` and
component-helpers ``scheduling/corev1/nodeaffinity`` (``LazyErrorNodeSelector``,
``PreferredSchedulingTerms``, ``GetRequiredNodeAffinity``). Parsing happens once into frozen
objects; ``node_index`` evaluates the same objects over all nodes at once.

Rules worth remembering:

* ``In`` needs the key present with a listed value; ``NotIn`` also matches an absent key.
* ``Gt``/``Lt`` need the key present and both sides decimal int64s.
* A nil ``metav1.LabelSelector`` selects nothing; an empty one selects everything.
* Node affinity terms are ORed, the requirements inside a term ANDed; an empty term, an
  empty term list, or a term that fails to parse selects nothing. ``matchFields`` supports only
  ``metadata.name`` with ``In``/``NotIn`` and exactly one value.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.plugins._kube_scheduling.podspec import mapping, sequence

IN: Final = "In"
NOT_IN: Final = "NotIn"
EXISTS: Final = "Exists"
DOES_NOT_EXIST: Final = "DoesNotExist"
GT: Final = "Gt"
LT: Final = "Lt"
NODE_OPERATORS: Final = frozenset({IN, NOT_IN, EXISTS, DOES_NOT_EXIST, GT, LT})
LABEL_SELECTOR_OPERATORS: Final = frozenset({IN, NOT_IN, EXISTS, DOES_NOT_EXIST})
OBJECT_NAME_FIELD: Final = "metadata.name"

_INT64_RE: Final = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1
_DNS1123_LABEL: Final = r"[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_RE: Final = re.compile(rf"{_DNS1123_LABEL}(\.{_DNS1123_LABEL})*")
_NAME_RE: Final = re.compile(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")


class SelectorError(ValueError):
    """A selector Kubernetes would refuse to parse."""


def parse_int64(value: str) -> int | None:
    """``strconv.ParseInt(value, 10, 64)``, or None."""
    if not _INT64_RE.fullmatch(value):
        return None
    number = int(value)
    return number if _INT64_MIN <= number <= _INT64_MAX else None


def _valid_key(key: str) -> bool:
    """``validation.IsQualifiedName``: ``[dns-subdomain/]name``, name at most 63 characters."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS1123_SUBDOMAIN_RE.fullmatch(prefix)):
        return False
    return 0 < len(name) <= 63 and _NAME_RE.fullmatch(name) is not None


def _valid_value(value: str) -> bool:
    """``validation.IsValidLabelValue``: empty, or at most 63 name characters."""
    return value == "" or (len(value) <= 63 and _NAME_RE.fullmatch(value) is not None)


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str
    values: tuple[str, ...]

    @classmethod
    def parse(cls, key: object, operator: object, values: object) -> Requirement:
        """``labels.NewRequirement`` with its validation (raises ``SelectorError``)."""
        key, operator = str(key or ""), str(operator or "")
        listed = tuple(str(v) for v in sequence(values))
        if not _valid_key(key):
            raise SelectorError(f"key: Invalid value: {key!r}: must be a qualified name")
        if operator in (IN, NOT_IN) and not listed:
            raise SelectorError("for 'in', 'notin' operators, values set can't be empty")
        if operator in (EXISTS, DOES_NOT_EXIST) and listed:
            raise SelectorError("values set must be empty for exists and does not exist")
        if operator in (GT, LT):
            if len(listed) != 1:
                raise SelectorError("for 'Gt', 'Lt' operators, exactly one value is required")
            if parse_int64(listed[0]) is None:
                raise SelectorError("for 'Gt', 'Lt' operators, the value must be an integer")
        for value in listed:
            if not _valid_value(value):
                raise SelectorError(f"values: Invalid value: {value!r}")
        return cls(key, operator, listed)

    def matches_value(self, value: str | None) -> bool:
        """The requirement against one label value (None: the key is absent)."""
        operator = self.operator
        if operator == IN:
            return value is not None and value in self.values
        if operator == NOT_IN:
            return value is None or value not in self.values
        if operator == EXISTS:
            return value is not None
        if operator == DOES_NOT_EXIST:
            return value is None
        if operator not in (GT, LT) or value is None or len(self.values) != 1:
            return False
        have, bound = parse_int64(value), parse_int64(self.values[0])
        if have is None or bound is None:
            return False
        return have > bound if operator == GT else have < bound

    def matches(self, labels: Mapping[str, str]) -> bool:
        value = labels.get(self.key)
        return self.matches_value(None if value is None else str(value))


@dataclass(frozen=True, slots=True)
class Selector:
    """Requirements ANDed; ``nothing`` is the selector that matches no object at all."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False
    # ``matchLabels``-style selectors (single-value ``In`` only) as (key, value) pairs: the
    # common case, matched against every pod in affinity scans, so it gets a fast path.
    equalities: tuple[tuple[str, str], ...] | None = field(init=False, compare=False)

    def __post_init__(self) -> None:
        simple = all(r.operator == IN and len(r.values) == 1 for r in self.requirements)
        pairs = tuple((r.key, r.values[0]) for r in self.requirements) if simple else None
        object.__setattr__(self, "equalities", pairs)

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.nothing:
            return False
        if self.equalities is not None:
            # A plain loop: faster than all() over a generator, and this runs per pod.
            for key, value in self.equalities:  # noqa: SIM110
                if labels.get(key) != value:
                    return False
            return True
        return all(requirement.matches(labels) for requirement in self.requirements)


NOTHING: Final = Selector(nothing=True)
EVERYTHING: Final = Selector()


def label_selector(raw: object) -> Selector:
    """``metav1.LabelSelectorAsSelector`` (raises ``SelectorError``)."""
    if raw is None:
        return NOTHING
    body = mapping(raw)
    match_labels = mapping(body.get("matchLabels"))
    expressions = sequence(body.get("matchExpressions"))
    if not match_labels and not expressions:
        return EVERYTHING
    requirements = [Requirement.parse(k, IN, [v]) for k, v in sorted(match_labels.items())]
    for expression in expressions:
        entry = mapping(expression)
        operator = str(entry.get("operator") or "")
        if operator not in LABEL_SELECTOR_OPERATORS:
            raise SelectorError(f"{operator!r} is not a valid label selector operator")
        requirements.append(Requirement.parse(entry.get("key"), operator, entry.get("values")))
    return Selector(tuple(requirements))


def equality_selector(labels: Mapping[str, Any]) -> Selector:
    """``labels.SelectorFromValidatedSet``: every pair must be present (no validation)."""
    return Selector(tuple(Requirement(str(k), IN, (str(v),)) for k, v in sorted(labels.items())))


# ---------------------------------------------------------------------- node affinity


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    """``metadata.name`` equal (``In``) or not equal (``NotIn``) to one name."""

    name: str
    equal: bool

    def matches(self, node_name: str) -> bool:
        return (node_name == self.name) is self.equal


@dataclass(frozen=True, slots=True)
class NodeSelectorTerm:
    """One ``NodeSelectorTerm``: label requirements and name fields, ANDed. A term that failed
    to parse (``error``) never matches."""

    labels: Selector | None = None
    fields: tuple[FieldRequirement, ...] | None = None
    error: str = ""

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self.error:
            return False
        if self.labels is not None and not self.labels.matches(labels):
            return False
        return not (
            self.fields is not None
            and node_name
            and not all(f.matches(node_name) for f in self.fields)
        )


def is_empty_term(raw: Mapping[str, Any]) -> bool:
    return not sequence(raw.get("matchExpressions")) and not sequence(raw.get("matchFields"))


def node_selector_term(raw: Mapping[str, Any]) -> NodeSelectorTerm:
    """``newNodeSelectorTerm``: parse errors are kept on the term, not raised."""
    labels_selector: Selector | None = None
    fields: tuple[FieldRequirement, ...] | None = None
    errors: list[str] = []
    expressions = sequence(raw.get("matchExpressions"))
    if expressions:
        requirements = []
        for expression in expressions:
            entry = mapping(expression)
            operator = str(entry.get("operator") or "")
            if operator not in NODE_OPERATORS:
                errors.append(f"matchExpressions.operator: Unsupported value: {operator!r}")
                continue
            try:
                requirements.append(
                    Requirement.parse(entry.get("key"), operator, entry.get("values"))
                )
            except SelectorError as error:
                errors.append(str(error))
        labels_selector = Selector(tuple(requirements))
    raw_fields = sequence(raw.get("matchFields"))
    if raw_fields:
        parsed = []
        for field_entry in raw_fields:
            entry = mapping(field_entry)
            operator = str(entry.get("operator") or "")
            values = [str(v) for v in sequence(entry.get("values"))]
            if entry.get("key") != OBJECT_NAME_FIELD:
                errors.append("matchFields.key: Invalid value: must be 'metadata.name'")
            elif operator not in (IN, NOT_IN):
                errors.append(f"matchFields.operator: Unsupported value: {operator!r}")
            elif len(values) != 1:
                errors.append("matchFields.values: Invalid value: must have one element")
            else:
                parsed.append(FieldRequirement(values[0], operator == IN))
        fields = tuple(parsed)
    return NodeSelectorTerm(labels_selector, fields, "; ".join(errors))


def node_selector_terms(raw: object) -> tuple[NodeSelectorTerm, ...]:
    """``NewLazyErrorNodeSelector``: empty terms are dropped (they select nothing)."""
    terms = sequence(mapping(raw).get("nodeSelectorTerms"))
    return tuple(
        node_selector_term(mapping(term)) for term in terms if not is_empty_term(mapping(term))
    )


@dataclass(frozen=True, slots=True)
class RequiredNodeAffinity:
    """``nodeaffinity.GetRequiredNodeAffinity``: ``spec.nodeSelector`` AND the required node
    affinity terms (ORed). ``terms`` is None when the pod has no required node affinity."""

    node_selector: Selector | None
    terms: tuple[NodeSelectorTerm, ...] | None

    @property
    def is_empty(self) -> bool:
        return self.node_selector is None and self.terms is None

    def matches(self, labels: Mapping[str, str], node_name: str) -> bool:
        if self.node_selector is not None and not self.node_selector.matches(labels):
            return False
        if self.terms is None:
            return True
        return any(term.matches(labels, node_name) for term in self.terms)


def required_node_affinity(
    pod_node_selector: Mapping[str, Any], node_affinity: object
) -> RequiredNodeAffinity:
    selector = equality_selector(pod_node_selector) if pod_node_selector else None
    required = mapping(node_affinity).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = node_selector_terms(required) if required is not None else None
    return RequiredNodeAffinity(selector, terms)


def name_conflict(node_affinity: object) -> bool:
    """NodeAffinity PreFilter's "pod affinity terms conflict": every required term pins
    ``metadata.name In`` to a set, and those sets leave no node at all."""
    required = mapping(node_affinity).get("requiredDuringSchedulingIgnoredDuringExecution")
    terms = sequence(mapping(required).get("nodeSelectorTerms"))
    if not terms:
        return False
    names: set[str] = set()
    for raw in terms:
        term_names: set[str] | None = None
        for field_entry in sequence(mapping(raw).get("matchFields")):
            entry = mapping(field_entry)
            if entry.get("key") == OBJECT_NAME_FIELD and entry.get("operator") == IN:
                values = {str(v) for v in sequence(entry.get("values"))}
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return False  # this term allows any node name
        names |= term_names
    return not names


@dataclass(frozen=True, slots=True)
class PreferredTerm:
    weight: int
    term: NodeSelectorTerm


def preferred_node_terms(node_affinity: object) -> tuple[tuple[PreferredTerm, ...], str]:
    """``NewPreferredSchedulingTerms``: zero-weight and empty terms are dropped; any parse
    error invalidates the whole list (returned as the second element)."""
    raw_terms = sequence(
        mapping(node_affinity).get("preferredDuringSchedulingIgnoredDuringExecution")
    )
    parsed: list[PreferredTerm] = []
    errors: list[str] = []
    for raw in raw_terms:
        entry = mapping(raw)
        weight = entry.get("weight") or 0
        preference = mapping(entry.get("preference"))
        if not isinstance(weight, int) or weight == 0 or is_empty_term(preference):
            continue
        term = node_selector_term(preference)
        if term.error:
            errors.append(term.error)
            continue
        parsed.append(PreferredTerm(int(weight), term))
    if errors:
        return (), "; ".join(errors)
    return tuple(parsed), ""


def preferred_score(
    terms: Sequence[PreferredTerm], labels: Mapping[str, str], node_name: str
) -> int:
    """``PreferredSchedulingTerms.Score``: the summed weights of the matching terms."""
    return sum(t.weight for t in terms if t.term.matches(labels, node_name))
