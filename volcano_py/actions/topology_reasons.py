"""Why a job with a hard network topology found no HyperNode: the reason a person reads in
``simulate`` and in the PodGroup's condition.

Volcano's allocate asks one HyperNode (of a tier no higher than ``highestTierAllowed``) for
every Pending pod of the job at once: the sub-job's resource pre-filter
(``SubJobInfo.GetMinResources``) sums all Pending requests, not the gang's ``minAvailable``.
So a job of 8 replicas with ``minAvailable: 4`` needs room for all 8 in one HyperNode, even
though 4 would start it. Volcano then says nothing; this module says what blocks the job and
which change to the job would let it run. It only reads the session (one numpy sum per
HyperNode over the session matrix), and runs only when a job is left without a placement.
"""

from __future__ import annotations

import numpy as np

from volcano_py.api.job import JobInfo
from volcano_py.api.node_matrix import FloatArray
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.types import TaskStatus
from volcano_py.framework.session import Session
from volcano_py.framework.topology import SubJobInfo


def _short(resource: Resource, names: list[str]) -> str:
    listed = resource.to_list()
    return ", ".join(f"{name} {listed.get(name, '0')}" for name in names)


def _fits(need: Resource, free: Resource) -> bool:
    return need.less_equal(free, DimensionDefault.ZERO)


def _short_of(need: Resource, free: Resource) -> list[str]:
    """The resources ``need`` asks more of than ``free`` has (the ones to name)."""
    listed_need = need.to_list()
    return [name for name in listed_need if need.get(name) > free.get(name) + 0.1]


def no_hyper_node_reason(ssn: Session, job: JobInfo) -> str:
    """The reason for a hard-topology job that no HyperNode of an allowed tier could take."""
    _hard, highest_tier = job.hard_topology()
    sub_job = ssn.sub_jobs.get(job.uid) or SubJobInfo(job.uid, job, job.network_topology)
    pending = len(job.tasks_in(TaskStatus.PENDING))
    need_all = sub_job.min_resources()
    need_min = job.min_resources()
    topology = ssn.topology
    membership = topology.membership()
    matrix = ssn.matrix
    # What the gradient's pre-filter compares with: idle, or idle once releases land.
    free_now = membership.sum_rows(matrix.idle)
    free_later = membership.sum_rows(matrix.idle + matrix.releasing - matrix.pipelined)
    free: FloatArray = np.maximum(free_now, free_later)
    tiers = membership.tiers
    allowed = [h for h in range(len(membership.names)) if tiers[h] <= highest_tier]
    higher = [h for h in range(len(membership.names)) if tiers[h] > highest_tier]
    placed = bool(job.allocated_hyper_node)
    where = f"one HyperNode of tier <= {highest_tier} (networkTopology.highestTierAllowed)"
    if placed:
        return (
            f"its placed pods already span HyperNode {job.allocated_hyper_node}; the "
            f"{pending} pending pods must join them inside {where}, and none has room"
        )
    if not allowed:
        return f"the cluster has no HyperNode of tier <= {highest_tier} to place it in"

    def resource_of(h: int) -> Resource:
        return matrix.index.resource(free[h])

    names = _short_of(need_all, Resource()) or ["cpu"]
    # The roomiest allowed HyperNode, by the resources the job asks for, in the order listed.
    best = max(allowed, key=lambda h: tuple(resource_of(h).get(n) for n in names))
    best_free = resource_of(best)
    short = _short_of(need_all, best_free) or names
    reason = (
        f"all {pending} pending pods ({_short(need_all, short)}) must fit inside {where}, "
        f"as Volcano places a job's pending pods together; the roomiest, "
        f"{membership.names[best]}, has {_short(best_free, short)} free"
    )
    remedies = []
    if not need_min.is_empty() and any(_fits(need_min, resource_of(h)) for h in allowed):
        remedies.append(f"lowering replicas to what minAvailable needs ({_short(need_min, short)})")
    if any(_fits(need_all, resource_of(h)) for h in higher):
        remedies.append("raising highestTierAllowed")
    if remedies:
        reason += "; " + " or ".join(remedies) + " would let it run"
    return reason
