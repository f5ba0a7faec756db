"""The usage plugin's arithmetic (``plugins/usage/estimator.go``): how loaded a node will be
once the pods placed on it recently show up in its metrics, and the score that follows.

Composite utilisation of one dimension is ``(real% / 100 * capacity + shadow) / capacity``,
clamped to [0, 1], where *shadow* is the estimated use of pods the metrics cannot see yet. The
scalar functions are the readable rule; ``composite_utilization_rows`` and ``node_scores_rows``
apply it to many nodes at once and a test proves them equal.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np

from volcano_py.api.node_matrix import FloatArray
from volcano_py.api.resource import CPU, MEMORY, Resource

MAX_NODE_SCORE: Final = 100


def calc_load_composite_percentage(
    cpu_composite: float, mem_composite: float, cpu_weight: int, mem_weight: int
) -> float:
    """Weighted node load from the two composites (0-1 in, 0-1 out)."""
    total = cpu_weight + mem_weight
    if total == 0:
        return 0.0
    return (cpu_composite * cpu_weight + mem_composite * mem_weight) / total


def calc_applied_risk_factor(load: float, risk_threshold: float, risk_factor: float) -> float:
    """``risk_factor`` once the node's load reaches ``risk_threshold``; a factor below 1 would
    make estimates less cautious under pressure, so it counts as 1."""
    if risk_factor < 1.0:
        return 1.0
    return risk_factor if load >= risk_threshold else 1.0


def estimate_pod_resource(
    request: float, limit: float, request_weight: float, burst_weight: float, risk: float
) -> float:
    """One dimension of a Guaranteed/Burstable pod:
    ``(request * request_weight + (limit - request) * burst_weight) * risk``, clamped to
    [0, effective limit]; a missing limit (or one below the request) is the request."""
    request = max(request, 0.0)
    effective_limit = request if limit <= 0 or limit < request else limit
    burst = max(effective_limit - request, 0.0)
    estimate = (request * request_weight + burst * burst_weight) * risk
    return min(max(estimate, 0.0), effective_limit)


def estimate_best_effort_resource(configured: float, risk: float) -> float:
    return max(configured, 0.0) * risk


def calc_composite_utilization(real_percent: float, shadow: float, capacity: float) -> float:
    if capacity <= 0:
        return 0.0
    composite = (real_percent / 100.0 * capacity + shadow) / capacity
    return min(max(composite, 0.0), 1.0)


def calc_node_score(
    cpu_composite: float, mem_composite: float, cpu_weight: int, mem_weight: int, usage_weight: int
) -> float:
    """``((1 - cpu) * cpu_weight + (1 - mem) * mem_weight) / (sum of weights) * 100 *
    usage_weight``; zero weights score 0."""
    total = cpu_weight + mem_weight
    if total == 0:
        return 0.0
    free = ((1.0 - cpu_composite) * cpu_weight + (1.0 - mem_composite) * mem_weight) / total
    return free * MAX_NODE_SCORE * usage_weight


def composite_utilization_rows(
    real_percent: FloatArray, shadow: FloatArray, capacity: FloatArray
) -> FloatArray:
    """``calc_composite_utilization`` element-wise."""
    with np.errstate(divide="ignore", invalid="ignore"):
        composite = (real_percent / 100.0 * capacity + shadow) / capacity
    result: FloatArray = np.where(capacity > 0, np.clip(composite, 0.0, 1.0), 0.0)
    return result


def node_scores_rows(
    cpu_composite: FloatArray,
    mem_composite: FloatArray,
    cpu_weight: int,
    mem_weight: int,
    usage_weight: int,
) -> FloatArray:
    """``calc_node_score`` element-wise."""
    total = cpu_weight + mem_weight
    if total == 0:
        return np.zeros(len(cpu_composite))
    free = ((1.0 - cpu_composite) * cpu_weight + (1.0 - mem_composite) * mem_weight) / total
    result: FloatArray = free * float(MAX_NODE_SCORE * usage_weight)
    return result


# ---------------------------------------------------------------------- pod limits


def _mapping(value: object) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _limits(container: Mapping[str, Any]) -> Resource:
    return Resource.from_list(_mapping(_mapping(container.get("resources")).get("limits")))


def pod_limit(pod: Mapping[str, Any]) -> Resource:
    """A pod's limits as Volcano adds them up (``GetPodResourceLimit``): the containers' sum;
    restartable init containers (sidecars) add to it and to every later init container; the
    largest init container wins over the sum; pod-level ``spec.resources.limits`` replace cpu
    and memory; ``spec.overhead`` is added to a dimension that has a limit."""
    spec = _mapping(pod.get("spec"))
    result = Resource()
    for container in spec.get("containers") or []:
        result.add(_limits(_mapping(container)))
    sidecars = Resource()
    init_max = Resource()
    for raw in spec.get("initContainers") or []:
        container = _mapping(raw)
        limit = _limits(container)
        if container.get("restartPolicy") == "Always":
            result.add(limit)
            sidecars.add(limit)
            running = sidecars.clone()
        else:
            running = limit.add(sidecars)
        init_max.set_max_resource(running)
    result.set_max_resource(init_max)
    pod_level = _mapping(_mapping(spec.get("resources")).get("limits"))
    if pod_level:
        level = Resource.from_list(pod_level)
        if CPU in pod_level:
            result.milli_cpu = level.milli_cpu
        if MEMORY in pod_level:
            result.memory = level.memory
    overhead = Resource.from_list(_mapping(spec.get("overhead")))
    if result.milli_cpu != 0:
        result.milli_cpu += overhead.milli_cpu
    if result.memory != 0:
        result.memory += overhead.memory
    return result


def pod_request_limit(
    pod: Mapping[str, Any], request: Resource
) -> tuple[float, float, float, float]:
    """(cpu request, cpu limit, memory request, memory limit) in milli-CPU and bytes."""
    limit = pod_limit(pod)
    return request.milli_cpu, limit.milli_cpu, request.memory, limit.memory
