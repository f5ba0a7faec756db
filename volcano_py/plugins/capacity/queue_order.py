"""The queue order (flat and hierarchical) and the victim-queue order."""

from __future__ import annotations

from volcano_py.api.queue import QueueInfo
from volcano_py.plugins.capacity.attributes import (
    CapacityState,
    QueueAttributes,
    common_ancestor_level,
)


def compare_share(left: QueueAttributes | None, right: QueueAttributes | None) -> int:
    """Smaller share first; at equal shares a queue with ``deserved`` goes before a
    best-effort one (which always has share 1)."""
    if left is None or right is None:
        return 0
    if left.share == right.share:
        left_has, right_has = not left.deserved.is_empty(), not right.deserved.is_empty()
        if left_has == right_has:
            return 0
        return -1 if left_has else 1
    return -1 if left.share < right.share else 1


def flat_queue_order(state: CapacityState, left: QueueInfo, right: QueueInfo) -> int:
    if left.priority != right.priority:
        return right.priority - left.priority
    attrs = state.queue_attributes
    return compare_share(attrs.get(left.name), attrs.get(right.name))


def hierarchical_queue_order(state: CapacityState, left: QueueInfo, right: QueueInfo) -> int:
    """Priority; then leaves before inner queues; two inner queues by share; two leaves by
    the shares of their subtrees where their paths part (the children of their deepest
    common ancestor), so fairness holds between subtrees, not only between leaves."""
    if left.priority != right.priority:
        return right.priority - left.priority
    attrs = state.queue_attributes
    left_attr, right_attr = attrs.get(left.name), attrs.get(right.name)
    if left_attr is None or right_attr is None:
        return 0
    if left_attr.is_leaf != right_attr.is_leaf:
        return -1 if left_attr.is_leaf else 1
    if not left_attr.is_leaf:
        return compare_share(left_attr, right_attr)
    level = common_ancestor_level(left_attr, right_attr)
    left_side = left_attr.name
    if level + 1 < len(left_attr.ancestors):
        left_side = left_attr.ancestors[level + 1]
    right_side = right_attr.name
    if level + 1 < len(right_attr.ancestors):
        right_side = right_attr.ancestors[level + 1]
    return compare_share(attrs.get(left_side), attrs.get(right_side))


def victim_queue_order(
    state: CapacityState, left: QueueInfo, right: QueueInfo, preemptor: QueueInfo
) -> int:
    """Take first from the queue closest to the preemptor's in the tree (the deeper the
    common ancestor, the closer): siblings settle among themselves before a reclaim
    reaches into other subtrees."""
    attrs = state.queue_attributes
    left_attr, right_attr = attrs.get(left.name), attrs.get(right.name)
    preemptor_attr = attrs.get(preemptor.name)
    if left_attr is None or right_attr is None or preemptor_attr is None:
        return 0
    left_level = common_ancestor_level(left_attr, preemptor_attr)
    right_level = common_ancestor_level(right_attr, preemptor_attr)
    if left_level == right_level:
        return 0
    return -1 if left_level > right_level else 1
