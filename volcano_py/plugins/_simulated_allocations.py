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

from typing import Protocol

from volcano_py.api.resource import Resource


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
