"""Node load in ``simulate``: what the metrics source would report, read from annotations.

A live scheduler asks Prometheus for each node's average CPU and memory use over the last
10 minutes (``metrics:`` in volcano-scheduler.conf). ``simulate`` contacts nothing; a node says
its load itself::

    metadata:
      annotations:
        volcano-py.sim/cpu-usage: "85"      # percent, 0-100, average over 10m
        volcano-py.sim/memory-usage: "40"

Before every cycle the cache gets these as freshly collected metrics (measured at the
simulated time), as if a collection had just run. A node without either annotation has no
metrics, as a node Prometheus knows nothing about: the usage plugin passes it and scores it 0.
The ``metrics:`` section of the conf is not contacted in ``simulate``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Final

from volcano_py.api.node_usage import NodeUsage

CPU_USAGE_ANNOTATION: Final = "volcano-py.sim/cpu-usage"
MEMORY_USAGE_ANNOTATION: Final = "volcano-py.sim/memory-usage"


def _annotations(node: Mapping[str, Any]) -> Mapping[str, Any]:
    return (node.get("metadata") or {}).get("annotations") or {}


def usage_problem(node: Mapping[str, Any]) -> tuple[str, str] | None:
    """(field, problem) when a usage annotation is not a percentage; None when fine."""
    annotations = _annotations(node)
    for key in (CPU_USAGE_ANNOTATION, MEMORY_USAGE_ANNOTATION):
        if key not in annotations:
            continue
        value = annotations[key]
        try:
            percent = float(str(value))
        except ValueError:
            percent = -1.0
        if not 0.0 <= percent <= 100.0:
            return f"metadata.annotations.{key}", f"expected a percentage 0-100, got {value!r}"
    return None


def nodes_usage(nodes: Iterable[tuple[str, Mapping[str, Any]]], now: float) -> dict[str, NodeUsage]:
    """Usage of every annotated node, measured at ``now``."""
    result: dict[str, NodeUsage] = {}
    for name, node in nodes:
        annotations = _annotations(node)
        if CPU_USAGE_ANNOTATION not in annotations and MEMORY_USAGE_ANNOTATION not in annotations:
            continue
        result[name] = NodeUsage.measured(
            now,
            float(str(annotations.get(CPU_USAGE_ANNOTATION, 0))),
            float(str(annotations.get(MEMORY_USAGE_ANNOTATION, 0))),
        )
    return result
