"""The ``lowNodeUtilization`` strategy (``rescheduling/low_node_utilization.go`` and
``node_utilization_util.go``, after the descheduler's strategy of that name).

Nodes whose real CPU and memory use are both under ``thresholds`` are *low*; of the others,
those with a use over ``targetThresholds`` are *high*. When there are low nodes, not every
node is low, and some node is high, pods are taken off the high nodes (busiest first; on each,
pods without priority, then lower priority, then BestEffort before Burstable before Guaranteed)
while the node is still at or over a target and the low nodes still have room below their
targets for what was taken so far. Only running tasks handed in by the ``shuffle`` action can
be victims. The strategy runs once per ``interval`` of the plugin, so its node loop is not on
the per-task path.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_usage import NO_USAGE, NodeUsage
from volcano_py.api.quantity import go_int64
from volcano_py.api.resource import CPU, MEMORY, Resource
from volcano_py.api.task import TaskInfo

log = logging.getLogger(__name__)

STRATEGY_NAME: Final = "lowNodeUtilization"
RESOURCES: Final = (CPU, MEMORY)
# The keys ``parseThreshold`` reads ("pod", not "pods": upstream's spelling, which no usage
# dimension matches, so it has no effect there either).
THRESHOLD_KEYS: Final = ("cpu", "memory", "pod")
KNOWN_PARAMS: Final = frozenset({"thresholds", "targetThresholds"})
# Fields of upstream's configuration struct that it never reads.
UNUSED_PARAMS: Final = frozenset(
    {"numberOfNodes", "thresholdPriority", "thresholdPriorityClassName", "nodeFit"}
)


def _default_thresholds() -> dict[str, float]:
    return {"cpu": 100.0, "memory": 100.0, "pods": 100.0}


@dataclass(slots=True)
class LowNodeUtilizationConf:
    thresholds: dict[str, float] = field(default_factory=_default_thresholds)
    target_thresholds: dict[str, float] = field(default_factory=_default_thresholds)

    @classmethod
    def parse(cls, params: Mapping[str, Any] | None, warn: Any) -> LowNodeUtilizationConf:
        """``parse``: integer percentages under ``thresholds`` and ``targetThresholds``; a
        section that is not a map stops the parse (upstream aborts there too)."""
        conf = cls()
        if not params:
            return conf
        for key in params:
            if key in UNUSED_PARAMS:
                warn(f"{STRATEGY_NAME}: parameter {key} has no effect (Volcano ignores it too)")
            elif key not in KNOWN_PARAMS:
                warn(f"{STRATEGY_NAME}: unknown parameter {key} is ignored")
        for section, target in (
            ("thresholds", conf.thresholds),
            ("targetThresholds", conf.target_thresholds),
        ):
            if section not in params:
                continue
            values = params[section]
            if not isinstance(values, Mapping):
                warn(f"{STRATEGY_NAME}: {section} must be a map, got {values!r}; parse aborted")
                return conf
            for key, value in values.items():
                if key not in THRESHOLD_KEYS:
                    warn(f"{STRATEGY_NAME}: {section}.{key} is ignored")
                elif not isinstance(value, int) or isinstance(value, bool):
                    warn(f"{STRATEGY_NAME}: {section}.{key} must be an integer, got {value!r}")
                else:
                    target[str(key)] = float(value)
        return conf


@dataclass(slots=True)
class NodeUtilization:
    node: NodeInfo
    utilization: dict[str, float]
    allocatable: Resource
    capacity: Resource
    unschedulable: bool


def node_utilization(node: NodeInfo, usage: NodeUsage, period: str) -> NodeUtilization:
    raw = node.node or {}
    status = raw.get("status") or {}
    capacity = Resource.from_list(status.get("capacity") or {})
    allocatable_list = status.get("allocatable") or {}
    allocatable = Resource.from_list(allocatable_list) if allocatable_list else capacity
    return NodeUtilization(
        node,
        {CPU: usage.cpu(period), MEMORY: usage.memory(period)},
        allocatable,
        capacity,
        bool((raw.get("spec") or {}).get("unschedulable")),
    )


def is_low(usage: NodeUtilization, conf: LowNodeUtilizationConf) -> bool:
    """Every dimension under its threshold, on a schedulable node."""
    if usage.unschedulable:
        return False
    for name, percent in usage.utilization.items():
        threshold = conf.thresholds.get(name)
        if threshold is not None and percent >= threshold:
            return False
    return True


def is_high(usage: NodeUtilization, conf: LowNodeUtilizationConf) -> bool:
    """Some dimension over its target."""
    return any(
        percent > conf.target_thresholds[name]
        for name, percent in usage.utilization.items()
        if name in conf.target_thresholds
    )


def still_overused(
    usage: NodeUtilization, room: Mapping[str, int], conf: LowNodeUtilizationConf
) -> bool:
    """``isContinueEvictPods``: the node is still at or over a target, and the low nodes
    still have room left in every dimension."""
    overused = any(
        percent >= conf.target_thresholds[name]
        for name, percent in usage.utilization.items()
        if name in conf.target_thresholds
    )
    # Upstream stops only at exactly zero room; room that went negative (the last victim
    # was bigger than what was left) would let it go on evicting. Here it stops.
    return overused and all(amount > 0 for amount in room.values())


def _amount(name: str, percent: float, capacity: Resource) -> int:
    """``convertPercentToQuan``: truncated milli-CPU or bytes."""
    total = capacity.milli_cpu if name == CPU else capacity.memory
    return go_int64(percent * total * 0.01)


def _percent(name: str, amount: float, capacity: Resource) -> float:
    total = capacity.milli_cpu if name == CPU else capacity.memory
    return amount * 100.0 / total if total else 0.0


QOS_RANK: Final = {"BestEffort": 0, "Burstable": 1, "Guaranteed": 2}


def _compute(values: object) -> dict[str, Any]:
    """The cpu and memory entries of a requests or limits map (QoS looks at nothing else)."""
    if not isinstance(values, Mapping):
        return {}
    return {name: value for name, value in values.items() if name in RESOURCES}


def pod_qos(pod: Mapping[str, Any]) -> str:
    """The pod's QoS class (``GetPodQOS``): the one its status reports, else BestEffort when
    no container asks for cpu or memory, Guaranteed when every container has cpu and memory
    limits equal to its requests (a missing request is its limit), Burstable otherwise."""
    reported = (pod.get("status") or {}).get("qosClass")
    if reported in QOS_RANK:
        return str(reported)
    spec = pod.get("spec") or {}
    asks_anything = False
    guaranteed = True
    for container in [*(spec.get("containers") or []), *(spec.get("initContainers") or [])]:
        resources = container.get("resources") or {}
        limits = _compute(resources.get("limits"))
        requests = {**limits, **_compute(resources.get("requests"))}
        asks_anything = asks_anything or bool(requests)
        limit, request = Resource.from_list(limits), Resource.from_list(requests)
        if set(limits) != set(RESOURCES) or (limit.milli_cpu, limit.memory) != (
            request.milli_cpu,
            request.memory,
        ):
            guaranteed = False
    if not asks_anything:
        return "BestEffort"
    return "Guaranteed" if guaranteed else "Burstable"


def _pod_order(task: TaskInfo) -> tuple[int, int, int]:
    """Evict first: no priority, then lower priority, then the lower QoS class."""
    priority = (task.pod.get("spec") or {}).get("priority")
    if priority is None:
        return (0, 0, QOS_RANK[pod_qos(task.pod)])
    return (1, int(priority), QOS_RANK[pod_qos(task.pod)])


def victims_for_low_node_utilization(
    nodes: Sequence[NodeInfo],
    usage: Mapping[str, NodeUsage],
    period: str,
    conf: LowNodeUtilizationConf,
    tasks: Sequence[TaskInfo],
) -> list[TaskInfo]:
    utilizations = [
        node_utilization(node, usage.get(node.name, NO_USAGE), period) for node in nodes
    ]
    low = [u for u in utilizations if is_low(u, conf)]
    high = [u for u in utilizations if not is_low(u, conf) and is_high(u, conf)]
    if not low:
        log.debug("The resource utilization of all nodes is above the threshold")
        return []
    if len(low) == len(nodes):
        log.debug("The resource utilization of all nodes is below the threshold")
        return []
    if not high:
        log.debug("The resource utilization of all nodes is below the target threshold")
        return []
    room = {CPU: 0, MEMORY: 0}
    for target in low:
        for name in RESOURCES:
            room[name] += _amount(name, conf.target_thresholds[name], target.allocatable)
            room[name] -= _amount(name, target.utilization[name], target.allocatable)
    candidates = {task.key: task for task in tasks}
    high.sort(key=lambda u: u.utilization[CPU] + u.utilization[MEMORY], reverse=True)
    victims: list[TaskInfo] = []
    for source in high:
        on_node = sorted(source.node.tasks.values(), key=_pod_order)
        for pod_task in on_node:
            if not still_overused(source, room, conf):
                break
            task = candidates.get(pod_task.key)
            if task is None:
                continue
            used_cpu = go_int64(task.resreq.milli_cpu)
            used_memory = go_int64(task.resreq.memory)
            room[CPU] -= used_cpu
            room[MEMORY] -= used_memory
            source.utilization[CPU] -= _percent(CPU, used_cpu, source.capacity)
            source.utilization[MEMORY] -= _percent(MEMORY, used_memory, source.capacity)
            victims.append(task)
    return victims
