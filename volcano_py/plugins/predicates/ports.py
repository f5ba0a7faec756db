"""Host ports (kube-scheduler's NodePorts plugin and ``HostPortInfo``).

A wanted port conflicts with a used one of the same protocol and number when either binds
``0.0.0.0`` (the default host IP) or both bind the same IP. Only ports with ``hostPort > 0``
count, from init containers and containers alike (``GetHostPorts``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.plugins._kube_scheduling.podspec import containers, init_containers, sequence
from volcano_py.plugins._kube_scheduling.session_pods import SessionPods

PLUGIN: Final = "NodePorts"
DEFAULT_BIND_ALL_HOST_IP: Final = "0.0.0.0"
ERR_REASON: Final = "node(s) didn't have free ports for the requested pod ports"


@dataclass(frozen=True, slots=True)
class HostPort:
    ip: str
    protocol: str
    port: int


def host_ports(pod: Mapping[str, Any]) -> tuple[HostPort, ...]:
    """The pod's host ports, sanitised: an empty IP binds all, an empty protocol is TCP."""
    ports = []
    for container in (*init_containers(pod), *containers(pod)):
        for raw in sequence(container.get("ports")):
            port = raw.get("hostPort") if isinstance(raw, Mapping) else None
            if not isinstance(port, int) or port <= 0:
                continue
            ip = str(raw.get("hostIP") or DEFAULT_BIND_ALL_HOST_IP)
            protocol = str(raw.get("protocol") or "TCP")
            ports.append(HostPort(ip, protocol, port))
    return tuple(ports)


class UsedPorts:
    """The host ports a node's pods hold. Counted, so removing one of two pods that both
    declare a port keeps it in use."""

    __slots__ = ("_by_ip",)

    def __init__(self, ports: Iterable[HostPort] = ()) -> None:
        self._by_ip: dict[str, Counter[tuple[str, int]]] = {}
        self.add(ports)

    def add(self, ports: Iterable[HostPort]) -> None:
        for port in ports:
            self._by_ip.setdefault(port.ip, Counter())[(port.protocol, port.port)] += 1

    def remove(self, ports: Iterable[HostPort]) -> None:
        for port in ports:
            held = self._by_ip.get(port.ip)
            if held is None:
                continue
            key = (port.protocol, port.port)
            held[key] -= 1
            if held[key] <= 0:
                del held[key]

    def conflicts(self, port: HostPort) -> bool:
        """``HostPortInfo.CheckConflict``."""
        key = (port.protocol, port.port)
        if port.ip == DEFAULT_BIND_ALL_HOST_IP:
            return any(held[key] > 0 for held in self._by_ip.values())
        return any(
            self._by_ip[ip][key] > 0
            for ip in (DEFAULT_BIND_ALL_HOST_IP, port.ip)
            if ip in self._by_ip
        )

    def fits(self, wanted: Iterable[HostPort]) -> bool:
        return not any(self.conflicts(port) for port in wanted)


class PortTracker:
    """Each node's used host ports, built the first time the node is checked and then kept
    current by the session's pod events."""

    def __init__(self, pods: SessionPods) -> None:
        self.pods = pods
        self._used: dict[int, UsedPorts] = {}
        self._wanted: dict[str, tuple[Mapping[str, Any], tuple[HostPort, ...]]] = {}
        pods.subscribe(self._changed)

    def wanted(self, task: TaskInfo) -> tuple[HostPort, ...]:
        cached = self._wanted.get(task.key)
        if cached is None or cached[0] is not task.pod:
            cached = self._wanted[task.key] = (task.pod, host_ports(task.pod))
        return cached[1]

    def used(self, row: int) -> UsedPorts:
        used = self._used.get(row)
        if used is None:
            used = UsedPorts()
            for task in self.pods.pods(row):
                used.add(self.wanted(task))
            self._used[row] = used
        return used

    def check(self, task: TaskInfo, row: int) -> Status | None:
        """NodePorts Filter (Unschedulable: the port may free up)."""
        wanted = self.wanted(task)
        if not wanted or self.used(row).fits(wanted):
            return None
        return Status(StatusCode.UNSCHEDULABLE, ERR_REASON, PLUGIN)

    def _changed(self, task: TaskInfo, row: int, sign: int) -> None:
        used = self._used.get(row)
        if used is None:
            return  # built from the node's pods when first needed, this change included
        ports = self.wanted(task)
        if sign > 0:
            used.add(ports)
        else:
            used.remove(ports)
