"""The proportional filter: keep cpu and memory free next to a scarce resource
(``predicate.ProportionalEnable``; Volcano <= v1.12 ``predicates/proportional.go``).

With ``predicate.resources: nvidia.com/gpu`` and ``predicate.resources.nvidia.com/gpu.cpu: 4``,
a node keeps 4 cpus (and, by ``.memory``, 4 "GB" of memory, 10^9 bytes) free per idle GPU for
the pods that will want that GPU: a task that asks for none of the listed resources does not
fit a node where ``idle cpu - request < idle GPUs * cpu rate`` (same for memory). A task that
asks for any listed resource is not restricted. A node that does not list the resource in its
allocatable is not restricted by it.

Volcano v1.13 moved the policy to the ``resource-strategy-fit`` plugin (``proportional.*``
arguments) and its predicates plugin stopped reading these arguments; volcano-py honours them
still, as the releases whose configuration files name them did, and says so once.

Vectorised: one comparison over the session's idle columns per request shape, recomputed only
after a placement changed the nodes (``SessionPods.version``). ``proportional_status`` is the
scalar statement of the same rule and explains a failing row.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

import numpy as np

from volcano_py.api.node_matrix import BoolArray, FloatArray, NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.hooks import NodeMask
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods

PLUGIN_NAME: Final = "predicates"
PROPORTIONAL_ENABLE: Final = "predicate.ProportionalEnable"
PROPORTIONAL_RESOURCES: Final = "predicate.resources"
PROPORTIONAL_PREFIX: Final = PROPORTIONAL_RESOURCES + "."
# Upstream multiplies the memory rate by 1000 * 1000 on top of the resource's milli-units.
MEMORY_UNIT: Final = 1000.0 * 1000.0


@dataclass(frozen=True, slots=True)
class Rate:
    """cpu (cores) and memory ("GB") kept free per unit of the scarce resource."""

    cpu: float = 1.0
    memory: float = 1.0


def parse_proportional(arguments: Arguments) -> dict[str, Rate]:
    """``predicate.resources`` (comma-separated names) and each name's ``.cpu`` / ``.memory``
    rate (default 1; a negative rate counts as 1)."""
    names = arguments.get_str(PROPORTIONAL_RESOURCES, "")
    rates: dict[str, Rate] = {}
    for raw in names.split(","):
        name = raw.strip()
        if not name:
            continue
        cpu = arguments.get_float(f"{PROPORTIONAL_PREFIX}{name}.cpu", 1.0)
        memory = arguments.get_float(f"{PROPORTIONAL_PREFIX}{name}.memory", 1.0)
        rates[name] = Rate(cpu if cpu >= 0 else 1.0, memory if memory >= 0 else 1.0)
    return rates


def _failed(name: str) -> Status:
    return Status(
        StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE,
        f"proportional of resource {name} check failed",
        PLUGIN_NAME,
    )


def proportional_status(
    request_cpu: float,
    request_memory: float,
    request_scalars: Mapping[str, float],
    idle_cpu: float,
    idle_memory: float,
    idle_scalars: Mapping[str, float],
    rates: Mapping[str, Rate],
) -> Status | None:
    """``checkNodeResourceIsProportional`` for one node; ``idle_scalars`` holds only the
    resources the node defines. Names are checked in the order of ``rates``."""
    if any(request_scalars.get(name, 0.0) > 0 for name in rates):
        return None
    for name, rate in rates.items():
        if name not in idle_scalars:
            continue
        value = idle_scalars[name]
        if (
            idle_cpu - request_cpu < value * rate.cpu
            or idle_memory - request_memory < value * rate.memory * MEMORY_UNIT
        ):
            return _failed(name)
    return None


class ProportionalMask:
    """``proportional_status`` over every session node, as a NodeMask."""

    def __init__(self, rates: Mapping[str, Rate], matrix: NodeMatrix, pods: SessionPods) -> None:
        self.rates = dict(rates)
        self.matrix = matrix
        self.pods = pods
        size = len(pods.node_list)
        # Per listed resource: its idle column and which nodes define it (read once).
        nodes = pods.node_list
        self._defined: dict[str, BoolArray] = {
            name: np.fromiter((name in n.defined_scalars for n in nodes), np.bool_, count=size)
            for name in self.rates
        }
        self._cache: dict[tuple[float, float], NodeMask] = {}
        self._version = -1

    def _idle(self, name: str) -> FloatArray:
        column = self.matrix.index.columns.get(name)
        size = len(self.pods.node_list)
        if column is None:
            return np.zeros(size)
        idle: FloatArray = self.matrix.idle[:size, column]
        return idle

    def mask(self, task: TaskInfo) -> NodeMask | None:
        resreq = task.resreq
        if any(resreq.scalar_resources.get(name, 0.0) > 0 for name in self.rates):
            return None
        if self._version != self.pods.version:
            self._cache.clear()
            self._version = self.pods.version
        key = (resreq.milli_cpu, resreq.memory)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        size = len(self.pods.node_list)
        spare_cpu = self.matrix.idle[:size, 0] - resreq.milli_cpu
        spare_memory = self.matrix.idle[:size, 1] - resreq.memory
        passed = np.ones(size, dtype=np.bool_)
        # The first failing resource per row, in the order the rates were listed.
        first_failure = np.full(size, -1, dtype=np.intp)
        names = list(self.rates)
        for position, name in enumerate(names):
            rate = self.rates[name]
            value = self._idle(name)
            failing = self._defined[name] & (
                (spare_cpu < value * rate.cpu) | (spare_memory < value * rate.memory * MEMORY_UNIT)
            )
            first_failure = np.where(failing & passed, position, first_failure)
            passed &= ~failing

        def reason(row: int) -> Status:
            position = int(first_failure[row])
            if position < 0:
                return Status(StatusCode.SUCCESS, "")
            return _failed(names[position])

        node_mask = self._cache[key] = NodeMask(passed, reason)
        return node_mask
