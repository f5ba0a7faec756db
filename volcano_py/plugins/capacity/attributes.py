"""What the capacity plugin knows of each queue in one session: its amounts, its place in
the queue tree and its share (``queue_attr`` in ``capacity.go``)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

from volcano_py.api.resource import Resource
from volcano_py.plugins._plugin_helpers import JobUsage, share

log = logging.getLogger(__name__)

PLUGIN_NAME: Final = "capacity"


@dataclass(slots=True)
class QueueAttributes:
    """What the plugin knows of one queue during a session."""

    name: str
    deserved: Resource = field(default_factory=Resource)
    # Flat mode: the spec capability with cpu/memory <= 0 read as unlimited, empty when unset.
    # Hierarchical mode: the spec capability, completed from the parent's where unset.
    capability: Resource = field(default_factory=Resource)
    # The capability cut to what the cluster (or the parent) can give once the guarantees
    # of the other queues are set aside: the hard limit every check uses.
    real_capability: Resource = field(default_factory=Resource)
    guarantee: Resource = field(default_factory=Resource)
    allocated: Resource = field(default_factory=Resource)
    # allocated plus what pending tasks ask for.
    request: Resource = field(default_factory=Resource)
    # minResources still reserved by admitted jobs that are not fully placed.
    inqueue: Resource = field(default_factory=Resource)
    # What jobs hold beyond their minResources.
    elastic: Resource = field(default_factory=Resource)
    # Root first, parent last (hierarchical mode only).
    ancestors: list[str] = field(default_factory=list)
    children: dict[str, QueueAttributes] = field(default_factory=dict)
    share: float = 0.0

    @property
    def is_leaf(self) -> bool:
        return not self.children

    def update_share(self) -> None:
        """The largest fraction of ``deserved`` the queue holds. A queue without ``deserved``
        is best-effort and gets share 1 whatever it holds, so it is served only after every
        queue with a deserved amount reached it (the queue order breaks the tie in favour of
        queues with ``deserved``); otherwise an idle best-effort queue at share 0 would keep
        winning the queue order and be reclaimed from again and again."""
        if self.deserved.is_empty():
            self.share = 1.0
            return
        highest = 0.0
        for name in self.deserved.resource_names():
            highest = max(highest, share(self.allocated.get(name), self.deserved.get(name)))
        self.share = highest


@dataclass
class CapacityState:
    """The plugin's per-session state; every part of the plugin reads and updates this."""

    name: str = PLUGIN_NAME
    ancestor_reclaim_level: int = 0
    hierarchy: bool = False
    # False when the queue tree is inconsistent: every check then refuses.
    ready: bool = True
    total_resource: Resource = field(default_factory=Resource)
    total_guarantee: Resource = field(default_factory=Resource)
    queue_attributes: dict[str, QueueAttributes] = field(default_factory=dict)

    def path(self, attr: QueueAttributes) -> Iterator[QueueAttributes]:
        """The queue, then its ancestors up to root (flat mode: the queue alone)."""
        yield attr
        for name in reversed(attr.ancestors):
            yield self.queue_attributes[name]


def add_usage(attr: QueueAttributes, usage: JobUsage) -> None:
    attr.allocated.add(usage.allocated)
    attr.request.add(usage.request)
    attr.inqueue.add(usage.inqueue)
    attr.elastic.add(usage.elastic)


def common_ancestor_level(left: QueueAttributes, right: QueueAttributes) -> int:
    """Index in ``ancestors`` of the deepest ancestor two queues share (``getQueueLevel``):
    the length of the common prefix of their ancestor paths, minus one, floored at 0."""
    level = 0
    for index in range(min(len(left.ancestors), len(right.ancestors))):
        if left.ancestors[index] != right.ancestors[index]:
            break
        level = index
    return level


def ancestor_at_depth(attr: QueueAttributes, depth: int) -> str | None:
    """The ancestor ``depth`` levels up (1: the parent), if the queue has one."""
    if depth <= 0 or len(attr.ancestors) < depth:
        return None
    return attr.ancestors[len(attr.ancestors) - depth]


def ancestors_within(attr: QueueAttributes, max_level: int) -> dict[int, str]:
    """Level -> ancestor, for the levels 1..``max_level`` the queue has."""
    found: dict[int, str] = {}
    for level in range(1, max_level + 1):
        ancestor = ancestor_at_depth(attr, level)
        if ancestor is not None:
            found[level] = ancestor
    return found


def log_attributes(attr: QueueAttributes) -> None:
    log.debug(
        "capacity: queue %s deserved <%s> realCapability <%s> allocated <%s> request <%s>"
        " inqueue <%s> elastic <%s> share %.2f",
        attr.name,
        attr.deserved,
        attr.real_capability,
        attr.allocated,
        attr.request,
        attr.inqueue,
        attr.elastic,
        attr.share,
    )
