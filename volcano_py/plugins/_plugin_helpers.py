"""Small helpers the built-in plugins share (``pkg/scheduler/plugins/util/util.go`` and
``api/helpers``), kept out of the framework because only plugins use them."""

from __future__ import annotations

import functools
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from volcano_py.api.job import PG_INQUEUE, PG_RUNNING, JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import CPU, MEMORY, PODS, Resource, is_scalar_resource_name
from volcano_py.api.types import ALLOCATED_STATUSES
from volcano_py.framework.conf import PluginOption

if TYPE_CHECKING:
    from volcano_py.framework.session import Session


def plugin_option(ssn: Session, name: str) -> PluginOption | None:
    """The first tier entry configuring plugin ``name``.

    A plugin is built from its arguments only; flags that change what it computes (drf's
    ``enableHierarchy``) live in the entry, which the session keeps in its conf. Upstream takes
    the first entry too (``HierarchyEnabled``)."""
    for tier in ssn.conf.tiers:
        for option in tier.plugins:
            if option.name == name:
                return option
    return None


def rfc3339(seconds: float) -> str:
    """A Kubernetes ``metav1.Time`` as it serialises: UTC, whole seconds, ``Z`` suffix."""
    return datetime.fromtimestamp(int(seconds), tz=UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


# Go's zero ``time.Time`` (0001-01-01T00:00:00Z) in Unix seconds: what a missing timestamp
# means upstream, long before any real one.
GO_ZERO_TIME: Final = -62_135_596_800.0


@functools.lru_cache(maxsize=4096)
def epoch_seconds(timestamp: str) -> float:
    """An RFC 3339 ``metav1.Time`` in Unix seconds; absent or malformed is Go's zero time."""
    if not timestamp:
        return GO_ZERO_TIME
    try:
        moment = datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return GO_ZERO_TIME
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def share(used: float, total: float) -> float:
    """``helpers.Share``: a dimension nobody has is fully shared as soon as anyone uses it."""
    if total == 0:
        return 0.0 if used == 0 else 1.0
    return used / total


def max_resource(left: Resource, right: Resource) -> Resource:
    """``helpers.Max``: per-dimension maximum as a new resource; negative scalars are dropped
    (a negative amount would only come from accounting drift, never from a spec)."""
    result = Resource(max(left.milli_cpu, right.milli_cpu), max(left.memory, right.memory))
    for name, value in left.scalar_resources.items():
        if value >= 0:
            result.scalar_resources[name] = value
    for name, value in right.scalar_resources.items():
        if value >= 0:
            result.scalar_resources[name] = max(value, result.scalar_resources.get(name, 0.0))
    return result


def same_amounts(left: Resource, right: Resource) -> bool:
    """Exact equality, no tolerance: the "did anything move" test of the water-filling loop
    (upstream compares with ``equality.Semantic.DeepEqual``)."""
    return (
        left.milli_cpu == right.milli_cpu
        and left.memory == right.memory
        and left.scalar_resources == right.scalar_resources
    )


def allocated_task_count(job: JobInfo) -> int:
    """Tasks holding resources on a node (``CalculateAllocatedTaskNum``)."""
    index = job.task_status_index
    return sum(len(index[status]) for status in ALLOCATED_STATUSES if status in index)


def inqueue_resource(job: JobInfo, allocated: Resource) -> Resource:
    """What an admitted job still reserves in its queue: its ``minResources`` minus what it
    already holds, per dimension listed in ``minResources`` (``GetInqueueResource``).

    A scalar the job holds none of is reserved in full; quota names (``count/*``) and names that
    are not scalar resources (``ephemeral-storage`` among them) reserve nothing."""
    pod_group = job.pod_group
    raw = pod_group.min_resources if pod_group is not None else None
    if not raw:
        return Resource()
    minimum = Resource.from_list(raw)
    inqueue = Resource()
    for name in raw:
        if name == CPU:
            inqueue.milli_cpu = max(minimum.milli_cpu - allocated.milli_cpu, 0.0)
        elif name == MEMORY:
            inqueue.memory = max(minimum.memory - allocated.memory, 0.0)
        elif name == PODS:
            reserved = minimum.get(PODS) - allocated.get(PODS)
            if reserved > 0:
                inqueue.scalar_resources[PODS] = reserved
        elif name.startswith("count/") or not is_scalar_resource_name(name):
            continue
        elif name not in allocated.scalar_resources:
            inqueue.scalar_resources[name] = minimum.get(name)
        else:
            reserved = minimum.get(name) - allocated.scalar_resources[name]
            if reserved > 0:
                inqueue.scalar_resources[name] = reserved
    return inqueue


# ``job_usage`` hands out the job's kept sums and kept elastic part themselves, which its
# readers only add into their own totals (False: fresh copies, each worked out again, the
# tests' reference).
_SHARED_USAGE = True
# ``job_usage`` of a job that reserves no quota hands out the usage it handed out last, kept
# in the job's memo while the kept sums and elastic part it holds are the same objects
# (False: a new ``JobUsage`` and an empty inqueue each time, the tests' reference).
_KEEP_USAGE = True
# That kept usage found by one flat memo entry, (tasks version, minResources object, usage),
# and carrying its amounts flat (``JobUsage.flat``) for the readers that add them up: a
# session's open reads two kept objects per quiet job rather than a dozen (False: found
# through the kept sums and elastic part, the tests' reference).
_FLAT_USAGE = True


@dataclass(slots=True)
class JobUsage:
    """One job's contribution to its queue's accounting (proportion and capacity). Its
    resources are read, never changed: they may be the job's kept sums."""

    allocated: Resource
    request: Resource
    inqueue: Resource
    elastic: Resource
    # The four resources' amounts in one tuple (``flat_amounts``), for a kept usage.
    flat: tuple[Any, ...] | None = None


def flat_amounts(usage: JobUsage) -> tuple[Any, ...]:
    """(allocated, request, inqueue and elastic cpu and memory, in that order, then the
    scalars: None when no resource has any, else (part, name, value, ...) with part 0-3 in
    the same order, each part's names in its own order)."""
    scalars: list[Any] = []
    for part, resource in enumerate((usage.allocated, usage.request, usage.inqueue, usage.elastic)):
        for name, value in resource.scalar_resources.items():
            scalars.extend((part, name, value))
    return (
        usage.allocated.milli_cpu,
        usage.allocated.memory,
        usage.request.milli_cpu,
        usage.request.memory,
        usage.inqueue.milli_cpu,
        usage.inqueue.memory,
        usage.elastic.milli_cpu,
        usage.elastic.memory,
        tuple(scalars) if scalars else None,
    )


def reserves_quota(job: JobInfo) -> bool:
    """Does an admitted job still hold room in its queue for the rest of its minResources?

    An Inqueue job does (tasks already Allocated/Binding are deducted: they are counted in
    ``allocated`` while the PodGroup is still Inqueue). A Running one too, once its gang is
    placed: a Spark job whose driver finished keeps its PodGroup Running, and without the
    minMember check its allocation would be reserved again."""
    pod_group = job.pod_group
    if pod_group is None or pod_group.min_resources is None:
        return False
    if pod_group.phase == PG_INQUEUE:
        return True
    return pod_group.phase == PG_RUNNING and allocated_task_count(job) >= pod_group.min_member


def job_usage(job: JobInfo) -> JobUsage:
    """What the job holds (allocated), holds plus asks for (request), still reserves of its
    minResources (inqueue, less what gated tasks would take) and holds beyond them (elastic)."""
    kept_usage = _SHARED_USAGE and _KEEP_USAGE
    pod_group = job.pod_group
    raw = pod_group.min_resources if pod_group is not None else None
    if kept_usage and _FLAT_USAGE:
        flat = job.memo.flat_usage
        if (
            flat is not None
            and flat[0] == job.tasks_version
            and flat[1] is raw
            and not reserves_quota(job)
        ):
            # The kept sums and elastic part are worked out from the tasks (by their
            # version) and the minResources object alone.
            found: JobUsage = flat[2]
            return found
    sums = job.task_sums()  # kept from an earlier session when the tasks did not change
    reserves = reserves_quota(job)
    if kept_usage and not reserves:
        usage = _kept_usage(job, sums.allocated, sums.requested)
        if _FLAT_USAGE:
            if usage.flat is None:
                usage.flat = flat_amounts(usage)
            job.memo.flat_usage = (job.tasks_version, raw, usage)
        return usage
    inqueue = Resource()
    if reserves:
        inqueue.add(job.deduct_sch_gated_resources(inqueue_resource(job, job.allocated)))
    if _SHARED_USAGE:
        return JobUsage(sums.allocated, sums.requested, inqueue, _kept_elastic(job))
    allocated, request = sums.allocated.clone(), sums.requested.clone()
    return JobUsage(allocated, request, inqueue, job.elastic_resources())


def _kept_usage(job: JobInfo, allocated: Resource, requested: Resource) -> JobUsage:
    """The usage of a job that reserves no quota (nothing inqueue), kept in the job's memo
    while its parts are the same objects: the kept sums and the kept elastic part, each
    replaced, never changed, when what it is worked out from changes."""
    elastic = _kept_elastic(job)
    kept = job.memo.usage
    if (
        isinstance(kept, JobUsage)
        and kept.allocated is allocated
        and kept.request is requested
        and kept.elastic is elastic
    ):
        return kept
    usage = JobUsage(allocated, requested, Resource(), elastic)
    job.memo.usage = usage
    return usage


def _kept_elastic(job: JobInfo) -> Resource:
    """``job.elastic_resources()``, kept in the job's memo while its tasks (which make its
    allocation) and its PodGroup's minResources object are those it was worked out from."""
    pod_group = job.pod_group
    raw = pod_group.min_resources if pod_group is not None else None
    kept = job.memo.elastic
    if kept is not None:
        (version, kept_raw), elastic = kept
        if version == job.tasks_version and kept_raw is raw:
            return elastic
    elastic = job.elastic_resources()
    job.memo.elastic = ((job.tasks_version, raw), elastic)
    return elastic


def format_resource_names(prefix: str, verb: str, names: Iterable[str]) -> str:
    """``"queue resource quota insufficient: insufficient cpu, insufficient memory"``."""
    parts = [f"{verb} {name}" for name in names]
    if not parts:
        return prefix
    return f"{prefix}: {', '.join(parts)}"


# Every message warn_once has logged in this process.
_warned_messages: set[str] = set()


def warn_once(logger: logging.Logger, message: str) -> None:
    """Log ``message`` as a warning the first time this process meets it: a plugin is built
    anew every session, and a problem with its configuration is said once, not every cycle."""
    if message not in _warned_messages:
        _warned_messages.add(message)
        logger.warning("%s", message)


def log_queue_not_open(logger: logging.Logger, plugin: str, queue: QueueInfo, refusal: str) -> None:
    """A fair-share plugin refuses ``queue`` because it is not Open (``refusal``: what it
    refuses). A queue with no state at all has never been synced by a queue controller (is
    one running?): that is said once, as a warning; a Closed or Closing queue at info level."""
    if queue.state:
        logger.info("%s: queue %s is %s, not Open: %s", plugin, queue.name, queue.state, refusal)
        return
    warn_once(
        logger,
        f"{plugin}: queue {queue.name} has no status.state: {refusal} until the queue"
        " controller sets it Open (Volcano's scheduler also takes a queue without a state as"
        " not Open)",
    )
