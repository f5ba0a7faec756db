"""Binding pods: ``POST pods/{name}/binding`` with the pod's UID, many at a time.

``bind()`` is called by the cache (from the scheduling thread) right after it accounted the
task as Binding; it only queues the request. A fixed pool of ``concurrency`` workers on the I/O
loop sends them, retrying transient failures (no answer, 429, 5xx) with backoff. A ``409
Conflict`` (already bound, or the name now belongs to a recreated pod: the UID precondition) or
a ``404`` re-reads that pod and applies it to the cache (Volcano's ``syncTask``); the API server
itself never lets a pod be bound twice, and the scheduler never retries a conflict.

``PodFeed`` sits between the pod informer and the cache. Between the bind and the watch event
that shows ``spec.nodeName``, an older pod event (our own PodScheduled condition written the
cycle before, kwok, a label change) would put the task back to Pending in the cache, and the
next cycle would place it again. So while a bind is in flight or unconfirmed, pod events
without a node are held back; the bound version, a deletion, a new UID or a failed bind end
the hold (kube-scheduler's "assumed pod").

Node locks (deviceshare's ``NodeLockEnable``, ``TaskInfo.bind_node_locks``): before the Binding
the worker reads the Node and writes the lock annotation, conditioned on the resourceVersion it
read, so two schedulers (or two binds) cannot both take it; a lock younger than five minutes
refuses the bind (the pod is re-read and scheduled again later). A bind that then fails gives
the lock back, since no device plugin will see the pod to remove it.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from volcano_py import metrics
from volcano_py.api.node_lock import MAX_LOCK_RETRY, lock_holding, lock_refusal, lock_value
from volcano_py.api.task import TaskInfo, pod_key
from volcano_py.cache.interfaces import EventRecorder
from volcano_py.operator.informer import DELETED, EventSink, Informer
from volcano_py.runtime.apiclient import MERGE_PATCH, ApiError, KubeApi

log = logging.getLogger(__name__)


@dataclass(slots=True)
class _Assumed:
    uid: str
    node: str
    since: float


class PodFeed:
    """The pod informer's sink: the cache's ``apply_event``, holding back stale events of
    pods whose bind is in flight."""

    def __init__(self, apply: EventSink, clock: Callable[[], float] = time.monotonic) -> None:
        self._apply = apply
        self._clock = clock
        self._lock = threading.Lock()
        self._assumed: dict[str, _Assumed] = {}
        self.held_back = 0

    def __call__(self, kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        key = pod_key(obj)
        # The cache is updated under this lock too: a bind cannot be assumed between the
        # decision and the update.
        with self._lock:
            assumed = self._assumed.get(key)
            if assumed is not None:
                uid = (obj.get("metadata") or {}).get("uid")
                unbound = not (obj.get("spec") or {}).get("nodeName")
                if event_type != DELETED and uid == assumed.uid and unbound:
                    self.held_back += 1
                    return
                del self._assumed[key]
            self._apply(kind, event_type, obj)

    def assume(self, key: str, uid: str, node: str) -> None:
        with self._lock:
            self._assumed[key] = _Assumed(uid, node, self._clock())

    def forget(self, key: str) -> None:
        with self._lock:
            self._assumed.pop(key, None)

    def is_assumed(self, key: str) -> bool:
        with self._lock:
            return key in self._assumed

    def expired(self, older_than: float) -> list[str]:
        """Keys assumed longer ago than ``older_than`` seconds (their watch event is late)."""
        limit = self._clock() - older_than
        with self._lock:
            return [key for key, assumed in self._assumed.items() if assumed.since < limit]

    def __len__(self) -> int:
        with self._lock:
            return len(self._assumed)


@dataclass(slots=True)
class BindRequest:
    namespace: str
    name: str
    uid: str
    node: str
    annotations: dict[str, str]
    created: str
    queued: float = field(default_factory=time.monotonic)
    # Node locks to take before the Binding, and the value written once taken.
    node_locks: tuple[str, ...] = ()
    lock_value: str = ""
    # DRA: claim name -> the allocation to write (None: already allocated, only reserve).
    claims: dict[str, dict[str, Any] | None] = field(default_factory=dict)

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def _seconds_since(timestamp: str) -> float | None:
    try:
        created = datetime.strptime(timestamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=UTC)
    except ValueError:
        return None
    return (datetime.now(UTC) - created).total_seconds()


@dataclass
class BindStats:
    queued: int = 0
    bound: int = 0
    conflicts: int = 0
    failed: int = 0
    retries: int = 0
    dropped: int = 0
    locked: int = 0


class LiveBinder:
    """The cache's Binder for a live cluster (see the module docstring)."""

    def __init__(
        self,
        api: KubeApi,
        loop: asyncio.AbstractEventLoop,
        pods: Informer,
        feed: PodFeed,
        *,
        concurrency: int = 64,
        attempts: int = 5,
        may_write: Callable[[], bool] = lambda: True,
        recorder: EventRecorder | None = None,
        assume_timeout: float = 60.0,
        clock: Callable[[], float] = time.time,
        restore_claim: Callable[[str], None] = lambda key: None,
    ) -> None:
        self.api = api
        self.loop = loop
        self.pods = pods
        self.feed = feed
        self.concurrency = max(1, concurrency)
        self.attempts = max(1, attempts)
        self.may_write = may_write
        self.recorder = recorder
        self.assume_timeout = assume_timeout
        # The wall clock the node locks are stamped and judged with.
        self.clock = clock
        # Puts the watched version of a claim back in the cache (after a failed PreBind the
        # cache must not go on holding the allocation it assumed).
        self.restore_claim = restore_claim
        self.stats = BindStats()
        self._queue: asyncio.Queue[BindRequest] = asyncio.Queue()
        self._in_flight = 0

    # ---- Binder protocol (any thread)

    def bind(self, task: TaskInfo, node_name: str) -> None:
        meta = task.pod.get("metadata") or {}
        current = meta.get("annotations") or {}
        request = BindRequest(
            namespace=task.namespace,
            name=task.name,
            uid=str(meta.get("uid") or ""),
            node=node_name,
            # Only what the session added (device decisions and the like).
            annotations={k: v for k, v in task.pod_annotations.items() if current.get(k) != v},
            created=str(meta.get("creationTimestamp") or ""),
            node_locks=task.bind_node_locks,
            claims={
                key.split("/", 1)[1]: allocation
                for key, allocation in task.claim_allocations.items()
            },
        )
        self.feed.assume(request.key, request.uid, node_name)
        self.stats.queued += 1
        self.loop.call_soon_threadsafe(self._queue.put_nowait, request)

    # ---- the I/O loop side

    @property
    def pending(self) -> int:
        """Binds queued or in flight."""
        return self._queue.qsize() + self._in_flight

    def start(self) -> list[asyncio.Task[None]]:
        tasks = [
            asyncio.create_task(self._worker(), name=f"binder {index}")
            for index in range(self.concurrency)
        ]
        tasks.append(asyncio.create_task(self._expire_assumed(), name="binder expiry"))
        return tasks

    async def drain(self, timeout: float) -> bool:
        """Wait until every queued bind has been sent (True) or ``timeout`` passes."""
        deadline = time.monotonic() + timeout
        while self.pending and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return not self.pending

    async def _worker(self) -> None:
        while True:
            request = await self._queue.get()
            self._in_flight += 1
            try:
                await self._bind(request)
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("bind %s -> %s failed unexpectedly", request.key, request.node)
                self.feed.forget(request.key)
            finally:
                self._in_flight -= 1

    async def _bind(self, request: BindRequest) -> None:
        if not self.may_write():
            # Not the leader (any more): nothing may be written.
            self.stats.dropped += 1
            self.feed.forget(request.key)
            return
        if request.node_locks:
            refusal = await self._lock_node(request)
            if refusal is not None:
                await self._refused(request, refusal)
                return
        if request.claims and not await self._reserve_claims(request):
            if request.lock_value:
                await self._unlock_node(request)
            return
        metadata: dict[str, Any] = {"name": request.name, "namespace": request.namespace}
        if request.uid:
            metadata["uid"] = request.uid
        if request.annotations:
            metadata["annotations"] = request.annotations
        body = {
            "apiVersion": "v1",
            "kind": "Binding",
            "metadata": metadata,
            "target": {"apiVersion": "v1", "kind": "Node", "name": request.node},
        }
        path = f"/api/v1/namespaces/{request.namespace}/pods/{request.name}/binding"
        delay = 0.1
        for attempt in range(1, self.attempts + 1):
            started = time.perf_counter()
            try:
                await self.api.request("POST", path, body)
            except ApiError as error:
                if error.transient and attempt < self.attempts:
                    self.stats.retries += 1
                    await asyncio.sleep(error.retry_after or delay)
                    delay = min(delay * 2, 5.0)
                    continue
                await self._failed(request, error)
                return
            metrics.SCHEDULING_STAGE_DURATION.labels("Bind").observe(
                metrics.milliseconds(time.perf_counter() - started)
            )
            break
        self.stats.bound += 1
        age = _seconds_since(request.created)
        if age is not None:
            metrics.TASK_SCHEDULING_LATENCY.labels("Bound").observe(metrics.milliseconds(age))
        if self.recorder is not None:
            self.recorder.record(
                "Pod",
                request.namespace,
                request.name,
                "Normal",
                "Scheduled",
                f"Successfully assigned {request.key} to {request.node}",
            )

    async def _lock_node(self, request: BindRequest) -> str | None:
        """Take the request's node locks (``LockNode``): why not, or None once written."""
        path = f"/api/v1/nodes/{request.node}"
        for _ in range(MAX_LOCK_RETRY):
            try:
                node = await self.api.request("GET", path)
            except ApiError as error:
                if error.transient:
                    await asyncio.sleep(0.1)
                    continue
                return f"reading node {request.node} to lock it: {error.message}"
            meta = (node or {}).get("metadata") or {}
            annotations = meta.get("annotations") or {}
            now = self.clock()
            for lock_name in request.node_locks:
                refusal = lock_refusal(request.node, annotations, lock_name, now)
                if refusal is not None:
                    return f"{refusal} ({lock_holding(request.node, annotations, lock_name)})"
            value = lock_value(now)
            patch: dict[str, Any] = {
                "metadata": {"annotations": dict.fromkeys(request.node_locks, value)}
            }
            if meta.get("resourceVersion"):
                # Only over the version just judged: a concurrent lock makes this a conflict.
                patch["metadata"]["resourceVersion"] = meta["resourceVersion"]
            try:
                await self.api.request("PATCH", path, patch, content_type=MERGE_PATCH)
            except ApiError as error:
                if error.conflict or error.transient:
                    await asyncio.sleep(0.1)
                    continue
                return f"locking node {request.node}: {error.message}"
            request.lock_value = value
            return None
        return f"locking node {request.node} exceeds retry count {MAX_LOCK_RETRY}"

    async def _unlock_node(self, request: BindRequest) -> None:
        """Give back the locks this request wrote (its bind failed), unless changed since."""
        path = f"/api/v1/nodes/{request.node}"
        for _ in range(MAX_LOCK_RETRY):
            try:
                node = await self.api.request("GET", path)
                meta = (node or {}).get("metadata") or {}
                annotations = meta.get("annotations") or {}
                ours = [n for n in request.node_locks if annotations.get(n) == request.lock_value]
                if not ours:
                    return
                patch: dict[str, Any] = {"metadata": {"annotations": dict.fromkeys(ours)}}
                if meta.get("resourceVersion"):
                    patch["metadata"]["resourceVersion"] = meta["resourceVersion"]
                await self.api.request("PATCH", path, patch, content_type=MERGE_PATCH)
                return
            except ApiError as error:
                if error.conflict or error.transient:
                    await asyncio.sleep(0.1)
                    continue
                log.warning("releasing the lock of node %s failed: %s", request.node, error)
                return
        log.warning("releasing the lock of node %s: retries exhausted", request.node)

    async def _refused(self, request: BindRequest, reason: str) -> None:
        """The node's lock is held: no Binding; the pod is re-read (Pending again)."""
        self.stats.locked += 1
        log.info("bind %s -> %s: %s; re-reading the pod", request.key, request.node, reason)
        if self.recorder is not None:
            self.recorder.record(
                "Pod",
                request.namespace,
                request.name,
                "Warning",
                "FailedScheduling",
                f"Binding rejected: {reason}",
            )
        self.feed.forget(request.key)
        await self._resync(request.key)

    async def _reserve_claims(self, request: BindRequest) -> bool:
        """kube-scheduler's dynamicresources PreBind: each claim gets the allocation the
        session made (unless it has one) and the pod in ``reservedFor``, optimistically
        (resourceVersion), re-read on a conflict. False: the bind is abandoned."""
        consumer = {"resource": "pods", "name": request.name, "uid": request.uid}
        for name, allocation in sorted(request.claims.items()):
            key = f"{request.namespace}/{name}"
            path = f"/apis/resource.k8s.io/v1/namespaces/{request.namespace}/resourceclaims/{name}"
            for attempt in range(1, self.attempts + 1):
                try:
                    claim = await self.api.request("GET", path)
                    status = dict(claim.get("status") or {})
                    if allocation is not None and status.get("allocation") is None:
                        status["allocation"] = allocation
                    elif allocation is not None and status.get("allocation") != allocation:
                        raise ApiError("PATCH", path, 409, "claim allocated meanwhile")
                    reserved = list(status.get("reservedFor") or [])
                    if any(r.get("uid") == request.uid for r in reserved):
                        break
                    reserved.append(consumer)
                    body = {
                        "metadata": {"resourceVersion": claim["metadata"]["resourceVersion"]},
                        "status": {
                            "allocation": status.get("allocation"),
                            "reservedFor": reserved,
                        },
                    }
                    await self.api.request(
                        "PATCH", path + "/status", body, content_type=MERGE_PATCH
                    )
                    break
                except ApiError as error:
                    if (error.conflict or error.transient) and attempt < self.attempts:
                        self.stats.retries += 1
                        await asyncio.sleep(0.1 * attempt)
                        continue
                    log.warning("bind %s: claim %s not reserved: %s", request.key, key, error)
                    for claim_name in request.claims:
                        self.restore_claim(f"{request.namespace}/{claim_name}")
                    await self._failed(request, error)
                    return False
        return True

    async def _failed(self, request: BindRequest, error: ApiError) -> None:
        if request.lock_value:
            await self._unlock_node(request)
        if error.conflict or error.not_found:
            self.stats.conflicts += 1
            log.info(
                "bind %s -> %s: %s; re-reading the pod", request.key, request.node, error.message
            )
        else:
            self.stats.failed += 1
            log.warning(
                "bind %s -> %s failed: %s; re-reading the pod", request.key, request.node, error
            )
            if self.recorder is not None:
                self.recorder.record(
                    "Pod",
                    request.namespace,
                    request.name,
                    "Warning",
                    "FailedScheduling",
                    f"Binding rejected: {error.message}",
                )
        self.feed.forget(request.key)
        await self._resync(request.key)

    async def _resync(self, key: str) -> None:
        for attempt in range(3):
            try:
                await self.pods.resync(key)
                return
            except ApiError as error:
                log.warning(
                    "re-reading pod %s failed (%s)%s",
                    key,
                    error,
                    "; will retry" if attempt < 2 else "",
                )
                await asyncio.sleep(0.5 * (attempt + 1))

    async def _expire_assumed(self) -> None:
        """A bind whose watch event never came (a lost watch, a failed re-read): re-read."""
        while True:
            await asyncio.sleep(max(1.0, self.assume_timeout / 4))
            for key in self.feed.expired(self.assume_timeout):
                log.info(
                    "pod %s: bind not confirmed by the watch after %.0f s; re-reading",
                    key,
                    self.assume_timeout,
                )
                self.feed.forget(key)
                await self._resync(key)
