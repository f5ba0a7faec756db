"""overcommit: admit jobs while the cluster, inflated by a factor, still has room for their
``minResources`` (``pkg/scheduler/plugins/overcommit/overcommit.go``).

Registers JobEnqueueableFn and JobEnqueuedFn (both gated by ``enableJobEnqueued``).

Unlike proportion, an Inqueue job's full ``minResources`` counts as reserved even when part of
it is already allocated (spec §9 pitfall 17); only Running jobs get their allocation deducted.
"""

from __future__ import annotations

import logging
from typing import Final

import numpy as np

from volcano_py.api.job import PG_INQUEUE, PG_RUNNING, JobInfo
from volcano_py.api.resource import Resource
from volcano_py.api.types import Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.hooks import VoteFn
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import (
    allocated_task_count,
    format_resource_names,
    inqueue_resource,
)

log = logging.getLogger(__name__)

PLUGIN_NAME = "overcommit"
OVERCOMMIT_FACTOR_ARGUMENT: Final = "overcommit-factor"
DEFAULT_OVERCOMMIT_FACTOR: Final = 1.2


# The nodes' total use read column by column off the session's matrix (False: a Resource per
# node, the tests' reference).
_USED_BY_COLUMN = True


def nodes_used_reference(ssn: Session) -> Resource:
    """What the session's nodes hold, node by node."""
    used = Resource()
    for node in ssn.node_list:
        used.add(node.used)
    return used


def nodes_used(ssn: Session) -> Resource:
    """``nodes_used_reference`` read column by column off the session's matrix (a Resource
    built per node cost ~3 us a node, every session): the same additions in the same node
    order from the same +0.0, the scalar names in the order they first appear. A node's
    Resource leaves out a scalar column that holds zero and that the node does not declare;
    adding that ±0.0 here changes nothing, as a sum started at +0.0 never becomes -0.0."""
    nodes = ssn.node_list
    used = Resource()
    if not nodes:
        return used
    matrix = ssn.matrix
    width = min(matrix.index.width, matrix.used.shape[1])
    rows = np.fromiter((node.row for node in nodes), dtype=np.intp, count=len(nodes))
    columns: list[list[float]] = matrix.used[rows, :width].T.tolist()
    used.milli_cpu = _added_in_order(columns[0])
    used.memory = _added_in_order(columns[1])
    found: list[tuple[int, int]] = []  # (first node showing the scalar, its column)
    for column in range(2, width):
        name = matrix.index.names[column]
        shown = next((i for i, value in enumerate(columns[column]) if value != 0.0), len(nodes))
        declared = next((i for i, node in enumerate(nodes) if name in node.defined_scalars), None)
        first = shown if declared is None else min(shown, declared)
        if first < len(nodes):
            found.append((first, column))
    for _first, column in sorted(found):
        used.scalar_resources[matrix.index.names[column]] = _added_in_order(columns[column])
    return used


def _added_in_order(values: list[float]) -> float:
    """``0.0 + values[0] + values[1] + ...`` one addition at a time (``sum`` of floats may
    compensate rounding: Python 3.12 does)."""
    total = 0.0
    for value in values:
        total += value
    return total


class OvercommitPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.overcommit_factor = DEFAULT_OVERCOMMIT_FACTOR
        # Cluster allocatable times the factor, minus what the nodes already hold.
        self.idle = Resource()
        # minResources of jobs admitted (this session or earlier) but not yet placed.
        self.inqueue = Resource()

    def on_session_open(self, ssn: Session) -> None:
        factor = self.arguments.get_float(OVERCOMMIT_FACTOR_ARGUMENT, DEFAULT_OVERCOMMIT_FACTOR)
        if factor < 1.0:
            log.warning(
                "overcommit: invalid overcommit-factor %s: it cannot be less than 1, using %s",
                factor,
                DEFAULT_OVERCOMMIT_FACTOR,
            )
            factor = DEFAULT_OVERCOMMIT_FACTOR
        self.overcommit_factor = factor

        used = nodes_used(ssn) if _USED_BY_COLUMN else nodes_used_reference(ssn)
        # Used includes releasing tasks: their room is not free until they are gone.
        self.idle = ssn.total_resource.clone().multi(factor).sub_without_assert(used)

        self.inqueue = Resource()
        for job in ssn.jobs.values():
            pod_group = job.pod_group
            if pod_group is None or pod_group.min_resources is None:
                continue
            if pod_group.phase == PG_INQUEUE:
                self.inqueue.add(job.deduct_sch_gated_resources(job.min_resources()))
            elif (
                pod_group.phase == PG_RUNNING and allocated_task_count(job) >= pod_group.min_member
            ):
                # A running gang still reserves what its minResources names beyond what it
                # holds (a Spark driver that finished leaves its executors' share reserved).
                reserved = inqueue_resource(job, job.allocated)
                self.inqueue.add(job.deduct_sch_gated_resources(reserved))

        ssn.add_job_enqueueable_fn(self.name, self.job_enqueueable(ssn))
        ssn.add_job_enqueued_fn(self.name, self.job_enqueued)

    def job_enqueueable(self, ssn: Session) -> VoteFn:
        def enqueueable(job: JobInfo) -> Vote:
            if job.pod_group is None or job.pod_group.min_resources is None:
                return Vote.PERMIT
            minimum = job.min_resources()
            wanted = self.inqueue.clone().add(minimum)
            fits, names = wanted.less_equal_with_dimension_and_resources_name(self.idle, minimum)
            if fits:
                return Vote.PERMIT
            ssn.record_job_event(
                job,
                "Normal",
                "Unschedulable",
                format_resource_names("resource in cluster is overused", "overused", names),
            )
            return Vote.REJECT

        return enqueueable

    def job_enqueued(self, job: JobInfo) -> None:
        if job.pod_group is None or job.pod_group.min_resources is None:
            return
        self.inqueue.add(job.deduct_sch_gated_resources(job.min_resources()))

    def on_session_close(self, ssn: Session) -> None:
        self.idle = Resource()
        self.inqueue = Resource()


# The arguments this plugin reads (the key upstream overcommit.go reads).
ARGUMENTS: Final[frozenset[str]] = frozenset({OVERCOMMIT_FACTOR_ARGUMENT})


def new(arguments: Arguments) -> OvercommitPlugin:
    return OvercommitPlugin(arguments)
