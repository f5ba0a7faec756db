"""The other writes of a session, each queued by the scheduling thread and sent by the I/O
loop: evictions, status (PodGroup, Queue, pod PodScheduled condition) and Events.

* Evict, as Volcano's ``defaultEvictor``: the pod's conditions ``Ready=False`` (reason
  ``Evict``) and ``DisruptionTarget=True`` (reason ``PreemptionByScheduler``), then DELETE with a
  UID precondition (no Eviction API: that would honour PDBs, which the pdb plugin already did).
  The Warning event comes from the cache through the recorder.
* Status writes coalesce: per object only the newest wanted status is kept, and one write per
  object is in flight at a time. A PodGroup has no status subresource (as upstream), so its
  status goes out as an update of the whole object, conditional on its resourceVersion; a
  conflict re-reads it and tries again. A Queue's ``status.allocated`` is a merge patch of
  ``queues/{name}/status``; a pod's condition a strategic merge patch of ``pods/{name}/status``.
  Each is skipped when the object already says so.
* Events are aggregated per (object, type, reason) with the newest message and a count, and
  flushed once a second, at most 500 a flush (the rest wait), after the binds in flight (at
  most 10 s later): a new Event is created, a known one has its count patched. Events are best
  effort: never retried, and beyond 20,000 waiting new ones are dropped. With
  ``--events=warnings`` only Warning events are written, with ``--events=none`` none.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Final, Generic, TypeVar

from volcano_py.api.task import TaskInfo
from volcano_py.operator.binder import PodFeed
from volcano_py.operator.informer import Informer, is_older
from volcano_py.runtime.apiclient import MERGE_PATCH, STRATEGIC_MERGE_PATCH, ApiError, KubeApi

log = logging.getLogger(__name__)
# The fewest PodGroups kept as written before the status writer sweeps out the stale ones.
WRITTEN_SWEEP_MIN = 64

EVENT_MODES: Final = ("all", "warnings", "none")
SCHEDULING_GROUP: Final = "/apis/scheduling.volcano.sh/v1beta1"
_API_VERSIONS: Final = {
    "Pod": "v1",
    "PodGroup": "scheduling.volcano.sh/v1beta1",
    "Queue": "scheduling.volcano.sh/v1beta1",
    "Job": "batch.volcano.sh/v1alpha1",
    "CronJob": "batch.volcano.sh/v1alpha1",
    "Node": "v1",
}
_CLUSTER_SCOPED: Final = frozenset({"Queue", "Node", "HyperNode"})


def rfc3339(moment: datetime | None = None) -> str:
    return (moment or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%SZ")


K = TypeVar("K")
V = TypeVar("V")


class CoalescingQueue(Generic[K, V]):
    """Newest value per key; a key handed out is not handed out again until ``done``.
    Used from the I/O loop only."""

    def __init__(self) -> None:
        self._pending: dict[K, V] = {}
        self._busy: set[K] = set()
        self._ready: asyncio.Queue[K] = asyncio.Queue()

    def put(self, key: K, value: V) -> None:
        if key not in self._pending and key not in self._busy:
            self._ready.put_nowait(key)
        self._pending[key] = value

    async def get(self) -> tuple[K, V]:
        key = await self._ready.get()
        self._busy.add(key)
        return key, self._pending.pop(key)

    def done(self, key: K) -> None:
        self._busy.discard(key)
        if key in self._pending:
            self._ready.put_nowait(key)

    def __len__(self) -> int:
        return len(self._pending) + len(self._busy)


async def _with_retries(what: str, call: Callable[[], Any], attempts: int = 5) -> Any:
    """``await call()`` again on transient errors; other errors propagate."""
    delay = 0.1
    for attempt in range(1, attempts + 1):
        try:
            return await call()
        except ApiError as error:
            if not error.transient or attempt == attempts:
                raise
            log.debug("%s: %s; retrying", what, error)
            await asyncio.sleep(error.retry_after or delay)
            delay = min(delay * 2, 5.0)
    return None


# ------------------------------------------------------------------------------ eviction


@dataclass(frozen=True, slots=True)
class _Eviction:
    namespace: str
    name: str
    uid: str
    reason: str


class LiveEvictor:
    def __init__(
        self,
        api: KubeApi,
        loop: asyncio.AbstractEventLoop,
        *,
        concurrency: int = 8,
        may_write: Callable[[], bool] = lambda: True,
    ) -> None:
        self.api = api
        self.loop = loop
        self.concurrency = concurrency
        self.may_write = may_write
        self.evicted = 0
        self.failed = 0
        self._queue: asyncio.Queue[_Eviction] = asyncio.Queue()

    def evict(self, task: TaskInfo, reason: str) -> None:
        uid = str((task.pod.get("metadata") or {}).get("uid") or "")
        eviction = _Eviction(task.namespace, task.name, uid, reason)
        self.loop.call_soon_threadsafe(self._queue.put_nowait, eviction)

    def start(self) -> list[asyncio.Task[None]]:
        return [
            asyncio.create_task(self._worker(), name=f"evictor {index}")
            for index in range(self.concurrency)
        ]

    @property
    def pending(self) -> int:
        return self._queue.qsize()

    async def _worker(self) -> None:
        while True:
            eviction = await self._queue.get()
            if not self.may_write():
                continue
            try:
                await self._evict(eviction)
                self.evicted += 1
            except ApiError as error:
                if error.not_found or error.conflict:
                    continue  # gone already, or the name is another pod's now
                self.failed += 1
                log.warning("evict %s/%s failed: %s", eviction.namespace, eviction.name, error)
            except Exception:
                self.failed += 1
                log.exception("evict %s/%s failed", eviction.namespace, eviction.name)

    async def _evict(self, eviction: _Eviction) -> None:
        base = f"/api/v1/namespaces/{eviction.namespace}/pods/{eviction.name}"
        message = f"Pod is evicted, because of {eviction.reason}"
        now = rfc3339()
        conditions = [
            {
                "type": "Ready",
                "status": "False",
                "reason": "Evict",
                "message": message,
                "lastTransitionTime": now,
            },
            {
                "type": "DisruptionTarget",
                "status": "True",
                "reason": "PreemptionByScheduler",
                "message": message,
                "lastTransitionTime": now,
            },
        ]
        patch: dict[str, Any] = {"status": {"conditions": conditions}}
        if eviction.uid:
            patch["metadata"] = {"uid": eviction.uid}
        await _with_retries(
            f"evict {eviction.name}",
            lambda: self.api.request(
                "PATCH", f"{base}/status", patch, content_type=STRATEGIC_MERGE_PATCH
            ),
        )
        options: dict[str, Any] = {"apiVersion": "v1", "kind": "DeleteOptions"}
        if eviction.uid:
            options["preconditions"] = {"uid": eviction.uid}
        await _with_retries(
            f"delete {eviction.name}", lambda: self.api.request("DELETE", base, options)
        )
        log.info("evicted pod %s/%s (%s)", eviction.namespace, eviction.name, eviction.reason)


# ------------------------------------------------------------------------------ status


def _comparable_conditions(conditions: Any) -> list[dict[str, Any]]:
    return [
        {k: v for k, v in c.items() if k not in ("lastTransitionTime", "transitionID")}
        for c in conditions or []
        if isinstance(c, Mapping)
    ]


def pod_group_status(
    current: Mapping[str, Any] | None, wanted: Mapping[str, Any], now: str
) -> dict[str, Any]:
    """The PodGroup status to write: the scheduler's fields replaced, other fields kept; a
    condition keeps its lastTransitionTime while its status does not change."""
    status = {
        k: v
        for k, v in (current or {}).items()
        if k not in ("phase", "conditions", "running", "succeeded", "failed")
    }
    status.update({k: v for k, v in wanted.items() if k != "conditions"})
    previous = {
        c.get("type"): c for c in (current or {}).get("conditions") or [] if isinstance(c, dict)
    }
    conditions = []
    for condition in wanted.get("conditions") or []:
        condition = dict(condition)
        if not condition.get("lastTransitionTime"):
            old = previous.get(condition.get("type"))
            same = old is not None and old.get("status") == condition.get("status")
            condition["lastTransitionTime"] = (
                old.get("lastTransitionTime")
                if same and old and old.get("lastTransitionTime")
                else now
            )
        conditions.append(condition)
    if conditions:
        status["conditions"] = conditions
    return status


def same_pod_group_status(left: Mapping[str, Any] | None, right: Mapping[str, Any]) -> bool:
    left = left or {}
    strip = ("conditions",)
    return {k: v for k, v in left.items() if k not in strip} == {
        k: v for k, v in right.items() if k not in strip
    } and _comparable_conditions(left.get("conditions")) == _comparable_conditions(
        right.get("conditions")
    )


@dataclass(frozen=True, slots=True)
class _PodCondition:
    uid: str
    condition: Mapping[str, Any]
    nominated: str


StatusKey = tuple[str, str]


class LiveStatusWriter:
    """The cache's StatusUpdater for a live cluster."""

    def __init__(
        self,
        api: KubeApi,
        loop: asyncio.AbstractEventLoop,
        informers: Mapping[str, Informer],
        feed: PodFeed,
        *,
        concurrency: int = 16,
        may_write: Callable[[], bool] = lambda: True,
    ) -> None:
        self.api = api
        self.loop = loop
        self.informers = informers
        self.feed = feed
        self.concurrency = concurrency
        self.may_write = may_write
        self.writes: dict[str, int] = {"PodGroup": 0, "Queue": 0, "Pod": 0}
        self.skipped = 0
        self._queue: CoalescingQueue[StatusKey, Any] = CoalescingQueue()
        # PodGroups as we last wrote them: newer than the informer's until the watch catches up.
        # Swept when it doubles (`_remember_written`): a PodGroup written once and then deleted
        # is never looked up again, and would stay here for good (found by ``bench churn``).
        self._written: dict[str, Mapping[str, Any]] = {}
        self._written_sweep_at = WRITTEN_SWEEP_MIN

    # ---- StatusUpdater protocol (any thread)

    def _put(self, kind: str, key: str, value: Any) -> None:
        self.loop.call_soon_threadsafe(self._queue.put, (kind, key), value)

    def update_pod_group_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        self._put("PodGroup", f"{namespace}/{name}", dict(status))

    def update_queue_status(self, name: str, allocated: Mapping[str, str]) -> None:
        self._put("Queue", name, dict(allocated))

    def update_pod_condition(
        self, task: TaskInfo, condition: Mapping[str, Any], nominated_node: str
    ) -> None:
        uid = str((task.pod.get("metadata") or {}).get("uid") or "")
        self._put("Pod", task.key, _PodCondition(uid, dict(condition), nominated_node))

    # ---- the I/O loop side

    @property
    def pending(self) -> int:
        return len(self._queue)

    def start(self) -> list[asyncio.Task[None]]:
        return [
            asyncio.create_task(self._worker(), name=f"status writer {index}")
            for index in range(self.concurrency)
        ]

    async def _worker(self) -> None:
        while True:
            (kind, key), value = await self._queue.get()
            try:
                if self.may_write():
                    await self._write(kind, key, value)
            except asyncio.CancelledError:
                raise
            except ApiError as error:
                if not (error.not_found or error.conflict):
                    log.warning("status of %s %s not written: %s", kind, key, error)
            except Exception:
                log.exception("status of %s %s not written", kind, key)
            finally:
                self._queue.done((kind, key))

    async def _write(self, kind: str, key: str, value: Any) -> None:
        if kind == "PodGroup":
            await self._write_pod_group(key, value)
        elif kind == "Queue":
            await self._write_queue(key, value)
        else:
            await self._write_pod_condition(key, value)

    def _latest_pod_group(self, key: str) -> Mapping[str, Any] | None:
        known = self.informers["PodGroup"].get(key)
        written = self._written.get(key)
        if written is not None and (known is None or is_older(known, written)):
            return written
        self._written.pop(key, None)
        return known

    def _remember_written(self, key: str, written: Mapping[str, Any]) -> None:
        self._written[key] = written
        if len(self._written) < self._written_sweep_at:
            return
        # Keep only what the informer has not caught up with (and still holds): amortised
        # O(1) a write, since the next sweep waits until the survivors have doubled.
        informer = self.informers["PodGroup"]
        for known_key, version in list(self._written.items()):
            known = informer.get(known_key)
            if known is None or not is_older(known, version):
                del self._written[known_key]
        self._written_sweep_at = max(WRITTEN_SWEEP_MIN, 2 * len(self._written))

    async def _write_pod_group(self, key: str, wanted: Mapping[str, Any]) -> None:
        namespace, _, name = key.partition("/")
        path = f"{SCHEDULING_GROUP}/namespaces/{namespace}/podgroups/{name}"
        current = self._latest_pod_group(key)
        for _attempt in range(5):
            if current is None:
                current = await _with_retries(f"get {path}", lambda: self.api.request("GET", path))
            assert current is not None
            status = pod_group_status(current.get("status"), wanted, rfc3339())
            if same_pod_group_status(current.get("status"), status):
                self.skipped += 1
                return
            body = {**current, "status": status}
            try:
                written = await _with_retries(
                    f"update {path}", functools.partial(self.api.request, "PUT", path, body)
                )
            except ApiError as error:
                if error.conflict:
                    current = None  # changed meanwhile: read it again
                    continue
                raise
            self.writes["PodGroup"] += 1
            if isinstance(written, dict):
                self._remember_written(key, written)
            return
        log.warning("PodGroup %s status not written: it kept changing", key)

    async def _write_queue(self, name: str, allocated: Mapping[str, str]) -> None:
        queue = self.informers["Queue"].get(name)
        current = dict(((queue or {}).get("status") or {}).get("allocated") or {})
        if queue is not None and current == dict(allocated):
            self.skipped += 1
            return
        patch_allocated: dict[str, Any] = dict(allocated)
        for resource in current:
            patch_allocated.setdefault(resource, None)
        path = f"{SCHEDULING_GROUP}/queues/{name}/status"
        body = {"status": {"allocated": patch_allocated}}
        await _with_retries(
            f"patch {path}",
            lambda: self.api.request("PATCH", path, body, content_type=MERGE_PATCH),
        )
        self.writes["Queue"] += 1

    async def _write_pod_condition(self, key: str, wanted: _PodCondition) -> None:
        pod = self.informers["Pod"].get(key)
        if self.feed.is_assumed(key) or (
            pod is not None and (pod.get("spec") or {}).get("nodeName")
        ):
            # Bound or being bound since the session decided: the condition is stale.
            self.skipped += 1
            return
        condition = dict(wanted.condition)
        existing = next(
            (
                c
                for c in ((pod or {}).get("status") or {}).get("conditions") or []
                if c.get("type") == condition.get("type")
            ),
            None,
        )
        if (
            existing is not None
            and all(existing.get(k) == condition.get(k) for k in ("status", "reason", "message"))
            and (
                not wanted.nominated
                or ((pod or {}).get("status") or {}).get("nominatedNodeName") == wanted.nominated
            )
        ):
            self.skipped += 1
            return
        if existing is None or existing.get("status") != condition.get("status"):
            condition["lastTransitionTime"] = rfc3339()
        status: dict[str, Any] = {"conditions": [condition]}
        if wanted.nominated:
            status["nominatedNodeName"] = wanted.nominated
        body: dict[str, Any] = {"status": status}
        if wanted.uid:
            body["metadata"] = {"uid": wanted.uid}
        namespace, _, name = key.partition("/")
        path = f"/api/v1/namespaces/{namespace}/pods/{name}/status"
        await _with_retries(
            f"patch {path}",
            lambda: self.api.request("PATCH", path, body, content_type=STRATEGIC_MERGE_PATCH),
        )
        self.writes["Pod"] += 1


# ------------------------------------------------------------------------------ events


@dataclass(slots=True)
class _PendingEvent:
    message: str
    count: int
    first: str
    last: str


@dataclass(slots=True)
class _PostedEvent:
    namespace: str
    name: str
    count: int
    first: str
    posted_at: float


EventKey = tuple[str, str, str, str, str]


class BatchedEventRecorder:
    """The cache's EventRecorder for a live cluster (see the module docstring)."""

    def __init__(
        self,
        api: KubeApi,
        *,
        mode: str = "all",
        component: str = "volcano",
        instance: str = "",
        flush_period: float = 1.0,
        max_per_flush: int = 500,
        max_pending: int = 20000,
        concurrency: int = 8,
        remember: int = 4096,
        aggregate_for: float = 600.0,
        max_delay: float = 10.0,
        may_write: Callable[[], bool] = lambda: True,
        defer: Callable[[], bool] = lambda: False,
    ) -> None:
        if mode not in EVENT_MODES:
            raise ValueError(f"--events: expected one of {', '.join(EVENT_MODES)}, got {mode!r}")
        self.api = api
        self.mode = mode
        self.component = component
        self.instance = instance
        self.flush_period = flush_period
        self.max_per_flush = max_per_flush
        self.max_pending = max_pending
        self.remember = remember
        self.aggregate_for = aggregate_for
        self.max_delay = max_delay
        self.may_write = may_write
        # Events wait while this says so (binds in flight), at most ``max_delay``.
        self.defer = defer
        self.written = 0
        self.dropped = 0
        self._lock = threading.Lock()
        self._semaphore = asyncio.Semaphore(max(1, concurrency))
        self._pending: dict[EventKey, _PendingEvent] = {}
        self._oldest = 0.0
        self._posted: OrderedDict[EventKey, _PostedEvent] = OrderedDict()

    def record(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None:
        if self.mode == "none" or (self.mode == "warnings" and event_type != "Warning"):
            return
        key = (kind, namespace, name, event_type, reason)
        now = rfc3339()
        with self._lock:
            pending = self._pending.get(key)
            if not self._pending:
                self._oldest = time.monotonic()
            if pending is None:
                if len(self._pending) >= self.max_pending:
                    # A backlog this long is not read by anybody: keep memory bounded.
                    self.dropped += 1
                    return
                self._pending[key] = _PendingEvent(message, 1, now, now)
            else:
                pending.count += 1
                pending.message = message
                pending.last = now

    def start(self) -> list[asyncio.Task[None]]:
        if self.mode == "none":
            return []
        return [asyncio.create_task(self._flusher(), name="event recorder")]

    async def _flusher(self) -> None:
        while True:
            await asyncio.sleep(self.flush_period)
            # Binds first: events are what a person reads later, binds what a pod waits for.
            if self.defer() and time.monotonic() - self._oldest < self.max_delay:
                continue
            try:
                await self.flush()
            except Exception:  # events are best effort; the recorder must not stop
                log.exception("writing events failed")

    async def flush(self) -> None:
        """Write up to ``max_per_flush`` events; the rest wait for the next flush."""
        with self._lock:
            items = list(self._pending.items())
            batch, carried = items[: self.max_per_flush], items[self.max_per_flush :]
            self._pending = dict(carried)
            if carried:
                self._oldest = time.monotonic()
        if not self.may_write():
            return
        await asyncio.gather(*(self._write_bounded(key, event) for key, event in batch))

    async def _write_bounded(self, key: EventKey, event: _PendingEvent) -> None:
        async with self._semaphore:
            await self._write(key, event)

    async def _write(self, key: EventKey, event: _PendingEvent) -> None:
        kind, namespace, name, event_type, reason = key
        event_namespace = namespace if kind not in _CLUSTER_SCOPED and namespace else "default"
        posted = self._posted.get(key)
        try:
            if posted is not None and time.monotonic() - posted.posted_at < self.aggregate_for:
                posted.count += event.count
                patch = {
                    "count": posted.count,
                    "lastTimestamp": event.last,
                    "message": event.message,
                }
                path = f"/api/v1/namespaces/{posted.namespace}/events/{posted.name}"
                try:
                    await self.api.request("PATCH", path, patch, content_type=MERGE_PATCH)
                    self.written += 1
                    return
                except ApiError as error:
                    if not error.not_found:
                        raise
            involved: dict[str, Any] = {
                "kind": kind,
                "name": name,
                "apiVersion": _API_VERSIONS.get(kind, ""),
            }
            if kind not in _CLUSTER_SCOPED:
                involved["namespace"] = namespace
            event_name = f"{name}.{uuid.uuid4().hex[:16]}"
            body = {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": event_name, "namespace": event_namespace},
                "involvedObject": involved,
                "reason": reason,
                "message": event.message,
                "type": event_type,
                "source": {"component": self.component},
                "reportingComponent": self.component,
                "reportingInstance": self.instance,
                "firstTimestamp": event.first,
                "lastTimestamp": event.last,
                "count": event.count,
            }
            await self.api.request("POST", f"/api/v1/namespaces/{event_namespace}/events", body)
            self.written += 1
            self._posted[key] = _PostedEvent(
                event_namespace, event_name, event.count, event.first, time.monotonic()
            )
            self._posted.move_to_end(key)
            while len(self._posted) > self.remember:
                self._posted.popitem(last=False)
        except ApiError as error:
            # Events are best effort (a namespace being deleted, throttling): never retried.
            log.debug("event %s %s/%s %s not written: %s", kind, namespace, name, reason, error)
