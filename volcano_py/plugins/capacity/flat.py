"""Flat mode: each queue with a job gets attributes from its own spec; its real capability is
what the cluster can give once the other queues' guarantees are set aside."""

from __future__ import annotations

import logging

from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import MAX_FLOAT, DimensionDefault, Resource, exceeded_part
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import job_usage, max_resource
from volcano_py.plugins.capacity.attributes import (
    CapacityState,
    QueueAttributes,
    add_usage,
    log_attributes,
)

log = logging.getLogger(__name__)


def real_capability(
    state: CapacityState, guarantee: Resource, capability: Resource | None
) -> Resource:
    """What the cluster can give a queue once the other queues' guarantees are set aside,
    capped by its capability (dimensions the capability does not name are not capped)."""
    real = exceeded_part(state.total_resource, state.total_guarantee).add(guarantee)
    if capability is not None:
        real.min_dimension_resource(capability, DimensionDefault.INFINITY)
    return real


def new_flat_attributes(state: CapacityState, queue: QueueInfo) -> QueueAttributes:
    attr = QueueAttributes(queue.name)
    if queue.deserved is not None:
        attr.deserved = queue.deserved.clone()
    if queue.guarantee is not None:
        attr.guarantee = queue.guarantee.clone()
    capability: Resource | None = None
    if queue.capability is not None:
        capability = queue.capability.clone()
        # A capability that names no cpu (or memory) does not limit it.
        if capability.milli_cpu <= 0:
            capability.milli_cpu = MAX_FLOAT
        if capability.memory <= 0:
            capability.memory = MAX_FLOAT
        attr.capability = capability
    attr.real_capability = real_capability(state, attr.guarantee, capability)
    return attr


def build_flat(state: CapacityState, ssn: Session) -> None:
    for spec in ssn.queues.values():
        if spec.guarantee is not None:
            state.total_guarantee.add(spec.guarantee)
    for job in ssn.jobs.values():
        attr = state.queue_attributes.get(job.queue)
        if attr is None:
            queue = ssn.queues.get(job.queue)
            if queue is None:
                log.warning("capacity: job %s: queue %s is not in the session", job.uid, job.queue)
                continue
            attr = state.queue_attributes[job.queue] = new_flat_attributes(state, queue)
        add_usage(attr, job_usage(job))
    for attr in state.queue_attributes.values():
        # A queue cannot deserve more than it may ever hold, nor less than it is promised.
        attr.deserved.min_dimension_resource(attr.real_capability, DimensionDefault.INFINITY)
        attr.deserved = max_resource(attr.deserved, attr.guarantee)
        attr.update_share()
        log_attributes(attr)
