"""The session's nodes as columns, so selectors and taints are evaluated for all nodes at once.

A label key becomes a column of small integers (0: key absent, i: the i-th distinct value),
built the first time a selector asks for that key. A requirement is then evaluated once per
*distinct value* into a lookup table and gathered over the column: the cost is per value,
not per node. Nodes sharing the same taint list share a taint group, so a toleration set is
checked once per group.

Each ``*_mask`` function here has its scalar meaning in ``selectors`` / ``taints``; the
Hypothesis tests check they agree node by node.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import numpy.typing as npt

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray
from volcano_py.plugins._kube_scheduling.podspec import node_taints, spec
from volcano_py.plugins._kube_scheduling.selectors import (
    DOES_NOT_EXIST,
    EXISTS,
    GT,
    IN,
    LT,
    NOT_IN,
    NodeSelectorTerm,
    PreferredTerm,
    RequiredNodeAffinity,
    Requirement,
    Selector,
    parse_int64,
)
from volcano_py.plugins._kube_scheduling.taints import Taint

Int64Array = npt.NDArray[np.int64]


class LabelColumn:
    """One label key over all nodes: ``slots[row]`` is 0 when the node lacks the key, else
    the 1-based index of its value in ``values``."""

    __slots__ = ("_ints", "lookup", "slots", "values")

    def __init__(self, per_node: Sequence[str | None]) -> None:
        self.values: list[str] = []
        self.lookup: dict[str, int] = {}
        slots = np.zeros(len(per_node), dtype=np.intp)
        for row, value in enumerate(per_node):
            if value is None:
                continue
            slot = self.lookup.get(value)
            if slot is None:
                self.values.append(value)
                slot = self.lookup[value] = len(self.values)
            slots[row] = slot
        self.slots: IntArray = slots
        self._ints: tuple[Int64Array, BoolArray] | None = None

    def table(self, absent: bool, present: bool) -> BoolArray:
        """A per-slot answer table: slot 0 (absent) gets ``absent``, every value ``present``."""
        table = np.full(len(self.values) + 1, present, dtype=np.bool_)
        table[0] = absent
        return table

    def ints(self) -> tuple[Int64Array, BoolArray]:
        """Each value parsed as a decimal int64 (``valid`` false where it is not one)."""
        if self._ints is None:
            numbers = np.zeros(len(self.values) + 1, dtype=np.int64)
            valid = np.zeros(len(self.values) + 1, dtype=np.bool_)
            for slot, value in enumerate(self.values, start=1):
                parsed = parse_int64(value)
                if parsed is not None:
                    numbers[slot], valid[slot] = parsed, True
            self._ints = (numbers, valid)
        return self._ints


class NodeIndex:
    """Columnar, read-only views of the session nodes' static attributes, built lazily (a
    session pays only for the keys and attributes its pods ask about)."""

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.size = len(nodes)
        self._nodes = nodes
        self._labels: list[Mapping[str, str]] | None = None
        self._columns: dict[str, LabelColumn] = {}
        self._names: LabelColumn | None = None
        self._taint_groups: tuple[IntArray, list[tuple[Taint, ...]]] | None = None
        self._unschedulable: BoolArray | None = None

    def all_labels(self) -> list[Mapping[str, str]]:
        if self._labels is None:
            self._labels = [node.labels for node in self._nodes]
        return self._labels

    def labels(self, row: int) -> Mapping[str, str]:
        return self.all_labels()[row]

    def name(self, row: int) -> str:
        return self._nodes[row].name

    def column(self, key: str) -> LabelColumn:
        column = self._columns.get(key)
        if column is None:
            per_node = [_as_str(labels.get(key)) for labels in self.all_labels()]
            column = self._columns[key] = LabelColumn(per_node)
        return column

    def names(self) -> LabelColumn:
        if self._names is None:
            self._names = LabelColumn([node.name for node in self._nodes])
        return self._names

    def taint_groups(self) -> tuple[IntArray, list[tuple[Taint, ...]]]:
        """``group_of[row]`` indexes ``groups``, the distinct taint lists (group 0: none)."""
        if self._taint_groups is None:
            self._scan_specs()
        assert self._taint_groups is not None
        return self._taint_groups

    def taints(self, row: int) -> tuple[Taint, ...]:
        group_of, groups = self.taint_groups()
        return groups[int(group_of[row])]

    def unschedulable(self) -> BoolArray:
        if self._unschedulable is None:
            self._scan_specs()
        assert self._unschedulable is not None
        return self._unschedulable

    def _scan_specs(self) -> None:
        """One pass over the node specs for taints and ``unschedulable``; most nodes have
        neither, so they cost one lookup."""
        groups: list[tuple[Taint, ...]] = [()]
        seen: dict[tuple[Taint, ...], int] = {(): 0}
        group_of = np.zeros(self.size, dtype=np.intp)
        unschedulable = np.zeros(self.size, dtype=np.bool_)
        for row, node in enumerate(self._nodes):
            node_spec = spec(node.node)
            if not node_spec:
                continue
            if node_spec.get("unschedulable"):
                unschedulable[row] = True
            if not node_spec.get("taints"):
                continue
            taints = tuple(Taint.of(t) for t in node_taints(node.node))
            group = seen.get(taints)
            if group is None:
                group = seen[taints] = len(groups)
                groups.append(taints)
            group_of[row] = group
        self._taint_groups = (group_of, groups)
        self._unschedulable = unschedulable


def _as_str(value: object) -> str | None:
    return None if value is None else str(value)


# ---------------------------------------------------------------------- vectorised matching


def requirement_mask(requirement: Requirement, column: LabelColumn) -> BoolArray:
    """``Requirement.matches`` for every node."""
    operator = requirement.operator
    if operator in (IN, NOT_IN):
        inside = operator == IN
        table = column.table(absent=not inside, present=not inside)
        for value in requirement.values:
            slot = column.lookup.get(value)
            if slot is not None:
                table[slot] = inside
    elif operator == EXISTS:
        table = column.table(absent=False, present=True)
    elif operator == DOES_NOT_EXIST:
        table = column.table(absent=True, present=False)
    elif operator in (GT, LT):
        values = requirement.values
        bound = parse_int64(values[0]) if len(values) == 1 else None
        if bound is None:
            return np.zeros(len(column.slots), dtype=np.bool_)
        numbers, valid = column.ints()
        table = valid & (numbers > bound if operator == GT else numbers < bound)
    else:
        return np.zeros(len(column.slots), dtype=np.bool_)
    mask: BoolArray = table[column.slots]
    return mask


def selector_mask(selector: Selector, index: NodeIndex) -> BoolArray:
    if selector.nothing:
        return np.zeros(index.size, dtype=np.bool_)
    mask = np.ones(index.size, dtype=np.bool_)
    for requirement in selector.requirements:
        mask &= requirement_mask(requirement, index.column(requirement.key))
    return mask


def term_mask(term: NodeSelectorTerm, index: NodeIndex) -> BoolArray:
    """``NodeSelectorTerm.matches`` for every node."""
    if term.error:
        return np.zeros(index.size, dtype=np.bool_)
    mask = (
        selector_mask(term.labels, index)
        if term.labels is not None
        else np.ones(index.size, dtype=np.bool_)
    )
    if term.fields is not None:
        names = index.names()
        # A node without a name has no fields to check (``len(nodeFields) > 0``).
        unnamed = names.slots == names.lookup.get("", -1)
        for field in term.fields:
            same = names.slots == names.lookup.get(field.name, -1)
            mask &= (same if field.equal else ~same) | unnamed
    return mask


def required_affinity_mask(required: RequiredNodeAffinity, index: NodeIndex) -> BoolArray:
    """``RequiredNodeAffinity.matches`` for every node."""
    mask = (
        selector_mask(required.node_selector, index)
        if required.node_selector is not None
        else np.ones(index.size, dtype=np.bool_)
    )
    if required.terms is not None:
        any_term = np.zeros(index.size, dtype=np.bool_)
        for term in required.terms:
            any_term |= term_mask(term, index)
        mask &= any_term
    return mask


def preferred_scores(terms: Sequence[PreferredTerm], index: NodeIndex) -> FloatArray:
    """``preferred_score`` for every node."""
    scores = np.zeros(index.size)
    for preferred in terms:
        scores += preferred.weight * term_mask(preferred.term, index)
    return scores
