"""Finding feasible nodes for a task and choosing the best (``util/predicate_helper.go``,
``util/scheduler_helper.go``, ``allocate.go`` ``prioritizeNodes``).

Upstream checks nodes one by one with 16 goroutines, starting at a rotating index, and stops
once "enough" feasible nodes are found. Here the static part (resource fit, vectorised plugin
masks) is one numpy pass over all candidate rows; only the dynamic per-node predicates run in
Python, in the same rotated order and with the same early stop, so the same nodes are chosen.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, IntArray, fit_mask
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import FitError, FitErrors, Status, StatusCode

if TYPE_CHECKING:
    from volcano_py.framework.hooks import NodeMask
    from volcano_py.framework.session import Session


@dataclass(frozen=True, slots=True)
class FeasibilityOptions:
    """``--minimum-feasible-nodes``, ``--minimum-percentage-nodes-to-find``,
    ``--percentage-nodes-to-find``."""

    minimum_feasible_nodes: int = 100
    minimum_percentage: int = 5
    percentage: int = 0


def feasible_nodes_to_find(total: int, options: FeasibilityOptions = FeasibilityOptions()) -> int:
    """How many feasible nodes to look for among ``total`` (kube-scheduler's adaptive rule)."""
    if total <= options.minimum_feasible_nodes or options.percentage >= 100:
        return total
    percentage = options.percentage
    if percentage <= 0:
        percentage = max(50 - total // 125, options.minimum_percentage)
    return max(total * percentage // 100, options.minimum_feasible_nodes)


def insufficient_resource_reason(request: Resource, available: Resource) -> Status:
    """``Insufficient <first dimension that does not fit>`` (cpu, memory, then scalars)."""
    _, names = request.less_equal_with_resources_name(available, DimensionDefault.ZERO)
    return Status(StatusCode.UNSCHEDULABLE, f"Insufficient {names[0] if names else 'resources'}")


@dataclass
class _RoleFailures:
    """Nodes a task of this (job, role) already failed on in this attempt, and why."""

    failed: BoolArray
    errors: dict[int, tuple[Status, ...]] = field(default_factory=dict)


class PredicateHelper:
    """One per allocation attempt: it owns the (job, role) predicate-error cache."""

    def __init__(self, ssn: Session, error_cache: bool = True) -> None:
        self.ssn = ssn
        self.error_cache = error_cache
        self._roles: dict[str, _RoleFailures] = {}

    def predicate_nodes(
        self,
        task: TaskInfo,
        rows: IntArray,
        *,
        check_resources: bool = True,
        for_preempt: bool = False,
        options: FeasibilityOptions = FeasibilityOptions(),
    ) -> tuple[list[NodeInfo], FitErrors]:
        """The feasible nodes among ``rows`` (session rows, in node-list order) and, for the
        nodes examined that failed, why.

        ``check_resources`` is allocate's own fit check (request <= future idle); preempt
        leaves it out. With ``for_preempt`` only unresolvable statuses reject a node.
        """
        ssn = self.ssn
        fit_errors = FitErrors()
        total = len(rows)
        if total == 0:
            return [], fit_errors
        wanted = feasible_nodes_to_find(total, options)
        start = ssn.state.next_start_index
        order = np.roll(rows, -(start % total))

        passed = np.ones(total, dtype=np.bool_)
        if check_resources:
            vector, columns = ssn.task_vector(task.init_resreq)
            m = ssn.matrix
            future_idle = m.idle[order] + m.releasing[order] - m.pipelined[order]
            fits = fit_mask(vector, columns, future_idle)
            passed &= fits
        else:
            fits = passed.copy()
        masks = ssn.predicate_masks(task)
        for mask in masks:
            if for_preempt:
                passed &= mask.passed[order] | ~_rejects_preempt(mask, order)
            else:
                passed &= mask.passed[order]
        group = f"{task.job}/{task.task_role}" if (self.error_cache and task.task_role) else ""
        role = self._roles.get(group) if group else None
        if role is not None:
            passed &= ~role.failed[order]

        scalar = ssn.scalar_predicates()
        found: list[NodeInfo] = []
        failed_positions: list[int] = []
        scalar_errors: dict[int, tuple[Status, ...]] = {}
        examined = total
        node_list = ssn.node_list
        for position in range(total):
            if not passed[position]:
                failed_positions.append(position)
                continue
            node = node_list[int(order[position])]
            statuses = _run_scalar(scalar, task, node)
            if statuses and (not for_preempt or ssn.rejects_for_preempt(statuses)):
                scalar_errors[position] = statuses
                failed_positions.append(position)
                continue
            found.append(node)
            if len(found) >= wanted:
                examined = position + 1
                break
        ssn.state.next_start_index = (start + examined) % total

        failed_positions = [p for p in failed_positions if p < examined]
        if group and failed_positions:
            if role is None:
                role = self._roles[group] = _RoleFailures(np.zeros(len(ssn.node_list), np.bool_))
            for position in failed_positions:
                role.failed[int(order[position])] = True
        if not found:
            for position in failed_positions:
                row = int(order[position])
                cached = scalar_errors.get(position)
                statuses = (
                    cached
                    if cached is not None
                    else self._why(task, row, bool(fits[position]), masks, role)
                )
                if role is not None:
                    role.errors.setdefault(row, statuses)
                fit_errors.set_node_error(node_list[row].name, FitError("", list(statuses)))
        return found, fit_errors

    def _why(
        self,
        task: TaskInfo,
        row: int,
        fits: bool,
        masks: Sequence[NodeMask],
        role: _RoleFailures | None,
    ) -> tuple[Status, ...]:
        if role is not None and row in role.errors:
            return role.errors[row]
        if not fits:
            node = self.ssn.node_list[row]
            return (insufficient_resource_reason(task.init_resreq, node.future_idle()),)
        for mask in masks:
            if not mask.passed[row]:
                reason = mask.reason(row)
                return reason if isinstance(reason, tuple) else (reason,)
        return (Status(StatusCode.UNSCHEDULABLE, "node(s) failed an earlier task of the role"),)


def _rejects_preempt(mask: NodeMask, order: IntArray) -> BoolArray:
    """For preemption a mask only rejects nodes whose reason is unresolvable."""
    rejected = np.zeros(len(order), dtype=np.bool_)
    for position, row in enumerate(order):
        if not mask.passed[row]:
            reason = mask.reason(int(row))
            statuses = reason if isinstance(reason, tuple) else (reason,)
            rejected[position] = any(
                s.code is not StatusCode.UNSCHEDULABLE and s.code is not StatusCode.SUCCESS
                for s in statuses
            )
    return rejected


def _run_scalar(predicates: Sequence[object], task: TaskInfo, node: NodeInfo) -> tuple[Status, ...]:
    from volcano_py.framework.session import as_statuses

    for predicate in predicates:
        statuses = as_statuses(predicate(task, node))  # type: ignore[operator]
        if statuses:
            return statuses
    return ()


def select_best_node(ssn: Session, task: TaskInfo, candidates: Sequence[NodeInfo]) -> NodeInfo:
    """The highest-scoring candidate (a ``best_node`` plugin may choose instead); ties are
    broken at random, as upstream does, with the session's seeded generator."""
    if len(candidates) == 1:
        return candidates[0]
    rows = np.fromiter((node.row for node in candidates), dtype=np.intp, count=len(candidates))
    scores = ssn.node_scores(task, rows)
    if ssn.has_hook("best_node"):
        by_score: dict[float, list[NodeInfo]] = {}
        for node, score in zip(candidates, scores, strict=True):
            by_score.setdefault(float(score), []).append(node)
        chosen = ssn.best_node_fn(task, by_score)
        if chosen is not None:
            return chosen
    best = float(scores.max())
    ties = [node for node, score in zip(candidates, scores, strict=True) if score == best]
    return ties[0] if len(ties) == 1 else ssn.rng.choice(ties)


def prioritize_nodes(
    ssn: Session, task: TaskInfo, candidates: Sequence[NodeInfo]
) -> NodeInfo | None:
    """Prefer nodes where the task fits now (idle) over nodes where it fits once evictions
    finish (future idle); score within the first non-empty group."""
    if not candidates:
        return None
    vector, columns = ssn.task_vector(task.init_resreq)
    m = ssn.matrix
    rows = np.fromiter((node.row for node in candidates), dtype=np.intp, count=len(candidates))
    fits_idle = fit_mask(vector, columns, m.idle[rows])
    future_idle = m.idle[rows] + m.releasing[rows] - m.pipelined[rows]
    fits_future = fit_mask(vector, columns, future_idle)
    idle_nodes = [node for node, ok in zip(candidates, fits_idle, strict=True) if ok]
    if idle_nodes:
        return select_best_node(ssn, task, idle_nodes)
    future_nodes = [
        node
        for node, ok, idle_ok in zip(candidates, fits_future, fits_idle, strict=True)
        if ok and not idle_ok
    ]
    if future_nodes:
        return select_best_node(ssn, task, future_nodes)
    return None
