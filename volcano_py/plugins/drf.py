"""drf: Dominant Resource Fairness between jobs, optionally hierarchical between queues
(``pkg/scheduler/plugins/drf/drf.go``).

A job's share is its largest fraction of any cluster resource (``pods`` included, as every
task requests one). Registers JobOrderFn (smaller share first), PreemptableFn and allocation
event handlers. With ``enableHierarchy`` it also registers QueueOrderFn and ReclaimableFn over
the queue tree the ``volcano.sh/hierarchy`` and ``volcano.sh/hierarchy-weights`` annotations
describe (hierarchical DRF).

Accounting never asserts: where upstream's ``Resource.Sub`` would panic on an underflow (only
possible after accounting drift), the subtraction is logged and carried out.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Vote
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import plugin_option, share

log = logging.getLogger(__name__)

PLUGIN_NAME = "drf"
# Shares this close count as equal when deciding whether a victim may be preempted.
SHARE_DELTA: Final = 1e-6
ROOT: Final = "root"


# A job's share computed when read after placements moved it (False: after every placement,
# the tests' reference).
_LAZY_SHARE = True


# A job's share at session open kept in its memo while its tasks and the cluster total stay
# (False: computed at every open, the tests' reference).
_KEEP_SHARES = True


# At close only the shares of jobs whose allocation moved in the session are set again, when
# nothing wrote or removed a job_share series since open set them all (False: every job's
# share set again, the tests' reference). Setting a series to what it holds changes nothing.
_RECORD_MOVED_SHARES = True


# The kept share in one flat tuple with its key, (tasks version, cluster total, dominant
# resource, share): one kept object read per job at open (False: a (key, value) pair of
# tuples, the tests' reference).
_FLAT_SHARE_MEMO = True

# A job's share at open is not set again when the series holds it already: the last session
# of the same scheduler left it so and no job_share series was written or removed since
# (``HeldShares``; False: set at every open, the tests' reference).
_SKIP_HELD_SHARES = True


@dataclass(frozen=True, slots=True)
class HeldShares:
    """What a session's close left in every job_share series it knows of, by (namespace,
    name), and the series token then (kept in ``SchedulingState.plugin_memory``)."""

    token: metrics.SeriesToken
    shares: dict[tuple[str, str], float]


def _resource_key(resource: Resource) -> tuple[object, ...]:
    """Every value ``calculate_share`` reads of a total, names in their order (which breaks
    ties between dominant resources)."""
    return (resource.milli_cpu, resource.memory, *resource.scalar_resources.items())


@dataclass(slots=True)
class DrfAttr:
    allocated: Resource = field(default_factory=Resource)
    computed_share: float = 0.0
    computed_dominant_resource: str = ""
    # Set when ``allocated`` moved: the cluster total to compute the share against when it
    # is next read (a gang of 100 moved it 100 times for the few reads of the job order).
    outdated_against: Resource | None = None

    @property
    def share(self) -> float:
        self._refresh()
        return self.computed_share

    @share.setter
    def share(self, value: float) -> None:
        self._refresh()  # the dominant resource as it was computed
        self.computed_share = value

    @property
    def dominant_resource(self) -> str:
        self._refresh()
        return self.computed_dominant_resource

    @dominant_resource.setter
    def dominant_resource(self, value: str) -> None:
        self._refresh()
        self.computed_dominant_resource = value

    def _refresh(self) -> None:
        total = self.outdated_against
        if total is not None:
            self.outdated_against = None
            self.computed_dominant_resource, self.computed_share = calculate_share(
                self.allocated, total
            )

    def __str__(self) -> str:
        return (
            f"dominant resource <{self.dominant_resource}>, dominant share {self.share:f},"
            f" allocated {self.allocated}"
        )


def calculate_share(allocated: Resource, total: Resource) -> tuple[str, float]:
    """(dominant resource, dominant share) of ``allocated`` against the cluster ``total``."""
    dominant, highest = "", 0.0
    for name in total.resource_names():
        value = share(allocated.get(name), total.get(name))
        if value > highest:
            dominant, highest = name, value
    return dominant, highest


@dataclass(slots=True)
class HierarchyNode:
    """A queue-tree level (``children`` a dict) or a job leaf (``children`` None)."""

    name: str
    weight: float
    attr: DrfAttr
    # A leaf's request is its job's total request; internal nodes leave it empty.
    request: Resource = field(default_factory=Resource)
    saturated: bool = False
    children: dict[str, HierarchyNode] | None = None

    def clone(self) -> HierarchyNode:
        copy = HierarchyNode(
            self.name,
            self.weight,
            DrfAttr(self.attr.allocated.clone(), self.attr.share, self.attr.dominant_resource),
            self.request.clone(),
            self.saturated,
        )
        if self.children is not None:
            copy.children = {name: child.clone() for name, child in self.children.items()}
        return copy


def new_root() -> HierarchyNode:
    return HierarchyNode(ROOT, 1.0, DrfAttr(), children={})


def resource_saturated(allocated: Resource, request: Resource, demanding: set[str]) -> bool:
    """A job stops competing once it holds all it asked for of some resource, or when it asks
    for a resource the cluster has handed out entirely."""
    for name in allocated.resource_names():
        held, wanted = allocated.get(name), request.get(name)
        if held != 0 and wanted != 0 and held >= wanted:
            return True
        if name not in demanding and wanted != 0:
            return True
    return False


def _level_weight(weights: list[str], level: int) -> float:
    """The weight of one hierarchy level; missing, unparsable or below 1 means 1."""
    try:
        weight = float(weights[level])
    except (IndexError, ValueError):
        weight = 0.0
    # `not >=` also catches NaN, which would poison every share comparison.
    return weight if weight >= 1 else 1.0


class DrfPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.total_resource = Resource()
        # Sum of every job's allocation; tells which resources are still in demand.
        self.total_allocated = Resource()
        self.job_attrs: dict[str, DrfAttr] = {}
        self.hierarchy_enabled = False
        self.root = new_root()
        # The jobs whose allocation an event moved in this session, and the job_share
        # token when open had set every job's share (``on_session_close``).
        self.moved_jobs: set[str] = set()
        self.opened_token: metrics.SeriesToken | None = None
        # What each job_share series holds, by (namespace, name) (``_SKIP_HELD_SHARES``).
        self.held: dict[tuple[str, str], float] = {}

    # ------------------------------------------------------------------ shares

    def update_share(self, attr: DrfAttr) -> None:
        attr.outdated_against = None
        attr.dominant_resource, attr.share = calculate_share(attr.allocated, self.total_resource)

    def share_outdated(self, attr: DrfAttr) -> None:
        """``attr.allocated`` moved: its share is computed again, against the cluster total of
        now (replaced, never changed in place, at session open and close), when next read."""
        if _LAZY_SHARE:
            attr.outdated_against = self.total_resource
        else:
            self.update_share(attr)

    def job_share(self, job_uid: str) -> float:
        attr = self.job_attrs.get(job_uid)
        return attr.share if attr is not None else 0.0

    # ------------------------------------------------------------------ session

    def on_session_open(self, ssn: Session) -> None:
        self.total_resource = ssn.total_resource.clone()
        option = plugin_option(ssn, self.name)
        self.hierarchy_enabled = option is not None and option.enabled("enableHierarchy")

        total_key = _resource_key(self.total_resource)
        held = self._held_shares(ssn)
        for job in ssn.jobs.values():
            # JobInfo.allocated is already the sum over Allocated/Binding/Bound/Running tasks.
            if _KEEP_SHARES:
                attr = self._opening_attr(job, total_key)
            else:
                attr = DrfAttr(job.allocated.clone())
                self.update_share(attr)
            self.job_attrs[job.uid] = attr
            _record_share(job, attr, held)
            if self.hierarchy_enabled:
                queue = ssn.queues.get(job.queue)
                if queue is None:
                    continue
                self.total_allocated.add(attr.allocated)
                self._add_leaf(self.root, job, attr, queue)
        self.held = held
        self.opened_token = metrics.job_share_token()
        if self.hierarchy_enabled:
            # Recomputing once after adding every leaf gives what upstream's recompute after
            # each leaf ends with: every recompute starts over from the leaves.
            self._recompute(self.root, self.total_allocated)

        ssn.add_preemptable_fn(self.name, self.preemptable)
        if self.hierarchy_enabled:
            ssn.add_queue_order_fn(self.name, self.queue_order)
            ssn.add_reclaimable_fn(self.name, self._reclaimable(ssn))
        ssn.add_job_order_fn(self.name, self.job_order)
        ssn.add_event_handler(
            EventHandler(
                allocate=self._on_event(ssn, allocate=True),
                deallocate=self._on_event(ssn, allocate=False),
                owner=self.name,
            )
        )

    def _opening_attr(self, job: JobInfo, total_key: tuple[object, ...]) -> DrfAttr:
        """``update_share`` of a copy of the job's allocation, the share taken from the job's
        memo when its tasks (which make its allocation) and the cluster total are those it
        was computed from."""
        if _FLAT_SHARE_MEMO:
            flat = job.memo.flat_share
            version = job.tasks_version
            if flat is not None and flat[0] == version and flat[1] == total_key:
                return DrfAttr(job.allocated.clone(), flat[3], flat[2])
            dominant, value = calculate_share(job.allocated, self.total_resource)
            job.memo.flat_share = (version, total_key, dominant, value)
            return DrfAttr(job.allocated.clone(), value, dominant)
        key = (job.tasks_version, total_key)
        kept = job.memo.share
        if kept is not None and kept[0] == key:
            dominant, value = kept[1]
        else:
            dominant, value = calculate_share(job.allocated, self.total_resource)
            job.memo.share = (key, (dominant, value))
        return DrfAttr(job.allocated.clone(), value, dominant)

    def _held_shares(self, ssn: Session) -> dict[tuple[str, str], float]:
        """The share each job_share series holds, as the last session of this scheduler
        left them, when no series was written or removed since (``_SKIP_HELD_SHARES``);
        else nothing known."""
        if not _SKIP_HELD_SHARES:
            return {}
        memory = ssn.state.plugin_memory.get(self.name)
        if isinstance(memory, HeldShares) and metrics.same_token(
            memory.token, metrics.job_share_token()
        ):
            ssn.state.plugin_memory.pop(self.name)  # this session's now, changed in place
            return memory.shares
        return {}

    def on_session_close(self, ssn: Session) -> None:
        # A job whose allocation no event moved has the share open set, and its series
        # still holds it when no job_share series was written or removed since.
        unchanged = metrics.same_token(self.opened_token, metrics.job_share_token())
        moved_only = _RECORD_MOVED_SHARES and unchanged
        held = self.held if unchanged else {}
        moved = self.moved_jobs
        for uid, attr in self.job_attrs.items():
            if moved_only and uid not in moved:
                continue
            job = ssn.jobs.get(uid)
            if job is not None:
                _record_share(job, attr, held)
        if _SKIP_HELD_SHARES:
            ssn.state.plugin_memory[self.name] = HeldShares(metrics.job_share_token(), held)
        self.held = {}
        self.total_resource = Resource()
        self.total_allocated = Resource()
        self.job_attrs = {}
        self.root = new_root()
        self.moved_jobs = set()
        self.opened_token = None

    # ------------------------------------------------------------------ hooks

    def job_order(self, left: JobInfo, right: JobInfo) -> int:
        left_share, right_share = self.job_share(left.uid), self.job_share(right.uid)
        if left_share == right_share:
            return 0
        return -1 if left_share < right_share else 1

    def job_order_key(self, job: JobInfo) -> float:
        """``job_order`` as a sort key: the smaller share first. A job's share is its own
        allocation against the cluster total fixed at session open (hierarchical DRF only
        rescales the queue levels above the jobs, never a job's own share), so it moves only
        when this job's tasks are placed or unplaced. Never NaN (``calculate_share`` keeps
        the largest share above 0.0, which a NaN never is), so the key compares as the
        function does."""
        return self.job_share(job.uid)

    def preemptable(
        self, preemptor: TaskInfo, candidates: list[TaskInfo]
    ) -> tuple[list[TaskInfo], int]:
        """A candidate may go if, after losing it, its job would still have at least the share
        the preemptor's job would have after gaining the preemptor."""
        preemptor_attr = self.job_attrs.get(preemptor.job)
        if preemptor_attr is None:
            log.warning("drf: skip preemption: job %s is not in the session", preemptor.job)
            return [], Vote.PERMIT
        preemptor_alloc = preemptor_attr.allocated.clone().add(preemptor.resreq)
        _, preemptor_share = calculate_share(preemptor_alloc, self.total_resource)

        victims: list[TaskInfo] = []
        remaining: dict[str, Resource] = {}
        for candidate in candidates:
            allocation = remaining.get(candidate.job)
            if allocation is None:
                attr = self.job_attrs.get(candidate.job)
                if attr is None:
                    log.warning(
                        "drf: skip preemptee %s: job %s is not in the session",
                        candidate.key,
                        candidate.job,
                    )
                    continue
                allocation = remaining[candidate.job] = attr.allocated.clone()
            # Every candidate considered comes off its job's allocation, chosen or not (as
            # upstream; spec §9 pitfall 25).
            allocation.sub_without_assert(candidate.resreq)
            _, victim_share = calculate_share(allocation, self.total_resource)
            if preemptor_share < victim_share or abs(preemptor_share - victim_share) <= SHARE_DELTA:
                victims.append(candidate)
        return victims, Vote.PERMIT

    def queue_order(self, left: QueueInfo, right: QueueInfo) -> int:
        answer = self.compare_queues(self.root, left, right)
        if answer < 0:
            return -1
        return 1 if answer > 0 else 0

    def _reclaimable(
        self, ssn: Session
    ) -> Callable[[TaskInfo, list[TaskInfo]], tuple[list[TaskInfo], int]]:
        def reclaimable(
            reclaimer: TaskInfo, candidates: list[TaskInfo]
        ) -> tuple[list[TaskInfo], int]:
            """A candidate may go if, on a copy of the tree where the reclaimer's job holds the
            reclaimer and the candidate's job no longer holds the candidate, the reclaimer's
            queue would still come first."""
            reclaimer_job = ssn.jobs.get(reclaimer.job)
            if reclaimer_job is None:
                log.warning("drf: skip reclaim: job %s is not in the session", reclaimer.job)
                return [], Vote.PERMIT
            reclaimer_queue = ssn.queues.get(reclaimer_job.queue)
            reclaimer_attr = self.job_attrs.get(reclaimer_job.uid)
            if reclaimer_queue is None or reclaimer_attr is None:
                return [], Vote.PERMIT

            total_allocated = self.total_allocated.clone()
            root = self.root.clone()
            attr = DrfAttr(reclaimer_attr.allocated.clone().add(reclaimer.resreq))
            total_allocated.add(reclaimer.resreq)
            self.update_share(attr)
            self._update_leaf(root, total_allocated, reclaimer_job, attr, reclaimer_queue)

            victims: list[TaskInfo] = []
            for candidate in candidates:
                job = ssn.jobs.get(candidate.job)
                queue = ssn.queues.get(job.queue) if job is not None else None
                job_attr = self.job_attrs.get(candidate.job)
                if job is None or queue is None or job_attr is None:
                    log.warning("drf: skip reclaimee %s: job or queue unknown", candidate.key)
                    continue
                total_allocated.sub_without_assert(candidate.resreq)
                without = DrfAttr(job_attr.allocated.clone().sub_without_assert(candidate.resreq))
                self.update_share(without)
                self._update_leaf(root, total_allocated, job, without, queue)
                answer = self.compare_queues(root, reclaimer_queue, queue)
                # Put the candidate back before looking at the next one.
                total_allocated.add(candidate.resreq)
                without.allocated.add(candidate.resreq)
                self.update_share(without)
                self._update_leaf(root, total_allocated, job, without, queue)
                if answer < 0:
                    victims.append(candidate)
            return victims, Vote.PERMIT

        return reclaimable

    def _on_event(self, ssn: Session, allocate: bool) -> Callable[[Event], None]:
        def handle(event: Event) -> None:
            task = event.task
            job = ssn.jobs.get(task.job)
            attr = self.job_attrs.get(task.job)
            if job is None or attr is None:
                log.warning(
                    "drf: skip event for %s: job %s is not in the session", task.key, task.job
                )
                return
            self.moved_jobs.add(task.job)
            if allocate:
                attr.allocated.add(task.resreq)
            else:
                attr.allocated.sub_without_assert(task.resreq)
            self.share_outdated(attr)  # the job_share gauge is set at session close
            if self.hierarchy_enabled:
                queue = ssn.queues.get(job.queue)
                if queue is not None:
                    if allocate:
                        self.total_allocated.add(task.resreq)
                    else:
                        self.total_allocated.sub_without_assert(task.resreq)
                    self._update_leaf(self.root, self.total_allocated, job, attr, queue)

        return handle

    # ------------------------------------------------------------------ hierarchy

    def compare_queues(self, root: HierarchyNode, left: QueueInfo, right: QueueInfo) -> float:
        """Negative when ``left`` goes first. Walking both paths down from the root, at the
        first level where exactly one side is saturated the other goes first; otherwise the
        smaller weighted share does."""
        left_node: HierarchyNode | None = root
        right_node: HierarchyNode | None = root
        left_path, right_path = left.hierarchy.split("/"), right.hierarchy.split("/")
        depth = min(len(left_path), len(right_path))
        for level in range(depth):
            if left_node is None or right_node is None:
                # A queue with no job in the session has no tree node; upstream dereferences
                # nil here. Nothing below can be compared, so neither goes first.
                return 0.0
            if not left_node.saturated and right_node.saturated:
                return -1.0
            if left_node.saturated and not right_node.saturated:
                return 1.0
            left_weighted = left_node.attr.share / left_node.weight
            right_weighted = right_node.attr.share / right_node.weight
            if left_weighted != right_weighted:
                return left_weighted - right_weighted
            if level < depth - 1:
                left_node = (left_node.children or {}).get(left_path[level + 1])
                right_node = (right_node.children or {}).get(right_path[level + 1])
        return 0.0

    def _add_leaf(self, root: HierarchyNode, job: JobInfo, attr: DrfAttr, queue: QueueInfo) -> None:
        """Create the queue's path under ``root`` where missing, then (re)place the job's leaf,
        which shares ``attr`` so later allocations show through."""
        node = root
        path = queue.hierarchy.split("/")
        weights = queue.hierarchy_weights.split("/")
        for level in range(1, len(path)):
            assert node.children is not None
            child = node.children.get(path[level])
            if child is None:
                child = HierarchyNode(
                    path[level], _level_weight(weights, level), DrfAttr(), children={}
                )
                node.children[path[level]] = child
            node = child
        assert node.children is not None
        node.children[job.uid] = HierarchyNode(job.uid, 1.0, attr, job.total_request.clone())

    def _update_leaf(
        self,
        root: HierarchyNode,
        total_allocated: Resource,
        job: JobInfo,
        attr: DrfAttr,
        queue: QueueInfo,
    ) -> None:
        self._add_leaf(root, job, attr, queue)
        self._recompute(root, total_allocated)

    def _recompute(self, root: HierarchyNode, total_allocated: Resource) -> None:
        total = self.total_resource
        demanding = {
            name for name in total.resource_names() if total_allocated.get(name) < total.get(name)
        }
        self._update_node(root, demanding)

    def _update_node(self, node: HierarchyNode, demanding: set[str]) -> None:
        """Bottom-up: an internal node's allocation is its children's, each unsaturated child
        rescaled to the smallest dominant share among them, so a level compares what its
        subtrees would hold at equal progress rather than raw usage."""
        if node.children is None:
            node.saturated = resource_saturated(node.attr.allocated, node.request, demanding)
            return
        children = list(node.children.values())
        smallest = 1.0
        for child in children:
            self._update_node(child, demanding)
            if child.attr.share != 0 and not child.saturated:
                smallest = min(smallest, child.attr.share)
        allocated = Resource()
        for child in children:
            if child.attr.share == 0:
                continue
            if child.saturated:
                allocated.add(child.attr.allocated)
            else:
                allocated.add(child.attr.allocated.clone().multi(smallest / child.attr.share))
        node.attr.allocated = allocated
        node.attr.dominant_resource, node.attr.share = calculate_share(
            allocated, self.total_resource
        )
        node.saturated = all(child.saturated for child in children)


def _record_share(job: JobInfo, attr: DrfAttr, held: dict[tuple[str, str], float]) -> None:
    """Set the job's job_share series to its share, unless ``held`` (what each series holds,
    kept up to date here) says it holds it already."""
    share = attr.share
    key = (job.namespace, job.name)
    if _SKIP_HELD_SHARES:
        kept = held.get(key)
        # (``metrics.holds``, its call saved for the usual share above zero.)
        if kept is not None and kept == share and (share != 0.0 or metrics.holds(kept, share)):
            return
    metrics.job_share(job.namespace, job.name, share)
    held[key] = share


# The arguments this plugin reads: none (upstream drf.go; hierarchy is the enableHierarchy flag).
ARGUMENTS: Final[frozenset[str]] = frozenset()


def new(arguments: Arguments) -> DrfPlugin:
    return DrfPlugin(arguments)
