"""Why a job with a hard network topology (or sub-groups) found no HyperNode: the reason a
person reads in ``simulate`` and in the PodGroup's condition.

Volcano's allocate asks one HyperNode (of a tier no higher than ``highestTierAllowed``) for
every Pending pod of the job at once: the sub-job's resource pre-filter
(``SubJobInfo.GetMinResources``) sums all Pending requests, not the gang's ``minAvailable``.
So a job of 8 replicas with ``minAvailable: 4`` needs room for all 8 in one HyperNode, even
though 4 would start it. Volcano then says nothing; this module says what blocks the job and
which change to the job would let it run. It only reads the session (one numpy sum per
HyperNode over the session matrix), and runs only when a job is left without a placement.

For a job with sub-group policies the same is said of the first sub-group (in allocate's order)
that no HyperNode of its allowed tier can hold, or, when each could be placed alone, of the
sub-groups the job needs at once.
"""

from __future__ import annotations

import numpy as np

from volcano_py.actions.sub_job_worksheet import Worksheet
from volcano_py.api.job import JobInfo
from volcano_py.api.node_matrix import FloatArray
from volcano_py.api.resource import DimensionDefault, Resource
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.session import Session


def _short(resource: Resource, names: list[str]) -> str:
    listed = resource.to_list()
    return ", ".join(f"{name} {listed.get(name, '0')}" for name in names)


def _fits(need: Resource, free: Resource) -> bool:
    return need.less_equal(free, DimensionDefault.ZERO)


def _short_of(need: Resource, free: Resource) -> list[str]:
    """The resources ``need`` asks more of than ``free`` has (the ones to name)."""
    listed_need = need.to_list()
    return [name for name in listed_need if need.get(name) > free.get(name) + 0.1]


def _free_per_hyper_node(ssn: Session) -> FloatArray:
    """What the gradient's pre-filter compares with: idle, or idle once releases land."""
    matrix = ssn.matrix
    membership = ssn.topology.membership()
    free_now = membership.sum_rows(matrix.idle)
    free_later = membership.sum_rows(matrix.idle + matrix.releasing - matrix.pipelined)
    free: FloatArray = np.maximum(free_now, free_later)
    return free


def no_hyper_node_reason(ssn: Session, job: JobInfo, worksheet: Worksheet) -> str:
    """The reason for a job no HyperNode of an allowed tier could take ("" when there is
    nothing topological to say: the per-task fit errors then tell it)."""
    if job.contains_sub_job_policy():
        return _sub_group_reason(ssn, job, worksheet)
    if not job.hard_topology()[0]:
        return ""
    return _job_reason(ssn, job)


def _job_reason(ssn: Session, job: JobInfo) -> str:
    _hard, highest_tier = job.hard_topology()
    sub_job = job.default_sub_job()
    pending = len(job.tasks_in(TaskStatus.PENDING))
    need_all = sub_job.min_resources()
    need_min = job.min_resources()
    topology = ssn.topology
    membership = topology.membership()
    matrix = ssn.matrix
    free = _free_per_hyper_node(ssn)
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


def _sub_group_reason(ssn: Session, job: JobInfo, worksheet: Worksheet) -> str:
    membership = ssn.topology.membership()
    matrix = ssn.matrix
    free = _free_per_hyper_node(ssn)
    tiers = membership.tiers
    job_hard, job_tier = job.hard_topology()
    order = worksheet.sub_jobs.clone()
    wanted: list[SubJobInfo] = []
    while not order.empty():
        wanted.append(order.pop())

    def resource_of(h: int) -> Resource:
        return matrix.index.resource(free[h])

    def roomiest(candidates: list[int], need: Resource) -> int:
        names = _short_of(need, Resource()) or ["cpu"]
        return max(candidates, key=lambda h: tuple(resource_of(h).get(n) for n in names))

    for sub_job in wanted:
        hard, tier = sub_job.hard_topology()
        if not hard:
            continue
        if job_hard:
            tier = min(tier, job_tier)
        need = sub_job.min_resources()
        pending = len(sub_job.tasks_in(TaskStatus.PENDING))
        allowed = [h for h in range(len(membership.names)) if tiers[h] <= tier]
        name = _sub_group_name(job, sub_job)
        where = f"one HyperNode of tier <= {tier}"
        if sub_job.allocated_hyper_node:
            return (
                f"sub-group {name}: its placed pods already span HyperNode "
                f"{sub_job.allocated_hyper_node}; its {pending} pending pods must join them "
                f"inside {where}, and none has room"
            )
        if not allowed:
            return f"sub-group {name}: the cluster has no HyperNode of tier <= {tier}"
        if any(_fits(need, resource_of(h)) for h in allowed):
            continue
        best = roomiest(allowed, need)
        best_free = resource_of(best)
        short = _short_of(need, best_free) or _short_of(need, Resource()) or ["cpu"]
        reason = (
            f"sub-group {name}: its {pending} pending pods ({_short(need, short)}) must fit "
            f"inside {where} (subGroupPolicy networkTopology.highestTierAllowed"
            f"{', bounded by the job' if job_hard and tier == job_tier else ''}); the roomiest, "
            f"{membership.names[best]}, has {_short(best_free, short)} free"
        )
        higher = [h for h in range(len(membership.names)) if tiers[h] > tier]
        if any(_fits(need, resource_of(h)) for h in higher):
            reason += "; raising highestTierAllowed would let it run"
        return reason
    if not job_hard or not wanted:
        return ""
    # Each sub-group fits somewhere alone: the job as a whole does not fit its domain.
    need = Resource()
    for sub_job in wanted:
        need.add(sub_job.min_resources())
    allowed = [h for h in range(len(membership.names)) if tiers[h] <= job_tier]
    if not allowed:
        return f"the cluster has no HyperNode of tier <= {job_tier} to place the job in"
    best = roomiest(allowed, need)
    best_free = resource_of(best)
    short = _short_of(need, best_free) or _short_of(need, Resource()) or ["cpu"]
    return (
        f"each sub-group fits a HyperNode alone, but its {len(wanted)} sub-groups with pending "
        f"pods ({_short(need, short)}) must all fit inside one HyperNode of tier <= {job_tier} "
        f"(networkTopology.highestTierAllowed); the roomiest, {membership.names[best]}, has "
        f"{_short(best_free, short)} free"
    )


def _sub_group_name(job: JobInfo, sub_job: SubJobInfo) -> str:
    """The sub-job as a person knows it: policy name and label values, without the job."""
    prefix = f"{job.uid}/"
    return sub_job.uid[len(prefix) :] if sub_job.uid.startswith(prefix) else sub_job.uid
