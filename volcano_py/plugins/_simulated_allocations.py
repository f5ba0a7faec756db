"""Queue allocations as a preemption dry run sees them (proportion's and capacity's
``proportionState`` / ``capacityState``).

Upstream's PrePredicate stores a full clone of every queue's attributes in the task's cycle
state, and the dry run clones that again for each candidate node. Here only the queues a dry
run changes get a private ``allocated``; every other queue is read from the plugin's live
attributes. That is the same answer because the state is seeded (by PrePredicate) right before
the dry run reads it, with no placement in between, and it costs nothing on the allocate
path, where PrePredicate runs for every task.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Protocol

from volcano_py.api.node import NodeInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.framework.hooks import (
    SimulateAllocatableFn,
    SimulateTaskChangeFn,
    SimulationState,
)

if TYPE_CHECKING:
    from volcano_py.framework.session import Session


class HasAllocation(Protocol):
    """What the plugins' queue attributes share: a name and what the queue holds."""

    @property
    def name(self) -> str: ...

    @property
    def allocated(self) -> Resource: ...


class SimulatedAllocations:
    """A dry run's copy-on-write view of the queues' ``allocated`` (cloned per node)."""

    __slots__ = ("_changed",)

    def __init__(self, changed: dict[str, Resource] | None = None) -> None:
        self._changed: dict[str, Resource] = changed if changed is not None else {}

    def allocated(self, attr: HasAllocation) -> Resource:
        """The queue's allocation with the dry run's removals and additions applied."""
        return self._changed.get(attr.name, attr.allocated)

    def add(self, attr: HasAllocation, request: Resource) -> None:
        self._own(attr).add(request)

    def remove(self, attr: HasAllocation, request: Resource) -> None:
        # Not asserting: a victim's request is part of what its queue holds.
        self._own(attr).sub_without_assert(request)

    def _own(self, attr: HasAllocation) -> Resource:
        changed = self._changed.get(attr.name)
        if changed is None:
            changed = self._changed[attr.name] = attr.allocated.clone()
        return changed

    def clone(self) -> SimulatedAllocations:
        return SimulatedAllocations({name: r.clone() for name, r in self._changed.items()})


# The queues whose allocation a task's move changes (the leaf, or the leaf and its ancestors),
# or why there are none.
QueuesOfTask = Callable[[TaskInfo], "Iterable[HasAllocation] | str"]


def register_queue_simulation(
    ssn: Session,
    plugin: str,
    allocatable: SimulateAllocatableFn,
    queues_of: QueuesOfTask,
) -> None:
    """The dry-run hooks of a queue-quota plugin (proportion, capacity): PrePredicate seeds an
    empty ``SimulatedAllocations``, SimulateAddTask / SimulateRemoveTask move the task's request
    in and out of its queues, and ``allocatable`` answers SimulateAllocatable. Upstream also
    refreshes the queue's share in its copy; nothing in a dry run reads it."""

    def seed(task: TaskInfo) -> None:
        ssn.simulation_state(task)[plugin] = SimulatedAllocations()

    def change(add: bool) -> SimulateTaskChangeFn:
        def move(
            state: SimulationState, _to_schedule: TaskInfo, task: TaskInfo, _node: NodeInfo
        ) -> Status | None:
            allocations = state.get(plugin)
            if not isinstance(allocations, SimulatedAllocations):
                return Status(StatusCode.ERROR, f"{plugin}: no dry-run state", plugin)
            queues = queues_of(task)
            if isinstance(queues, str):
                return Status(StatusCode.ERROR, f"{plugin}: {queues}", plugin)
            for queue in queues:
                if add:
                    allocations.add(queue, task.resreq)
                else:
                    allocations.remove(queue, task.resreq)
            return None

        return move

    ssn.add_pre_predicate_fn(plugin, seed)
    ssn.add_simulate_allocatable_fn(plugin, allocatable)
    ssn.add_simulate_add_task_fn(plugin, change(add=True))
    ssn.add_simulate_remove_task_fn(plugin, change(add=False))
