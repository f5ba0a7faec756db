"""nodegroup: keep a queue's pods on its node groups (``pkg/scheduler/plugins/nodegroup``).

Nodes belong to the group named by their label ``volcano.sh/nodegroup-name``; a queue says
which groups its pods must or should use in ``spec.affinity``::

    affinity:
      nodeGroupAffinity:       {requiredDuringSchedulingIgnoredDuringExecution: [g1],
                                preferredDuringSchedulingIgnoredDuringExecution: [g2]}
      nodeGroupAntiAffinity:   {requiredDuringSchedulingIgnoredDuringExecution: [g3],
                                preferredDuringSchedulingIgnoredDuringExecution: [g4]}

Predicate (UnschedulableAndUnresolvable): a node without the label fits only when ``strict``
is false and the queue has no affinity rule; a labelled node never fits a queue without rules;
otherwise its group must be required or preferred and not required-anti (a preferred-anti group
fits: it is only scored down). A queue annotation ``volcano.sh/nodegroup-resource-limits``
(JSON ``{"<group>": {"cpu": "8", ...}}``) caps what the queue may hold in each group, per
resource it names; an unparseable annotation rejects the queue's tasks everywhere.

NodeOrder: +100 for a required group, +50 for a preferred one (with ``enablePreferredOrder``
``50 * (n - i) / n`` for the i-th of n preferred groups), and -1 overall for a preferred-anti
group. With ``enableHierarchy`` on the plugin's tier entry, a queue without an affinity inherits
its nearest ancestor's.

Arguments: ``strict`` (true), ``enablePreferredOrder`` (false).

Upstream's predicate and score run per node; here each is a lookup table per queue, indexed by
the node's group over all rows at once (the resource limits are checked per group, not per
node).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import CPU, MEMORY, MIN_RESOURCE, Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import ALLOCATED_STATUSES, ROOT_QUEUE, Status, unresolvable
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.hooks import NodeMask
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import plugin_option

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "nodegroup"
NODE_GROUP_NAME_KEY: Final = "volcano.sh/nodegroup-name"
NODE_GROUP_RESOURCE_LIMITS_KEY: Final = "volcano.sh/nodegroup-resource-limits"
BASE_SCORE: Final = 100.0
STRICT: Final = "strict"
ENABLE_PREFERRED_ORDER: Final = "enablePreferredOrder"

ARGUMENTS: Final[frozenset[str]] = frozenset({STRICT, ENABLE_PREFERRED_ORDER})

ERR_AFFINITY_NOT_FOUND: Final = "node group affinity not specified"
ERR_LABEL_NOT_FOUND: Final = "node group label not found"
ERR_UNSATISFIED: Final = "node does not satisfy the node group affinity"
ERR_LIMIT_INVALID: Final = "node group resource limit annotation invalid"
ERR_LIMIT_EXCEEDED: Final = "node group resource limit exceeded"

_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"


# ---------------------------------------------------------------------- queue affinity


def _groups(section: Any, field_name: str, queue: str) -> list[str]:
    if not isinstance(section, Mapping):
        return []
    value = section.get(field_name)
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(group, str) for group in value):
        log.error(
            "nodegroup: queue %s: spec.affinity.%s must be a list of group names, got %r",
            queue,
            field_name,
            value,
        )
        return []
    return value


@dataclass(frozen=True, slots=True)
class QueueGroupAffinity:
    required: frozenset[str] = frozenset()
    preferred: frozenset[str] = frozenset()
    anti_required: frozenset[str] = frozenset()
    anti_preferred: frozenset[str] = frozenset()
    # preferred group -> its position in the list (earlier = better with enablePreferredOrder)
    preferred_index: Mapping[str, int] = field(default_factory=dict)

    @classmethod
    def of(cls, queue: QueueInfo) -> QueueGroupAffinity | None:
        """``newQueueGroupAffinity``: None when the queue has no ``spec.affinity``."""
        affinity = (queue.raw.get("spec") or {}).get("affinity")
        if affinity is None:
            return None
        if not isinstance(affinity, Mapping):
            log.error(
                "nodegroup: queue %s: spec.affinity must be an object, got %r", queue.name, affinity
            )
            return cls()
        positive = affinity.get("nodeGroupAffinity")
        negative = affinity.get("nodeGroupAntiAffinity")
        preferred = _groups(positive, _PREFERRED, queue.name)
        index: dict[str, int] = {}
        for position, group in enumerate(preferred):
            index[group] = position
        return cls(
            required=frozenset(_groups(positive, _REQUIRED, queue.name)),
            preferred=frozenset(preferred),
            anti_required=frozenset(_groups(negative, _REQUIRED, queue.name)),
            anti_preferred=frozenset(_groups(negative, _PREFERRED, queue.name)),
            preferred_index=index,
        )

    @property
    def unset(self) -> bool:
        return not (self.required or self.preferred or self.anti_required or self.anti_preferred)

    def allows(self, group: str) -> bool:
        """``predicate``: required-anti beats affinity; preferred-anti still fits."""
        allowed = group in self.required or group in self.preferred
        if group in self.anti_required:
            allowed = False
        if group in self.anti_preferred:
            allowed = True
        return allowed

    def score(self, group: str, preferred_order: bool) -> float:
        score = 0.0
        if group in self.required:
            score += BASE_SCORE
        if preferred_order:
            position = self.preferred_index.get(group)
            if position is not None:
                count = len(self.preferred_index)
                score += 0.5 * BASE_SCORE * (count - position) / count
        elif group in self.preferred:
            score += 0.5 * BASE_SCORE
        if group in self.anti_preferred:
            score = -1.0
        return score


# ---------------------------------------------------------------------- resource limits


@dataclass(frozen=True, slots=True)
class GroupLimit:
    resource: Resource
    names: frozenset[str]

    def exceeded(self, used: Resource) -> list[str]:
        """``limitedResourceExceededNames``: the limited resources ``used`` goes beyond."""
        over = []
        for name in sorted(self.names, key=lambda n: (n != CPU, n != MEMORY, n)):
            amount, limit = used.get(name), self.resource.get(name)
            if amount > limit and amount - limit >= MIN_RESOURCE:
                over.append(name)
        return over


def parse_group_limits(queue: QueueInfo) -> tuple[dict[str, GroupLimit], str | None]:
    """The queue's ``volcano.sh/nodegroup-resource-limits``: group -> limit, or an error."""
    raw = queue.annotations.get(NODE_GROUP_RESOURCE_LIMITS_KEY, "")
    if not raw:
        return {}, None
    try:
        parsed = json.loads(raw)
        if not isinstance(parsed, dict) or not all(isinstance(v, dict) for v in parsed.values()):
            raise ValueError('expected {"<group>": {"<resource>": "<quantity>"}}')
        limits = {
            str(group): GroupLimit(Resource.from_list(resources), frozenset(resources))
            for group, resources in parsed.items()
        }
    except ValueError as error:
        return {}, f"parse annotation {NODE_GROUP_RESOURCE_LIMITS_KEY}: {error}"
    return limits, None


# ---------------------------------------------------------------------- per-queue state


@dataclass(slots=True)
class QueueAttr:
    affinity: QueueGroupAffinity | None
    limits: dict[str, GroupLimit]
    limit_error: str | None
    allocated: dict[str, Resource] = field(default_factory=dict)
    # Built on first use, per session: pass/score per group index (0 = unlabelled node).
    static_pass: BoolArray | None = None
    scores: FloatArray | None = None


def inherit_affinities(queues: Mapping[str, QueueInfo], attrs: Mapping[str, QueueAttr]) -> None:
    """``enableHierarchy``: a queue without an affinity takes its nearest ancestor's."""
    own = {name: attr.affinity for name, attr in attrs.items()}
    for name, attr in attrs.items():
        if own[name] is not None or name == ROOT_QUEUE:
            continue
        seen = {name}
        queue = queues[name]
        while queue.name != ROOT_QUEUE:
            parent = queue.parent_name
            if parent in seen:
                log.warning("nodegroup: cycle in the queue hierarchy at queue %s", name)
                break
            if parent not in queues:
                log.warning("nodegroup: parent queue %s of queue %s not found", parent, queue.name)
                break
            seen.add(parent)
            if own[parent] is not None:
                attr.affinity = own[parent]
                break
            queue = queues[parent]


class NodeGroupPlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.strict = arguments.get_bool(STRICT, True)
        self.preferred_order = arguments.get_bool(ENABLE_PREFERRED_ORDER, False)
        self.attrs: dict[str, QueueAttr] = {}

    def on_session_open(self, ssn: Session) -> None:
        self.attrs = {}
        for name, queue in ssn.queues.items():
            limits, error = parse_group_limits(queue)
            if error is not None:
                log.error(
                    "nodegroup: queue %s has an invalid %s annotation: %s",
                    name,
                    NODE_GROUP_RESOURCE_LIMITS_KEY,
                    error,
                )
            self.attrs[name] = QueueAttr(QueueGroupAffinity.of(queue), limits, error)
        option = plugin_option(ssn, self.name)
        if option is not None and option.enabled("enableHierarchy"):
            inherit_affinities(ssn.queues, self.attrs)

        # Group of every node as an index into `groups` (0: no label), read once per session.
        groups: list[str | None] = [None]
        index_of: dict[str, int] = {}
        rows = []
        for node in ssn.node_list:
            group = node.labels.get(NODE_GROUP_NAME_KEY)
            if group is None:
                rows.append(0)
                continue
            slot = index_of.get(group)
            if slot is None:
                slot = index_of[group] = len(groups)
                groups.append(group)
            rows.append(slot)
        group_of_row: IntArray = np.array(rows, dtype=np.intp)
        node_group = {node.name: node.labels.get(NODE_GROUP_NAME_KEY) for node in ssn.node_list}
        self._init_allocated(ssn, node_group)

        def attr_of(task: TaskInfo) -> QueueAttr | None:
            job = ssn.jobs.get(task.job)
            return None if job is None else self.attrs.get(job.queue)

        def static_tables(attr: QueueAttr) -> tuple[BoolArray, FloatArray]:
            if attr.static_pass is None or attr.scores is None:
                attr.static_pass = np.array([self._static_pass(attr, g) for g in groups])
                attr.scores = np.array(
                    [
                        0.0
                        if g is None or attr.affinity is None
                        else attr.affinity.score(g, self.preferred_order)
                        for g in groups
                    ]
                )
            return attr.static_pass, attr.scores

        def group_reason(task: TaskInfo, attr: QueueAttr | None, slot: int) -> Status:
            if attr is None and task.job not in ssn.jobs:
                return unresolvable(f"job {task.job} not found in session", PLUGIN_NAME)
            if attr is not None and attr.limit_error is not None:
                return unresolvable(ERR_LIMIT_INVALID, PLUGIN_NAME)
            group = groups[slot]
            if group is None:
                return unresolvable(ERR_LABEL_NOT_FOUND, PLUGIN_NAME)
            affinity = attr.affinity if attr is not None else None
            if affinity is None or affinity.unset:
                return unresolvable(ERR_AFFINITY_NOT_FOUND, PLUGIN_NAME)
            if not affinity.allows(group):
                return unresolvable(ERR_UNSATISFIED, PLUGIN_NAME)
            return unresolvable(ERR_LIMIT_EXCEEDED, PLUGIN_NAME)

        def predicate_mask(task: TaskInfo) -> NodeMask:
            attr = attr_of(task)
            if attr is None and task.job not in ssn.jobs:
                log.warning("nodegroup: task %s: job %s not found in session", task.key, task.job)
                passed: BoolArray = np.zeros(len(group_of_row), dtype=np.bool_)
            elif attr is not None and attr.limit_error is not None:
                passed = np.zeros(len(group_of_row), dtype=np.bool_)
            else:
                if attr is None:
                    by_group = np.array([self._static_pass(None, g) for g in groups])
                else:
                    by_group = static_tables(attr)[0]
                    if attr.limits:
                        by_group = by_group.copy()
                        for group in attr.limits:
                            slot = index_of.get(group)
                            if slot is not None and by_group[slot]:
                                by_group[slot] = not self._over_limit(task, attr, group)
                passed = by_group[group_of_row]
            return NodeMask(passed, lambda row: group_reason(task, attr, int(group_of_row[row])))

        def batch_node_order(task: TaskInfo, rows_: IntArray) -> FloatArray:
            attr = attr_of(task)
            if attr is None or attr.affinity is None:
                return np.zeros(len(rows_))
            scores: FloatArray = static_tables(attr)[1][group_of_row[rows_]]
            return scores

        ssn.add_predicate_mask_fn(self.name, predicate_mask)
        ssn.add_batch_node_order_fn(self.name, batch_node_order)
        ssn.add_event_handler(
            EventHandler(
                allocate=lambda event: self._on_event(ssn, node_group, event, 1),
                deallocate=lambda event: self._on_event(ssn, node_group, event, -1),
                owner=self.name,
            )
        )

    def _static_pass(self, attr: QueueAttr | None, group: str | None) -> bool:
        """The predicate without the resource limits, for a node of ``group``."""
        affinity = attr.affinity if attr is not None else None
        unset = affinity is None or affinity.unset
        if group is None:
            return not self.strict and unset
        if unset or affinity is None:
            return False
        return affinity.allows(group)

    @staticmethod
    def _over_limit(task: TaskInfo, attr: QueueAttr, group: str) -> bool:
        limit = attr.limits.get(group)
        if limit is None:
            return False
        future = attr.allocated.get(group, Resource()).clone().add(task.resreq)
        return bool(limit.exceeded(future))

    def _init_allocated(self, ssn: Session, node_group: Mapping[str, str | None]) -> None:
        for job in ssn.jobs.values():
            attr = self.attrs.get(job.queue)
            if attr is None or not attr.limits:
                continue
            for status in ALLOCATED_STATUSES:
                self._account(attr, node_group, job.tasks_in(status).values(), 1)

    @staticmethod
    def _account(
        attr: QueueAttr, node_group: Mapping[str, str | None], tasks: Iterable[TaskInfo], sign: int
    ) -> None:
        for task in tasks:
            group = node_group.get(task.node_name) if task.node_name else None
            if group is None:
                continue
            allocated = attr.allocated.setdefault(group, Resource())
            if sign > 0:
                allocated.add(task.resreq)
            else:
                allocated.sub_without_assert(task.resreq)

    def _on_event(
        self, ssn: Session, node_group: Mapping[str, str | None], event: Event, sign: int
    ) -> None:
        job = ssn.jobs.get(event.task.job)
        attr = self.attrs.get(job.queue) if job is not None else None
        if attr is not None and attr.limits:
            self._account(attr, node_group, [event.task], sign)

    def on_session_close(self, ssn: Session) -> None:
        self.attrs = {}


def new(arguments: Arguments) -> NodeGroupPlugin:
    return NodeGroupPlugin(arguments)
