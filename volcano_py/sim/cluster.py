"""InMemoryCluster: the objects of a simulated cluster, standing in for the API server.

It is the simulator's Binder, Evictor, StatusUpdater and EventRecorder; every change it makes
is passed on to the SchedulerCache as the watch event a live cluster would send, so the
scheduler runs exactly the code path it runs live.
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import DEFAULT_QUEUE, ROOT_QUEUE
from volcano_py.cache.cache import KINDS as CACHE_KINDS
from volcano_py.controllers.job_pod_index import JobPodIndex
from volcano_py.sim.identity import Identities
from volcano_py.sim.kubelet import mark_scheduled

EPOCH: Final = dt.datetime(2026, 1, 1, tzinfo=dt.UTC)

NAMESPACED: Final = frozenset(
    {
        "Pod",
        "PodGroup",
        "Job",
        "Command",
        "PodDisruptionBudget",
        "ResourceQuota",
        "ConfigMap",
        "Service",
        "Secret",
        "NetworkPolicy",
        "Deployment",
        "ReplicaSet",
        "StatefulSet",
        "Job.batch",
        "JobFlow",
        "JobTemplate",
        "CronJob",
        "CronJob.batch",
        "ResourceClaim",
        "ResourceClaimTemplate",
    }
)
# Kubernetes' batch Job and CronJob are kept apart from Volcano's (the same kind names).
BATCH_JOB: Final = "Job.batch"
BATCH_CRONJOB: Final = "CronJob.batch"


@functools.lru_cache(maxsize=256)
def timestamp(seconds: float) -> str:
    """RFC 3339 time ``seconds`` after the simulation epoch (asked for once per object
    written, for a handful of distinct times: remembered)."""
    moment = EPOCH + dt.timedelta(seconds=seconds)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def store_kind(obj: Mapping[str, Any]) -> str:
    """The kind an object is stored under: its kind, but ``Job.batch`` for a batch/v1 Job and
    ``CronJob.batch`` for a batch/v1 CronJob."""
    kind = str(obj.get("kind", ""))
    if kind in ("Job", "CronJob") and str(obj.get("apiVersion", "")).startswith("batch/"):
        return BATCH_JOB if kind == "Job" else BATCH_CRONJOB
    return kind


def object_key(obj: Mapping[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    name = str(meta.get("name", ""))
    if obj.get("kind") in NAMESPACED:
        return f"{meta.get('namespace') or 'default'}/{name}"
    return name


@dataclass
class InMemoryCluster:
    # Called with (kind, event type, object) for every change of a kind the cache watches.
    watch: Callable[[str, str, Mapping[str, Any]], None]
    clock: Callable[[], float] = field(default=lambda: 0.0)
    objects: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    binds: dict[str, str] = field(default_factory=dict)
    # Pod key -> the annotations the scheduler added with its last bind (device ids, ...).
    bind_annotations: dict[str, dict[str, str]] = field(default_factory=dict)
    evictions: list[str] = field(default_factory=list)
    events: list[tuple[str, str, str, str, str, str]] = field(default_factory=list)
    # Bumped by every change a person would notice (bind, eviction, status written).
    changes: int = 0
    # The job controller's cache of pods by job, kept with every pod write.
    pod_index: JobPodIndex = field(default_factory=JobPodIndex)
    # kind -> namespace -> key -> object, for the namespaced kinds: a job's plugin objects
    # are looked up without a scan of every object of the kind.
    _by_namespace: dict[str, dict[str, dict[str, dict[str, Any]]]] = field(default_factory=dict)
    # uids and resourceVersions, as the API server stamps them (``--seed`` derives the uids).
    identities: Identities = field(default_factory=Identities)
    # Told of a status write (``update_status``) with (kind, key, stored version, new version)
    # instead of ``watch``, when set: a status-only change allows the watcher shortcuts.
    status_watch: Callable[[str, str, Mapping[str, Any], Mapping[str, Any]], None] | None = None

    # ------------------------------------------------------------------ store

    def of_kind(self, kind: str) -> dict[str, dict[str, Any]]:
        """The objects of a kind by key. Read-only: write through create/update/delete."""
        found = self.objects.get(kind)
        if found is None:  # not ``setdefault(kind, {})``: a dict made and dropped per call
            found = self.objects[kind] = {}
        return found

    def in_namespace(self, kind: str, namespace: str) -> dict[str, dict[str, Any]]:
        """The objects of a namespaced kind in one namespace, by key (read-only)."""
        return self._by_namespace.get(kind, {}).get(namespace, {})

    def _store(
        self, kind: str, key: str, obj: dict[str, Any] | None, *, status_only: bool = False
    ) -> None:
        """Put (or, with None, drop) an object, keeping the indexes in step. ``status_only``:
        a new version of the stored object that differs in its status alone."""
        store = self.of_kind(kind)
        if obj is None:
            store.pop(key, None)
        else:
            store[key] = obj
        if kind in NAMESPACED:
            namespace = key.split("/", 1)[0]
            of_kind = self._by_namespace.get(kind)
            if of_kind is None:
                of_kind = self._by_namespace[kind] = {}
            by_namespace = of_kind.get(namespace)
            if by_namespace is None:
                by_namespace = of_kind[namespace] = {}
            if obj is None:
                by_namespace.pop(key, None)
            else:
                by_namespace[key] = obj
        if kind == "Pod":
            if status_only and obj is not None:
                self.pod_index.update_status(key, obj)
            else:
                self.pod_index.update(key, obj)

    def get(self, kind: str, key: str) -> dict[str, Any] | None:
        return self.of_kind(kind).get(key)

    def items(self, kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """Objects of a kind in key order (deterministic output)."""
        store = self.of_kind(kind)
        for key in sorted(store):
            yield key, store[key]

    def _notify(self, kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        if kind in CACHE_KINDS:  # what the scheduler cache watches
            self.watch(kind, event_type, obj)

    def create(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Store a new object (defaults applied as the API server would) and announce it."""
        kind = store_kind(obj)
        meta = obj.setdefault("metadata", {})
        if kind in NAMESPACED:
            meta.setdefault("namespace", "default")
        meta.setdefault("creationTimestamp", timestamp(self.clock()))
        key = object_key(obj)
        if not meta.get("uid"):
            meta["uid"] = self.identities.new_uid(kind, key, str(meta["creationTimestamp"]))
        given = self.identities.given_version(meta.get("resourceVersion"))
        meta["resourceVersion"] = given or self.identities.next_version()
        event = "MODIFIED" if key in self.of_kind(kind) else "ADDED"
        self._store(kind, key, obj)
        self._notify(kind, event, obj)
        return obj

    def update(self, obj: dict[str, Any]) -> None:
        kind = store_kind(obj)
        # A fresh metadata dict: a shallow copy of the old object kept by a watcher must not
        # see the new version (it tells an update from a resync by it).
        obj["metadata"] = {
            **(obj.get("metadata") or {}),
            "resourceVersion": self.identities.next_version(),
        }
        self._store(kind, object_key(obj), obj)
        self._notify(kind, "MODIFIED", obj)

    def update_status(self, key: str, obj: dict[str, Any]) -> None:
        """``update(obj)`` of a new version of the object stored at ``key`` that changes its
        ``status`` only: every other part of ``obj`` is the stored version's own object (as
        ``revised(stored, "status")`` makes it). The same write and the same event; a
        ``status_watch`` is told it instead of ``watch``, with the version replaced. Anything
        else (nothing stored at ``key``, another part changed) is written by ``update``."""
        kind = store_kind(obj)
        old = self.of_kind(kind).get(key)
        status_watch = self.status_watch
        if status_watch is None or old is None or not _only_status_differs(old, obj):
            self.update(obj)
            return
        obj["metadata"] = {**obj["metadata"], "resourceVersion": self.identities.next_version()}
        self._store(kind, key, obj, status_only=True)
        if kind in CACHE_KINDS:
            status_watch(kind, key, old, obj)

    def delete(self, kind: str, key: str) -> dict[str, Any] | None:
        obj = self.of_kind(kind).get(key)
        if obj is not None:
            self._store(kind, key, None)
            self._notify(kind, "DELETED", obj)
        return obj

    def ensure_default_queues(self) -> None:
        """The scheduler creates ``root`` and ``default`` when they are missing."""
        if self.get("Queue", ROOT_QUEUE) is None:
            self.create(_queue(ROOT_QUEUE, reclaimable=False))
        if self.get("Queue", DEFAULT_QUEUE) is None:
            self.create(_queue(DEFAULT_QUEUE, reclaimable=True))

    # ------------------------------------------------------------------ Binder

    def bind(self, task: TaskInfo, node_name: str) -> None:
        pod = self.get("Pod", task.key)
        if pod is None:
            raise LookupError(f"pod {task.key} not found")
        pod = revised(pod, "spec", "metadata")
        pod["spec"]["nodeName"] = node_name
        mark_scheduled(pod, timestamp(self.clock()))
        annotations = pod["metadata"]["annotations"] = dict(
            pod["metadata"].get("annotations") or {}
        )
        # What the session added, as the live binder sends it on the Binding (whose
        # annotations the API server writes over the pod's).
        added = {k: v for k, v in task.pod_annotations.items() if annotations.get(k) != v}
        annotations.update(added)
        self.bind_annotations[task.key] = added
        self._reserve_claims(task)
        self.binds[task.key] = node_name
        self.changes += 1
        self.update(pod)
        self._lock_node(node_name, task.bind_node_locks)
        self.record(
            "Pod",
            task.namespace,
            task.name,
            "Normal",
            "Scheduled",
            f"Successfully assigned {task.key} to {node_name}",
        )

    def _lock_node(self, node_name: str, locks: tuple[str, ...]) -> None:
        """The node locks the session took for this bind (deviceshare.NodeLockEnable),
        written on the Node as the live binder writes them. The session decided against this
        same Node (the cache sees every change here at once), so there is nothing to check;
        no device plugin runs to remove them: they expire after five minutes."""
        node = self.get("Node", node_name) if locks else None
        if node is None:
            return
        node = revised(node, "metadata")
        annotations = node["metadata"]["annotations"] = dict(
            node["metadata"].get("annotations") or {}
        )
        for lock_name in locks:
            annotations[lock_name] = timestamp(self.clock())
        self.update(node)

    def _reserve_claims(self, task: TaskInfo) -> None:
        """The dynamicresources plugin's PreBind: each claim gets the allocation the session
        made (if it had none) and the pod in ``reservedFor``."""
        for claim_key, allocation in task.claim_allocations.items():
            claim = self.get("ResourceClaim", claim_key)
            if claim is None:
                continue
            claim = revised(claim, "status")
            status = claim["status"]
            if allocation is not None and not status.get("allocation"):
                status["allocation"] = copy.deepcopy(allocation)
            reserved = list(status.get("reservedFor") or [])
            if not any(r.get("uid") == task.uid for r in reserved):
                reserved.append({"resource": "pods", "name": task.name, "uid": task.uid})
            status["reservedFor"] = reserved
            self.update(claim)

    # ------------------------------------------------------------------ Evictor

    def evict(self, task: TaskInfo, reason: str) -> None:
        """Volcano's evictor: mark the pod not ready (DisruptionTarget), then delete it. A
        bound pod terminates gracefully: it is gone at the start of the next cycle."""
        pod = self.get("Pod", task.key)
        if pod is None:
            return
        pod = copy.deepcopy(pod)
        now = timestamp(self.clock())
        conditions = pod.setdefault("status", {}).setdefault("conditions", [])
        conditions[:] = [
            c for c in conditions if c.get("type") not in ("Ready", "DisruptionTarget")
        ]
        conditions.append(
            {
                "type": "Ready",
                "status": "False",
                "reason": "Evict",
                "message": f"Pod is evicted, because of {reason}",
            }
        )
        conditions.append(
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": f"Pod is evicted, because of {reason}",
            }
        )
        pod["metadata"]["deletionTimestamp"] = now
        self.evictions.append(task.key)
        self.changes += 1
        self.update(pod)

    def evict_through_api(self, key: str) -> None:
        """An API eviction (``pods/eviction``, as ``kubectl drain`` makes): the pod gets the
        ``DisruptionTarget`` condition the API server writes and is deleted gracefully (gone
        at the start of the next cycle); its controller sees it deleted before it finished."""
        pod = self.get("Pod", key)
        if pod is None or (pod.get("metadata") or {}).get("deletionTimestamp"):
            return
        pod = copy.deepcopy(pod)
        conditions = pod.setdefault("status", {}).setdefault("conditions", [])
        conditions[:] = [c for c in conditions if c.get("type") != "DisruptionTarget"]
        conditions.append(
            {
                "lastProbeTime": None,
                "lastTransitionTime": timestamp(self.clock()),
                "message": "Eviction API: evicting",
                "reason": "EvictionByEvictionAPI",
                "status": "True",
                "type": "DisruptionTarget",
            }
        )
        pod["metadata"]["deletionTimestamp"] = timestamp(self.clock())
        self.evictions.append(key)
        self.changes += 1
        self.update(pod)

    # ------------------------------------------------------------------ StatusUpdater

    def update_pod_group_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        pod_group = self.get("PodGroup", f"{namespace}/{name}")
        if pod_group is None:
            return
        new_status = _stamp_conditions(dict(status), self.clock())
        if _comparable(pod_group.get("status") or {}) == _comparable(new_status):
            return
        pod_group = revised(pod_group)
        pod_group["status"] = new_status
        self.changes += 1
        self.update(pod_group)

    def update_queue_status(self, name: str, allocated: Mapping[str, str]) -> None:
        queue = self.get("Queue", name)
        if queue is None:
            return
        status = queue.setdefault("status", {})
        if status.get("allocated") == dict(allocated):
            return
        queue = copy.deepcopy(queue)
        queue["status"]["allocated"] = dict(allocated)
        self.changes += 1
        self.update(queue)

    def update_pod_condition(
        self, task: TaskInfo, condition: Mapping[str, Any], nominated_node: str
    ) -> None:
        pod = self.get("Pod", task.key)
        if pod is None:
            return
        pod = revised(pod, "status")
        status = pod["status"]
        conditions = [
            c for c in status.get("conditions") or [] if c.get("type") != condition["type"]
        ]
        conditions.append(dict(condition))
        status["conditions"] = conditions
        if nominated_node:
            status["nominatedNodeName"] = nominated_node
        self.update(pod)

    # ------------------------------------------------------------------ EventRecorder

    def record(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None:
        self.events.append((kind, namespace, name, event_type, reason, message))


def revised(obj: Mapping[str, Any], *parts: str) -> dict[str, Any]:
    """A new version of a stored object to change ``parts`` of (``spec``, ``status``...):
    the object and those parts are fresh dicts, everything else is shared with the stored
    version. Stored objects are never changed in place, so sharing is safe, and a bind or a
    phase change costs no deep copy of the pod (tens of thousands per run)."""
    copied = dict(obj)
    for part in parts:
        copied[part] = dict(obj.get(part) or {})
    return copied


def _only_status_differs(old: Mapping[str, Any], new: Mapping[str, Any]) -> bool:
    """Is every part of ``new`` but its status ``old``'s own object (a dict metadata)?"""
    if len(old) != len(new) or type(new.get("metadata")) is not dict:
        return False
    for part, value in new.items():
        if part != "status" and old.get(part, _ABSENT) is not value:
            return False
    return True


_ABSENT: Final = object()


def _queue(name: str, reclaimable: bool) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": name},
        "spec": {"weight": 1, "reclaimable": reclaimable},
        "status": {"state": "Open"},
    }


def _stamp_conditions(status: dict[str, Any], now: float) -> dict[str, Any]:
    conditions = []
    for condition in status.get("conditions") or []:
        condition = dict(condition)
        condition.setdefault("lastTransitionTime", timestamp(now))
        conditions.append(condition)
    if conditions:
        status["conditions"] = conditions
    return status


def _comparable(status: Mapping[str, Any]) -> Mapping[str, Any]:
    """A status without the fields that change on every write (times, session IDs)."""
    result = {k: v for k, v in status.items() if k != "conditions"}
    result["conditions"] = [
        {k: v for k, v in c.items() if k not in ("lastTransitionTime", "transitionID")}
        for c in status.get("conditions") or []
    ]
    return result


def resource_strings(resource: Resource) -> dict[str, str]:
    """cpu and memory always, other dimensions when non-zero: what a person reads."""
    listed = resource.to_list()
    return {
        name: value
        for name, value in listed.items()
        if name in ("cpu", "memory") or resource.get(name) != 0
    }
