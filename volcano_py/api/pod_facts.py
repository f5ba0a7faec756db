"""Facts of a pod alone that the scheduler sums or collects per node.

kube-scheduler's scorers ask, for every node, what its pods request with kube-scheduler's
non-zero defaults (``non_zero_request``), and inter-pod affinity asks which pods on a node
carry an affinity section (``has_pod_affinity``). Both depend on the pod's spec only, so each
is computed once per pod (memoised with the task, ``derived_fact``) and the node keeps their
sums in its matrix row (``NodeMatrix.non_zero_extra``, ``NodeMatrix.pod_affinity``) as pods
come and go: a session reads every node's in one array copy instead of visiting 50k pods.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import numpy.typing as npt

from volcano_py.api.pod_spec import containers, init_containers, mapping, sequence, spec
from volcano_py.api.quantity import quantity_milli_value, quantity_value
from volcano_py.api.resource import CPU, MEMORY, spec_requests
from volcano_py.api.task import TaskInfo, derived_fact

# kube-scheduler's schedutil.DefaultMilliCPURequest / DefaultMemoryRequest.
DEFAULT_MILLI_CPU_REQUEST: Final = 100
DEFAULT_MEMORY_REQUEST: Final = 200 * 1024 * 1024

# ``node_facts`` of a pod that adds nothing to its node's sums (most pods).
NodeFacts = tuple[float, float, int]
NO_NODE_FACTS: Final[NodeFacts] = (0.0, 0.0, 0)


# ---------------------------------------------------------------------- non-zero requests


def _names_cpu_and_memory(container: Mapping[str, Any]) -> bool:
    resources = mapping(container.get("resources"))
    requests = mapping(resources.get("requests"))
    if CPU in requests and MEMORY in requests:
        return True
    limits = mapping(resources.get("limits"))
    return (CPU in requests or CPU in limits) and (MEMORY in requests or MEMORY in limits)


def _all_name_cpu_and_memory(pod: Mapping[str, Any]) -> bool:
    """Does every container (init containers too) name cpu and memory? The same test as
    ``_names_cpu_and_memory`` over ``containers`` and ``init_containers``, without building
    their lists: it runs once for every pod that reaches a node."""
    pod_spec = spec(pod)
    for field_name in ("containers", "initContainers"):
        for container in sequence(pod_spec.get(field_name)):
            if not _names_cpu_and_memory(mapping(container)):
                return False
    return True


def non_zero_request(pod: Mapping[str, Any], cpu: float, memory: float) -> tuple[float, float]:
    """``(milli cpu, memory)`` of ``PodRequests`` with ``NonMissingContainerRequests``: each
    container (init containers too) that does not name cpu or memory counts the default.
    ``cpu``/``memory`` are the pod's real requests, returned as is when nothing is missing."""
    if _all_name_cpu_and_memory(pod):
        return cpu, memory  # the common case, checked without copying anything
    pod_containers, pod_inits = containers(pod), init_containers(pod)

    def amounts(requests: Mapping[str, Any]) -> tuple[int, int]:
        milli = (
            quantity_milli_value(requests[CPU]) if CPU in requests else DEFAULT_MILLI_CPU_REQUEST
        )
        size = quantity_value(requests[MEMORY]) if MEMORY in requests else DEFAULT_MEMORY_REQUEST
        return milli, size

    total_cpu = total_memory = 0
    for container in pod_containers:
        milli, size = amounts(spec_requests(container))
        total_cpu, total_memory = total_cpu + milli, total_memory + size
    sidecar_cpu = sidecar_memory = init_cpu = init_memory = 0
    for container in pod_inits:
        milli, size = amounts(spec_requests(container))
        if container.get("restartPolicy") == "Always":
            total_cpu, total_memory = total_cpu + milli, total_memory + size
            sidecar_cpu, sidecar_memory = sidecar_cpu + milli, sidecar_memory + size
            running_cpu, running_memory = sidecar_cpu, sidecar_memory
        else:
            running_cpu, running_memory = milli + sidecar_cpu, size + sidecar_memory
        init_cpu, init_memory = max(init_cpu, running_cpu), max(init_memory, running_memory)
    total_cpu, total_memory = max(total_cpu, init_cpu), max(total_memory, init_memory)
    pod_level = mapping(mapping(spec(pod).get("resources")).get("requests"))
    if CPU in pod_level:
        total_cpu = quantity_milli_value(pod_level[CPU])
    if MEMORY in pod_level:
        total_memory = quantity_value(pod_level[MEMORY])
    overhead = mapping(spec(pod).get("overhead"))
    if CPU in overhead:
        total_cpu += quantity_milli_value(overhead[CPU])
    if MEMORY in overhead:
        total_memory += quantity_value(overhead[MEMORY])
    return float(total_cpu), float(total_memory)


def _non_zero(task: TaskInfo) -> tuple[float, float]:
    return non_zero_request(task.pod, task.resreq.milli_cpu, task.resreq.memory)


def task_non_zero(task: TaskInfo) -> tuple[float, float]:
    """``non_zero_request`` of the task's pod and request, parsed once per pod (kept with the
    task across sessions): asked at every scoring and placement."""
    answer: tuple[float, float] = derived_fact(task, "pod_facts.non_zero", _non_zero)
    return answer


# ---------------------------------------------------------------------- inter-pod affinity


def has_pod_affinity(pod: Mapping[str, Any]) -> bool:
    """kube-scheduler's ``podWithAffinity``: any inter-pod (anti-)affinity section at all.
    Called for every pod that reaches a node, hence the early exits."""
    pod_spec = pod.get("spec")
    if not pod_spec:
        return False
    section = mapping(pod_spec).get("affinity")
    if not section:
        return False
    section = mapping(section)
    return section.get("podAffinity") is not None or section.get("podAntiAffinity") is not None


def _has_affinity(task: TaskInfo) -> bool:
    return has_pod_affinity(task.pod)


def task_has_pod_affinity(task: TaskInfo) -> bool:
    """``has_pod_affinity`` of the task's pod, memoised with the task."""
    answer: bool = derived_fact(task, "pod_facts.has_pod_affinity", _has_affinity)
    return answer


# ---------------------------------------------------------------------- per node


_NODE_FACTS: Final = "pod_facts.node"
_AFFINITY_ONLY: Final[NodeFacts] = (0.0, 0.0, 1)


def _node_facts(task: TaskInfo) -> NodeFacts:
    pod = task.pod
    with_affinity = has_pod_affinity(pod)
    if _all_name_cpu_and_memory(pod):
        # ``non_zero_request`` is the request itself: both differences are 0.0. Answered
        # without building (and keeping) the non-zero pair: this runs for every pod that
        # reaches a node, 50k at a 5k-node cluster's first sync.
        return _AFFINITY_ONLY if with_affinity else NO_NODE_FACTS
    cpu, memory = task_non_zero(task)
    resreq = task.resreq
    facts = (cpu - resreq.milli_cpu, memory - resreq.memory, int(with_affinity))
    # One shared tuple for the common case, so adders can skip it by identity.
    return NO_NODE_FACTS if facts == NO_NODE_FACTS else facts


def node_facts(task: TaskInfo) -> NodeFacts:
    """What the task adds to its node's kept sums: non-zero minus real requests (milli cpu,
    memory) and 1 if it has an inter-pod affinity section. ``NO_NODE_FACTS`` (that very
    object) when it adds nothing. Memoised with the task (``derived_fact``, written out: it
    is asked at every charge and uncharge of a pod).

    The amounts are whole numbers (milli cpu and bytes: quantities round to integers), so
    the kept sums are exact whatever the order pods came and went in, and equal bit for bit
    to a fresh sum over the node's pods while below 2**53."""
    derived = task.derived
    facts: NodeFacts | None = derived.get(_NODE_FACTS)
    if facts is None:
        facts = derived[_NODE_FACTS] = _node_facts(task)
    return facts


def count_node_facts(
    task: TaskInfo,
    extra: npt.NDArray[np.float64],
    affinity: npt.NDArray[np.intp],
    row: int,
    sign: int,
) -> None:
    """Add (``sign`` 1) or take (-1) ``task``'s ``node_facts`` to or from the sums kept at
    ``row``: ``extra`` (non-zero minus real cpu and memory) and ``affinity`` (how many pods
    with an inter-pod affinity section). The cache's rows and a session's copy of them are
    kept alike by this one function."""
    facts = node_facts(task)
    if facts is NO_NODE_FACTS:
        return  # most pods: nothing to write
    extra_cpu, extra_memory, with_affinity = facts
    extra[row, 0] += sign * extra_cpu
    extra[row, 1] += sign * extra_memory
    if with_affinity:
        affinity[row] += sign


def carry_node_facts(previous: TaskInfo, task: TaskInfo) -> None:
    """Give ``task`` the memoised ``node_facts`` of ``previous``, a former version of its pod
    with the same spec and the very same request object (what the facts read): a pod's
    status update then costs no second reading of its containers."""
    facts = previous.derived.get(_NODE_FACTS)
    if facts is not None:
        task.derived.setdefault(_NODE_FACTS, facts)
