"""NodeInfo: one node, its tasks, and its accounting row in the NodeMatrix (``node_info.go``).

Identities kept per node (seed 000):  Idle + Used = Allocatable, Used includes Releasing,
FutureIdle = Idle + Releasing - Pipelined.

The row also keeps the sums of its pods' ``api.pod_facts`` (``NodeMatrix.non_zero_extra``,
``NodeMatrix.pod_affinity``), over every task the node holds, whatever its status: they
follow each charge and uncharge of a task, so they are valid exactly when the accounting is
(a node whose object is known).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.node_matrix import FloatArray, NodeMatrix
from volcano_py.api.pod_facts import count_node_facts
from volcano_py.api.resource import CPU, MEMORY, DimensionDefault, Resource, fits_in_values
from volcano_py.api.task import TaskInfo, parse_go_bool
from volcano_py.api.types import NodePhase, TaskStatus

log = logging.getLogger(__name__)

OVERSUBSCRIPTION_CPU = "volcano.sh/oversubscription-cpu"
OVERSUBSCRIPTION_MEMORY = "volcano.sh/oversubscription-memory"
REVOCABLE_ZONE_LABEL = "volcano.sh/revocable-zone"
OVERSUBSCRIPTION_NODE_LABEL = "volcano.sh/oversubscription"
OFFLINE_JOB_EVICTING_ANNOTATION = "volcano.sh/offline-job-evicting"


# Charge a task's request to its node's row in plain Python floats, column by column (False:
# numpy row arithmetic, the tests' reference). A row is a handful of columns: one numpy
# update of it cost more than the whole plain-float version (``bench session``: two charges
# per placed task, the session's and the cache's).
_PLAIN_FLOAT_CHARGES = True


class NodeFitError(ValueError):
    """A task cannot be put on a node (already there, elsewhere, or no room to bind)."""


@dataclass(slots=True)
class NodeInfo:
    name: str
    matrix: NodeMatrix
    row: int
    node: Mapping[str, Any] | None = None
    phase: NodePhase = NodePhase.NOT_READY
    phase_reason: str = "UnInitialized"
    tasks: dict[str, TaskInfo] = field(default_factory=dict)
    # Scalar dimensions the node declares, so they show even at zero.
    defined_scalars: frozenset[str] = frozenset()
    # ``status.images``: every name an image goes by -> its size in bytes (ImageLocality).
    images: Mapping[str, int] = field(default_factory=dict)
    # The device resources left out when the row was last set from the node (``set_node``).
    ignored_when_set: frozenset[str] | None = None

    # ------------------------------------------------------------------ node object

    def set_node(self, node: Mapping[str, Any], ignored: frozenset[str] = frozenset()) -> None:
        """Take the node's allocatable and capacity (plus Volcano's oversubscription
        annotations), without the ``ignored`` device resources; idle is recomputed from what
        the tasks already use."""
        previous = self.node
        if (
            previous is not None
            and ignored == self.ignored_when_set
            and _same_capacity(previous, node)
        ):
            self._keep_row(previous, node)
            return
        status = node.get("status") or {}
        allocatable = Resource.from_list(status.get("allocatable") or {}).without(ignored)
        capacity = Resource.from_list(
            status.get("capacity") or status.get("allocatable") or {}
        ).without(ignored)
        annotations = (node.get("metadata") or {}).get("annotations") or {}
        extra_cpu = _float_or_zero(annotations.get(OVERSUBSCRIPTION_CPU))
        extra_memory = _float_or_zero(annotations.get(OVERSUBSCRIPTION_MEMORY))
        allocatable.milli_cpu += extra_cpu
        allocatable.memory += extra_memory
        capacity.milli_cpu += extra_cpu
        capacity.memory += extra_memory
        self.node = node
        self.name = str((node.get("metadata") or {}).get("name", self.name))
        self.defined_scalars = frozenset(allocatable.scalar_resources)
        self.images = node_images(self.name, status.get("images"))
        self.matrix.set_allocatable(self.row, allocatable, capacity)
        self._recharge_tasks()
        self.ignored_when_set = ignored
        self._ready()

    def _keep_row(self, previous: Mapping[str, Any], node: Mapping[str, Any]) -> None:
        """An update that left what the row is made of as it was (a heartbeat, a condition,
        a label): the same row ``set_node`` would compute, without parsing the quantities
        again or re-charging every task of the node (a node heartbeat cost about 20 us a pod
        on the node, ``bench watch-load``)."""
        images = (node.get("status") or {}).get("images")
        if images != (previous.get("status") or {}).get("images"):
            self.images = node_images(self.name, images)
        self.node = node
        self._ready()

    def _ready(self) -> None:
        self.phase, self.phase_reason = NodePhase.READY, ""
        used = self.used
        ok, names = used.less_equal_with_resources_name(self.allocatable, DimensionDefault.ZERO)
        if not ok:
            log.error("node %s out of sync: used exceeds allocatable in %s", self.name, names)

    def _recharge_tasks(self) -> None:
        """Recompute idle/used/releasing/pipelined from the tasks held (as ``setNode`` does),
        since tasks may have arrived before their node was known."""
        m, row = self.matrix, self.row
        m.used[row] = 0.0
        m.releasing[row] = 0.0
        m.pipelined[row] = 0.0
        m.idle[row] = m.allocatable[row]
        m.non_zero_extra[row] = 0.0
        m.pod_affinity[row] = 0
        m.touch(row)
        for task in self.tasks.values():
            self._charge(task, sign=1.0)

    def _count_facts(self, task: TaskInfo, sign: int) -> None:
        """Add (``sign`` 1) or take (-1) the task's pod facts to or from the row's sums."""
        m = self.matrix
        count_node_facts(task, m.non_zero_extra, m.pod_affinity, self.row, sign)

    def _charge(self, task: TaskInfo, sign: float) -> None:
        """Charge (``sign`` 1.0) or refund (-1.0) the task's request by its status, and count
        its pod facts in the row's sums."""
        if not _PLAIN_FLOAT_CHARGES:
            self._charge_reference(task, self.matrix.vector(task.resreq), sign)
            return
        m, row = self.matrix, self.row
        self._count_facts(task, 1 if sign > 0 else -1)
        delta = m.index.delta(task.resreq, sign)
        if len(delta) > m.allocatable.shape[1]:
            m.fit_width()  # a resource name seen for the first time
        m.touch(row)
        status = task.status
        if status is TaskStatus.PIPELINED:
            pipelined = m.pipelined[row].tolist()
            for column, change in enumerate(delta):
                pipelined[column] += change
            m.pipelined[row] = pipelined
            return
        idle, used = m.idle[row].tolist(), m.used[row].tolist()
        for column, change in enumerate(delta):
            idle[column] -= change
            used[column] += change
        m.idle[row], m.used[row] = idle, used
        if status is TaskStatus.RELEASING:
            releasing = m.releasing[row].tolist()
            for column, change in enumerate(delta):
                releasing[column] += change
            m.releasing[row] = releasing

    def _charge_reference(self, task: TaskInfo, request: FloatArray, sign: float) -> None:
        """``_charge`` as numpy row arithmetic: the reference the plain-float version is
        tested against (the same float64 operation on every column, so the same bits)."""
        m, row = self.matrix, self.row
        m.touch(row)
        self._count_facts(task, 1 if sign > 0 else -1)
        delta = sign * request  # once: the same values each line would compute
        if task.status is TaskStatus.PIPELINED:
            m.pipelined[row] += delta
            return
        m.idle[row] -= delta
        m.used[row] += delta
        if task.status is TaskStatus.RELEASING:
            m.releasing[row] += delta

    @property
    def ready(self) -> bool:
        return self.phase is NodePhase.READY

    @property
    def labels(self) -> Mapping[str, str]:
        return ((self.node or {}).get("metadata") or {}).get("labels") or {}

    @property
    def spec(self) -> Mapping[str, Any]:
        return (self.node or {}).get("spec") or {}

    @property
    def revocable_zone(self) -> str:
        return str(self.labels.get(REVOCABLE_ZONE_LABEL, ""))

    @property
    def oversubscription_node(self) -> bool:
        """Label ``volcano.sh/oversubscription`` (a Go bool; anything else is false)."""
        return parse_go_bool(str(self.labels.get(OVERSUBSCRIPTION_NODE_LABEL, ""))) is True

    @property
    def offline_job_evicting(self) -> bool:
        """Annotation ``volcano.sh/offline-job-evicting``: the node is shedding offline work, so
        its oversubscribed resources are not to be handed out."""
        annotations = ((self.node or {}).get("metadata") or {}).get("annotations") or {}
        return parse_go_bool(str(annotations.get(OFFLINE_JOB_EVICTING_ANNOTATION, ""))) is True

    # ------------------------------------------------------------------ accounting views

    def _resource(self, array_name: str) -> Resource:
        array = getattr(self.matrix, array_name)
        return self.matrix.index.resource(array[self.row], self.defined_scalars)

    @property
    def allocatable(self) -> Resource:
        return self._resource("allocatable")

    @property
    def capacity(self) -> Resource:
        return self._resource("capacity")

    @property
    def idle(self) -> Resource:
        return self._resource("idle")

    @property
    def used(self) -> Resource:
        return self._resource("used")

    @property
    def releasing(self) -> Resource:
        return self._resource("releasing")

    @property
    def pipelined(self) -> Resource:
        return self._resource("pipelined")

    def idle_holds(self, request: Resource) -> bool:
        """``request.less_equal(self.idle, DimensionDefault.ZERO)``, read off the row (asked
        at every placement; building the idle Resource cost more than the comparison)."""
        m = self.matrix
        return fits_in_values(request, m.idle[self.row].tolist(), m.index.columns)

    def future_idle_holds(self, request: Resource) -> bool:
        """``request.less_equal(self.future_idle(), DimensionDefault.ZERO)``: the same
        per-cell arithmetic as ``future_idle``, (idle + releasing) - pipelined."""
        m, row = self.matrix, self.row
        values = [
            idle + releasing - pipelined
            for idle, releasing, pipelined in zip(
                m.idle[row].tolist(),
                m.releasing[row].tolist(),
                m.pipelined[row].tolist(),
                strict=True,
            )
        ]
        return fits_in_values(request, values, m.index.columns)

    def future_idle(self) -> Resource:
        m, row = self.matrix, self.row
        values = m.idle[row] + m.releasing[row] - m.pipelined[row]
        return m.index.resource(values, self.defined_scalars)

    # ------------------------------------------------------------------ tasks

    def _placeable_key(self, task: TaskInfo) -> str:
        """The task's key, once sure it may be put here: on no other node, not here yet."""
        if task.node_name and task.node_name != self.name:
            raise NodeFitError(
                f"task <{task.namespace}/{task.name}> already on different node <{task.node_name}>"
            )
        key = task.key
        if key in self.tasks:
            raise NodeFitError(f"task <{task.namespace}/{task.name}> already on node <{self.name}>")
        return key

    def add_task(self, task: TaskInfo) -> None:
        """Put a task on the node, charging its request by status. The node keeps its own
        copy, so later status changes of ``task`` do not move the node's accounting."""
        key = self._admit(task)  # first: the copy takes the node's name
        self.tasks[key] = task.clone()

    def adopt_task(self, task: TaskInfo) -> None:
        """``add_task`` keeping ``task`` itself, not a copy: for a caller that made ``task``
        for the node and never changes it afterwards (the scheduler cache's bind: its books
        replace a task, they never change one in place)."""
        key = self._admit(task)
        self.tasks[key] = task

    def _admit(self, task: TaskInfo) -> str:
        """What ``add_task`` and ``adopt_task`` share: the checks (a Binding task against the
        idle too), the charge and the node's name on the task; the key it goes under."""
        key = self._placeable_key(task)
        if self.node is not None:
            if task.status is TaskStatus.BINDING and not self.idle_holds(task.resreq):
                ok, names = task.resreq.less_equal_with_resources_name(
                    self.idle, DimensionDefault.ZERO
                )
                if not ok:
                    raise NodeFitError(
                        f"node {self.name} resources {names} are not enough to put task"
                        f" <{task.namespace}/{task.name}>, idle: {self.idle}, req: {task.resreq}"
                    )
            self._charge(task, sign=1.0)
        task.node_name = self.name
        return key

    def hold_uncharged(self, task: TaskInfo) -> TaskInfo:
        """``add_task`` of a task that is not Binding, on a known node, without charging its
        request: the caller hands the returned copy to ``charge_held`` later (the scheduler
        cache loading a dump charges each node once for all its pods)."""
        if task.status is TaskStatus.BINDING or self.node is None:
            raise ValueError(f"task <{task.namespace}/{task.name}>: charged as it is added")
        key = self._placeable_key(task)
        # The request's columns are registered now, as ``add_task`` registers them: the
        # order of first appearance is the index's column order.
        index = self.matrix.index
        for name in task.resreq.scalar_resources:
            index.column(name)
        self.matrix.fit_width()
        task.node_name = self.name
        copy = task.clone()
        self.tasks[key] = copy
        return copy

    def charge_held(self, held: list[TaskInfo]) -> None:
        """Charge the copies ``hold_uncharged`` returned, in that order: the sums ``add_task``
        makes one task at a time, bit for bit (the same float64 additions and subtractions
        in the same order, every column, in Python floats), written to the row once."""
        if not held:
            return
        m, row = self.matrix, self.row
        columns = m.index.columns  # every name already registered by ``hold_uncharged``
        width = m.index.width
        idle, used = m.idle[row].tolist(), m.used[row].tolist()
        releasing, pipelined = m.releasing[row].tolist(), m.pipelined[row].tolist()
        for task in held:
            self._count_facts(task, 1)
            # ``ResourceIndex.vector``: cpu, memory, then each scalar at its column, as the
            # float64 values the vector would hold.
            resreq, status = task.resreq, task.status
            delta = [0.0] * width
            delta[0] = float(resreq.milli_cpu)
            delta[1] = float(resreq.memory)
            for name, value in resreq.scalar_resources.items():
                delta[columns[name]] = float(value)
            if status is TaskStatus.PIPELINED:
                for column in range(width):
                    pipelined[column] += delta[column]
                continue
            for column in range(width):
                idle[column] -= delta[column]
                used[column] += delta[column]
            if status is TaskStatus.RELEASING:
                for column in range(width):
                    releasing[column] += delta[column]
        m.idle[row], m.used[row] = idle, used
        m.releasing[row], m.pipelined[row] = releasing, pipelined
        m.touch(row)

    def remove_task(self, task: TaskInfo) -> None:
        key = task.key
        held = self.tasks.pop(key, None)
        if held is None:
            log.warning("failed to find task <%s> on host <%s>", key, self.name)
            return
        if self.node is not None:
            self._charge(held, sign=-1.0)

    def swap_task(self, task: TaskInfo) -> None:
        """``remove_task`` then ``add_task`` of a task whose held copy has the same status and
        request: the copy is replaced (and moves last, as there) without charging the row
        twice for nothing."""
        previous = self.tasks.pop(task.key)
        task.node_name = self.name
        self.tasks[task.key] = task.clone()
        if self.node is not None:
            # The pod may have changed in what its facts read (a new object, a new memo).
            self._count_facts(previous, -1)
            self._count_facts(task, 1)

    def update_task(self, task: TaskInfo) -> None:
        """Re-charge a task after its status changed. If the node refuses the new version (a
        Binding task that no longer fits), the old one is put back and the error raised:
        upstream treats this as fatal, we keep the books whole instead."""
        held = self.tasks.get(task.key)
        self.remove_task(task)
        try:
            self.add_task(task)
        except NodeFitError:
            if held is not None:
                self.tasks[held.key] = held
                if self.node is not None:
                    self._charge(held, sign=1.0)
            raise

    def pod_count(self) -> int:
        return len(self.tasks)

    def clone_into(self, matrix: NodeMatrix, row: int) -> NodeInfo:
        """This node in another matrix (a session's), sharing the immutable task copies."""
        return NodeInfo(
            self.name,
            matrix,
            row,
            self.node,
            self.phase,
            self.phase_reason,
            dict(self.tasks),
            self.defined_scalars,
            self.images,
        )

    def __str__(self) -> str:
        return (
            f"Node ({self.name}): allocatable<{self.allocatable}> idle <{self.idle}>,"
            f" used <{self.used}>, releasing <{self.releasing}>, pipelined <{self.pipelined}>,"
            f" phase <{self.phase.name}>, tasks <{len(self.tasks)}>"
        )


def _same_capacity(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """The parts of two versions of a Node that its accounting row is computed from are
    equal: ``status.allocatable``, ``status.capacity`` and the oversubscription annotations
    (and its name)."""
    old_status, new_status = old.get("status") or {}, new.get("status") or {}
    if old_status.get("allocatable") != new_status.get("allocatable"):
        return False
    if old_status.get("capacity") != new_status.get("capacity"):
        return False
    old_meta, new_meta = old.get("metadata") or {}, new.get("metadata") or {}
    if old_meta.get("name") != new_meta.get("name"):
        return False
    old_annotations = old_meta.get("annotations") or {}
    new_annotations = new_meta.get("annotations") or {}
    return all(
        old_annotations.get(key) == new_annotations.get(key)
        for key in (OVERSUBSCRIPTION_CPU, OVERSUBSCRIPTION_MEMORY)
    )


def node_images(node_name: str, images: Any) -> dict[str, int]:
    """``status.images`` as name -> size. An image listed under several names (tag, digest)
    is found by each. Entries the API server would not accept are logged and skipped."""
    found: dict[str, int] = {}
    if images is None:
        return found
    if not isinstance(images, list):
        log.error("node %s: status.images: expected a list; its images are ignored", node_name)
        return found
    for index, image in enumerate(images):
        names = image.get("names") if isinstance(image, Mapping) else None
        size = image.get("sizeBytes", 0) if isinstance(image, Mapping) else None
        if (
            not isinstance(names, list)
            or not isinstance(size, int)
            or isinstance(size, bool)
            or size < 0
        ):
            log.error(
                "node %s: status.images[%d]: expected names (a list) and sizeBytes (a"
                " non-negative integer); the entry is ignored",
                node_name,
                index,
            )
            continue
        for name in names:
            found.setdefault(str(name), size)
    return found


def _float_or_zero(value: object) -> float:
    if value is None:
        return 0.0
    try:
        return float(str(value))
    except ValueError:
        return 0.0


__all__ = ["CPU", "MEMORY", "NodeFitError", "NodeInfo"]
