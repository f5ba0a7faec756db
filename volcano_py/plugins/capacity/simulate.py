"""Topology-aware preemption's dry run: the capacity checks against the queue allocations the
dry run keeps in its simulation state (``_simulated_allocations``)."""

from __future__ import annotations

from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.framework.hooks import SimulationState
from volcano_py.framework.session import Session
from volcano_py.plugins._simulated_allocations import (
    SimulatedAllocations,
    register_queue_simulation,
)
from volcano_py.plugins.capacity.attributes import CapacityState, QueueAttributes


def register_simulation(capacity: CapacityState, ssn: Session) -> None:
    def queues_of(task: TaskInfo) -> list[QueueAttributes] | str:
        job = ssn.jobs.get(task.job)
        attr = capacity.queue_attributes.get(job.queue) if job is not None else None
        if attr is None or not capacity.ready:
            return f"job or queue of {task.key} not in a usable queue tree"
        return list(capacity.path(attr))

    def allocatable(state: SimulationState, queue: QueueInfo, task: TaskInfo) -> bool:
        return simulate_allocatable(capacity, state, queue, task)

    register_queue_simulation(ssn, capacity.name, allocatable, queues_of)


def simulate_allocatable(
    capacity: CapacityState, state: SimulationState, queue: QueueInfo, task: TaskInfo
) -> bool:
    """``allocatable`` against the dry run's allocations, for the queue and each ancestor.
    Upstream does not look at the queue's state here; no seeded state means no."""
    allocations = state.get(capacity.name)
    if not isinstance(allocations, SimulatedAllocations) or not capacity.ready:
        return False
    attr = capacity.queue_attributes.get(queue.name)
    if attr is None:
        return True
    if capacity.hierarchy and not attr.is_leaf:
        return False
    return all(
        queue_allocatable_as(level, allocations.allocated(level), task)
        for level in capacity.path(attr)
    )


def queue_allocatable_as(attr: QueueAttributes, allocated: Resource, task: TaskInfo) -> bool:
    future = allocated.clone().add(task.resreq)
    fits, _ = future.less_equal_with_dimension_and_resources_name(attr.real_capability, task.resreq)
    return fits
