"""Build a cluster in code, run one scheduling session over it, check what it decided: the
public test helper for plugin authors, as upstream's ``pkg/scheduler/uthelper``.

* :class:`Cluster`: a fluent builder (nodes, queues, PodGroups, pods, jobs) with ``run``,
  whose :class:`SessionOutcome` has ``binds``, ``evicted``, ``pipelined`` and ``expect_*``.
* :class:`Case`, :func:`run_case`, :func:`check`: upstream's table-driven form
  (``TestCommonStruct``), used to transcribe upstream test tables.
* ``build_node``, ``build_pod``, ``build_pod_group``, ``build_queue``, ``resource_list``:
  raw objects shaped like upstream's ``util.Build*``.

It does not import pytest: failed expectations raise ``AssertionError`` with a message.
"""

from __future__ import annotations

from volcano_py.testing.cluster import Cluster, SessionOutcome
from volcano_py.testing.objects import (
    GROUP,
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
    resource_list,
)
from volcano_py.testing.session import (
    Case,
    Outcome,
    PluginFlags,
    check,
    run_case,
    run_session,
    tiers_of,
)

__all__ = [
    "GROUP",
    "Case",
    "Cluster",
    "Outcome",
    "PluginFlags",
    "SessionOutcome",
    "build_node",
    "build_pod",
    "build_pod_group",
    "build_priority_class",
    "build_queue",
    "check",
    "resource_list",
    "run_case",
    "run_session",
    "tiers_of",
]
