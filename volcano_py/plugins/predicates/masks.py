"""The vectorised predicates: node-static filters and the pod-count check, as NodeMasks.

The static filters (NodeUnschedulable, NodeAffinity with ``nodeSelector``, TaintToleration)
depend only on the node and on a few fields of the pod, so their answer over all nodes is
computed once per *signature* of those fields and shared by every task that has it (a gang's
members usually do). ``static_status`` is the scalar, readable statement of the same rules;
it also explains a failing row.

The pod-count check depends on the pods placed so far, so its mask is recomputed after each
placement (one comparison over all nodes) and shared by every task until the next one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

import numpy as np

from volcano_py.api.node_matrix import BoolArray, NodeMatrix
from volcano_py.api.resource import PODS
from volcano_py.api.task import TaskInfo, derived_fact
from volcano_py.api.types import NODE_POD_NUMBER_EXCEEDED, Status, StatusCode
from volcano_py.framework.hooks import NodeMask
from volcano_py.plugins._kube_scheduling.node_index import NodeIndex, required_affinity_mask
from volcano_py.plugins._kube_scheduling.podspec import (
    Frozen,
    affinity,
    freeze,
    mapping,
    node_selector,
    tolerations,
)
from volcano_py.plugins._kube_scheduling.selectors import (
    RequiredNodeAffinity,
    required_node_affinity,
)
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods
from volcano_py.plugins._kube_scheduling.taints import (
    ERR_UNTOLERATED,
    Taint,
    Toleration,
    first_untolerated,
    tolerates_unschedulable,
)

ERR_UNSCHEDULABLE: Final = "node(s) were unschedulable"
ERR_NODE_AFFINITY: Final = "node(s) didn't match Pod's node affinity/selector"
PLUGIN_NAME: Final = "predicates"


@dataclass(frozen=True, slots=True)
class StaticFilters:
    """Which of the switchable static filters run (NodeUnschedulable always does)."""

    node_affinity: bool = True
    taint_toleration: bool = True


@dataclass(frozen=True, slots=True)
class StaticSpec:
    """What the static filters read from a pod."""

    required: RequiredNodeAffinity
    tolerations: tuple[Toleration, ...]
    tolerates_unschedulable: bool

    @classmethod
    def of(cls, pod: Mapping[str, object]) -> StaticSpec:
        pod_tolerations = tuple(Toleration.of(t) for t in tolerations(pod))
        return cls(
            required_node_affinity(node_selector(pod), affinity(pod).get("nodeAffinity")),
            pod_tolerations,
            tolerates_unschedulable(pod_tolerations),
        )


def signature(pod: Mapping[str, object]) -> Frozen:
    node_affinity = mapping(affinity(pod).get("nodeAffinity"))
    return (
        freeze(node_selector(pod)),
        freeze(node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")),
        freeze(tolerations(pod)),
    )


def _task_signature(task: TaskInfo) -> Frozen:
    return signature(task.pod)


def static_status(
    spec: StaticSpec,
    filters: StaticFilters,
    labels: Mapping[str, str],
    node_name: str,
    taints: Sequence[Taint],
    unschedulable: bool,
) -> Status | None:
    """The first failing static filter on one node, in kube-scheduler's order (each fails
    UnschedulableAndUnresolvable, which ends the node's check upstream)."""
    if unschedulable and not spec.tolerates_unschedulable:
        return Status(
            StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNSCHEDULABLE, "NodeUnschedulable"
        )
    if filters.node_affinity and not spec.required.matches(labels, node_name):
        return Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_NODE_AFFINITY, "NodeAffinity")
    if filters.taint_toleration and first_untolerated(taints, spec.tolerations) is not None:
        return Status(StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, ERR_UNTOLERATED, "TaintToleration")
    return None


def static_status_at(
    spec: StaticSpec, filters: StaticFilters, index: NodeIndex, row: int
) -> Status | None:
    return static_status(
        spec,
        filters,
        index.labels(row),
        index.name(row),
        index.taints(row),
        bool(index.unschedulable()[row]),
    )


def static_mask(spec: StaticSpec, filters: StaticFilters, index: NodeIndex) -> BoolArray:
    """``static_status(...) is None`` for every node at once."""
    passed = np.ones(index.size, dtype=np.bool_)
    if not spec.tolerates_unschedulable:
        passed &= ~index.unschedulable()
    if filters.node_affinity and not spec.required.is_empty:
        passed &= required_affinity_mask(spec.required, index)
    if filters.taint_toleration:
        group_of, groups = index.taint_groups()
        group_ok = np.fromiter(
            (first_untolerated(taints, spec.tolerations) is None for taints in groups),
            dtype=np.bool_,
            count=len(groups),
        )
        passed &= group_ok[group_of]
    return passed


class StaticMasks:
    """The static mask of each task, computed once per signature per session."""

    def __init__(self, index: NodeIndex, filters: StaticFilters) -> None:
        self.index = index
        self.filters = filters
        self._by_signature: dict[Frozen, NodeMask] = {}
        self._by_task: dict[str, tuple[Mapping[str, object], NodeMask]] = {}

    def mask(self, task: TaskInfo) -> NodeMask:
        cached = self._by_task.get(task.uid)
        if cached is not None and cached[0] is task.pod:
            return cached[1]
        # A fact of the pod alone, kept with the task (later sessions ask it again).
        key: Frozen = derived_fact(task, "predicates.static_signature", _task_signature)
        node_mask = self._by_signature.get(key)
        if node_mask is None:
            node_mask = self._by_signature[key] = self._build(StaticSpec.of(task.pod))
        self._by_task[task.uid] = (task.pod, node_mask)
        return node_mask

    def _build(self, spec: StaticSpec) -> NodeMask:
        index, filters = self.index, self.filters

        def reason(row: int) -> Status:
            status = static_status_at(spec, filters, index, row)
            return status if status is not None else Status(StatusCode.SUCCESS, "")

        return NodeMask(static_mask(spec, filters, index), reason)


class PodCountMask:
    """Volcano's own check: a node whose allocatable ``pods`` is not above the pods it holds
    takes no more (Unschedulable: evicting a pod would make room)."""

    def __init__(self, pods: SessionPods, matrix: NodeMatrix) -> None:
        self.pods = pods
        column = matrix.index.columns.get(PODS)
        allowed = matrix.allocatable[:, column] if column is not None else np.zeros(matrix.size)
        # MaxTaskNum is an integer count.
        self._allowed = np.floor(allowed[: len(pods.node_list)])
        # Kept current row by row as pods come and go (a placement changes one row).
        self._passed: BoolArray = self._allowed > pods.counts
        self._version = -1
        self._mask: NodeMask | None = None
        pods.subscribe(self._changed)

    def mask(self, task: TaskInfo) -> NodeMask:
        if self._mask is None or self._version != self.pods.version:
            # A copy: a mask handed out earlier keeps the answer it had.
            self._mask = NodeMask(self._passed.copy(), _pod_number_exceeded)
            self._version = self.pods.version
        return self._mask

    def _changed(self, task: TaskInfo, row: int, sign: int) -> None:
        self._passed[row] = self._allowed[row] > self.pods.counts[row]


def _pod_number_exceeded(row: int) -> Status:
    return Status(StatusCode.UNSCHEDULABLE, NODE_POD_NUMBER_EXCEEDED, PLUGIN_NAME)
