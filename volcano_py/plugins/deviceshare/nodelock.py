"""``deviceshare.NodeLockEnable``: a device allocation first takes the node's lock
(``pkg/scheduler/plugins/util/nodelock``, called from each device's ``Allocate``).

Upstream writes the lock annotation on the Node from inside the session, with a blocking API
call per allocation, and never takes it back (the device plugin removes it, or it expires after
five minutes), even when the session then drops the allocation. Here the session only decides:
an allocation is refused while the node's lock (as the session sees the Node, or as this plugin
took it for a bind whose Node update has not arrived yet) is younger than five minutes, and one
lock is held per node per session; the binder then takes the lock on the Node itself, checked
against the API server's copy, right before the Binding (``TaskInfo.bind_node_locks``). An
allocation the session undoes takes no lock.

A pod refused for a lock and still Pending when the session closes gets that refusal as its
fit error (the pending reason: Volcano's words, then which annotation holds since when), so
``kubectl describe`` and ``simulate`` say why; Volcano only logs it. It is recorded at close,
not at the refusal, so that the session places the other tasks exactly as Volcano's does (a fit
error would make the job skip the rest of the task's role).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.api.job import JobInfo
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_lock import (
    ASCEND_HAMI_LOCK,
    GPUSHARE_LOCK,
    LOCK_EXPIRY_SECONDS,
    VGPU_LOCK,
    held_since,
    lock_holding,
    lock_refusal,
)
from volcano_py.api.task import TaskID, TaskInfo
from volcano_py.api.types import FitError, FitErrors, TaskStatus, unschedulable

__all__ = ["ASCEND_HAMI_LOCK", "GPUSHARE_LOCK", "VGPU_LOCK", "NodeLocks", "Refusal", "Taken"]

# Plugin memory: (node name, lock name) -> (the Node object the session saw, the time taken,
# the pod whose bind takes it) for each lock a committed bind will write. Trusted until a
# newer Node object arrives.
Taken = dict[tuple[str, str], tuple[Any, float, str]]


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a lock could not be taken."""

    # Volcano's ``LockNode`` error text (what its device ``Allocate`` wraps).
    reason: str
    # Which lock holds: the annotation, since when, until when or for which pod.
    holding: str


def _annotations(node: NodeInfo) -> Mapping[str, str]:
    meta = (node.node or {}).get("metadata") or {}
    found: Mapping[str, str] = meta.get("annotations") or {}
    return found


class NodeLocks:
    """The session's node locks: who holds which, and whether another may be taken."""

    def __init__(self, taken: Taken, now: float) -> None:
        self.now = now
        self.taken = taken
        # (node name, lock name) -> the task that took it in this session.
        self.holders: dict[tuple[str, str], TaskInfo] = {}
        # task -> (its job, the node, the pending reason) of its last refusal.
        self.refused: dict[TaskID, tuple[str, str, str]] = {}

    def take(self, task: TaskInfo, node: NodeInfo, lock_name: str) -> Refusal | None:
        """Take ``lock_name`` on ``node`` for ``task``; why not, or None when taken."""
        key = (node.name, lock_name)
        held = f"node {node.name} has been locked within 5 minutes"
        holder = self.holders.get(key)
        if holder is not None and holder.key != task.key:
            return Refusal(
                held,
                f"lock annotation {lock_name!r} on node {node.name} taken in this scheduling"
                f" cycle for pod {holder.key}",
            )
        earlier = self.taken.get(key)
        if earlier is not None:
            seen, when, pod = earlier
            if seen is node.node and self.now - when <= LOCK_EXPIRY_SECONDS:
                return Refusal(held, f"{held_since(node.name, lock_name, when)} for pod {pod}")
            # The Node changed since (our write, or the device plugin's release, shows in it).
            del self.taken[key]
        annotations = _annotations(node)
        reason = lock_refusal(node.name, annotations, lock_name, self.now)
        if reason is not None:
            return Refusal(reason, lock_holding(node.name, annotations, lock_name))
        self.holders[key] = task
        if lock_name not in task.bind_node_locks:
            task.bind_node_locks = (*task.bind_node_locks, lock_name)
        return None

    def refuse(self, task: TaskInfo, node: NodeInfo, error: str, refusal: Refusal) -> None:
        """``error`` (the allocation's, in Volcano's words) was caused by ``refusal``: the
        task's pending reason if the session ends with it still Pending."""
        self.refused[task.uid] = (task.job, node.name, f"{error} ({refusal.holding})")

    def record_fit_errors(self, jobs: Mapping[str, JobInfo]) -> None:
        """Each task refused for a lock and still Pending gets the refusal as its fit error:
        its own, or added for that node to the fit errors a later attempt recorded."""
        for uid, (job_id, node_name, message) in self.refused.items():
            job = jobs.get(job_id)
            task = job.tasks.get(uid) if job is not None else None
            if job is None or task is None or task.status is not TaskStatus.PENDING:
                continue
            errors = job.nodes_fit_errors.get(uid)
            if errors is None:
                job.nodes_fit_errors[uid] = FitErrors(error=message)
            elif node_name not in errors.nodes:
                errors.set_node_error(node_name, FitError(node_name, [unschedulable(message)]))
        self.refused = {}

    def release(self, task: TaskInfo) -> None:
        """The allocation was undone: its locks are free again, and not bound."""
        if not task.bind_node_locks:
            return
        for lock_name in task.bind_node_locks:
            key = (task.node_name, lock_name)
            holder = self.holders.get(key)
            if holder is not None and holder.key == task.key:
                del self.holders[key]
        task.bind_node_locks = ()

    def close(self, nodes: Mapping[str, NodeInfo]) -> None:
        """Remember the locks the committed binds will write, until the Node shows them."""
        for key, task in self.holders.items():
            node = nodes.get(key[0])
            if task.status is TaskStatus.BINDING and node is not None:
                self.taken[key] = (node.node, self.now, task.key)
        for key in [
            k for k, (_, when, _) in self.taken.items() if self.now - when > LOCK_EXPIRY_SECONDS
        ]:
            del self.taken[key]
