"""The scheduler's I/O seams. The live operator implements them against the API server; the
simulator against its in-memory cluster; tests with recording fakes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from volcano_py.api.task import TaskInfo


class Binder(Protocol):
    def bind(self, task: TaskInfo, node_name: str) -> None:
        """Bind the task's pod to the node (``pods/binding`` live). May raise on failure."""


class Evictor(Protocol):
    def evict(self, task: TaskInfo, reason: str) -> None:
        """Evict the task's pod: conditions, then delete (Volcano's evictor)."""


class StatusUpdater(Protocol):
    def update_pod_group_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        """Write a PodGroup's status (only called when it changed)."""

    def update_queue_status(self, name: str, allocated: Mapping[str, str]) -> None:
        """Write a Queue's ``status.allocated`` (only called when it changed)."""

    def update_pod_condition(
        self, task: TaskInfo, condition: Mapping[str, Any], nominated_node: str
    ) -> None:
        """Set a pending pod's PodScheduled condition (only called when it changed)."""


class EventRecorder(Protocol):
    def record(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None:
        """Record a Kubernetes Event about an object."""


@dataclass
class RecordingBinder:
    """Remembers binds in order (tests, simulator)."""

    binds: dict[str, str] = field(default_factory=dict)
    order: list[tuple[str, str]] = field(default_factory=list)

    def bind(self, task: TaskInfo, node_name: str) -> None:
        self.binds[task.key] = node_name
        self.order.append((task.key, node_name))


@dataclass
class RecordingEvictor:
    evicted: list[str] = field(default_factory=list)

    def evict(self, task: TaskInfo, reason: str) -> None:
        self.evicted.append(task.key)


@dataclass
class RecordingStatusUpdater:
    pod_groups: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    queues: dict[str, Mapping[str, str]] = field(default_factory=dict)
    pod_conditions: dict[str, tuple[Mapping[str, Any], str]] = field(default_factory=dict)

    def update_pod_group_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        self.pod_groups[f"{namespace}/{name}"] = status

    def update_queue_status(self, name: str, allocated: Mapping[str, str]) -> None:
        self.queues[name] = allocated

    def update_pod_condition(
        self, task: TaskInfo, condition: Mapping[str, Any], nominated_node: str
    ) -> None:
        self.pod_conditions[task.key] = (condition, nominated_node)


@dataclass
class RecordingEventRecorder:
    events: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)

    def record(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None:
        self.events.append((kind, namespace, name, event_type, reason, message))
