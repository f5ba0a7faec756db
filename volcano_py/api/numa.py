"""A node's NUMA topology as its Numatopology object reports it (``api/numa_info.go``).

The resource exporter on each node writes a cluster-scoped ``nodeinfo.volcano.sh/v1alpha1``
Numatopology named after the node: the kubelet's CPU and topology manager policies, which CPU
ids are allocatable, where each CPU sits (NUMA node, socket, core), the reserved CPUs and which
pods the kubelet has already pinned. The cache parses it once, on arrival, into the immutable
:class:`NumatopoInfo` below; the ``numa-aware`` plugin reads it in each session.

CPU sets are ``frozenset[int]``; the wire form is the Linux list format (``0-3,8``).
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.quantity import QuantityError, quantity_milli_value

CPU_MANAGER_POLICY: Final = "CPUManagerPolicy"
TOPOLOGY_MANAGER_POLICY: Final = "TopologyManagerPolicy"
CPU: Final = "cpu"

CpuSet = frozenset[int]
# Resource name -> the ids of it (for cpu: CPU ids), as upstream's ResNumaSets.
ResNumaSets = Mapping[str, CpuSet]


class NumatopologySpecError(ValueError):
    """A Numatopology field the scheduler cannot read; the message names object and field."""


def parse_cpu_set(text: str) -> CpuSet:
    """The Linux cpuset list format (``cpuset.Parse``): ``""``, ``"3"``, ``"0-3,8,10-11"``."""
    found: set[int] = set()
    if text.strip() == "":
        return frozenset()
    for part in text.split(","):
        bounds = part.strip().split("-")
        if len(bounds) == 1 and bounds[0].isdigit():
            found.add(int(bounds[0]))
        elif len(bounds) == 2 and bounds[0].isdigit() and bounds[1].isdigit():
            low, high = int(bounds[0]), int(bounds[1])
            if low > high:
                raise ValueError(f"invalid range {part!r} (start above end)")
            found.update(range(low, high + 1))
        else:
            raise ValueError(f"{part!r} is neither a CPU id nor a range of them")
    return frozenset(found)


def format_cpu_set(cpus: Iterable[int]) -> str:
    """``cpuset.String``: sorted ids with consecutive runs as ranges (``0-3,8``)."""
    ordered = sorted(cpus)
    runs: list[str] = []
    index = 0
    while index < len(ordered):
        end = index
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        runs.append(str(ordered[index]) if end == index else f"{ordered[index]}-{ordered[end]}")
        index = end + 1
    return ",".join(runs)


@dataclass(frozen=True, slots=True)
class CpuInfo:
    """Where one CPU sits. Core ids come from the exporter unique only within a socket."""

    numa_node: int
    socket: int
    core: int


@dataclass(frozen=True, slots=True)
class PodMeta:
    """A pod as the exporter names it in ``podAllocations`` (by uid, or namespace and name)."""

    uid: str
    name: str
    namespace: str


@dataclass(frozen=True, slots=True)
class NumatopoInfo:
    """One node's Numatopology, parsed (``NumatopoInfo``)."""

    name: str
    policies: Mapping[str, str] = field(default_factory=dict)
    # Resource name -> the allocatable ids (``numares[*].allocatable``).
    allocatable: ResNumaSets = field(default_factory=dict)
    capacity: Mapping[str, int] = field(default_factory=dict)
    cpu_detail: Mapping[int, CpuInfo] = field(default_factory=dict)
    # How many CPUs the kubelet reserves (``resReserved.cpu`` rounded up); None when unset.
    reserved_cpus: int | None = None
    pod_allocations: tuple[PodMeta, ...] = ()
    # What decides where pinned CPUs go (topology policy, CPU layout, reservation), digested
    # once on arrival so that nodes built alike share one layout and its CPU decisions.
    layout_key: str = ""

    def layout(self) -> str:
        """``layout_key``, or the digest made now for an object not built by the parser."""
        return self.layout_key or layout_digest(
            self.topology_manager_policy, self.cpu_detail, self.reserved_cpus
        )

    @property
    def cpu_manager_policy(self) -> str:
        return self.policies.get(CPU_MANAGER_POLICY, "")

    @property
    def topology_manager_policy(self) -> str:
        return self.policies.get(TOPOLOGY_MANAGER_POLICY, "")

    def numa_nodes(self) -> list[int]:
        """The NUMA node ids of the node's CPUs, ascending (``CPUDetail.NUMANodes().List()``)."""
        return sorted({info.numa_node for info in self.cpu_detail.values()})

    def pod_assigned(self, pod: PodMeta) -> bool:
        """``CheckNumaPodAssigned``: the kubelet reports the pod pinned, by uid (as its
        cpu_manager_state names it) or by namespace and name (as the PodResources API does)."""
        return any(
            known.uid == pod.uid or (known.name == pod.name and known.namespace == pod.namespace)
            for known in self.pod_allocations
        )


def layout_digest(
    topology_policy: str, cpu_detail: Mapping[int, CpuInfo], reserved_cpus: int | None
) -> str:
    """A short, stable text naming a topology policy, CPU layout and reservation."""
    text = repr((topology_policy, sorted(cpu_detail.items()), reserved_cpus))
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def allocate(sets: ResNumaSets, taken: ResNumaSets) -> dict[str, CpuSet]:
    """``ResNumaSets.Allocate``: ``sets`` without what ``taken`` holds (resources of
    ``taken`` that ``sets`` lacks are ignored)."""
    result = dict(sets)
    for name, ids in taken.items():
        if name in result:
            result[name] = result[name] - ids
    return result


def release(sets: ResNumaSets, taken: ResNumaSets) -> dict[str, CpuSet]:
    """``ResNumaSets.Release``: ``sets`` with what ``taken`` holds given back."""
    result = dict(sets)
    for name, ids in taken.items():
        if name in result:
            result[name] = result[name] | ids
    return result


def _mapping(value: Any, where: str) -> Mapping[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise NumatopologySpecError(f"{where}: expected an object, got {value!r}")
    return value


def _non_negative_int(value: Any, where: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise NumatopologySpecError(f"{where}: expected a non-negative integer, got {value!r}")
    return value


def parse_numatopology(obj: Mapping[str, Any]) -> NumatopoInfo:
    """A raw Numatopology object as the scheduler reads it (``getNumaInfo``); raises
    :class:`NumatopologySpecError` naming the object and field it cannot read."""
    name = str((obj.get("metadata") or {}).get("name", ""))
    label = f"Numatopology {name}"
    spec = _mapping(obj.get("spec"), f"{label}: spec")
    policies = {
        str(key): str(value)
        for key, value in _mapping(spec.get("policies"), f"{label}: spec.policies").items()
    }
    allocatable: dict[str, CpuSet] = {}
    capacity: dict[str, int] = {}
    for resource, info in _mapping(spec.get("numares"), f"{label}: spec.numares").items():
        where = f"{label}: spec.numares[{resource}]"
        info = _mapping(info, where)
        try:
            allocatable[str(resource)] = parse_cpu_set(str(info.get("allocatable") or ""))
        except ValueError as error:
            raise NumatopologySpecError(f"{where}.allocatable: {error}") from None
        capacity[str(resource)] = _non_negative_int(info.get("capacity"), f"{where}.capacity")
    cpu_detail: dict[int, CpuInfo] = {}
    for key, detail in _mapping(spec.get("cpuDetail"), f"{label}: spec.cpuDetail").items():
        where = f"{label}: spec.cpuDetail[{key}]"
        if not str(key).isdigit():
            raise NumatopologySpecError(f"{where}: the key must be a CPU id (an integer)")
        detail = _mapping(detail, where)
        cpu_detail[int(key)] = CpuInfo(
            numa_node=_non_negative_int(detail.get("numa"), f"{where}.numa"),
            socket=_non_negative_int(detail.get("socket"), f"{where}.socket"),
            core=_non_negative_int(detail.get("core"), f"{where}.core"),
        )
    reserved_cpus: int | None = None
    reserved = _mapping(spec.get("resReserved"), f"{label}: spec.resReserved")
    if CPU in reserved:
        try:
            # Fractional CPUs cannot be pinned, so the reservation is rounded up.
            reserved_cpus = math.ceil(quantity_milli_value(reserved[CPU]) / 1000)
        except QuantityError:
            raise NumatopologySpecError(
                f"{label}: spec.resReserved.cpu: invalid quantity {reserved[CPU]!r}"
            ) from None
    pods: list[PodMeta] = []
    for index, allocation in enumerate(spec.get("podAllocations") or []):
        allocation = _mapping(allocation, f"{label}: spec.podAllocations[{index}]")
        pods.append(
            PodMeta(
                uid=str(allocation.get("uid") or ""),
                name=str(allocation.get("name") or ""),
                namespace=str(allocation.get("namespace") or ""),
            )
        )
    return NumatopoInfo(
        name=name,
        policies=policies,
        allocatable=allocatable,
        capacity=capacity,
        cpu_detail=cpu_detail,
        reserved_cpus=reserved_cpus,
        pod_allocations=tuple(pods),
        layout_key=layout_digest(
            policies.get(TOPOLOGY_MANAGER_POLICY, ""), cpu_detail, reserved_cpus
        ),
    )
