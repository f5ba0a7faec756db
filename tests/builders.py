"""The raw-object builders now live in :mod:`volcano_py.testing.objects` (public, for plugin
authors too); this module keeps ``from tests.builders import ...`` working."""

from __future__ import annotations

from volcano_py.testing.objects import (
    GROUP,
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
    build_sub_group_policy,
    resource_list,
)

__all__ = [
    "GROUP",
    "build_node",
    "build_pod",
    "build_pod_group",
    "build_priority_class",
    "build_queue",
    "build_sub_group_policy",
    "resource_list",
]
