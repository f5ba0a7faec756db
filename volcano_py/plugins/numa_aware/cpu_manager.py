"""The kubelet's static CPU manager as ``numa-aware`` predicts it
(``numaaware/provider/cpumanager``): which NUMA node sets can serve a container's whole CPUs
(its topology hints), and which CPU ids it would get (topology-aware best fit: whole sockets,
then whole cores, then single threads next to what was taken).

Only whole CPUs are pinned: a container whose cpu request is not an integer has no hints.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.api.numa import CPU, CpuInfo, CpuSet, NumatopoInfo, ResNumaSets
from volcano_py.api.quantity import QuantityError, quantity_milli_value
from volcano_py.plugins.numa_aware.policy import TopologyHint, bits_of, iterate_masks

log = logging.getLogger(__name__)

PROVIDER_NAME: Final = "cpuMng"


# ---------------------------------------------------------------------- CPU topology


class CpuDetails:
    """A view of some CPUs of a node (``topology.CPUDetails``). Core ids are used as the
    exporter reports them (unique only within a socket), as upstream does."""

    __slots__ = ("_cpus",)

    def __init__(self, cpus: Mapping[int, CpuInfo]) -> None:
        self._cpus = dict(cpus)

    def keep_only(self, cpus: Iterable[int]) -> CpuDetails:
        return CpuDetails({cpu: self._cpus[cpu] for cpu in cpus if cpu in self._cpus})

    def cpus(self) -> CpuSet:
        return frozenset(self._cpus)

    def numa_nodes(self) -> frozenset[int]:
        return frozenset(info.numa_node for info in self._cpus.values())

    def sockets(self) -> frozenset[int]:
        return frozenset(info.socket for info in self._cpus.values())

    def cores(self) -> frozenset[int]:
        return frozenset(info.core for info in self._cpus.values())

    def cores_in_sockets(self, *sockets: int) -> frozenset[int]:
        return frozenset(info.core for info in self._cpus.values() if info.socket in sockets)

    def cpus_in_sockets(self, *sockets: int) -> CpuSet:
        return frozenset(cpu for cpu, info in self._cpus.items() if info.socket in sockets)

    def cpus_in_cores(self, *cores: int) -> CpuSet:
        return frozenset(cpu for cpu, info in self._cpus.items() if info.core in cores)

    def cpus_in_numa_nodes(self, *numa_nodes: int) -> CpuSet:
        return frozenset(cpu for cpu, info in self._cpus.items() if info.numa_node in numa_nodes)

    def __getitem__(self, cpu: int) -> CpuInfo:
        return self._cpus[cpu]


@dataclass(frozen=True, slots=True)
class CpuTopology:
    """``topology.CPUTopology`` of a node's whole CPU detail."""

    num_cpus: int
    num_cores: int
    num_sockets: int
    details: CpuDetails

    @classmethod
    def of(cls, cpu_detail: Mapping[int, CpuInfo]) -> CpuTopology:
        details = CpuDetails(cpu_detail)
        # Physical cores are (socket, core) pairs: the exporter's core ids repeat per socket.
        physical = {(info.socket, info.core) for info in cpu_detail.values()}
        return cls(len(cpu_detail), len(physical), len(details.sockets()), details)

    def cpus_per_core(self) -> int:
        return self.num_cpus // self.num_cores if self.num_cores else 0

    def cpus_per_socket(self) -> int:
        return self.num_cpus // self.num_sockets if self.num_sockets else 0


class _Accumulator:
    """``cpuAccumulator``: what is taken so far and what is still free."""

    def __init__(self, topology: CpuTopology, available: CpuSet, needed: int) -> None:
        self.topology = topology
        self.details = topology.details.keep_only(available)
        self.needed = needed
        self.result: CpuSet = frozenset()

    def take(self, cpus: CpuSet) -> None:
        self.result = self.result | cpus
        self.details = self.details.keep_only(self.details.cpus() - self.result)
        self.needed -= len(cpus)

    def free_sockets(self) -> list[int]:
        # Upstream intersects socket ids with CPU ids here (a leftover of an older kubelet);
        # kept so the same CPUs are chosen.
        return sorted(self.details.sockets() & self.details.cpus())

    def free_cores(self) -> list[int]:
        """Core ids by socket (sockets with fewer free cores first, then by id), then by id."""
        free = self.details.cpus()

        def socket_key(socket: int) -> tuple[int, int]:
            return len(self.details.cores_in_sockets(socket) & free), socket

        cores: list[int] = []
        for socket in sorted(self.details.sockets(), key=socket_key):
            cores.extend(sorted(self.details.cores_in_sockets(socket) & free))
        return cores

    def free_cpus(self) -> list[int]:
        """Free CPU ids, core by core: cores on sockets already used by the result first,
        then on sockets with fewer free CPUs, then cores with fewer free CPUs, then by socket
        and core id."""
        whole = self.topology.details

        def core_key(core: int) -> tuple[int, int, int, int, int]:
            socket = whole[min(whole.cpus_in_cores(core))].socket
            colocated = len(whole.cpus_in_sockets(socket) & self.result)
            return (
                -colocated,
                len(self.details.cpus_in_sockets(socket)),
                len(self.details.cpus_in_cores(core)),
                socket,
                core,
            )

        found: list[int] = []
        for core in sorted(self.details.cores(), key=core_key):
            found.extend(sorted(self.details.cpus_in_cores(core)))
        return found

    def needs(self, count: int) -> bool:
        return self.needed >= count

    def satisfied(self) -> bool:
        return self.needed < 1

    def failed(self) -> bool:
        return self.needed > len(self.details.cpus())


def take_by_topology(topology: CpuTopology, available: CpuSet, count: int) -> CpuSet | None:
    """``takeByTopology``: ``count`` CPUs of ``available`` packed by topology, or None when
    there are not enough."""
    acc = _Accumulator(topology, available, count)
    if acc.satisfied():
        return acc.result
    if acc.failed():
        return None
    # 1. Whole sockets, while at least a socket's worth is still needed.
    if acc.needs(topology.cpus_per_socket()):
        for socket in acc.free_sockets():
            acc.take(acc.details.cpus_in_sockets(socket))
            if acc.satisfied():
                return acc.result
            if not acc.needs(topology.cpus_per_socket()):
                break
    # 2. Whole cores, while at least a core's worth is still needed.
    if acc.needs(topology.cpus_per_core()):
        for core in acc.free_cores():
            acc.take(acc.details.cpus_in_cores(core))
            if acc.satisfied():
                return acc.result
            if not acc.needs(topology.cpus_per_core()):
                break
    # 3. Single threads, filling partly used cores next to what was taken.
    for cpu in acc.free_cpus():
        if acc.needs(1):
            acc.take(frozenset({cpu}))
        if acc.satisfied():
            return acc.result
    return None


# ---------------------------------------------------------------------- the provider


def guaranteed_cpus(container: Mapping[str, Any]) -> int:
    """The container's cpu request if it is a whole number of CPUs, else 0
    (``guaranteedCPUs``). The request defaults to the limit, as the API server defaults it."""
    amount = _cpu_request(container)
    if amount is None:
        return 0
    milli = quantity_milli_value(amount)
    return milli // 1000 if milli % 1000 == 0 else 0


def _cpu_request(container: Mapping[str, Any]) -> Any:
    resources = container.get("resources") or {}
    requests = resources.get("requests") or {}
    limits = resources.get("limits") or {}
    amount = requests.get(CPU, limits.get(CPU))
    if amount is None:
        return None
    try:
        quantity_milli_value(amount)
    except QuantityError:
        return None
    return amount


@dataclass(frozen=True, slots=True)
class CpuLayout:
    """What of a node's Numatopology never changes in a session: its CPU topology and the
    CPUs the kubelet reserves for the system (``resReserved.cpu``, rounded up, packed by
    topology from all CPUs as the kubelet picks them)."""

    topology: CpuTopology
    reserved: CpuSet

    @classmethod
    def of(cls, info: NumatopoInfo) -> CpuLayout:
        topology = CpuTopology.of(info.cpu_detail)
        reserved: CpuSet = frozenset()
        if info.reserved_cpus is not None:
            all_cpus = topology.details.cpus()
            reserved = take_by_topology(topology, all_cpus, info.reserved_cpus) or frozenset()
        return cls(topology, reserved)

    def usable(self, available: CpuSet, info: NumatopoInfo) -> CpuSet:
        """``available`` less the reserved CPUs and the ids without a known place."""
        return frozenset(cpu for cpu in available - self.reserved if cpu in info.cpu_detail)


def cpu_topology_hints(
    available: CpuSet, cpu_detail: Mapping[int, CpuInfo], request: int
) -> list[TopologyHint]:
    """``generateCPUTopologyHints``: every NUMA node set with enough available CPUs; those
    as narrow as the narrowest set that could hold the request at all are preferred."""
    per_numa_total: dict[int, int] = {}
    for info in cpu_detail.values():
        per_numa_total[info.numa_node] = per_numa_total.get(info.numa_node, 0) + 1
    per_numa_free: dict[int, int] = {}
    for cpu in available:
        numa_node = cpu_detail[cpu].numa_node
        per_numa_free[numa_node] = per_numa_free.get(numa_node, 0) + 1
    numa_nodes = sorted(per_numa_total)
    min_affinity_size = len(numa_nodes)
    masks: list[int] = []
    for mask in iterate_masks(numa_nodes):
        bits = bits_of(mask)
        if sum(per_numa_total[b] for b in bits) >= request and len(bits) < min_affinity_size:
            min_affinity_size = len(bits)
        if sum(per_numa_free.get(b, 0) for b in bits) >= request:
            masks.append(mask)
    return [TopologyHint(mask, mask.bit_count() == min_affinity_size) for mask in masks]


def get_topology_hints(
    container: Mapping[str, Any],
    info: NumatopoInfo,
    sets: ResNumaSets,
    layout: CpuLayout | None = None,
) -> dict[str, list[TopologyHint] | None]:
    """The CPU manager's hints for ``container`` (``GetTopologyHints``): empty when it asks
    for no whole CPUs (no preference)."""
    if _cpu_request(container) is None:
        log.debug("container %s has no cpu request", container.get("name"))
        return {}
    request = guaranteed_cpus(container)
    if request == 0:
        log.debug("the cpu request of container %s is not an integer", container.get("name"))
        return {}
    available = sets.get(CPU)
    if available is None:
        return {}
    layout = layout or CpuLayout.of(info)
    # CPUs the exporter lists as allocatable but without topology cannot be placed.
    available = layout.usable(available, info)
    return {CPU: cpu_topology_hints(available, info.cpu_detail, request)}


def allocate(
    container: Mapping[str, Any],
    best: TopologyHint,
    info: NumatopoInfo,
    sets: ResNumaSets,
    layout: CpuLayout | None = None,
) -> dict[str, CpuSet]:
    """The CPU ids the kubelet would pin for ``container`` given the merged hint
    (``Allocate``): as many as possible from the hint's NUMA nodes, the rest from anywhere;
    empty when they cannot all be had."""
    layout = layout or CpuLayout.of(info)
    topology = layout.topology
    request = guaranteed_cpus(container)
    available = layout.usable(sets.get(CPU, frozenset()), info)
    result: CpuSet = frozenset()
    if best.affinity is not None:
        aligned = available & topology.details.cpus_in_numa_nodes(*bits_of(best.affinity))
        taken = take_by_topology(topology, aligned, min(request, len(aligned)))
        if taken is None:
            return {CPU: frozenset()}
        result = taken
    remaining = take_by_topology(topology, available - result, request - len(result))
    if remaining is None:
        return {CPU: frozenset()}
    return {CPU: result | remaining}


def container_list(pod: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The pod's (regular) containers, which are what the plugin pins, as upstream."""
    containers = (pod.get("spec") or {}).get("containers") or []
    return [c for c in containers if isinstance(c, Mapping)]
