"""nodeorder: kube-scheduler's scoring plugins, weighted (``plugins/nodeorder/nodeorder.go``).

One BatchNodeOrderFn scores the candidate rows with every scorer whose weight is not 0; each
scorer yields 0-100 per node (after its own normalisation over the candidates) and is
multiplied by its weight:

==========================  =======  ==================================================
argument                    default  scorer
==========================  =======  ==================================================
``leastrequested.weight``   1        NodeResourcesFit LeastAllocated (cpu, memory)
``mostrequested.weight``    0        NodeResourcesFit MostAllocated (cpu, memory)
``balancedresource.weight`` 1        NodeResourcesBalancedAllocation (cpu, memory, GPU)
``nodeaffinity.weight``     2        NodeAffinity, preferred terms
``podaffinity.weight``      2        InterPodAffinity, preferred terms
``tainttoleration.weight``  3        TaintToleration, PreferNoSchedule taints
``imagelocality.weight``    1        ImageLocality, images already on the node
``podtopologyspread.weight`` 2       PodTopologySpread, ScheduleAnyway constraints
==========================  =======  ==================================================

The resource scorers are vectorised over the session's NodeMatrix; ``*_reference`` functions
state each rule per node with integers, and Hypothesis tests prove the two agree.

ImageLocality reads each node's ``status.images``: per image the pod's containers (init
containers too) name, a node that has it scores the image's size scaled by the share of session
nodes that have it ("spread"), and the sum maps onto 0-100 between 23 MiB and 1000 MiB per
container. Upstream registers it as a NodeOrderFn (per node, not normalised); here it is part
of the batch, which sums the same. Each image's per-node vector is built once per session.

Node "requested" amounts are those of the pods kube-scheduler's node snapshot holds (see
``_kube_scheduling.session_pods``): the matrix's used + pipelined at session open, then every pod
event. LeastAllocated and MostAllocated count a container without a cpu (memory) request as
100m (200Mi), kube-scheduler's non-zero defaults (``api.pod_facts.non_zero_request``; the
difference from the real requests is summed per node by the scheduler cache);
BalancedAllocation counts real requests.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import FloatArray, IntArray
from volcano_py.api.pod_facts import has_pod_affinity, task_non_zero
from volcano_py.api.resource import GPU
from volcano_py.api.task import TaskInfo, derived_fact
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.session import Session
from volcano_py.plugins._kube_scheduling.affinity_tracker import affinity_tracker
from volcano_py.plugins._kube_scheduling.node_index import NodeIndex, preferred_scores
from volcano_py.plugins._kube_scheduling.pod_affinity import ScoreState
from volcano_py.plugins._kube_scheduling.podspec import (
    Frozen,
    affinity,
    containers,
    freeze,
    init_containers,
    mapping,
    tolerations,
)
from volcano_py.plugins._kube_scheduling.selectors import preferred_node_terms
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods, session_pods
from volcano_py.plugins._kube_scheduling.taints import (
    Toleration,
    intolerable_prefer_no_schedule,
    prefer_no_schedule_tolerations,
)
from volcano_py.plugins._kube_scheduling.topology_spread import TopologySpread

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "nodeorder"
MAX_NODE_SCORE: Final = 100


@dataclass(frozen=True, slots=True)
class Weights:
    least_requested: int = 1
    most_requested: int = 0
    balanced_resource: int = 1
    node_affinity: int = 2
    pod_affinity: int = 2
    taint_toleration: int = 3
    image_locality: int = 1
    pod_topology_spread: int = 2

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> Weights:
        return cls(
            least_requested=arguments.get_int("leastrequested.weight", 1),
            most_requested=arguments.get_int("mostrequested.weight", 0),
            balanced_resource=arguments.get_int("balancedresource.weight", 1),
            node_affinity=arguments.get_int("nodeaffinity.weight", 2),
            pod_affinity=arguments.get_int("podaffinity.weight", 2),
            taint_toleration=arguments.get_int("tainttoleration.weight", 3),
            image_locality=arguments.get_int("imagelocality.weight", 1),
            pod_topology_spread=arguments.get_int("podtopologyspread.weight", 2),
        )


# ---------------------------------------------------------------------- resource scorers


def least_allocated_reference(requested: Sequence[float], allocatable: Sequence[float]) -> int:
    """``leastResourceScorer`` with equal weights: per resource the node has,
    ``(allocatable - requested) * 100 / allocatable`` (0 when over), averaged, integers."""
    total = count = 0
    for want, have in zip(requested, allocatable, strict=True):
        if have == 0:
            continue
        total += 0 if want > have else int((have - want) * MAX_NODE_SCORE // have)
        count += 1
    return total // count if count else 0


def most_allocated_reference(requested: Sequence[float], allocatable: Sequence[float]) -> int:
    """``mostResourceScorer``: ``requested * 100 / allocatable``, requested capped."""
    total = count = 0
    for want, have in zip(requested, allocatable, strict=True):
        if have == 0:
            continue
        total += int(min(want, have) * MAX_NODE_SCORE // have)
        count += 1
    return total // count if count else 0


def balanced_allocation_reference(requested: Sequence[float], allocatable: Sequence[float]) -> int:
    """``balancedResourceScorer``: ``(1 - std of the requested fractions) * 100``."""
    fractions = [
        min(want / have, 1.0)
        for want, have in zip(requested, allocatable, strict=True)
        if have != 0
    ]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        total = 0.0
        for fraction in fractions:
            total += fraction
        mean = total / len(fractions)
        spread = 0.0
        for fraction in fractions:
            spread = spread + (fraction - mean) * (fraction - mean)
        std = float(np.sqrt(spread / len(fractions)))
    return int((1 - std) * MAX_NODE_SCORE)


def _int_div(numerator: FloatArray, denominator: FloatArray | float) -> FloatArray:
    """Go's integer division of non-negative integer-valued floats, as ``floor(n / d)``
    (``np.floor_divide`` on floats is an order of magnitude slower). Exact here: quotients are
    at most 100, so a non-integer one lies at least ``1 / d`` from the next integer, far more
    than the division's rounding error (~1e-14) while ``d`` < 2**45 (32 TiB of memory)."""
    result: FloatArray = np.floor(numerator / denominator)
    return result


def least_allocated(requested: FloatArray, allocatable: FloatArray) -> FloatArray:
    """``least_allocated_reference`` for every row of ``requested``/``allocatable`` [n, r]
    (column by column: numpy reduces a narrow axis slowly)."""
    rows, columns = requested.shape
    total, count = np.zeros(rows), np.zeros(rows)
    for column in range(columns):
        have, want = allocatable[:, column], requested[:, column]
        has = have != 0
        score = _int_div((have - want) * MAX_NODE_SCORE, np.where(has, have, 1.0))
        total += np.where(has & (want <= have), score, 0.0)
        count += has
    return np.where(count > 0, _int_div(total, np.maximum(count, 1.0)), 0.0)


def most_allocated(requested: FloatArray, allocatable: FloatArray) -> FloatArray:
    """``most_allocated_reference`` for every row."""
    rows, columns = requested.shape
    total, count = np.zeros(rows), np.zeros(rows)
    for column in range(columns):
        have, want = allocatable[:, column], requested[:, column]
        has = have != 0
        score = _int_div(np.minimum(want, have) * MAX_NODE_SCORE, np.where(has, have, 1.0))
        total += np.where(has, score, 0.0)
        count += has
    return np.where(count > 0, _int_div(total, np.maximum(count, 1.0)), 0.0)


def balanced_allocation(requested: FloatArray, allocatable: FloatArray) -> FloatArray:
    """``balanced_allocation_reference`` for every row, with the same float operations in the
    same order, so the results are identical bit for bit."""
    rows, columns = requested.shape
    has = allocatable != 0
    with np.errstate(divide="ignore", invalid="ignore"):
        fractions = np.minimum(requested / np.where(has, allocatable, 1.0), 1.0)
    if columns == 2 and has.all():
        # The usual case, every node has cpu and memory: no packing needed.
        std2 = np.abs((fractions[:, 0] - fractions[:, 1]) / 2)
        two: FloatArray = np.trunc((1 - std2) * MAX_NODE_SCORE)
        return two
    count = has.sum(axis=1)
    # Pack each row's fractions of the resources the node has to the left, in order, as the
    # reference's list does.
    packed = np.zeros((rows, columns))
    position = np.cumsum(has, axis=1) - 1
    for column in range(columns):
        present = np.flatnonzero(has[:, column])
        packed[present, position[present, column]] = fractions[present, column]
    std = np.zeros(rows)
    if columns >= 2:
        pair = np.abs((packed[:, 0] - packed[:, 1]) / 2)
        std = np.where(count == 2, pair, std)
    if columns >= 3:
        used = np.arange(columns) < count[:, None]
        total = np.zeros(rows)
        for column in range(columns):
            total = np.where(used[:, column], total + packed[:, column], total)
        mean = total / np.maximum(count, 1)
        spread = np.zeros(rows)
        for column in range(columns):
            deviation = packed[:, column] - mean
            spread = np.where(used[:, column], spread + deviation * deviation, spread)
        many = np.sqrt(spread / np.maximum(count, 1))
        std = np.where(count > 2, many, std)
    return np.trunc((1 - std) * MAX_NODE_SCORE)


# ---------------------------------------------------------------------- normalisation


def default_normalize(scores: FloatArray, reverse: bool) -> FloatArray:
    """``helper.DefaultNormalizeScore``: scale to 0-100 by the maximum (integers)."""
    highest = float(scores.max()) if len(scores) else 0.0
    if highest <= 0:
        return np.full(len(scores), float(MAX_NODE_SCORE)) if reverse else np.zeros(len(scores))
    scaled = _int_div(MAX_NODE_SCORE * scores, highest)
    return MAX_NODE_SCORE - scaled if reverse else scaled


def min_max_normalize(scores: FloatArray) -> FloatArray:
    """InterPodAffinity's ``NormalizeScore``: ``100 * (s - min) / (max - min)``, truncated."""
    if not len(scores):
        return scores
    low, high = float(scores.min()), float(scores.max())
    if high - low <= 0:
        return np.zeros(len(scores))
    return np.trunc(MAX_NODE_SCORE * ((scores - low) / (high - low)))


# ---------------------------------------------------------------------- image locality

MIB: Final = 1024 * 1024
# kube-scheduler's bounds for an image's contribution: 90% of Docker Hub images fall between.
IMAGE_MIN_THRESHOLD: Final = 23 * MIB
IMAGE_MAX_CONTAINER_THRESHOLD: Final = 1000 * MIB


def normalized_image_name(name: str) -> str:
    """An image named without a tag means ``:latest`` (a ``:`` before the last ``/`` is a
    registry port; a digest reference is kept as is)."""
    if name.rfind(":") <= name.rfind("/"):
        return name + ":latest"
    return name


def pod_images(pod: Mapping[str, Any]) -> tuple[str, ...]:
    """The normalised image of every init container, then of every container."""
    return tuple(
        normalized_image_name(str(container.get("image") or ""))
        for container in (*init_containers(pod), *containers(pod))
    )


def image_locality_reference(
    images: Sequence[str],
    node_images: Mapping[str, int],
    image_sizes: Mapping[str, int],
    nodes_with_image: Mapping[str, int],
    total_nodes: int,
) -> int:
    """ImageLocality's ``Score`` for one node, with integers: ``images`` are the pod's
    (normalised), ``node_images`` the node's; each image present adds
    ``int(size * nodes_with_image / total_nodes)``; the sum, clipped to
    ``[23 MiB, 1000 MiB * len(images)]``, maps linearly onto 0-100."""
    total = 0
    for name in images:
        if name in node_images:
            spread = nodes_with_image[name] / total_nodes
            total += int(image_sizes[name] * spread)
    if not images:
        return 0
    highest = IMAGE_MAX_CONTAINER_THRESHOLD * len(images)
    total = min(max(total, IMAGE_MIN_THRESHOLD), highest)
    return MAX_NODE_SCORE * (total - IMAGE_MIN_THRESHOLD) // (highest - IMAGE_MIN_THRESHOLD)


def _task_images(task: TaskInfo) -> tuple[str, ...]:
    return pod_images(task.pod)


class ImageLocality:
    """``image_locality_reference`` over all session nodes: one vector per image (built the
    first time a pod names it, from every node's images), one per pod image list."""

    def __init__(self, nodes: Sequence[NodeInfo]) -> None:
        self.nodes = nodes
        self._per_image: dict[str, FloatArray] = {}
        self._per_pod: dict[tuple[str, ...], FloatArray] = {}
        self._zero: dict[tuple[str, ...], bool] = {}

    def image_vector(self, name: str) -> FloatArray:
        """The image's scaled size on every node that has it, 0 elsewhere. Its size is the one
        the first node listing it reports (the scheduler cache keeps the first it saw)."""
        vector = self._per_image.get(name)
        if vector is None:
            sizes = np.fromiter(
                (node.images.get(name, -1) for node in self.nodes), float, count=len(self.nodes)
            )
            present = sizes >= 0
            count = int(present.sum())
            vector = np.zeros(len(self.nodes))
            if count:
                size = float(sizes[int(np.argmax(present))])
                vector[present] = np.trunc(size * (count / len(self.nodes)))
            self._per_image[name] = vector
        return vector

    def scores(self, task: TaskInfo) -> FloatArray:
        images: tuple[str, ...] = derived_fact(task, "nodeorder.images", _task_images)
        scores = self._per_pod.get(images)
        if scores is None:
            scores = self._score(images)
            self._per_pod[images] = scores
            self._zero[images] = not scores.any()
        return scores

    def all_zero(self, task: TaskInfo) -> bool:
        """Does the pod score 0 on every node (none of its images is on any node)?"""
        images: tuple[str, ...] = derived_fact(task, "nodeorder.images", _task_images)
        zero = self._zero.get(images)
        if zero is None:
            self.scores(task)
            zero = self._zero[images]
        return zero

    def _score(self, images: tuple[str, ...]) -> FloatArray:
        if not images:
            return np.zeros(len(self.nodes))
        total = np.zeros(len(self.nodes))
        for name in images:
            total += self.image_vector(name)
        highest = float(IMAGE_MAX_CONTAINER_THRESHOLD * len(images))
        clipped = np.clip(total, IMAGE_MIN_THRESHOLD, highest)
        return _int_div(
            MAX_NODE_SCORE * (clipped - IMAGE_MIN_THRESHOLD),
            highest - IMAGE_MIN_THRESHOLD,
        )


# ---------------------------------------------------------------------- per-session state


class RequestedTracker:
    """What kube-scheduler's node snapshot counts as requested on each node: real requests
    (cpu, memory, GPU) and non-zero requests (cpu, memory), kept current by pod events."""

    def __init__(self, ssn: Session, pods: SessionPods) -> None:
        matrix = ssn.matrix
        size = len(ssn.node_list)
        gpu = matrix.index.columns.get(GPU)
        held = matrix.used[:size] + matrix.pipelined[:size]
        self.requested = np.zeros((size, 3))
        self.requested[:, 0] = held[:, 0]
        self.requested[:, 1] = held[:, 1]
        if gpu is not None:
            self.requested[:, 2] = held[:, gpu]
        self.allocatable = np.zeros((size, 3))
        self.allocatable[:, :2] = matrix.allocatable[:size, :2]
        if gpu is not None:
            self.allocatable[:, 2] = matrix.allocatable[:size, gpu]
        # Non-zero minus real requests per node, over the pods in view (kept by ``pods``).
        self.non_zero_extra = pods.non_zero_extra
        # Bumped whenever a row's pods change: a score cached for a row stays valid while
        # its version does.
        self.version = np.zeros(size, dtype=np.int64)
        self.pods = pods
        pods.subscribe(self._changed)

    def non_zero_requested(self, rows: IntArray) -> FloatArray:
        result: FloatArray = self.requested[rows, :2] + self.non_zero_extra[rows]
        return result

    def non_zero_requested_row(self, row: int) -> tuple[float, float]:
        """``non_zero_requested`` for one row, without numpy's per-call overhead."""
        requested, extra = self.requested[row], self.non_zero_extra[row]
        return float(requested[0] + extra[0]), float(requested[1] + extra[1])

    def _changed(self, task: TaskInfo, row: int, sign: int) -> None:
        self.version[row] += 1
        resreq = task.resreq
        # Cell by cell: the same float64 additions as adding a row vector, without building
        # one (this runs at every placement).
        requested = self.requested
        requested[row, 0] += sign * resreq.milli_cpu
        requested[row, 1] += sign * resreq.memory
        requested[row, 2] += sign * resreq.scalar_resources.get(GPU, 0.0)


# Up to this many rows, scoring row by row in Python beats numpy's per-call overhead.
_SCALAR_ROWS = 4
# Add a score that is the same on every node as one number rather than a vector (False:
# always the vector; the tests' reference).
_UNIFORM_SCORES = True
# A run's one-row score bound to the run's pod, each node row read once (False: the
# per-call ``row_local_scalar``; the tests' reference).
_BOUND_ROW_SCORE = True


class RowScoreCache:
    """Scores that depend only on a node's own row and on the pod's request (least/most
    requested, balanced allocation), kept per request shape. The members of a gang ask the
    same, and after each placement only the row that changed is scored again: O(1) rows per
    task instead of O(candidates)."""

    def __init__(self, versions: IntArray) -> None:
        self.versions = versions
        self._entries: dict[tuple[float, ...], tuple[FloatArray, IntArray]] = {}

    def scores(
        self, key: tuple[float, ...], rows: IntArray, compute: Callable[[IntArray], FloatArray]
    ) -> FloatArray:
        entry = self._entries.get(key)
        if entry is None:
            size = len(self.versions)
            entry = self._entries[key] = (np.zeros(size), np.full(size, -1, dtype=np.int64))
        values, stamps = entry
        stale = rows[stamps[rows] != self.versions[rows]]
        if len(stale):
            values[stale] = compute(stale)
            stamps[stale] = self.versions[stale]
        result: FloatArray = values[rows]
        return result


class StaticScores:
    """Raw scores that depend only on the node and a pod signature, cached per signature."""

    def __init__(self, index: NodeIndex) -> None:
        self.index = index
        self._node_affinity: dict[Frozen, FloatArray | None] = {}
        self._taints: dict[Frozen, FloatArray] = {}
        self._taint_free: dict[Frozen, bool] = {}

    def node_affinity(self, task: TaskInfo) -> FloatArray | None:
        """Summed weights of the matching preferred terms; None when the pod has none
        (PreScore ``Skip``) or they do not parse (PreScore fails upstream)."""
        key: Frozen = derived_fact(task, "nodeorder.preferred_node_affinity", _preferred_key)
        if key is None:
            return None
        if key not in self._node_affinity:
            section = mapping(affinity(task.pod).get("nodeAffinity"))
            terms, error = preferred_node_terms(section)
            if error:
                log.warning("nodeorder: task %s: preferred node affinity: %s", task.key, error)
                self._node_affinity[key] = None
            else:
                self._node_affinity[key] = preferred_scores(terms, self.index)
        return self._node_affinity[key]

    def intolerable_taints(self, task: TaskInfo) -> FloatArray:
        """Untolerated ``PreferNoSchedule`` taints per node."""
        key: Frozen = derived_fact(task, "nodeorder.tolerations", _tolerations_key)
        counts = self._taints.get(key)
        if counts is None:
            raw = tolerations(task.pod)
            narrowed = prefer_no_schedule_tolerations([Toleration.of(t) for t in raw])
            group_of, groups = self.index.taint_groups()
            per_group = np.array(
                [intolerable_prefer_no_schedule(taints, narrowed) for taints in groups], dtype=float
            )
            counts = self._taints[key] = per_group[group_of]
            self._taint_free[key] = not counts.any()
        return counts

    def tolerates_every_node(self, task: TaskInfo) -> bool:
        """No node has a ``PreferNoSchedule`` taint the pod does not tolerate: every
        candidate then normalises to the full score."""
        key: Frozen = derived_fact(task, "nodeorder.tolerations", _tolerations_key)
        free = self._taint_free.get(key)
        if free is None:
            self.intolerable_taints(task)
            free = self._taint_free[key]
        return free


def _preferred_key(task: TaskInfo) -> Frozen:
    """The pod's preferred node-affinity terms as a cache key; None when it has none.
    A fact of the pod alone, kept with the task: it is asked at every scoring."""
    section = mapping(affinity(task.pod).get("nodeAffinity"))
    raw = section.get("preferredDuringSchedulingIgnoredDuringExecution")
    return None if raw is None else freeze(raw)


def _tolerations_key(task: TaskInfo) -> Frozen:
    return freeze(tolerations(task.pod))


def pod_affinity_scores(state: ScoreState, index: NodeIndex, rows: IntArray) -> FloatArray:
    """``ScoreState.score`` for the nodes at ``rows``, one lookup table per topology key."""
    scores = np.zeros(len(rows))
    for key, values in state.topology_score.items():
        column = index.column(key)
        table = np.zeros(len(column.values) + 1)
        for value, score in values.items():
            slot = column.lookup.get(value)
            if slot is not None:
                table[slot] = score
        scores += table[column.slots[rows]]
    return scores


# ---------------------------------------------------------------------- the plugin


class NodeOrderPlugin:
    name = PLUGIN_NAME
    # A run's scores read the pod template and the nodes, nothing of the task's job: a run may
    # go on into the next job's like tasks (``Session.runs_across_jobs``).
    batch_ignores_job = True

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.weights = Weights.from_arguments(arguments)
        self._batch_safe: Callable[[TaskInfo], bool] | None = None
        self._batch_scores: Callable[[TaskInfo], Callable[[IntArray], FloatArray]] | None = None
        self._batch_row_score: Callable[[TaskInfo], Callable[[int], float]] | None = None

    def on_session_open(self, ssn: Session) -> None:
        weights = self.weights
        index = NodeIndex(ssn.node_list)
        pods = session_pods(ssn, self.name)
        requested = RequestedTracker(ssn, pods)
        static = StaticScores(index)
        tracker = affinity_tracker(ssn, pods, index) if weights.pod_affinity else None
        spread = TopologySpread(pods, index) if weights.pod_topology_spread else None
        images = ImageLocality(ssn.node_list) if weights.image_locality else None

        row_cache = RowScoreCache(requested.version)

        def row_local_scalar(task: TaskInfo, row: int) -> float:
            """``row_local`` for one row with the scalar reference scorers (the vectorised
            ones agree bit for bit, but cost some 20 numpy calls for one row: after each
            placement only the row placed on is scored again)."""
            total = 0.0
            allocatable = requested.allocatable[row, :2].tolist()
            if weights.least_requested or weights.most_requested:
                pod_cpu, pod_memory = task_non_zero(task)
                held_cpu, held_memory = requested.non_zero_requested_row(row)
                want = [held_cpu + pod_cpu, held_memory + pod_memory]
                if weights.least_requested:
                    total += weights.least_requested * least_allocated_reference(want, allocatable)
                if weights.most_requested:
                    total += weights.most_requested * most_allocated_reference(want, allocatable)
            if weights.balanced_resource:
                resreq = task.resreq
                gpu = resreq.scalar_resources.get(GPU, 0.0)
                pod = (resreq.milli_cpu, resreq.memory, gpu)
                if any(pod):
                    used = 3 if gpu else 2
                    now = requested.requested[row, :used].tolist()
                    have = requested.allocatable[row, :used].tolist()
                    want = [now[i] + pod[i] for i in range(used)]
                    balanced = balanced_allocation_reference(want, have)
                    total += weights.balanced_resource * balanced
            return total

        def row_local_bound(task: TaskInfo) -> Callable[[int], float]:
            """``row_local_scalar`` bound to ``task``: what it reads of the pod looked up once,
            each of the node's rows read once (a run rescores a row after every placement).
            The same float operations in the same order, so the same bits."""
            least, most = weights.least_requested, weights.most_requested
            balanced_weight = weights.balanced_resource
            pod_cpu, pod_memory = task_non_zero(task)
            resreq = task.resreq
            gpu = resreq.scalar_resources.get(GPU, 0.0)
            pod = (resreq.milli_cpu, resreq.memory, gpu)
            # How many columns the balanced score reads (0: not scored; best-effort pods
            # are not, kube-scheduler #129138; the GPU column only when the pod asks).
            balanced_columns = (3 if gpu else 2) if balanced_weight and any(pod) else 0

            def score(row: int) -> float:
                total = 0.0
                have = requested.allocatable[row].tolist()
                if least or most:
                    now = requested.requested[row].tolist()
                    extra = requested.non_zero_extra[row].tolist()
                    want = [now[0] + extra[0] + pod_cpu, now[1] + extra[1] + pod_memory]
                    if least:
                        total += least * least_allocated_reference(want, have[:2])
                    if most:
                        total += most * most_allocated_reference(want, have[:2])
                if balanced_columns:
                    now = requested.requested[row].tolist()
                    want = [now[i] + pod[i] for i in range(balanced_columns)]
                    balanced = balanced_allocation_reference(want, have[:balanced_columns])
                    total += balanced_weight * balanced
                return total

            return score

        def row_local(task: TaskInfo, rows: IntArray) -> FloatArray:
            """Least/most requested and balanced allocation for ``rows``."""
            if len(rows) <= _SCALAR_ROWS:
                return np.array([row_local_scalar(task, row) for row in rows.tolist()])
            total = np.zeros(len(rows))
            allocatable = requested.allocatable[rows, :2]
            if weights.least_requested or weights.most_requested:
                pod_cpu, pod_memory = task_non_zero(task)
                want = requested.non_zero_requested(rows) + np.array([pod_cpu, pod_memory])
                if weights.least_requested:
                    total += weights.least_requested * least_allocated(want, allocatable)
                if weights.most_requested:
                    total += weights.most_requested * most_allocated(want, allocatable)
            if weights.balanced_resource:
                resreq = task.resreq
                gpu = resreq.scalar_resources.get(GPU, 0.0)
                pod = np.array([resreq.milli_cpu, resreq.memory, gpu])
                # Best-effort pods are not scored (kube-scheduler #129138); an extended
                # resource counts only when the pod asks for it.
                if pod.any():
                    used = 3 if gpu else 2
                    want = requested.requested[rows, :used] + pod[:used]
                    have = requested.allocatable[rows, :used]
                    total += weights.balanced_resource * balanced_allocation(want, have)
            return total

        def request_key(task: TaskInfo) -> tuple[float, ...]:
            resreq = task.resreq
            return (
                *task_non_zero(task),
                resreq.milli_cpu,
                resreq.memory,
                resreq.scalar_resources.get(GPU, 0.0),
            )

        def batch_node_order(task: TaskInfo, rows: IntArray) -> FloatArray:
            if not len(rows):
                return np.zeros(0)
            key = request_key(task)
            total = row_cache.scores(key, rows, lambda stale: row_local(task, stale))
            if weights.node_affinity:
                raw = static.node_affinity(task)
                if raw is not None:
                    total += weights.node_affinity * default_normalize(raw[rows], reverse=False)
            if weights.taint_toleration:
                if _UNIFORM_SCORES and static.tolerates_every_node(task):
                    # default_normalize(all zeros, reverse) is MAX_NODE_SCORE everywhere: the
                    # same addition, without building the vector.
                    total += weights.taint_toleration * float(MAX_NODE_SCORE)
                else:
                    raw = static.intolerable_taints(task)
                    total += weights.taint_toleration * default_normalize(raw[rows], reverse=True)
            if tracker is not None:
                state = tracker.score_state(task)
                if state.topology_score:
                    raw = pod_affinity_scores(state, index, rows)
                    total += weights.pod_affinity * min_max_normalize(raw)
            if spread is not None:
                spread_scores = spread.scores(task, rows)
                if spread_scores is not None:
                    total += weights.pod_topology_spread * spread_scores
            if images is not None:
                if _UNIFORM_SCORES and images.all_zero(task):
                    # weight * 0.0 (its sign included) added to every row, as the vector was.
                    total += weights.image_locality * 0.0
                else:
                    total += weights.image_locality * images.scores(task)[rows]
            return total

        def batch_safe(task: TaskInfo) -> bool:
            """Is every score of ``task`` a node's own (row-local: the same whichever rows are
            asked), changed by a like task's placement only on the placed row? The resource
            scores are (kept per row), so are image locality and a taint score equal on every
            node; not a score normalised over the candidates (preferred node affinity,
            untolerated PreferNoSchedule taints, inter-pod or spread preferences), nor a pod
            with inter-pod terms of its own (its like pods placed would change its scores
            over whole topology domains)."""
            if weights.node_affinity and static.node_affinity(task) is not None:
                return False
            if weights.taint_toleration and not static.tolerates_every_node(task):
                return False
            if tracker is not None and (
                has_pod_affinity(task.pod) or tracker.score_state(task).topology_score
            ):
                return False
            if spread is not None:
                _key, pod_spread = spread.spread(task)
                if pod_spread.soft or pod_spread.soft_error:
                    return False
            return True

        def batch_scores(task: TaskInfo) -> Callable[[IntArray], FloatArray]:
            """``batch_node_order`` bound to a run of tasks like ``task`` (``batch_safe``):
            what depends on the pod alone is looked up once for the run. The same steps in the
            same order: the kept row scores, then the taint score equal on every node, then
            image locality."""
            key = request_key(task)
            taint = weights.taint_toleration * float(MAX_NODE_SCORE)
            image_scores = None
            if images is not None and not (_UNIFORM_SCORES and images.all_zero(task)):
                image_scores = images.scores(task)

            def compute(stale: IntArray) -> FloatArray:
                return row_local(task, stale)

            def scores(rows: IntArray) -> FloatArray:
                total = row_cache.scores(key, rows, compute)
                if weights.taint_toleration:
                    total += taint
                if images is not None:
                    if image_scores is None:
                        total += weights.image_locality * 0.0
                    else:
                        total += weights.image_locality * image_scores[rows]
                return total

            return scores

        def batch_row_score(task: TaskInfo) -> Callable[[int], float]:
            """``batch_scores`` for one row in plain floats: the same operations in the same
            order (the kept row score is ``row_local_scalar``'s, as ``row_local`` gives it for
            a few rows), without a numpy call per step. After each placement a run mostly
            rescores the one row it wrote."""
            taint = weights.taint_toleration * float(MAX_NODE_SCORE)
            image_scores = None
            if images is not None and not (_UNIFORM_SCORES and images.all_zero(task)):
                image_scores = images.scores(task)

            row_local_of = row_local_bound(task) if _BOUND_ROW_SCORE else None

            def score(row: int) -> float:
                if row_local_of is not None:
                    total = row_local_of(row)
                else:
                    total = float(row_local_scalar(task, row))
                if weights.taint_toleration:
                    total += taint
                if images is not None:
                    if image_scores is None:
                        total += weights.image_locality * 0.0
                    else:
                        total += float(weights.image_locality * image_scores[row])
                return total

            return score

        self._batch_safe = batch_safe
        self._batch_scores = batch_scores
        self._batch_row_score = batch_row_score
        ssn.add_batch_node_order_fn(self.name, batch_node_order)

    def batch_safe(self, task: TaskInfo) -> bool:
        """May allocate keep this plugin's scores across a run of tasks like ``task``
        (``Session.batch_safe``)? Only in a session this plugin opened."""
        return self._batch_safe(task) if self._batch_safe is not None else False

    def batch_scores(self, task: TaskInfo) -> Callable[[IntArray], FloatArray] | None:
        """The scores of the run of tasks like ``task`` (one it said ``batch_safe`` for)."""
        return self._batch_scores(task) if self._batch_scores is not None else None

    def batch_row_score(self, task: TaskInfo) -> Callable[[int], float] | None:
        """``batch_scores`` for one row, in plain floats (``Session.run_row_score``)."""
        bound = self._batch_row_score
        return bound(task) if bound is not None else None

    def on_session_close(self, ssn: Session) -> None:
        return None


ARGUMENTS: Final[frozenset[str]] = frozenset(
    {
        "leastrequested.weight",
        "mostrequested.weight",
        "balancedresource.weight",
        "nodeaffinity.weight",
        "podaffinity.weight",
        "tainttoleration.weight",
        "imagelocality.weight",
        "podtopologyspread.weight",
    }
)


def new(arguments: Arguments) -> NodeOrderPlugin:
    return NodeOrderPlugin(arguments)
