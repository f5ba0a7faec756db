"""The objects the informers delivered, by kind and key, with the lookups the controllers need
(a job's pods, its PodGroup, a queue's PodGroups). Only the event loop touches it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from volcano_py.controllers.job import JobPodIndex, JobPods
from volcano_py.operator.informer import is_older, object_key

Obj = Mapping[str, Any]


def _queue_of(pod_group: Obj) -> str:
    return str((pod_group.get("spec") or {}).get("queue") or "default")


class ObjectStore:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Obj]] = {}
        # A job's pods by task and name (and the tallies its pod events ask about), kept with
        # every pod event: a 10k-pod job costs no scan of its pods per event.
        self.pod_index = JobPodIndex()
        # kind -> namespace -> key -> object: a job's plugin objects without a scan of the kind.
        self._by_namespace: dict[str, dict[str, dict[str, Obj]]] = {}
        # queue -> PodGroup phase -> count: the queue controller syncs a queue on every event
        # of its PodGroups, and counting them by a scan each time was quadratic.
        self._phases_by_queue: dict[str, dict[str, int]] = {}

    def get(self, kind: str, key: str) -> Obj | None:
        return self.objects.get(kind, {}).get(key)

    def items(self, kind: str) -> Iterator[tuple[str, Obj]]:
        return iter(list(self.objects.get(kind, {}).items()))

    def apply(
        self, kind: str, event_type: str, obj: Obj, namespaced: bool = True
    ) -> tuple[bool, Obj | None]:
        """Record an event: (applied, the version it replaced or None). A version older than
        the one held (our own write got there first) is not applied."""
        key = object_key(obj, namespaced)
        objects = self.objects.setdefault(kind, {})
        old = objects.get(key)
        if event_type == "DELETED":
            objects.pop(key, None)
        elif old is not None and is_older(obj, old):
            return False, old
        else:
            objects[key] = obj
        current = None if event_type == "DELETED" else obj
        if namespaced:
            by_key = self._by_namespace.setdefault(kind, {}).setdefault(key.split("/", 1)[0], {})
            if current is None:
                by_key.pop(key, None)
            else:
                by_key[key] = current
        if kind == "Pod":
            self.pod_index.update(key, current)
        elif kind == "PodGroup":
            if old is not None:
                self._count_pod_group(old, -1)
            if current is not None:
                self._count_pod_group(current, 1)
        return True, old

    def _count_pod_group(self, pod_group: Obj, sign: int) -> None:
        queue = _queue_of(pod_group)
        phase = str((pod_group.get("status") or {}).get("phase", ""))
        counts = self._phases_by_queue.setdefault(queue, {})
        counts[phase] = counts.get(phase, 0) + sign
        if not counts[phase]:
            del counts[phase]

    def pods_of_job(self, job_key: str) -> JobPods:
        """The job's pods as ``sync_job`` and ``job_request_for_pod_change`` take them."""
        return self.pod_index.of_job(job_key)

    def pod_group_of_job(self, job: Obj) -> Obj | None:
        """``<job>-<uid>``, else the legacy ``<job>`` (as the simulator looks it up)."""
        meta = job.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        for name in (f"{meta.get('name')}-{meta.get('uid')}", str(meta.get("name"))):
            found = self.get("PodGroup", f"{namespace}/{name}")
            if found is not None:
                return found
        return None

    def pod_group_phases_of_queue(self, queue_name: str) -> dict[str, int]:
        """The queue's PodGroups counted by phase."""
        return dict(self._phases_by_queue.get(queue_name, {}))

    def in_namespace(self, kind: str, namespace: str) -> Iterator[tuple[str, Obj]]:
        return iter(list(self._by_namespace.get(kind, {}).get(namespace, {}).items()))
