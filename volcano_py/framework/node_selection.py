"""Finding feasible nodes for a task and choosing the best (``util/predicate_helper.go``,
``util/scheduler_helper.go``, ``allocate.go`` ``prioritizeNodes``).

Upstream checks nodes one by one with 16 goroutines, starting at a rotating index, and stops
once "enough" feasible nodes are found. Here the static part (resource fit, vectorised plugin
masks) is one numpy pass over all candidate rows; only the dynamic per-node predicates run in
Python, in the same rotated order and with the same early stop, so the same nodes are chosen.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from volcano_py import metrics
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, IntArray
from volcano_py.api.resource import MIN_RESOURCE, DimensionDefault, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import FitError, FitErrors, Status, StatusCode
from volcano_py.framework.feasibility import FeasibilityOptions, feasible_nodes_to_find
from volcano_py.metrics.batch import ObservationBatch

if TYPE_CHECKING:
    from volcano_py.framework.hooks import NodeMask
    from volcano_py.framework.session import Session


# Combine the masks over every node before rotating once the candidates are at least
# 1/_COMBINE_SHARE of the nodes (0: never, the per-mask gathers; the tests' reference).
_COMBINE_SHARE = 4
# Search every node's passing rows in node order instead of rotating the node list first
# (False: always rotate; the tests' reference).
_UNROTATED = True
# ``ndarray.max`` is this reduction behind a Python-level wrapper (asked once per task a run
# places).
_MAXIMUM = np.maximum.reduce
# Up to this many stale candidates, a run scores them row by row in plain floats (the same
# bits as the vector score); more go to the vector score at once (1: only a lone stale row
# is scored so; the tests' reference).
_ROW_SCORED_STALE = 3
# A run's refresh of a written row reads whether it fits now and on future idle in one pass
# (False: two ``FitCache.row_fits`` calls; the tests' reference).
_FITS_IN_ONE_PASS = True


def insufficient_resource_reason(
    request: Resource, available: Resource, notes: Mapping[str, str] | None = None
) -> Status:
    """``Insufficient <first dimension that does not fit>`` (cpu, memory, then scalars)."""
    _, names = request.less_equal_with_resources_name(available, DimensionDefault.ZERO)
    return Status(
        StatusCode.UNSCHEDULABLE, insufficient(names[0] if names else "resources", notes or {})
    )


def insufficient(name: str, notes: Mapping[str, str]) -> str:
    """``Insufficient <name>``, with the conf's note on that resource when it has one (a
    retired argument the user set to have it fitted per device: conf_check)."""
    note = notes.get(name)
    return f"Insufficient {name} ({note})" if note else f"Insufficient {name}"


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

    def role_group(self, task: TaskInfo) -> str:
        """The (job, role) whose failed nodes the task's search skips and extends; empty
        without the error cache or a role."""
        return f"{task.job}/{task.task_role}" if (self.error_cache and task.task_role) else ""

    def role_failed(self, group: str) -> BoolArray | None:
        """Every node a task of ``group`` failed on in this attempt (None: none yet)."""
        role = self._roles.get(group)
        return role.failed if role is not None else None

    def remember_role_failures(self, group: str, rows: IntArray) -> None:
        """Nodes at ``rows`` failed a task of ``group``: its later tasks skip them."""
        if not len(rows):
            return
        role = self._roles.get(group)
        if role is None:
            role = self._roles[group] = _RoleFailures(np.zeros(len(self.ssn.node_list), np.bool_))
        role.failed[rows] = True

    def predicate_nodes(
        self,
        task: TaskInfo,
        rows: IntArray,
        *,
        check_resources: bool = True,
        for_preempt: bool = False,
        options: FeasibilityOptions | None = None,
    ) -> tuple[IntArray, FitErrors]:
        """``_feasible_rows``, timed as upstream's ``PredicateNodes`` times its node scan
        (``scheduling_stage_duration_milliseconds{stage="Predicate"}``)."""
        if len(rows) == 0:
            return np.zeros(0, dtype=np.intp), FitErrors()
        started = time.perf_counter()
        try:
            return self._feasible_rows(
                task,
                rows,
                check_resources=check_resources,
                for_preempt=for_preempt,
                options=options,
            )
        finally:
            if metrics.RECORDING.on:
                metrics.STAGE_PREDICATE.observe(metrics.milliseconds(time.perf_counter() - started))

    def _feasible_rows(
        self,
        task: TaskInfo,
        rows: IntArray,
        *,
        check_resources: bool,
        for_preempt: bool,
        options: FeasibilityOptions | None,
    ) -> tuple[IntArray, FitErrors]:
        """The rows of the feasible nodes among ``rows`` (session rows, in node-list order)
        and, when there is none, why each examined node failed.

        ``check_resources`` is allocate's own fit check (request <= future idle); preempt
        leaves it out. With ``for_preempt`` only unresolvable statuses reject a node.
        """
        ssn = self.ssn
        fit_errors = FitErrors()
        total = len(rows)
        if total == 0:
            return np.zeros(0, dtype=np.intp), fit_errors
        wanted = feasible_nodes_to_find(total, options or ssn.state.feasibility)
        start = ssn.state.next_start_index
        shift = start % total

        fits_all: BoolArray | None = None
        if check_resources:
            # The fit over every node, kept current per request shape, then rotated.
            vector, columns = ssn.task_vector(task.init_resreq)
            fits_all = ssn.fits.future_fits(vector, columns)
        masks = ssn.predicate_masks(task)
        group = self.role_group(task)
        role = self._roles.get(group) if group else None
        scalar = ssn.scalar_predicates(task)
        node_list = ssn.node_list
        if (
            _UNROTATED
            and not scalar
            and not group
            and not for_preempt
            and wanted > 0
            and total == len(node_list)
            and int(rows[0]) == 0
            and int(rows[-1]) == total - 1
        ):
            # Every node is a candidate and every check is vectorised (allocate's usual
            # search): the rows found and the count examined follow from the passing rows in
            # node order, without rotating the whole node list.
            combined = fits_all.copy() if fits_all is not None else np.ones(total, np.bool_)
            for mask in masks:
                combined &= mask.passed
            found = _first_in_rotation(np.flatnonzero(combined), shift, wanted, total)
            if found is not None:
                found_rows, examined = found
                ssn.state.next_start_index = (start + examined) % total
                return found_rows, fit_errors
        # The same rotation as np.roll, without its overhead (it runs once per task).
        order = np.concatenate((rows[shift:], rows[:shift])) if shift else rows
        if not for_preempt and total * _COMBINE_SHARE >= len(ssn.node_list):
            # Most nodes are candidates: combine the masks over every node, then rotate
            # once (one gather instead of one per mask).
            combined = (
                fits_all.copy() if fits_all is not None else np.ones(len(ssn.node_list), np.bool_)
            )
            for mask in masks:
                combined &= mask.passed
            if role is not None:
                combined &= ~role.failed
            passed = combined[order]
        else:
            passed = (
                fits_all[order].copy() if fits_all is not None else np.ones(total, dtype=np.bool_)
            )
            for mask in masks:
                if for_preempt:
                    passed &= mask.passed[order] | ~_rejects_preempt(mask, order)
                else:
                    passed &= mask.passed[order]
            if role is not None:
                passed &= ~role.failed[order]

        scalar_errors: dict[int, tuple[Status, ...]] = {}
        if not scalar:
            # Every check was vectorised: the first `wanted` passing rows, as the node loop
            # would have found them.
            passing = np.flatnonzero(passed)
            if len(passing) >= wanted:
                examined = int(passing[wanted - 1]) + 1
                passing = passing[:wanted]
            else:
                examined = total
            found_rows = order[passing]
        else:
            found_positions: list[int] = []
            examined = total
            for position in np.flatnonzero(passed).tolist():
                node = node_list[int(order[position])]
                statuses = _run_scalar(scalar, task, node)
                if statuses and (not for_preempt or ssn.rejects_for_preempt(statuses)):
                    scalar_errors[position] = statuses
                    passed[position] = False
                    continue
                found_positions.append(position)
                if len(found_positions) >= wanted:
                    examined = position + 1
                    break
            found_rows = order[np.asarray(found_positions, dtype=np.intp)]
        ssn.state.next_start_index = (start + examined) % total

        if not group and len(found_rows):
            # Nothing to remember and nothing to explain: skip the pass over the failures.
            return found_rows, fit_errors
        failed = np.flatnonzero(~passed[:examined])
        if group and len(failed):
            if role is None:
                role = self._roles[group] = _RoleFailures(np.zeros(len(node_list), np.bool_))
            role.failed[order[failed]] = True
        if len(found_rows) == 0:
            fits = fits_all[order] if fits_all is not None else np.ones(total, dtype=np.bool_)
            self._record_failures(task, order, failed, fits, masks, role, scalar_errors, fit_errors)
        return found_rows, fit_errors

    def _record_failures(
        self,
        task: TaskInfo,
        order: IntArray,
        failed: IntArray,
        fits: BoolArray,
        masks: Sequence[NodeMask],
        role: _RoleFailures | None,
        scalar_errors: dict[int, tuple[Status, ...]],
        fit_errors: FitErrors,
    ) -> None:
        """Why each examined node failed. Nodes short of a resource are grouped by the first
        dimension they lack (one vectorised pass, one shared error per reason): a task that
        fits nowhere on 5k nodes must not cost 5k Python objects."""
        node_list = self.ssn.node_list
        short = [p for p in failed.tolist() if not fits[p] and p not in scalar_errors]
        short_set = set(short)
        for position in failed.tolist():
            if position in short_set:
                continue
            row = int(order[position])
            cached = scalar_errors.get(position)
            statuses = cached if cached is not None else self._why(task, row, True, masks, role)
            if role is not None:
                role.errors.setdefault(row, statuses)
            fit_errors.set_node_error(node_list[row].name, FitError("", list(statuses)))
        if not short:
            return
        rows = order[np.asarray(short, dtype=np.intp)]
        vector, columns = self.ssn.task_vector(task.init_resreq)
        m = self.ssn.matrix
        future_idle = (
            m.idle[np.ix_(rows, columns)]
            + m.releasing[np.ix_(rows, columns)]
            - (m.pipelined[np.ix_(rows, columns)])
        )
        lacking = ~(vector[columns] - future_idle < MIN_RESOURCE)
        first = np.argmax(lacking, axis=1)
        names = self.ssn.matrix.index.names
        shared: dict[int, FitError] = {}
        for row, column_position in zip(rows.tolist(), first.tolist(), strict=True):
            error = shared.get(column_position)
            if error is None:
                reason = insufficient(
                    names[int(columns[column_position])], self.ssn.conf.resource_notes
                )
                error = shared[column_position] = FitError(
                    "", [Status(StatusCode.UNSCHEDULABLE, reason)]
                )
            if role is not None:
                role.errors.setdefault(row, tuple(error.statuses))
            fit_errors.nodes[node_list[row].name] = error

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
            return (
                insufficient_resource_reason(
                    task.init_resreq, node.future_idle(), self.ssn.conf.resource_notes
                ),
            )
        for mask in masks:
            if not mask.passed[row]:
                reason = mask.reason(row)
                return reason if isinstance(reason, tuple) else (reason,)
        return (Status(StatusCode.UNSCHEDULABLE, "node(s) failed an earlier task of the role"),)


def _first_in_rotation(
    passing: IntArray, shift: int, wanted: int, total: int
) -> tuple[IntArray, int] | None:
    """The first ``wanted`` of the ``passing`` rows (ascending, of rows ``0..total-1``) in
    the order that starts at row ``shift`` and wraps, and how many rows that order examined
    to find them; None when no row passes (the caller then explains every failure).

    The rotated order puts row ``r`` at ``(r - shift) % total``: the passing rows from
    ``shift`` on come first, then the ones before it."""
    if not len(passing):
        return None
    # The array's own method: ``np.searchsorted`` adds a Python-level dispatch per call.
    split = int(passing.searchsorted(shift))
    after = len(passing) - split
    if after >= wanted:
        found = passing[split : split + wanted]
        return found, int(found[-1]) - shift + 1
    if len(passing) >= wanted:
        wrapped = wanted - after
        found = np.concatenate((passing[split:], passing[:wrapped]))
        return found, int(passing[wrapped - 1]) + total - shift + 1
    return np.concatenate((passing[split:], passing[:split])), total


def _rejects_preempt(mask: NodeMask, order: IntArray) -> BoolArray:
    """For preemption a mask only rejects nodes whose reason is unresolvable (a lack of room
    is what evictions fix). Only the failing rows are asked why."""
    rejected = np.zeros(len(order), dtype=np.bool_)
    for position in np.flatnonzero(~mask.passed[order]).tolist():
        reason = mask.reason(int(order[position]))
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


def select_best_row(ssn: Session, task: TaskInfo, rows: IntArray) -> int:
    """The highest-scoring row (a ``best_node`` plugin may choose instead); ties are broken at
    random, as upstream does, with the session's seeded generator."""
    if len(rows) == 1:
        return int(rows[0])
    started = time.perf_counter()
    scores = ssn.node_scores(task, rows)
    # ``PrioritizeNodes``' scoring time (scheduling_stage_duration{stage="Scoring"}).
    if metrics.RECORDING.on:
        metrics.STAGE_SCORING.observe(metrics.milliseconds(time.perf_counter() - started))
    if ssn.has_hook("best_node"):
        by_score: dict[float, list[NodeInfo]] = {}
        for row, score in zip(rows.tolist(), scores.tolist(), strict=True):
            by_score.setdefault(float(score), []).append(ssn.node_list[row])
        chosen = ssn.best_node_fn(task, by_score)
        if chosen is not None:
            return chosen.row
    ties = rows[scores == scores.max()]
    return int(ties[0]) if len(ties) == 1 else int(ties[ssn.rng.randrange(len(ties))])


def select_best_node(ssn: Session, task: TaskInfo, rows: IntArray) -> NodeInfo:
    return ssn.node_list[select_best_row(ssn, task, rows)]


def prioritize_nodes(ssn: Session, task: TaskInfo, rows: IntArray) -> NodeInfo | None:
    """Prefer nodes where the task fits now (idle) over nodes where it fits once evictions
    finish (future idle); score within the first non-empty group."""
    if len(rows) == 0:
        return None
    vector, columns = ssn.task_vector(task.init_resreq)
    fits_idle = ssn.fits.idle_fits(vector, columns)[rows]
    if fits_idle.any():
        return select_best_node(ssn, task, rows[fits_idle])
    fits_future = ssn.fits.future_fits(vector, columns)[rows]
    if fits_future.any():
        return select_best_node(ssn, task, rows[fits_future])
    return None


class RunStages:
    """The predicate and scoring stage timings of the runs of one allocation attempt, handed
    to ``scheduling_stage_duration_milliseconds`` in bulk (``ObservationBatch``) by ``flush``
    at the attempt's end."""

    __slots__ = ("predicate", "scoring")

    def __init__(self) -> None:
        self.predicate = ObservationBatch(metrics.STAGE_PREDICATE)
        self.scoring = ObservationBatch(metrics.STAGE_SCORING)

    def flush(self) -> None:
        self.predicate.flush()
        self.scoring.flush()


class RunSearch:
    """The node search and scoring of a run of like tasks of one job (``same_pod_template``)
    that allocate places one after the other over the same candidate rows (every node on the
    flat path, one HyperNode's nodes in a HyperNode's search), kept across the run.

    Made for a run whose tasks ``Session.batch_safe`` allows: they need no per-node check,
    every node's score is its own (the same whichever candidates are asked) or the same on
    every candidate (``Session.run_uniform_scores``: added to the others' sum per member), and
    a placement of the run changes a node's fit, masks and own score only on the row it
    wrote. So the run keeps, across its tasks, which nodes pass (the resource fit on future
    idle, the plugins' masks, the role's failed nodes), which fit on idle, and every node's
    score; after each placement it looks again only at the rows written since
    (``NodeMatrix.touched``), with the same operations the full pass uses
    (``FitCache.row_fits``, the masks' bits), and scores a node the first time it is a
    candidate and again only after its row was written. The search is
    ``PredicateHelper.predicate_nodes``' over the run's rows: the same rotating window
    (``next_start_index``); then ``prioritize_nodes``' choice: where the task fits now before
    where it fits the future idle, the best score, the same seeded tie-break.
    """

    __slots__ = (
        "_column_list",
        "_columns",
        "_fresh",
        "_group",
        "_helper",
        "_idle",
        "_passes",
        "_passing",
        "_position",
        "_row_score",
        "_rows",
        "_score",
        "_scores",
        "_seen",
        "_short_of_idle",
        "_ssn",
        "_stages",
        "_uniform",
        "_vector",
        "_wanted",
        "_wanted_list",
        "pre_predicate",
        "template",
        "wanted",
    )

    def __init__(
        self,
        ssn: Session,
        helper: PredicateHelper,
        task: TaskInfo,
        rows: IntArray,
        uniform: Mapping[str, Callable[[TaskInfo], float]] | None = None,
        stages: RunStages | None = None,
    ) -> None:
        self._ssn = ssn
        # Where the stage timings go (None: straight to the histograms).
        self._stages = stages
        # The role's failed nodes (the predicate error cache), shared with the per-task
        # search of the same attempt: the run skips them and adds its own.
        self._helper = helper
        self._group = helper.role_group(task)
        # The task the run's members must ask alike (``same_pod_template``).
        self.template = task
        self._rows = rows
        # Session row -> its position in ``rows`` (None: ``rows`` is every row, in order).
        self._position: dict[int, int] | None = (
            None if RunSearch.covers(ssn, rows) else {r: i for i, r in enumerate(rows.tolist())}
        )
        self._vector, self._columns = ssn.task_vector(task.init_resreq)
        self._wanted = self._vector[self._columns]
        # The same as plain lists, for the row-by-row refresh after each placement.
        self._wanted_list: list[float] = self._wanted.tolist()
        self._column_list: list[int] = self._columns.tolist()
        self.wanted = feasible_nodes_to_find(len(rows), ssn.state.feasibility)
        # The scores alike on every candidate, added per member after the per-row ones.
        self._uniform = list(uniform.values()) if uniform else []
        skip = tuple(uniform) if uniform else ()
        self._score = ssn.run_node_scores(task, skip)
        # One row's score in plain floats (None: the plugins offer none; ask ``_score``).
        self._row_score = ssn.run_row_score(task, skip)
        # The pre-predicates of the run's members (the template's answer, looked up once).
        self.pre_predicate = ssn.run_pre_predicate(task)
        size = len(ssn.node_list)
        # Per session row: the per-row scores' sum, and whether it is current (scored, and
        # not written since).
        self._scores = np.zeros(size)
        self._fresh = np.zeros(size, dtype=np.bool_)
        # Which nodes pass every check (per session row) and the positions in ``rows`` of
        # those among the run's rows (ascending), which fit on idle, and the matrix's
        # (generation, log length) when they were last brought up to date.
        self._passes: BoolArray | None = None
        self._passing: IntArray = np.zeros(0, dtype=np.intp)
        self._idle: BoolArray | None = None
        # How many passing nodes of the run do not fit on idle (none: no candidate needs
        # the idle check).
        self._short_of_idle = 0
        self._seen = (-1, -1)

    @staticmethod
    def covers(ssn: Session, rows: IntArray) -> bool:
        """Is ``rows`` every session row, in order (the flat allocate's search)?"""
        total = len(ssn.node_list)
        return len(rows) == total > 0 and int(rows[0]) == 0 and int(rows[-1]) == total - 1

    def may_follow_into_another_job(self) -> bool:
        """Does the run's kept view hold for the next job's like tasks too? Over every node,
        with no role's failed nodes folded in (those belong to one job's attempt) and no
        score alike on every node (a HyperNode's, which reads the job)."""
        return self._position is None and not self._group and not self._uniform

    def follow_into(self, helper: PredicateHelper, stages: RunStages | None) -> None:
        """The next job's attempt takes the run on: its predicate error cache (which the run
        does not read: no role) and its stage timings."""
        self._helper = helper
        self._stages = stages

    def placed(self, node: NodeInfo) -> None:
        """A task of the run was placed (or tried) on ``node``: its score is stale."""
        self._fresh[node.row] = False

    def _refresh(self, task: TaskInfo) -> tuple[BoolArray, IntArray, BoolArray]:
        """(passes, passing positions, fits on idle) for ``task``, brought up to date: in
        full the first time (or when the matrix's write log no longer says what changed),
        else only on the rows written since the last task."""
        ssn = self._ssn
        matrix = ssn.matrix
        generation, logged = matrix.generation, len(matrix.touched)
        passes, idle = self._passes, self._idle
        if passes is not None and idle is not None and self._seen[0] == generation:
            return passes, self._passing, idle
        # The members' masks are the template's (``batch_safe``: they follow the pod
        # template), asked again for the rows written since.
        masks = ssn.predicate_masks(self.template)
        failed = self._helper.role_failed(self._group) if self._group else None
        seen_generation, seen_logged = self._seen
        position = self._position
        if (
            passes is None
            or idle is None
            or seen_logged > logged
            or logged - seen_logged != generation - seen_generation
        ):
            passes = ssn.fits.future_fits(self._vector, self._columns).copy()
            for mask in masks:
                passes &= mask.passed
            if failed is not None:
                passes &= ~failed
            idle = ssn.fits.idle_fits(self._vector, self._columns).copy()
            if position is None:
                self._passing = np.flatnonzero(passes)
                self._short_of_idle = int(np.count_nonzero(passes & ~idle))
            else:
                rows = self._rows
                self._passing = np.flatnonzero(passes[rows])
                self._short_of_idle = int(np.count_nonzero(passes[rows] & ~idle[rows]))
            self._passes, self._idle = passes, idle
            # Every score may be stale: the rows written before this were not followed.
            self._fresh[:] = False
        else:
            fits, wanted, columns = ssn.fits, self._wanted, self._columns
            wanted_list, column_list = self._wanted_list, self._column_list
            for row in set(matrix.touched[seen_logged:]):
                if position is None:
                    at_position = row
                elif row in position:
                    at_position = position[row]
                else:
                    continue  # not one of the run's rows: never a candidate
                self._fresh[row] = False
                before = bool(passes[row]) and not idle[row]
                if _FITS_IN_ONE_PASS:
                    idle[row], now = fits.row_fits_now_and_later(wanted_list, column_list, row)
                else:
                    idle[row] = fits.row_fits(False, wanted, columns, row)
                    now = fits.row_fits(True, wanted, columns, row)
                if now:
                    for mask in masks:
                        if not mask.passed[row]:
                            now = False
                            break
                if now and failed is not None and failed[row]:
                    now = False
                if now != passes[row]:
                    passes[row] = now
                    at = int(self._passing.searchsorted(at_position))
                    self._passing = (
                        np.insert(self._passing, at, at_position)
                        if now
                        else np.delete(self._passing, at)
                    )
                self._short_of_idle += int(now and not idle[row]) - int(before)
        self._seen = (generation, logged)
        return passes, self._passing, idle

    def choose(self, task: TaskInfo) -> tuple[bool, NodeInfo | None]:
        """(searched, best node): ``searched`` is False when no node passes (the caller
        then runs the per-task search, which explains every failure, from the same state);
        the node is None when none of the found ones has room (``prioritize_nodes``)."""
        ssn = self._ssn
        started = time.perf_counter()
        passes, passing, idle = self._refresh(task)
        rows = self._rows
        total = len(rows)
        start = ssn.state.next_start_index
        shift = start % total
        found = _first_in_rotation(passing, shift, self.wanted, total)
        if found is None:
            return False, None
        candidates, examined = found
        if self._position is not None:
            candidates = rows[candidates]
        ssn.state.next_start_index = (start + examined) % total
        group = self._group
        if group:
            # The examined nodes that failed, from the start on, wrapping: the role skips
            # them from now on (as ``predicate_nodes`` remembers them). They fail already,
            # so the run's own view does not change.
            examined_rows = rows[(np.arange(examined) + shift) % total]
            self._helper.remember_role_failures(group, examined_rows[~passes[examined_rows]])
        elapsed = metrics.milliseconds(time.perf_counter() - started)
        stages = self._stages
        if stages is not None:
            stages.predicate.observe(elapsed)
        else:
            metrics.STAGE_PREDICATE.observe(elapsed)
        # prioritize_nodes: where it fits now, else (every candidate fits the future idle).
        if self._short_of_idle:
            fits_idle = idle[candidates]
            if fits_idle.any():
                candidates = candidates[fits_idle]
        # (else every passing node fits on idle: the candidates stay as they are)
        if len(candidates) == 1:
            return True, ssn.node_list[int(candidates[0])]
        started = time.perf_counter()
        stale = candidates[~self._fresh[candidates]]
        if 0 < len(stale) <= _ROW_SCORED_STALE and self._row_score is not None:
            # After the first pass over the nodes, usually the one row placed on earlier
            # (a few when the window comes back round to rows placed on since).
            row_score, kept = self._row_score, self._scores
            for row in stale.tolist():
                kept[row] = row_score(row)
            self._fresh[stale] = True
        elif len(stale):
            self._scores[stale] = self._score(stale)
            self._fresh[stale] = True
        scores = self._scores[candidates]
        for uniform in self._uniform:
            # After the per-row sum, as ``Session.node_scores`` adds it (the last parts).
            scores += uniform(task)
        elapsed = metrics.milliseconds(time.perf_counter() - started)
        if stages is not None:
            stages.scoring.observe(elapsed)
        else:
            metrics.STAGE_SCORING.observe(elapsed)
        ties = candidates[scores == _MAXIMUM(scores)]
        chosen = int(ties[0]) if len(ties) == 1 else int(ties[ssn.rng.randrange(len(ties))])
        return True, ssn.node_list[chosen]
