"""The pod status a kubelet reports, for the pods the simulator runs: what ``kubectl get pod
-o yaml`` shows of a real Running (or finished) pod, so the ``--format yaml`` output reads like
a cluster's and feeds back in as one.

No container runtime is simulated, so the values a runtime would pick are derived instead:
container ids from ``--seed``, the pod's uid and the container's name; pod IPs from the node's
``spec.podCIDR`` (else a /24 per node inside 10.244.0.0/16, as flannel hands them out) and the
node's ``InternalIP`` (else one inside 172.18.0.0/16, as kind's nodes have). Image digests
(``imageID``) are left out: nothing pulls an image here. Times are the simulated clock's.
"""

from __future__ import annotations

import hashlib
import ipaddress
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.qos import qos_class
from volcano_py.controllers.raw import items, mapping, metadata, spec, status, text

_POD_NETWORK: Final = ipaddress.IPv4Network("10.244.0.0/16")
_NODE_NETWORK: Final = ipaddress.IPv4Network("172.18.0.0/16")
_RUNTIME: Final = "containerd://"
# The conditions a kubelet (1.29+) reports, in its order.
_CONDITION_ORDER: Final = (
    "PodReadyToStartContainers",
    "Initialized",
    "Ready",
    "ContainersReady",
    "PodScheduled",
)
_FINISHED_PHASES: Final = frozenset({"Succeeded", "Failed"})
# What the kubelet writes anew in a status; the rest of the old one is kept.
_REPORTED_ANEW: Final = frozenset({"containerStatuses", "initContainerStatuses", "conditions"})
_NO_STATUSES: Final[Mapping[str, Mapping[str, Any]]] = {}
_NOTHING_TAKEN: Final[frozenset[str]] = frozenset()
# The conditions of a first report, by (running, transition time, start time): never handed
# out, only copied. Bounded (a long run has many start times).
_FIRST_CONDITIONS: dict[tuple[bool, str, str], tuple[dict[str, Any], ...]] = {}
_FIRST_CONDITIONS_KEPT: Final = 256
# A Running pod's first report (no container statuses yet: a pod given Running, or one bound
# here and started) is made by ``SimKubelet._first_report``, the general code's answer without
# its passes and look-ups (60k of them at 5k nodes). False: by the general code (the tests'
# reference).
_FAST_FIRST_REPORT = True


def condition(kind: str, state: bool, when: str, reason: str = "") -> dict[str, Any]:
    found: dict[str, Any] = {
        "lastProbeTime": None,
        "lastTransitionTime": when,
        "status": "True" if state else "False",
        "type": kind,
    }
    if reason:
        found["reason"] = reason
    return found


def mark_scheduled(pod: dict[str, Any], now: str) -> None:
    """What the API server's binding subresource writes: ``PodScheduled`` True. The status is
    replaced, not changed in place: it may be shared with the stored version of the pod."""
    pod_status = dict(status(pod))
    pod_status["conditions"] = [
        c for c in items(pod_status.get("conditions")) if mapping(c).get("type") != "PodScheduled"
    ] + [condition("PodScheduled", True, now)]
    pod["status"] = pod_status


def _first_conditions(running: bool, when: str, started: str) -> tuple[dict[str, Any], ...]:
    """The conditions of a report with none to keep, in the kubelet's order. Pods started
    together get alike conditions: one made tuple per (running, when, started), to be copied,
    never handed out (50k given-Running pods in a 5k-node dump's first cycle, a handful of
    distinct times)."""
    key = (running, when, started)
    first = _FIRST_CONDITIONS.get(key)
    if first is None:
        if len(_FIRST_CONDITIONS) >= _FIRST_CONDITIONS_KEPT:
            _FIRST_CONDITIONS.clear()
        finished_reason = "" if running else "PodCompleted"
        first = _FIRST_CONDITIONS[key] = (
            condition("PodReadyToStartContainers", running, when),
            condition("Initialized", True, started),
            condition("Ready", running, when, finished_reason),
            condition("ContainersReady", running, when, finished_reason),
            condition("PodScheduled", True, started),
        )
    return first


def _container_id(seed: int, pod_uid: str, container: str, started: str) -> str:
    digest = hashlib.sha256(f"{seed}\0{pod_uid}\0{container}\0{started}".encode()).hexdigest()
    return _RUNTIME + digest


@dataclass(slots=True)
class PodNetwork:
    """Addresses for pods, per node, never handing out one a live pod holds."""

    _subnets: dict[str, ipaddress.IPv4Network] = field(default_factory=dict)
    # Each subnet's first address to hand out and how many there are (asked per pod start).
    _spans: dict[str, tuple[int, int]] = field(default_factory=dict)
    _host_ips: dict[str, str] = field(default_factory=dict)
    # Addresses the input's pods hold, per node, and each node's next position.
    _taken: dict[str, set[str]] = field(default_factory=dict)
    _next: dict[str, int] = field(default_factory=dict)
    _primed: bool = False

    def prime(self, nodes: Iterable[Mapping[str, Any]], pods: Iterable[Mapping[str, Any]]) -> None:
        """Learn the nodes and the addresses pods already hold (once, at the first start)."""
        if self._primed:
            return
        self._primed = True
        for ordinal, node in enumerate(sorted(nodes, key=lambda n: text(metadata(n).get("name")))):
            node_name = text(metadata(node).get("name"))
            self._subnets[node_name] = _pod_subnet(node, ordinal)
            self._host_ips[node_name] = _host_ip(node, ordinal)
        for pod in pods:
            node_name = text(spec(pod).get("nodeName"))
            address = text(status(pod).get("podIP"))
            if node_name and address:
                self._taken.setdefault(node_name, set()).add(address)

    @property
    def primed(self) -> bool:
        return self._primed

    def host_ip(self, node_name: str) -> str | None:
        return self._host_ips.get(node_name)

    def pod_ip(self, node_name: str, pod: Mapping[str, Any]) -> str | None:
        """The node's next address, round robin over its subnet (skipping those the input's
        pods hold), so an address comes back only after the subnet went round once."""
        if spec(pod).get("hostNetwork"):
            return self.host_ip(node_name)
        span = self._spans.get(node_name)
        if span is None:
            subnet = self._subnets.get(node_name)
            if subnet is None:
                return None
            # .0 is the network, .1 the node's bridge, the last the broadcast address.
            span = self._spans[node_name] = (
                int(subnet.network_address) + 2,
                subnet.num_addresses - 3,
            )
        first, count = span
        taken = self._taken.get(node_name, _NOTHING_TAKEN)
        position = self._next.get(node_name, 0)
        candidate = ""  # count is at least 5 (a subnet of 8 addresses or more): set below
        for _ in range(count):
            candidate = _dotted(first + position % count)
            position += 1
            if candidate not in taken:
                break
        self._next[node_name] = position
        return candidate


def _dotted(address: int) -> str:
    """``str(ipaddress.IPv4Address(address))``, the same text, without building the object
    (one a pod start: 50k of them in a 5k-node dump)."""
    return f"{address >> 24}.{(address >> 16) & 255}.{(address >> 8) & 255}.{address & 255}"


def _pod_subnet(node: Mapping[str, Any], ordinal: int) -> ipaddress.IPv4Network:
    given = text(spec(node).get("podCIDR"))
    if given:
        try:
            network = ipaddress.ip_network(given, strict=False)
        except ValueError:
            network = None
        if isinstance(network, ipaddress.IPv4Network) and network.num_addresses >= 8:
            return network
    base = int(_POD_NETWORK.network_address) + (ordinal % 256) * 256
    return ipaddress.IPv4Network((base, 24))


def _host_ip(node: Mapping[str, Any], ordinal: int) -> str:
    for address in items(status(node).get("addresses")):
        if mapping(address).get("type") == "InternalIP" and text(mapping(address).get("address")):
            return text(mapping(address).get("address"))
    return str(_NODE_NETWORK.network_address + 2 + ordinal % (_NODE_NETWORK.num_addresses - 3))


@dataclass(slots=True)
class SimKubelet:
    """Writes a pod's status as its node's kubelet would when it starts or ends it."""

    seed: int = 0
    network: PodNetwork = field(default_factory=PodNetwork)

    def status(
        self,
        pod: Mapping[str, Any],
        phase: str,
        now: str,
        exit_code: int = 0,
        reason: str = "",
        message: str = "",
    ) -> dict[str, Any]:
        """The pod's status in ``phase`` (Running, Succeeded or Failed) at ``now``. What the
        pod had (its start time, addresses, the scheduler's conditions) is kept."""
        if _FAST_FIRST_REPORT and phase == "Running":
            first = self._first_report(pod, now)
            if first is not None:
                return first
        old = status(pod)  # read only: the new status is a new dict
        pod_spec = spec(pod)
        node_name = text(pod_spec.get("nodeName"))
        started = text(old.get("startTime")) or now
        pod_uid = text(metadata(pod).get("uid"))
        new: dict[str, Any] = {
            key: value for key, value in old.items() if key not in _REPORTED_ANEW
        }
        self._set_basics(new, old, pod, phase, started, node_name)
        finished = phase in _FINISHED_PHASES
        if phase == "Failed" and reason:
            new["reason"] = reason
            if message:
                new["message"] = message
        init_containers = items(pod_spec.get("initContainers"))
        if init_containers:
            new["initContainerStatuses"] = [
                self._init_container(c, pod_uid, started) for c in init_containers
            ]
        old_statuses = items(old.get("containerStatuses"))
        containers = items(pod_spec.get("containers"))
        if not old_statuses and not finished:
            # A first report of a running pod (nothing of the old statuses to keep): what
            # ``_container`` makes of it, without its look-ups of a previous state.
            new["containerStatuses"] = [
                self._first_running(mapping(c), pod_uid, started) for c in containers
            ]
        else:
            previous = (
                {text(mapping(c).get("name")): mapping(c) for c in old_statuses}
                if old_statuses
                else _NO_STATUSES
            )
            new["containerStatuses"] = [
                self._container(
                    mapping(c),
                    previous,
                    pod_uid,
                    started,
                    now,
                    phase,
                    exit_code if finished else None,
                )
                for c in containers
            ]
        new["conditions"] = self._conditions(old, phase, started, now)
        return new

    def _set_basics(
        self,
        new: dict[str, Any],
        old: Mapping[str, Any],
        pod: Mapping[str, Any],
        phase: str,
        started: str,
        node_name: str,
    ) -> None:
        """The phase, start time, QoS class and addresses of a report, in this key order (the
        addresses the pod had are kept)."""
        new["phase"] = phase
        new["startTime"] = started
        new["qosClass"] = text(old.get("qosClass")) or qos_class(pod)
        network = self.network
        host_ip = text(old.get("hostIP")) or network.host_ip(node_name)
        if host_ip:
            new["hostIP"] = host_ip
            new["hostIPs"] = [{"ip": host_ip}]
        pod_ip = text(old.get("podIP")) or network.pod_ip(node_name, pod)
        if pod_ip:
            new["podIP"] = pod_ip
            new["podIPs"] = [{"ip": pod_ip}]

    def _first_report(self, pod: Mapping[str, Any], now: str) -> dict[str, Any] | None:
        """``status(pod, "Running", now)`` for a plain pod reported the first time: plain dicts
        and lists, no container statuses, no init containers, no condition to keep but (at
        most) the ``PodScheduled`` its bind wrote. None for any other pod (the general code
        then answers). The same values, keys in the same order."""
        old, pod_spec, meta = pod.get("status"), pod.get("spec"), pod.get("metadata")
        if type(old) is not dict or type(pod_spec) is not dict or type(meta) is not dict:
            return None
        containers = pod_spec.get("containers")
        if (
            old.get("containerStatuses")
            or old.get("initContainerStatuses")
            or pod_spec.get("initContainers")
            or pod_spec.get("hostNetwork")
            or type(containers) is not list
            or any(type(container) is not dict for container in containers)
        ):
            return None  # before any address is handed out
        old_conditions = old.get("conditions")
        scheduled: Mapping[str, Any] | None = None
        if old_conditions:
            # Only the bind's PodScheduled True: the general pass keeps it and makes the rest.
            if type(old_conditions) is not list or len(old_conditions) != 1:
                return None
            scheduled = old_conditions[0]
            if (
                type(scheduled) is not dict
                or scheduled.get("type") != "PodScheduled"
                or scheduled.get("status") != "True"
            ):
                return None
        node_name = text(pod_spec.get("nodeName"))
        started = text(old.get("startTime")) or now
        pod_uid = text(meta.get("uid"))
        new: dict[str, Any] = dict(old)
        for anew in _REPORTED_ANEW:  # made anew below (conditions last, as there)
            new.pop(anew, None)
        self._set_basics(new, old, pod, "Running", started, node_name)
        new["containerStatuses"] = [self._first_running(c, pod_uid, started) for c in containers]
        conditions = [dict(c) for c in _first_conditions(True, started, started)]
        if scheduled is not None:
            conditions[-1] = dict(scheduled)
        new["conditions"] = conditions
        return new

    def _first_running(
        self, container: Mapping[str, Any], pod_uid: str, started: str
    ) -> dict[str, Any]:
        """``_container(container, {}, pod_uid, started, now, "Running", None)``."""
        name = text(container.get("name"))
        return {
            "containerID": _container_id(self.seed, pod_uid, name, started),
            "image": text(container.get("image")),
            "lastState": {},
            "name": name,
            "ready": True,
            "restartCount": 0,
            "started": True,
            "state": {"running": {"startedAt": started}},
        }

    def _init_container(self, container: Any, pod_uid: str, started: str) -> dict[str, Any]:
        name = text(mapping(container).get("name"))
        container_id = _container_id(self.seed, pod_uid, name, started)
        return {
            "containerID": container_id,
            "image": text(mapping(container).get("image")),
            "lastState": {},
            "name": name,
            "ready": True,
            "restartCount": 0,
            "started": False,
            "state": {
                "terminated": {
                    "containerID": container_id,
                    "exitCode": 0,
                    "finishedAt": started,
                    "reason": "Completed",
                    "startedAt": started,
                }
            },
        }

    def _container(
        self,
        container: Mapping[str, Any],
        previous: Mapping[str, Mapping[str, Any]],
        pod_uid: str,
        started: str,
        now: str,
        phase: str,
        exit_code: int | None,
    ) -> dict[str, Any]:
        name = text(container.get("name"))
        before = previous.get(name, {})
        container_id = text(before.get("containerID")) or _container_id(
            self.seed, pod_uid, name, started
        )
        running_since = text(mapping(mapping(before.get("state")).get("running")).get("startedAt"))
        since = running_since or started
        state: dict[str, Any]
        if exit_code is None:
            state = {"running": {"startedAt": since}}
        else:
            state = {
                "terminated": {
                    "containerID": container_id,
                    "exitCode": exit_code,
                    "finishedAt": now,
                    "reason": "Completed" if exit_code == 0 else "Error",
                    "startedAt": since,
                }
            }
        return {
            "containerID": container_id,
            "image": text(container.get("image")),
            "lastState": {},
            "name": name,
            "ready": exit_code is None,
            "restartCount": 0,
            "started": exit_code is None,
            "state": state,
        }

    @staticmethod
    def _conditions(
        old: Mapping[str, Any], phase: str, started: str, now: str
    ) -> list[dict[str, Any]]:
        running = phase == "Running"
        finished_reason = "" if running else "PodCompleted"
        old_conditions = items(old.get("conditions"))
        if not old_conditions:
            # Nothing to keep (a pod given Running, reported the first time): what the
            # general case below makes of no conditions, without its passes.
            return [
                dict(c) for c in _first_conditions(running, started if running else now, started)
            ]
        kept = {text(mapping(c).get("type")): mapping(c) for c in old_conditions}
        scheduled = kept.get("PodScheduled")
        if scheduled is None or scheduled.get("status") != "True":
            scheduled = condition("PodScheduled", True, started)
        made = {
            "PodReadyToStartContainers": condition(
                "PodReadyToStartContainers", running, started if running else now
            ),
            "Initialized": condition("Initialized", True, started),
            "Ready": condition("Ready", running, started if running else now, finished_reason),
            "ContainersReady": condition(
                "ContainersReady", running, started if running else now, finished_reason
            ),
            "PodScheduled": dict(scheduled),
        }
        for kind in _CONDITION_ORDER:
            before = kept.get(kind)
            # A condition that did not change keeps its transition time.
            # (A kept PodScheduled without a transition time stays without one.)
            if (
                before is not None
                and before.get("status") == made[kind]["status"]
                and "lastTransitionTime" in before
            ):
                made[kind]["lastTransitionTime"] = before["lastTransitionTime"]
        others = [dict(c) for kind, c in kept.items() if kind not in made]
        return [made[kind] for kind in _CONDITION_ORDER] + others
