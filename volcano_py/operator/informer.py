"""List-and-watch of every kind the scheduler cache tracks, as raw JSON, into
``SchedulerCache.apply_event``.

One small informer per kind: LIST (paged) then WATCH from the list's resourceVersion with
bookmarks; a watch the server ends (its timeout) resumes from the last resourceVersion seen; a
dropped connection backs off and resumes the same way; ``410 Gone`` (the version was compacted
away) LISTs again and *diffs* the new list against what was applied, so an object deleted while
the watch was down is deleted from the cache too. ``synced`` is set after the first LIST has
been applied: the scheduler runs no session before every informer is synced.

Why its own informer and no operator framework for the CRDs (Queue, PodGroup, HyperNode): the
same informer serves them with no extra machinery, and the framework the design card named
lacks two things the scheduler needs, a signal that a kind's initial listing has been
delivered, and deletions noticed across a relist (``410 Gone``); docs/operator-framework.md
has the measurements. The live controllers (``operator/controllers``) use this informer too,
for the same two reasons: a Job whose pods were deleted while a watch was down must still be
reconciled, and no Job may be synced before its pods were listed.
"""

from __future__ import annotations

import asyncio
import logging
import random
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.runtime.apiclient import ApiError, KubeApi

log = logging.getLogger(__name__)

ADDED: Final = "ADDED"
MODIFIED: Final = "MODIFIED"
DELETED: Final = "DELETED"

EventSink = Callable[[str, str, Mapping[str, Any]], None]


@dataclass(frozen=True)
class ResourceKind:
    kind: str
    api_path: str
    plural: str
    namespaced: bool
    # Not served (CRD not installed): synced as empty, listed again later.
    optional: bool = False

    @property
    def collection_path(self) -> str:
        return f"{self.api_path}/{self.plural}"

    def object_path(self, key: str) -> str:
        if self.namespaced:
            namespace, _, name = key.partition("/")
            return f"{self.api_path}/namespaces/{namespace}/{self.plural}/{name}"
        return f"{self.api_path}/{self.plural}/{key}"


POD: Final = ResourceKind("Pod", "/api/v1", "pods", True)
NODE: Final = ResourceKind("Node", "/api/v1", "nodes", False)
QUEUE: Final = ResourceKind("Queue", "/apis/scheduling.volcano.sh/v1beta1", "queues", False)
POD_GROUP: Final = ResourceKind(
    "PodGroup", "/apis/scheduling.volcano.sh/v1beta1", "podgroups", True
)
HYPER_NODE: Final = ResourceKind(
    "HyperNode", "/apis/topology.volcano.sh/v1alpha1", "hypernodes", False, optional=True
)
# Absent unless the Numatopology CRD is installed (a cluster without the resource exporter).
NUMATOPOLOGY: Final = ResourceKind(
    "Numatopology", "/apis/nodeinfo.volcano.sh/v1alpha1", "numatopologies", False, optional=True
)
PRIORITY_CLASS: Final = ResourceKind(
    "PriorityClass", "/apis/scheduling.k8s.io/v1", "priorityclasses", False
)
PDB: Final = ResourceKind(
    "PodDisruptionBudget", "/apis/policy/v1", "poddisruptionbudgets", True, optional=True
)
RESOURCE_QUOTA: Final = ResourceKind("ResourceQuota", "/api/v1", "resourcequotas", True)
# For deviceshare's device configuration and MindCluster's device info (the cache keeps only
# those ConfigMaps).
CONFIG_MAP: Final = ResourceKind("ConfigMap", "/api/v1", "configmaps", True)
# DRA (resource.k8s.io/v1, served by Kubernetes 1.34+): optional, an older API server has none.
_DRA_API: Final = "/apis/resource.k8s.io/v1"
DEVICE_CLASS: Final = ResourceKind("DeviceClass", _DRA_API, "deviceclasses", False, optional=True)
RESOURCE_SLICE: Final = ResourceKind(
    "ResourceSlice", _DRA_API, "resourceslices", False, optional=True
)
RESOURCE_CLAIM: Final = ResourceKind(
    "ResourceClaim", _DRA_API, "resourceclaims", True, optional=True
)
RESOURCE_CLAIM_TEMPLATE: Final = ResourceKind(
    "ResourceClaimTemplate", _DRA_API, "resourceclaimtemplates", True, optional=True
)
# Nodes first: pods then land on known nodes rather than placeholders.
WATCHED_KINDS: Final = (
    NODE,
    QUEUE,
    PRIORITY_CLASS,
    HYPER_NODE,
    NUMATOPOLOGY,
    PDB,
    RESOURCE_QUOTA,
    CONFIG_MAP,
    DEVICE_CLASS,
    RESOURCE_SLICE,
    RESOURCE_CLAIM_TEMPLATE,
    RESOURCE_CLAIM,
    POD_GROUP,
    POD,
)


def object_key(obj: Mapping[str, Any], namespaced: bool = True) -> str:
    meta = obj.get("metadata") or {}
    name = str(meta.get("name", ""))
    if not namespaced:
        return name
    return f"{meta.get('namespace') or 'default'}/{name}"


def _resource_version(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("resourceVersion", ""))


def is_older(obj: Mapping[str, Any], than: Mapping[str, Any]) -> bool:
    """``obj`` is a strictly older version of ``than`` (etcd revisions are integers; anything
    unparsable counts as not older, so it is applied)."""
    try:
        return int(_resource_version(obj)) < int(_resource_version(than))
    except ValueError:
        return False


class _Gone(Exception):
    """The watch's resourceVersion is too old: list again."""


class Backoff:
    def __init__(self, initial: float = 0.2, maximum: float = 10.0) -> None:
        self.initial = initial
        self.maximum = maximum
        self.current = initial

    def next(self) -> float:
        delay = self.current * (0.8 + 0.4 * random.random())
        self.current = min(self.maximum, self.current * 2)
        return delay

    def reset(self) -> None:
        self.current = self.initial


class Informer:
    """One kind: ``run()`` forever (cancel it to stop). ``objects`` holds the last version
    applied of every object, by key (``ns/name``, or ``name`` for cluster-scoped kinds)."""

    def __init__(
        self,
        api: KubeApi,
        resource: ResourceKind,
        sink: EventSink,
        *,
        page_size: int = 500,
        watch_timeout: tuple[int, int] = (300, 600),
        optional_relist_period: float = 60.0,
    ) -> None:
        self.api = api
        self.resource = resource
        self.sink = sink
        self.page_size = page_size
        self.watch_timeout = watch_timeout
        self.optional_relist_period = optional_relist_period
        self.objects: dict[str, Mapping[str, Any]] = {}
        self.resource_version = ""
        self.synced = threading.Event()
        self.lists = 0
        self.watches = 0
        self.events = 0
        self._last_problem: tuple[str, int, str] | None = None
        self._last_logged = 0.0

    @property
    def kind(self) -> str:
        return self.resource.kind

    def key(self, obj: Mapping[str, Any]) -> str:
        return object_key(obj, self.resource.namespaced)

    def get(self, key: str) -> Mapping[str, Any] | None:
        return self.objects.get(key)

    def _deliver(self, event_type: str, obj: Mapping[str, Any]) -> None:
        self.events += 1
        try:
            self.sink(self.resource.kind, event_type, obj)
        except Exception:
            # One object the cache cannot take must not stop the watch of its kind.
            log.exception(
                "%s %s %s: not applied to the cache", self.kind, event_type, self.key(obj)
            )

    async def run(self) -> None:
        backoff = Backoff()
        must_list = True
        while True:
            try:
                if must_list:
                    await self.relist()
                    must_list = False
                await self._watch()
                backoff.reset()
            except _Gone:
                log.info(
                    "%s watch: resourceVersion %s expired (410), listing again",
                    self.kind,
                    self.resource_version,
                )
                must_list = True
            except ApiError as error:
                if error.gone:
                    must_list = True
                    continue
                if error.not_found and self.resource.optional:
                    if not self.synced.is_set():
                        log.warning(
                            "%s is not served by this API server (%s); treated as"
                            " empty, checked again every %.0f s",
                            self.kind,
                            error,
                            self.optional_relist_period,
                        )
                        self.synced.set()
                    must_list = True
                    await asyncio.sleep(self.optional_relist_period)
                    continue
                delay = backoff.next()
                self._log_failure(error, "list" if must_list else "watch", delay)
                await asyncio.sleep(delay)
            except (ValueError, KeyError, TypeError, AttributeError):
                # A malformed answer: start over from a LIST rather than stop watching.
                log.exception("%s: unexpected answer from the API server; listing again", self.kind)
                must_list = True
                await asyncio.sleep(backoff.next())

    def _log_failure(self, error: ApiError, what: str, delay: float) -> None:
        """Once per distinct problem a minute: a missing RBAC rule would flood the log."""
        level = logging.WARNING if error.status not in (0, 429) else logging.INFO
        if error.status in (401, 403):
            level = logging.ERROR
        problem = (what, error.status, error.message)
        now = time.monotonic()
        if problem == self._last_problem and now - self._last_logged < 60.0:
            level = logging.DEBUG
        else:
            self._last_problem, self._last_logged = problem, now
        log.log(level, "%s %s failed (%s); retrying in %.1f s", self.kind, what, error, delay)

    async def relist(self) -> None:
        """LIST everything and apply the difference to what was applied before."""
        items, version = await self.api.list_all(
            self.resource.collection_path, page_size=self.page_size
        )
        self.lists += 1
        fresh: dict[str, Mapping[str, Any]] = {}
        for obj in items:
            key = self.key(obj)
            fresh[key] = obj
            old = self.objects.get(key)
            if old is None:
                self._deliver(ADDED, obj)
            elif _resource_version(old) != _resource_version(obj):
                self._deliver(MODIFIED, obj)
        vanished = [key for key in self.objects if key not in fresh]
        for key in vanished:
            self._deliver(DELETED, self.objects[key])
        self.objects = fresh
        self.resource_version = version
        if not self.synced.is_set():
            log.info("%s: listed %d", self.kind, len(items))
        elif vanished:
            log.info(
                "%s: relist found %d deleted while the watch was down", self.kind, len(vanished)
            )
        self.synced.set()

    async def _watch(self) -> None:
        params = {"resourceVersion": self.resource_version, "allowWatchBookmarks": "true"}
        timeout = random.randint(*self.watch_timeout)
        self.watches += 1
        async for event in self.api.watch(self.resource.collection_path, params, timeout):
            event_type = event.get("type")
            obj = event.get("object") or {}
            if event_type == "ERROR":
                code = int(obj.get("code") or 0)
                if code == 410:
                    raise _Gone()
                raise ApiError(
                    "WATCH",
                    self.resource.collection_path,
                    code,
                    str(obj.get("message", obj)),
                    reason=str(obj.get("reason", "")),
                )
            version = _resource_version(obj)
            if version:
                self.resource_version = version
            if event_type == "BOOKMARK":
                continue
            if event_type not in (ADDED, MODIFIED, DELETED):
                log.warning("%s watch: ignoring event type %r", self.kind, event_type)
                continue
            key = self.key(obj)
            old = self.objects.get(key)
            if event_type == DELETED:
                self.objects.pop(key, None)
            elif old is not None and is_older(obj, old):
                # A resync (GET) already applied a newer version; the watch lags behind it.
                continue
            else:
                self.objects[key] = obj
            self._deliver(event_type, obj)

    async def resync(self, key: str) -> Mapping[str, Any] | None:
        """GET one object and apply it unless the cache already has a newer version (what
        Volcano's ``syncTask`` does after a failed bind). A 404 deletes it. Returns the
        object, or None when it is gone."""
        try:
            obj: Mapping[str, Any] = await self.api.request("GET", self.resource.object_path(key))
        except ApiError as error:
            if not error.not_found:
                raise
            old = self.objects.pop(key, None)
            if old is not None:
                self._deliver(DELETED, old)
            return None
        old = self.objects.get(key)
        if old is None and self._watched_past(obj):
            # The watch went past this version and holds no such object: it was deleted after
            # the GET read it (under churn, a failed bind's pod deleted meanwhile). Applying
            # the late answer would keep a deleted object in the cache until the next relist.
            return None
        if old is None or not is_older(obj, old):
            self.objects[key] = obj
            self._deliver(MODIFIED if old is not None else ADDED, obj)
        return obj

    def _watched_past(self, obj: Mapping[str, Any]) -> bool:
        """Every event up to ``obj``'s version was applied (etcd revisions are integers;
        anything unparsable, or nothing listed yet, counts as not past)."""
        try:
            return int(_resource_version(obj)) <= int(self.resource_version)
        except ValueError:
            return False


class Informers:
    """The informers of every watched kind, feeding one sink (``Pod`` may have its own)."""

    def __init__(
        self,
        api: KubeApi,
        sink: EventSink,
        *,
        kinds: Iterable[ResourceKind] = WATCHED_KINDS,
        sinks: Mapping[str, EventSink] | None = None,
        **options: Any,
    ) -> None:
        self.by_kind: dict[str, Informer] = {
            kind.kind: Informer(api, kind, (sinks or {}).get(kind.kind, sink), **options)
            for kind in kinds
        }

    def __getitem__(self, kind: str) -> Informer:
        return self.by_kind[kind]

    def synced(self) -> bool:
        return all(informer.synced.is_set() for informer in self.by_kind.values())

    def unsynced(self) -> list[str]:
        return [kind for kind, informer in self.by_kind.items() if not informer.synced.is_set()]

    def start(self) -> list[asyncio.Task[None]]:
        return [
            asyncio.create_task(informer.run(), name=f"informer {kind}")
            for kind, informer in self.by_kind.items()
        ]


def readiness_problem(informers: Informers | None, is_leader: bool) -> str:
    """Why a watching process is not ready ("" when it is): a kind not listed yet, or another
    replica holding the Lease. The scheduler and the controllers answer /readyz with it."""
    if informers is None or not informers.synced():
        waiting = informers.unsynced() if informers is not None else ["all"]
        return f"cache not synced: waiting for the first list of {', '.join(waiting)}"
    if not is_leader:
        return "not the leader (standby)"
    return ""
