"""NodeMatrix: every node's resource accounting as rows of dense float64 arrays.

Scheduling is a loop over tasks times nodes; a Python loop over 5k nodes costs about a
millisecond per task, numpy over an N x R matrix a few microseconds. So node accounting lives
here, one row per node and one column per resource name, and ``NodeInfo`` reads its row.

Each vectorised function below has a plain-Python twin (``*_reference``) that states the rule
readably; a Hypothesis test proves the two agree.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final

import numpy as np
import numpy.typing as npt

from volcano_py.api.resource import CPU, MEMORY, MIN_RESOURCE, PODS, Resource

FloatArray = npt.NDArray[np.float64]
BoolArray = npt.NDArray[np.bool_]
IntArray = npt.NDArray[np.intp]

# The accounting arrays every node has, in this order.
FIELDS: Final = ("allocatable", "capacity", "idle", "used", "releasing", "pipelined")


class ResourceIndex:
    """Which column holds which resource: cpu, memory and pods first, then scalars as seen."""

    __slots__ = ("columns", "names")

    def __init__(self, names: Sequence[str] = (CPU, MEMORY, PODS)) -> None:
        self.names: list[str] = list(names)
        self.columns: dict[str, int] = {name: i for i, name in enumerate(self.names)}

    @property
    def width(self) -> int:
        return len(self.names)

    def column(self, name: str) -> int:
        """The column of ``name``, adding one for a resource not seen before."""
        column = self.columns.get(name)
        if column is None:
            column = self.columns[name] = len(self.names)
            self.names.append(name)
        return column

    def copy(self) -> ResourceIndex:
        return ResourceIndex(self.names)

    def vector(self, resource: Resource) -> FloatArray:
        """``resource`` as a row (registering any new scalar names first)."""
        columns = [self.column(name) for name in resource.scalar_resources]
        vector = np.zeros(self.width)
        vector[0] = resource.milli_cpu
        vector[1] = resource.memory
        for column, value in zip(columns, resource.scalar_resources.values(), strict=True):
            vector[column] = value
        return vector

    def delta(self, resource: Resource, sign: float) -> list[float]:
        """``sign * vector(resource)`` as plain floats: the same values, the same columns
        registered in the same order (a row update in plain floats reads and writes these)."""
        scalars = resource.scalar_resources
        if scalars:
            columns = [self.column(name) for name in scalars]
            values = [0.0] * len(self.names)
            values[0] = float(resource.milli_cpu)
            values[1] = float(resource.memory)
            for column, value in zip(columns, scalars.values(), strict=True):
                values[column] = float(value)
            return values if sign == 1.0 else [sign * value for value in values]
        rest = len(self.names) - 2
        if sign == 1.0:  # 1.0 * x is x
            return [float(resource.milli_cpu), float(resource.memory), *([0.0] * rest)]
        return [
            sign * float(resource.milli_cpu),
            sign * float(resource.memory),
            *([sign * 0.0] * rest),
        ]

    def defined_columns(self, resource: Resource) -> IntArray:
        """The columns a fit check looks at for ``resource``: cpu, memory and its scalars."""
        scalars = [self.column(name) for name in resource.scalar_resources]
        return np.array([0, 1, *scalars], dtype=np.intp)

    def resource(self, row: FloatArray, defined: Iterable[str] = ()) -> Resource:
        """A row back as a Resource; scalars appear when ``defined`` names them or non-zero."""
        result = Resource(milli_cpu=float(row[0]), memory=float(row[1]))
        keep = set(defined)
        for column in range(2, min(self.width, row.shape[0])):
            name = self.names[column]
            value = float(row[column])
            if value != 0.0 or name in keep:
                result.scalar_resources[name] = value
        if PODS in result.scalar_resources:
            result.max_task_num = int(result.scalar_resources[PODS])
        return result


class NodeMatrix:
    """``allocatable, capacity, idle, used, releasing, pipelined``: float64[rows, resources].

    Rows are handed out by ``add_row`` and recycled by ``free_row``; columns grow when a new
    resource name appears. A session works on ``take(rows)``: a compact copy in session node
    order, so its rows are 0..N-1.

    The arrays are column-major (Fortran order): the per-task queries read a few columns over
    every node, and a column of a column-major array is one contiguous run (a strided column
    costs numpy about four times as much); the per-node updates write one short row either way.
    Growing the rows or columns replaces the arrays, so hold the matrix, not its arrays.

    Beside the accounting, each row keeps sums of facts of the pods its node holds
    (``api.pod_facts``), kept by ``NodeInfo`` as it charges and uncharges pods:
    ``non_zero_extra`` float64[rows, 2], non-zero minus real requests (milli cpu, memory), and
    ``pod_affinity`` intp[rows], how many pods carry an inter-pod affinity section. A session
    copies them with its rows instead of visiting every pod.
    """

    __slots__ = (
        "allocatable",
        "capacity",
        "free_rows",
        "generation",
        "idle",
        "index",
        "non_zero_extra",
        "pipelined",
        "pod_affinity",
        "releasing",
        "size",
        "touched",
        "used",
        "versions",
    )

    def __init__(self, index: ResourceIndex | None = None, rows: int = 0) -> None:
        self.index = index if index is not None else ResourceIndex()
        width = self.index.width
        self.allocatable: FloatArray = np.zeros((rows, width), order="F")
        self.capacity: FloatArray = np.zeros((rows, width), order="F")
        self.idle: FloatArray = np.zeros((rows, width), order="F")
        self.used: FloatArray = np.zeros((rows, width), order="F")
        self.releasing: FloatArray = np.zeros((rows, width), order="F")
        self.pipelined: FloatArray = np.zeros((rows, width), order="F")
        self.non_zero_extra: FloatArray = np.zeros((rows, 2))
        self.pod_affinity: IntArray = np.zeros(rows, dtype=np.intp)
        self.size = rows
        self.free_rows: list[int] = []
        # Every write to a row stamps it with the next generation, so a mask or score kept
        # per request shape can refresh only the rows written since it was computed.
        self.generation = 0
        self.versions: IntArray = np.zeros(rows, dtype=np.intp)
        # The rows written, in order, one entry per generation since the log was last
        # cleared: a cache that saw the log up to some length refreshes only the rows after
        # it, without comparing every row's version (a placement writes one row of 5k).
        self.touched: list[int] = []

    # ------------------------------------------------------------------ shape

    def _arrays(self) -> list[FloatArray]:
        return [
            self.allocatable,
            self.capacity,
            self.idle,
            self.used,
            self.releasing,
            self.pipelined,
        ]

    def _set_arrays(self, arrays: list[FloatArray]) -> None:
        (self.allocatable, self.capacity, self.idle, self.used, self.releasing, self.pipelined) = (
            np.asfortranarray(a) for a in arrays
        )
        rows = self.allocatable.shape[0]
        if len(self.versions) != rows:
            # Rows were added or the arrays replaced: every row counts as changed.
            self.generation += 1
            self.versions = np.full(rows, self.generation, dtype=np.intp)

    def touch(self, row: int) -> None:
        """Record that ``row`` was written (every accounting write calls this)."""
        self.generation += 1
        self.versions[row] = self.generation
        touched = self.touched
        if len(touched) >= _TOUCH_LOG_LIMIT:
            # A long-lived matrix (the cache's) must not grow the log forever; readers that
            # find it shorter than they saw fall back to comparing versions.
            touched.clear()
        touched.append(row)

    def fit_width(self) -> None:
        """Grow the columns to the index (after new resource names were registered)."""
        missing = self.index.width - self.allocatable.shape[1]
        if missing > 0:
            self._set_arrays([np.pad(a, ((0, 0), (0, missing))) for a in self._arrays()])

    def add_row(self) -> int:
        self.fit_width()
        if self.free_rows:
            row = self.free_rows.pop()
        else:
            row = self.size
            self.size += 1
            if row >= self.allocatable.shape[0]:
                grow = max(16, self.allocatable.shape[0])
                self._set_arrays([np.pad(a, ((0, grow), (0, 0))) for a in self._arrays()])
                self.non_zero_extra = np.pad(self.non_zero_extra, ((0, grow), (0, 0)))
                self.pod_affinity = np.pad(self.pod_affinity, (0, grow))
        for array in self._arrays():
            array[row] = 0.0
        self.non_zero_extra[row] = 0.0
        self.pod_affinity[row] = 0
        self.touch(row)
        return row

    def free_row(self, row: int) -> None:
        for array in self._arrays():
            array[row] = 0.0
        self.non_zero_extra[row] = 0.0
        self.pod_affinity[row] = 0
        self.touch(row)
        self.free_rows.append(row)

    def take(self, rows: Sequence[int]) -> NodeMatrix:
        """A compact copy holding ``rows`` in the given order (the session's matrix)."""
        self.fit_width()
        picked = np.asarray(rows, dtype=np.intp)
        copy = NodeMatrix(self.index.copy())
        copy._set_arrays([a[picked] for a in self._arrays()])
        copy.non_zero_extra = self.non_zero_extra[picked]
        copy.pod_affinity = self.pod_affinity[picked]
        copy.size = len(picked)
        return copy

    # ------------------------------------------------------------------ per-row updates

    def vector(self, resource: Resource) -> FloatArray:
        vector = self.index.vector(resource)
        self.fit_width()
        return vector

    def set_allocatable(self, row: int, allocatable: Resource, capacity: Resource) -> None:
        """Set a node's allocatable and capacity; idle follows as allocatable - used."""
        self.allocatable[row] = self.vector(allocatable)
        self.capacity[row] = self.vector(capacity)
        self.idle[row] = self.allocatable[row] - self.used[row]
        self.touch(row)

    # ------------------------------------------------------------------ vectorised queries

    def future_idle(self) -> FloatArray:
        """Idle + Releasing - Pipelined for every row: what a node will have once the
        evictions under way complete and the pipelined tasks take their place."""
        return self.idle + self.releasing - self.pipelined

    def fit_future_idle(self, request: FloatArray, columns: IntArray | Sequence[int]) -> BoolArray:
        """``fit_mask(request, columns, self.future_idle())`` without building the whole
        future-idle matrix: only the request's columns are summed (same operations, same
        order, so the same bits)."""
        rows = self.idle.shape[0]
        fits = np.ones(rows, dtype=np.bool_)
        future = np.empty(rows)
        within = np.empty(rows, dtype=np.bool_)
        idle, releasing, pipelined = self.idle, self.releasing, self.pipelined
        for column in _column_list(columns):
            np.add(idle[:, column], releasing[:, column], out=future)
            np.subtract(future, pipelined[:, column], out=future)
            np.subtract(request[column], future, out=future)
            np.less(future, MIN_RESOURCE, out=within)
            np.logical_and(fits, within, out=fits)
        return fits


def _column_list(columns: IntArray | Sequence[int]) -> list[int]:
    return columns.tolist() if isinstance(columns, np.ndarray) else list(columns)


def fit_mask(
    request: FloatArray, columns: IntArray | Sequence[int], available: FloatArray
) -> BoolArray:
    """Rows of ``available`` that hold ``request`` on every column in ``columns``.

    ``LessEqual(.., Zero)`` per dimension is ``req < avail or |req - avail| < 0.1``, which for
    floats is exactly ``req - avail < 0.1`` (the rounded difference keeps the sign of the
    exact one). ``avail + 0.1 > req`` is *not* the same: 1.0 vs 0.9 rounds the other way.
    One column at a time: no copy of the columns, and a column-major column is contiguous.
    """
    rows = available.shape[0]
    fits = np.ones(rows, dtype=np.bool_)
    difference = np.empty(rows)
    within = np.empty(rows, dtype=np.bool_)
    for column in _column_list(columns):
        np.subtract(request[column], available[:, column], out=difference)
        np.less(difference, MIN_RESOURCE, out=within)
        np.logical_and(fits, within, out=fits)
    return fits


def fit_mask_reference(
    request: Sequence[float], columns: Sequence[int], available: Sequence[Sequence[float]]
) -> list[bool]:
    result = []
    for row in available:
        fits = True
        for column in columns:
            left, right = request[column], row[column]
            if not (left < right or abs(left - right) < MIN_RESOURCE):
                fits = False
                break
        result.append(fits)
    return result


def least_requested_scores(
    request: FloatArray,
    used: FloatArray,
    allocatable: FloatArray,
    columns: IntArray | Sequence[int],
) -> FloatArray:
    """kube-scheduler's LeastAllocated (0-100): mean over ``columns`` of
    ``(allocatable - requested) * 100 / allocatable``, a column counting 0 when the node has
    none of it or the request would exceed it. ``used`` already holds the node's requests.

    The arithmetic is the reference's, operation for operation, so the floors agree bit for
    bit. No masked division (numpy's masked loops are slow): every cell is computed, then
    where the node has capacity a request that does not fit has a negative difference, so
    its floor is negative (or -0.0) and ``maximum(score, 0)`` makes it count 0; cells without
    capacity (where the division gave inf/nan or a flipped sign) are overwritten with 0.
    """
    rows = used.shape[0]
    total = np.zeros(rows)
    requested = np.empty(rows)
    score = np.empty(rows)
    no_capacity = np.empty(rows, dtype=np.bool_)
    with np.errstate(all="ignore"):
        for column in _column_list(columns):
            capacity = allocatable[:, column]
            np.add(used[:, column], request[column], out=requested)
            np.subtract(capacity, requested, out=score)
            np.multiply(score, 100, out=score)
            np.divide(score, capacity, out=score)
            np.floor(score, out=score)
            np.maximum(score, 0.0, out=score)
            np.less_equal(capacity, 0, out=no_capacity)
            np.copyto(score, 0.0, where=no_capacity)
            np.add(total, score, out=total)
        np.divide(total, len(columns), out=total)
        np.floor(total, out=total)
    return total


def least_requested_scores_reference(
    request: Sequence[float],
    used: Sequence[Sequence[float]],
    allocatable: Sequence[Sequence[float]],
    columns: Sequence[int],
) -> list[float]:
    scores = []
    for used_row, allocatable_row in zip(used, allocatable, strict=True):
        total = 0.0
        for column in columns:
            capacity = allocatable_row[column]
            requested = used_row[column] + request[column]
            if capacity > 0 and requested <= capacity:
                total += float(np.floor((capacity - requested) * 100 / capacity))
        scores.append(float(np.floor(total / len(columns))))
    return scores


class FitCache:
    """Which rows hold a request, on idle and on future idle, kept per request shape.

    The members of a gang ask the same, and a placement writes one row: so rather than
    recompute a fit over every row for every task, each mask refreshes only the rows written
    (``NodeMatrix.touch``) since it was last asked. The per-cell operations are those of
    ``fit_mask`` / ``fit_future_idle``, so the answers are the same bits.
    """

    __slots__ = ("_entries", "incremental", "matrix")

    def __init__(self, matrix: NodeMatrix, incremental: bool = True) -> None:
        self.matrix = matrix
        # False: every question recomputes every row (the reference the tests compare with).
        self.incremental = incremental
        # (future?, request columns, request values) -> (mask, the generation of each row).
        self._entries: dict[tuple[bool, bytes, bytes], tuple[BoolArray, IntArray, list[int]]] = {}

    def idle_fits(self, request: FloatArray, columns: IntArray) -> BoolArray:
        """``fit_mask(request, columns, idle)`` for every row. Read only: do not write."""
        return self._fits(False, request, columns)

    def future_fits(self, request: FloatArray, columns: IntArray) -> BoolArray:
        """``fit_future_idle(request, columns)`` for every row. Read only: do not write."""
        return self._fits(True, request, columns)

    def _fits(self, future: bool, request: FloatArray, columns: IntArray) -> BoolArray:
        matrix = self.matrix
        wanted = request[columns]
        key = (future, columns.tobytes(), wanted.tobytes())
        entry = self._entries.get(key)
        versions = matrix.versions
        if entry is None or len(entry[0]) != len(versions) or not self.incremental:
            mask = self._compute(future, wanted, columns, slice(None))
            self._entries[key] = (mask, versions.copy(), [matrix.generation, len(matrix.touched)])
            return mask
        mask, stamps, seen = entry
        if seen[0] != matrix.generation:
            touched = matrix.touched
            logged = len(touched)
            if seen[1] <= logged and logged - seen[1] == matrix.generation - seen[0]:
                # Every write since the last refresh is in the log: those rows only (each
                # was written after the refresh, so each is stale).
                written = sorted(set(touched[seen[1] :]))
                if len(written) <= _SCALAR_ROWS:
                    for row in written:
                        mask[row] = self._row_fits(future, wanted, columns, row)
                        stamps[row] = versions[row]
                    written = []
                stale = np.array(written, dtype=np.intp)
            else:
                stale = np.flatnonzero(stamps != versions)
            if len(stale):
                mask[stale] = self._compute(future, wanted, columns, stale)
                stamps[stale] = versions[stale]
            seen[0], seen[1] = matrix.generation, logged
        return mask

    def _compute(
        self, future: bool, wanted: FloatArray, columns: IntArray, rows: IntArray | slice
    ) -> BoolArray:
        m = self.matrix
        if isinstance(rows, np.ndarray) and len(rows) <= _SCALAR_ROWS:
            return np.array([self._row_fits(future, wanted, columns, row) for row in rows])
        picked = np.ix_(rows, columns) if isinstance(rows, np.ndarray) else (rows, columns)
        available = m.idle[picked]
        if future:
            available = available + m.releasing[picked] - m.pipelined[picked]
        result: BoolArray = np.all(wanted - available < MIN_RESOURCE, axis=1)
        return result

    def row_fits(self, future: bool, wanted: FloatArray, columns: IntArray, row: int) -> bool:
        """Does ``row`` hold ``wanted`` (the request's values at ``columns``), on idle or on
        future idle? The same bits as ``idle_fits`` / ``future_fits`` give for the row."""
        return self._row_fits(future, wanted, columns, row)

    def row_fits_now_and_later(
        self, wanted: Sequence[float], columns: Sequence[int], row: int
    ) -> tuple[bool, bool]:
        """``(row_fits(False, ...), row_fits(True, ...))`` for ``row`` in one pass over its
        values (``wanted`` and ``columns`` as plain lists: a run of like tasks asks this for
        the row each placement wrote). The same IEEE operations, so the same answers."""
        m = self.matrix
        idle = m.idle[row].tolist()
        releasing, pipelined = m.releasing[row].tolist(), m.pipelined[row].tolist()
        now = later = True
        for want, column in zip(wanted, columns, strict=True):
            available = idle[column]
            if now and not want - available < MIN_RESOURCE:
                now = False
            if later and not want - (available + releasing[column] - pipelined[column]) < (
                MIN_RESOURCE
            ):
                later = False
        return now, later

    def _row_fits(self, future: bool, wanted: FloatArray, columns: IntArray, row: int) -> bool:
        """One row in plain floats (the same IEEE operations, without numpy's per-call
        overhead: after a placement usually one row is stale)."""
        m = self.matrix
        idle = m.idle[row].tolist()
        if future:
            releasing, pipelined = m.releasing[row].tolist(), m.pipelined[row].tolist()
        for want, column in zip(wanted.tolist(), columns.tolist(), strict=True):
            available = idle[column]
            if future:
                available = available + releasing[column] - pipelined[column]
            if not want - available < MIN_RESOURCE:
                return False
        return True


# The longest the row-write log grows before it is cleared (see ``NodeMatrix.touch``).
_TOUCH_LOG_LIMIT = 1 << 16

# Up to this many stale rows, refreshing row by row in Python beats numpy's per-call overhead.
_SCALAR_ROWS = 4
