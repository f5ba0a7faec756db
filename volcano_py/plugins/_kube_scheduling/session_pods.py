"""The pods each session node holds, as kube-scheduler's node snapshot sees them.

Volcano keeps a k8s ``NodeInfo`` per node and moves pods in and out of it on the session's
allocate and deallocate events. That view is ``node.tasks`` (which the Statement already keeps
current) minus the pods evicted in this session: an eviction fires a deallocate event, so the
k8s snapshot drops the pod although Volcano's node still holds it as Releasing.

Plugins that derive state from the pods (pod counts, host ports, affinity counts) subscribe
here and receive each change once, as ``(task, row, +1 | -1)``.

The per-node sums of pod facts (``api.pod_facts``) that the scheduler cache keeps in its
matrix rows are copied at session open and kept here by the same events, so they describe
the pods in view: a plugin reads them without visiting every pod of every node.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import FloatArray, IntArray
from volcano_py.api.pod_facts import count_node_facts
from volcano_py.api.task import TaskInfo
from volcano_py.framework.event import Event, EventHandler

if TYPE_CHECKING:
    from volcano_py.framework.session import Session

PodListener = Callable[[TaskInfo, int, int], None]

# One SessionPods per session, made and registered as an event handler by the first plugin
# that asks, shared by the others (False: one per plugin, each told of every event; the tests'
# reference). Every plugin's copy follows the same events into the same state, so one does.
_SHARED = True
_SHARED_KEY = "kube_scheduling.session_pods"


def session_pods(ssn: Session, owner: str) -> SessionPods:
    """The session's view of the pods on its nodes, its event handler registered."""
    if _SHARED:
        shared = ssn.shared.get(_SHARED_KEY)
        if isinstance(shared, SessionPods):
            return shared
    pods = SessionPods(ssn)
    ssn.add_event_handler(pods.handler(owner))
    if _SHARED:
        ssn.shared[_SHARED_KEY] = pods
    return pods


class SessionPods:
    def __init__(self, ssn: Session) -> None:
        self.nodes = ssn.nodes
        self.node_list: list[NodeInfo] = ssn.node_list
        self._evicted: dict[int, set[str]] = {}
        size = len(self.node_list)
        self.counts: IntArray = np.fromiter(
            (len(node.tasks) for node in self.node_list), dtype=np.intp, count=size
        )
        # Per row, over the pods in view: non-zero minus real requests (milli cpu, memory),
        # and how many pods have an inter-pod affinity section (``api.pod_facts``).
        matrix = ssn.matrix
        self.non_zero_extra: FloatArray = matrix.non_zero_extra[:size].copy()
        self.with_pod_affinity: IntArray = matrix.pod_affinity[:size].copy()
        # Bumped on every change; caches of derived, task-independent state key on it.
        self.version = 0
        self._listeners: list[PodListener] = []

    def handler(self, owner: str) -> EventHandler:
        return EventHandler(allocate=self._on_allocate, deallocate=self._on_deallocate, owner=owner)

    def subscribe(self, listener: PodListener) -> None:
        self._listeners.append(listener)

    def pods(self, row: int) -> Iterator[TaskInfo]:
        evicted = self._evicted.get(row)
        tasks = self.node_list[row].tasks
        if not evicted:
            yield from tasks.values()
            return
        for key, task in tasks.items():
            if key not in evicted:
                yield task

    def rows_with_pod_affinity(self) -> list[int]:
        """The rows holding a pod in view with an inter-pod affinity section, in order."""
        rows: list[int] = np.flatnonzero(self.with_pod_affinity).tolist()
        return rows

    def all_pods(self) -> Iterator[tuple[int, TaskInfo]]:
        """(row, pod) for every pod in view, node by node: the scans over the whole session."""
        evicted_by_row = self._evicted
        for row, node in enumerate(self.node_list):
            tasks = node.tasks
            if not tasks:
                continue
            evicted = evicted_by_row.get(row)
            if evicted:
                for key, task in tasks.items():
                    if key not in evicted:
                        yield row, task
            else:
                for task in tasks.values():
                    yield row, task

    def _row(self, task: TaskInfo) -> int | None:
        node = self.nodes.get(task.node_name)
        return None if node is None else node.row

    def _on_allocate(self, event: Event) -> None:
        row = self._row(event.task)
        if row is None:
            return
        # An undone eviction brings the pod back into view.
        evicted = self._evicted.get(row)
        if evicted is not None:
            evicted.discard(event.task.key)
        self._changed(event.task, row, 1)

    def _on_deallocate(self, event: Event) -> None:
        row = self._row(event.task)
        if row is None:
            return
        # Still on the node after a deallocate: it is being evicted (Releasing).
        if event.task.key in self.node_list[row].tasks:
            self._evicted.setdefault(row, set()).add(event.task.key)
        self._changed(event.task, row, -1)

    def _changed(self, task: TaskInfo, row: int, sign: int) -> None:
        self.counts[row] += sign
        self.version += 1
        count_node_facts(task, self.non_zero_extra, self.with_pod_affinity, row, sign)
        for listener in self._listeners:
            listener(task, row, sign)
