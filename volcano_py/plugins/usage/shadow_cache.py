"""ShadowLoadCache (``plugins/usage/shadow_cache.go``): the estimated use of pods placed on a
node that its metrics cannot show yet, per node, for one session.

Each estimate is remembered per task (its snapshot), so taking a task off subtracts exactly
what was added, however the node's pressure changed in between. Totals live in arrays with one
slot per node: built with the session's node list, slot i is session row i, so scoring reads
the shadow of every candidate row at once. A session runs in one thread, so no lock.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from volcano_py.api.node_matrix import FloatArray, IntArray


@dataclass(frozen=True, slots=True)
class PodEstSnapshot:
    node_name: str
    cpu_millis: float
    mem_bytes: float


class ShadowLoadCache:
    __slots__ = ("_cpu", "_mem", "_slots", "pod_snapshots")

    def __init__(self, node_names: Iterable[str] = ()) -> None:
        self._slots: dict[str, int] = {}
        self._cpu: FloatArray = np.zeros(0)
        self._mem: FloatArray = np.zeros(0)
        self.pod_snapshots: dict[str, PodEstSnapshot] = {}
        for name in node_names:
            self._slot(name)

    def _slot(self, node_name: str) -> int:
        slot = self._slots.get(node_name)
        if slot is None:
            slot = self._slots[node_name] = len(self._slots)
            if slot >= len(self._cpu):
                grow = max(16, len(self._cpu))
                self._cpu = np.concatenate([self._cpu, np.zeros(grow)])
                self._mem = np.concatenate([self._mem, np.zeros(grow)])
        return slot

    def reset(self) -> None:
        self._cpu[:] = 0.0
        self._mem[:] = 0.0
        self.pod_snapshots.clear()

    def is_clean(self) -> bool:
        return not self.pod_snapshots and not self._cpu.any() and not self._mem.any()

    def add_estimate(
        self, node_name: str, task_id: str, cpu_millis: float, mem_bytes: float
    ) -> None:
        """Add a pod's estimate to its node; a task already counted moves (its old estimate
        is taken off first)."""
        previous = self.pod_snapshots.get(task_id)
        if previous is not None:
            self._subtract(previous)
        slot = self._slot(node_name)
        self._cpu[slot] += cpu_millis
        self._mem[slot] += mem_bytes
        self.pod_snapshots[task_id] = PodEstSnapshot(node_name, cpu_millis, mem_bytes)

    def sub_estimate_by_snapshot(self, task_id: str) -> None:
        """Take off exactly what was added for ``task_id``; nothing if it was never added."""
        snapshot = self.pod_snapshots.pop(task_id, None)
        if snapshot is not None:
            self._subtract(snapshot)

    def _subtract(self, snapshot: PodEstSnapshot) -> None:
        slot = self._slot(snapshot.node_name)
        self._cpu[slot] = max(self._cpu[slot] - snapshot.cpu_millis, 0.0)
        self._mem[slot] = max(self._mem[slot] - snapshot.mem_bytes, 0.0)

    def get_node_est(self, node_name: str) -> tuple[float, float]:
        slot = self._slots.get(node_name)
        if slot is None:
            return 0.0, 0.0
        return float(self._cpu[slot]), float(self._mem[slot])

    def get_snapshot(self, task_id: str) -> PodEstSnapshot | None:
        return self.pod_snapshots.get(task_id)

    def rows(self, rows: IntArray) -> tuple[FloatArray, FloatArray]:
        """The (cpu, memory) estimates of the nodes in slots ``rows`` (session rows when the
        cache was built from the session's node list)."""
        return self._cpu[rows], self._mem[rows]
