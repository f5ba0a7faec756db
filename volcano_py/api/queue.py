"""QueueInfo: a Queue's spec as the scheduler reads it (``queue_info.go``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from volcano_py.api.resource import Resource
from volcano_py.api.types import HIERARCHY_ANNOTATION, HIERARCHY_WEIGHTS_ANNOTATION, ROOT_QUEUE

QUEUE_OPEN = "Open"
QUEUE_CLOSED = "Closed"
QUEUE_CLOSING = "Closing"
QUEUE_UNKNOWN = "Unknown"


@dataclass(slots=True)
class QueueInfo:
    uid: str
    name: str
    weight: int = 1
    capability: Resource | None = None
    deserved: Resource | None = None
    guarantee: Resource | None = None
    # None means "not set", which Volcano treats as reclaimable.
    reclaimable_spec: bool | None = None
    priority: int = 0
    parent: str = ""
    state: str = QUEUE_OPEN
    hierarchy: str = ""
    hierarchy_weights: str = ""
    creation_timestamp: str = ""
    annotations: Mapping[str, str] = field(default_factory=dict)
    allocated_status: Mapping[str, Any] | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> QueueInfo:
        meta = obj.get("metadata") or {}
        spec = obj.get("spec") or {}
        status = obj.get("status") or {}
        annotations = dict(meta.get("annotations") or {})
        name = str(meta.get("name", ""))

        def resource(value: Any) -> Resource | None:
            return Resource.from_list(value) if value else None

        reclaimable = spec.get("reclaimable")
        return cls(
            uid=name,
            name=name,
            weight=int(spec.get("weight") or 1),
            capability=resource(spec.get("capability")),
            deserved=resource(spec.get("deserved")),
            guarantee=resource((spec.get("guarantee") or {}).get("resource")),
            reclaimable_spec=None if reclaimable is None else bool(reclaimable),
            priority=int(spec.get("priority") or 0),
            parent=str(spec.get("parent") or ""),
            # As written: a Queue the queue controller has not synced has none, and is not
            # Open to the fair-share plugins (``state`` != ``QueueStateOpen``), as on Volcano.
            state=str(status.get("state") or ""),
            hierarchy=annotations.get(HIERARCHY_ANNOTATION, ""),
            hierarchy_weights=annotations.get(HIERARCHY_WEIGHTS_ANNOTATION, ""),
            creation_timestamp=str(meta.get("creationTimestamp") or ""),
            annotations=annotations,
            allocated_status=status.get("allocated"),
            raw=obj,
        )

    @property
    def reclaimable(self) -> bool:
        return True if self.reclaimable_spec is None else self.reclaimable_spec

    @property
    def is_open(self) -> bool:
        return self.state == QUEUE_OPEN

    @property
    def parent_name(self) -> str:
        """The parent in the queue tree; a queue without one hangs under ``root``."""
        if self.name == ROOT_QUEUE:
            return ""
        return self.parent or ROOT_QUEUE

    def clone(self) -> QueueInfo:
        # Specs are read-only inside a session; only the object identity must differ.
        return QueueInfo(
            self.uid,
            self.name,
            self.weight,
            self.capability,
            self.deserved,
            self.guarantee,
            self.reclaimable_spec,
            self.priority,
            self.parent,
            self.state,
            self.hierarchy,
            self.hierarchy_weights,
            self.creation_timestamp,
            self.annotations,
            self.allocated_status,
            self.raw,
        )
