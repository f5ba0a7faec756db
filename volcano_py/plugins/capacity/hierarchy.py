"""Hierarchical mode (``enableHierarchy``): the queues form a tree under ``root``; usage counts
on every ancestor and a child's capability and real capability are completed from its
parent's, top down."""

from __future__ import annotations

import logging

from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import MAX_INT_AS_FLOAT, DimensionDefault, Resource, exceeded_part
from volcano_py.api.types import ROOT_QUEUE
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import job_usage, max_resource
from volcano_py.plugins.capacity.attributes import (
    CapacityState,
    QueueAttributes,
    add_usage,
    log_attributes,
)

log = logging.getLogger(__name__)


class HierarchyError(ValueError):
    """The queue tree cannot be built (unknown parent, cycle)."""


def new_tree_attributes(queue: QueueInfo) -> QueueAttributes:
    attr = QueueAttributes(queue.name)
    if queue.deserved is not None:
        attr.deserved = queue.deserved.clone()
    if queue.capability is not None:
        attr.capability = queue.capability.clone()
    if queue.guarantee is not None:
        attr.guarantee = queue.guarantee.clone()
    return attr


def link_to_parent(
    state: CapacityState, queue: QueueInfo, ssn: Session, visiting: set[str]
) -> None:
    """Hang ``queue`` under its parent (creating the parent's attributes, and linking
    the parent in turn, the first time it is met) and record its ancestor path."""
    if queue.name == ROOT_QUEUE:
        return
    if queue.name in visiting:
        raise HierarchyError(f"cycle detected in queue hierarchy for queue {queue.name}")
    visiting.add(queue.name)
    try:
        parent_name = queue.parent_name
        parent = ssn.queues.get(parent_name)
        if parent is None:
            raise HierarchyError(f"the queue {queue.name} has invalid parent queue {parent_name}")
        attrs = state.queue_attributes
        if parent_name not in attrs:
            attrs[parent_name] = new_tree_attributes(parent)
            link_to_parent(state, parent, ssn, visiting)
        attrs[parent_name].children[queue.name] = attrs[queue.name]
        attrs[queue.name].ancestors = [*attrs[parent_name].ancestors, parent_name]
    finally:
        visiting.discard(queue.name)


def build_hierarchical(state: CapacityState, ssn: Session) -> bool:
    attrs = state.queue_attributes
    for queue in ssn.queues.values():
        if queue.name in attrs:
            continue
        attrs[queue.name] = new_tree_attributes(queue)
        try:
            link_to_parent(state, queue, ssn, set())
        except HierarchyError as error:
            log.error("capacity: failed to build the attributes of queue %s: %s", queue.name, error)
            return False

    for job in ssn.jobs.values():
        attr = attrs.get(job.queue)
        if attr is None:
            log.warning(
                "capacity: job %s references queue %s, which is not in the session; skipped",
                job.uid,
                job.queue,
            )
            continue
        if not attr.is_leaf:
            log.error(
                "capacity: the queue %s of job %s is not a leaf queue; only leaf queues"
                " may hold jobs",
                attr.name,
                job.uid,
            )
            return False
        usage = job_usage(job)
        add_usage(attr, usage)
        for ancestor in attr.ancestors:
            add_usage(attrs[ancestor], usage)

    root = attrs.get(ROOT_QUEUE)
    if root is None:
        log.warning("capacity: root queue %r is not in the session; hierarchy unusable", ROOT_QUEUE)
        return False
    # Users may submit more than the cluster holds today, so root is not limited by the
    # cluster size: without a capability of its own it is unlimited on cpu, memory and
    # every resource the cluster has. Quotas are set on the queues users create.
    if root.capability.is_empty():
        unlimited = Resource.infinite()
        for name in state.total_resource.scalar_resources:
            unlimited.set_scalar(name, MAX_INT_AS_FLOAT)
        root.capability = unlimited
    root.real_capability = root.capability.clone()
    check_hierarchical_queue(state, root)

    unreachable = [
        name for name, attr in attrs.items() if name != ROOT_QUEUE and not attr.ancestors
    ]
    if unreachable:
        # Only a parent cycle leaves a queue off root's tree; such queues keep an empty
        # real capability, so nothing in them can be admitted or placed.
        log.error("capacity: queues %s are not under root (parent cycle)", sorted(unreachable))
    for attr in attrs.values():
        attr.update_share()
        log_attributes(attr)
    return True


def check_hierarchical_queue(state: CapacityState, attr: QueueAttributes) -> None:
    """Complete each child's deserved, capability and real capability from ``attr``, top
    down. Inconsistent specs (children promised more than the parent has) are logged
    only: stopping every scheduling cycle over a quota typo would hurt more."""
    total_guarantee, total_deserved = Resource(), Resource()
    for child in attr.children.values():
        child.deserved = max_resource(child.deserved, child.guarantee)
        total_deserved.add(child.deserved)
        total_guarantee.add(child.guarantee)
        # cpu/memory <= 0 means "not set": inherit the parent's.
        if child.capability.milli_cpu <= 0:
            child.capability.milli_cpu = attr.capability.milli_cpu
        if child.capability.memory <= 0:
            child.capability.memory = attr.capability.memory
        for name, value in attr.capability.scalar_resources.items():
            child.capability.scalar_resources.setdefault(name, value)
        exceeds, names = child.capability.greater_partly_with_resources_name(
            attr.capability, DimensionDefault.INFINITY
        )
        if exceeds:
            log.error(
                "capacity: child queue %s capability (%s) exceeds parent queue %s capability"
                " (%s) on %s; the child's effective capability is limited by the parent",
                child.name,
                child.capability,
                attr.name,
                attr.capability,
                names,
            )
    if attr.name == ROOT_QUEUE:
        attr.guarantee = total_guarantee
        attr.deserved = total_deserved
    for child in attr.children.values():
        # The parent's room minus what all its children are guaranteed, plus the child's
        # own guarantee, capped by the child's capability.
        real = exceeded_part(attr.real_capability, total_guarantee).add(child.guarantee)
        real.min_dimension_resource(child.capability, DimensionDefault.INFINITY)
        child.real_capability = real
    if attr.deserved.less_partly(total_deserved, DimensionDefault.ZERO):
        log.error(
            "capacity: sum of child queue deserved (%s) exceeds parent queue %s deserved"
            " (%s); this may affect resource distribution",
            total_deserved,
            attr.name,
            attr.deserved,
        )
    if attr.guarantee.less_partly(total_guarantee, DimensionDefault.ZERO):
        log.error(
            "capacity: sum of child queue guarantees (%s) exceeds parent queue %s guarantee"
            " (%s); not all child guarantees can be met at once",
            total_guarantee,
            attr.name,
            attr.guarantee,
        )
    for child in attr.children.values():
        check_hierarchical_queue(state, child)
