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
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_lock import (
    ASCEND_HAMI_LOCK,
    GPUSHARE_LOCK,
    LOCK_EXPIRY_SECONDS,
    VGPU_LOCK,
    lock_refusal,
)
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus

__all__ = ["ASCEND_HAMI_LOCK", "GPUSHARE_LOCK", "VGPU_LOCK", "NodeLocks", "Taken"]

# Plugin memory: (node name, lock name) -> (the Node object the session saw, the time taken)
# for each lock a committed bind will write. Trusted until a newer Node object arrives.
Taken = dict[tuple[str, str], tuple[Any, float]]


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

    def take(self, task: TaskInfo, node: NodeInfo, lock_name: str) -> str | None:
        """Take ``lock_name`` on ``node`` for ``task``; why not (upstream's inner error
        text), or None when taken."""
        key = (node.name, lock_name)
        holder = self.holders.get(key)
        if holder is not None and holder.key != task.key:
            return f"node {node.name} has been locked within 5 minutes"
        earlier = self.taken.get(key)
        if earlier is not None:
            seen, when = earlier
            if seen is node.node and self.now - when <= LOCK_EXPIRY_SECONDS:
                return f"node {node.name} has been locked within 5 minutes"
            # The Node changed since (our write, or the device plugin's release, shows in it).
            del self.taken[key]
        refusal = lock_refusal(node.name, _annotations(node), lock_name, self.now)
        if refusal is not None:
            return refusal
        self.holders[key] = task
        if lock_name not in task.bind_node_locks:
            task.bind_node_locks = (*task.bind_node_locks, lock_name)
        return None

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
                self.taken[key] = (node.node, self.now)
        for key in [
            k for k, (_, when) in self.taken.items() if self.now - when > LOCK_EXPIRY_SECONDS
        ]:
            del self.taken[key]
