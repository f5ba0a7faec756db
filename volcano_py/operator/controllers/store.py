"""The objects the informers delivered, by kind and key, with the lookups the controllers need
(a job's pods, its PodGroup, a queue's PodGroups). Only the event loop touches it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from volcano_py.controllers.ownership import job_of_pod
from volcano_py.operator.informer import is_older, object_key

Obj = Mapping[str, Any]


class ObjectStore:
    def __init__(self) -> None:
        self.objects: dict[str, dict[str, Obj]] = {}
        # job key -> pod keys, so a job's pods are found without a scan of every pod.
        self._pods_by_job: dict[str, set[str]] = {}

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
        if kind == "Pod":
            self._index_pod(key, old, None if event_type == "DELETED" else obj)
        return True, old

    def _index_pod(self, key: str, old: Obj | None, new: Obj | None) -> None:
        old_job = job_of_pod(old) if old is not None else None
        new_job = job_of_pod(new) if new is not None else None
        if old_job is not None and old_job != new_job:
            self._pods_by_job.get(old_job, set()).discard(key)
        if new_job is not None:
            self._pods_by_job.setdefault(new_job, set()).add(key)

    def pods_of_job(self, job_key: str) -> list[Obj]:
        pods = self.objects.get("Pod", {})
        return [pods[key] for key in sorted(self._pods_by_job.get(job_key, ())) if key in pods]

    def pod_group_of_job(self, job: Obj) -> Obj | None:
        """``<job>-<uid>``, else the legacy ``<job>`` (as the simulator looks it up)."""
        meta = job.get("metadata") or {}
        namespace = meta.get("namespace") or "default"
        for name in (f"{meta.get('name')}-{meta.get('uid')}", str(meta.get("name"))):
            found = self.get("PodGroup", f"{namespace}/{name}")
            if found is not None:
                return found
        return None

    def pod_group_phases_of_queue(self, queue_name: str) -> list[str]:
        return [
            str((pg.get("status") or {}).get("phase", ""))
            for _key, pg in self.items("PodGroup")
            if str((pg.get("spec") or {}).get("queue") or "default") == queue_name
        ]

    def in_namespace(self, kind: str, namespace: str) -> Iterator[tuple[str, Obj]]:
        prefix = f"{namespace}/"
        for key, obj in self.items(kind):
            if key.startswith(prefix):
                yield key, obj
