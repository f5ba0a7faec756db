"""SchedulerCache: the cluster as watch events describe it, snapshotted once per session.

One code path for both worlds: the live operator feeds it from watches, the simulator from its
in-memory cluster, both through ``apply_event(kind, type, obj)`` with raw Kubernetes dicts.
Objects are converted once, on arrival; ``snapshot()`` then copies structure (jobs, task
statuses, node rows) without ever deep-copying pods.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final

from volcano_py import metrics
from volcano_py.api import job as job_module
from volcano_py.api.dra import DraStore
from volcano_py.api.hypernode import HyperNodeSpecError, HyperNodeStore, HyperNodeTree
from volcano_py.api.job import JobInfo, PodGroupInfo
from volcano_py.api.namespace import NamespaceCollection, QuotaSpecError, QuotaStatus
from volcano_py.api.node import NodeFitError, NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.node_usage import NodeUsage
from volcano_py.api.numa import NumatopoInfo, NumatopologySpecError, parse_numatopology
from volcano_py.api.pod_facts import carry_node_facts
from volcano_py.api.queue import QueueInfo
from volcano_py.api.resource import Resource, pod_request, reports_resources, same_pod_request
from volcano_py.api.task import TaskInfo, pod_key, task_status_from
from volcano_py.api.types import (
    ALLOCATED_STATUSES,
    COMPLETED_STATUSES,
    DEFAULT_QUEUE,
    DEFAULT_SCHEDULER_NAME,
    TaskStatus,
)
from volcano_py.cache.interfaces import Binder, EventRecorder, Evictor, StatusUpdater
from volcano_py.cache.node_selector import NodeSelector, node_selected
from volcano_py.cache.snapshot import ClusterSnapshot

log = logging.getLogger(__name__)

ADDED: Final = "ADDED"
MODIFIED: Final = "MODIFIED"
DELETED: Final = "DELETED"
EVENT_TYPES: Final = frozenset({ADDED, MODIFIED, DELETED})

KINDS: Final = frozenset(
    {
        "Pod",
        "Node",
        "PodGroup",
        "Queue",
        "HyperNode",
        "Numatopology",
        "PriorityClass",
        "PodDisruptionBudget",
        "ResourceQuota",
        "ConfigMap",
        # resource.k8s.io/v1 (DRA)
        "DeviceClass",
        "ResourceSlice",
        "ResourceClaim",
        "ResourceClaimTemplate",
    }
)
# Kinds whose events never read or write a node's books (its tasks, its matrix row): while
# ``charges_batched`` runs, the charges waiting stay waiting across them.
_KINDS_AWAY_FROM_NODES: Final = frozenset(
    {"PodGroup", "Queue", "PriorityClass", "HyperNode", "Numatopology", "PodDisruptionBudget"}
)
# The key of a device configuration ConfigMap (HAMi's and Volcano's device-config.yaml).
DEVICE_CONFIG_KEY: Final = "device-config.yaml"
# The ConfigMaps MindCluster's Ascend components publish per node (device plugin, NodeD,
# ClusterD), by namespace and name prefix: deviceshare's MindCluster vNPU reads them as
# upstream's informers do (third_party/mindcluster/common/k8s).
MINDCLUSTER_CONFIG_MAPS: Final = (
    ("kube-system", "mindx-dl-deviceinfo-"),
    ("mindx-dl", "mindx-dl-nodeinfo-"),
    ("mindx-dl", "cluster-info-device-"),
    ("mindx-dl", "cluster-info-node-cm"),
)


# Which of a node's resources Volcano leaves out of every resource count, given the node and
# the device configurations (``devices.GetIgnoredDevices``); set from the conf's deviceshare.
IgnoredResourcesRule = Callable[[Mapping[str, Any], Mapping[str, str]], frozenset[str]]


def _without_names(resource_list: Any, names: frozenset[str]) -> Any:
    if not names or not isinstance(resource_list, Mapping):
        return resource_list
    if names.isdisjoint(resource_list):
        return resource_list
    return {k: v for k, v in resource_list.items() if k not in names}


def _is_mindcluster_config_map(meta: Mapping[str, Any]) -> bool:
    namespace, name = meta.get("namespace") or "default", str(meta.get("name", ""))
    return any(
        namespace == where and name.startswith(prefix) for where, prefix in MINDCLUSTER_CONFIG_MAPS
    )


# A bind of a task on no node yet takes ``_bind_pending``'s short path (False: the general
# remove-then-add, the tests' reference).
_BIND_PENDING_IN_PLACE = True
# ... and the node keeps the bound task itself, not a copy of it (False: a copy, as
# ``NodeInfo.add_task`` makes; the tests' reference).
_BOUND_TASK_SHARED = True
# A status write (``apply_pod_status``) makes the pod's new task from the old one's reading of
# its metadata and spec (False: ``apply_event``'s full reading, the tests' reference).
_STATUS_WRITES_READ_LESS = True


class CacheBindError(RuntimeError):
    """A bind the cache refuses (the pod is gone, or its node has no room left)."""


class CacheEventError(ValueError):
    """An event the cache cannot take (unknown kind or type)."""


@dataclass
class NullIO:
    """I/O that does nothing, for a cache nobody binds through (benchmarks, unit tests)."""

    def bind(self, task: TaskInfo, node_name: str) -> None:
        return None

    def evict(self, task: TaskInfo, reason: str) -> None:
        return None

    def update_pod_group_status(self, namespace: str, name: str, status: Mapping[str, Any]) -> None:
        return None

    def update_queue_status(self, name: str, allocated: Mapping[str, str]) -> None:
        return None

    def update_pod_condition(
        self, task: TaskInfo, condition: Mapping[str, Any], nominated_node: str
    ) -> None:
        return None

    def record(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None:
        return None


@dataclass
class SchedulerCache:
    scheduler_names: frozenset[str] = frozenset({DEFAULT_SCHEDULER_NAME})
    default_queue: str = DEFAULT_QUEUE
    # --node-selector: only nodes with one of these labels are kept (empty: every node).
    node_selector: NodeSelector = frozenset()
    binder: Binder = field(default_factory=NullIO)
    evictor: Evictor = field(default_factory=NullIO)
    status_updater: StatusUpdater = field(default_factory=NullIO)
    recorder: EventRecorder = field(default_factory=NullIO)
    # Wall-clock seconds, for the age of a pod first seen (``stage="Watched"``); the
    # simulator passes its own clock.
    clock: Callable[[], float] = field(default=time.time, repr=False)

    jobs: dict[str, JobInfo] = field(default_factory=dict)
    nodes: dict[str, NodeInfo] = field(default_factory=dict)
    # Node names in first-seen order: the scheduler's canonical node iteration order.
    node_list: list[str] = field(default_factory=list)
    queues: dict[str, QueueInfo] = field(default_factory=dict)
    priority_classes: dict[str, int] = field(default_factory=dict)
    default_priority: int = 0
    # The PriorityClass with ``globalDefault: true`` (there is at most one).
    global_default_class: str = ""
    hyper_nodes: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    # Parsed HyperNodes and node labels; derives (and caches) the tree a snapshot carries.
    hyper_node_store: HyperNodeStore = field(default_factory=HyperNodeStore)
    pod_disruption_budgets: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    # Parsed Numatopology objects by name, which is the name of the node they describe.
    numatopologies: dict[str, NumatopoInfo] = field(default_factory=dict)
    # ResourceQuota statuses per namespace (``NamespaceCollection`` upstream).
    namespace_collection: dict[str, NamespaceCollection] = field(default_factory=dict)
    # Every tracked pod's task, by pod key (namespace/name), with or without a job.
    tasks: dict[str, TaskInfo] = field(default_factory=dict)
    matrix: NodeMatrix = field(default_factory=NodeMatrix)
    # Real node load from the metrics source (``setMetricsData``), by node name.
    node_usage: dict[str, NodeUsage] = field(default_factory=dict)
    # ``device-config.yaml`` of the ConfigMaps that have one, by namespace/name; other
    # ConfigMaps are not kept.
    device_configs: dict[str, str] = field(default_factory=dict)
    # MindCluster's per-node device and health ConfigMaps (``MINDCLUSTER_CONFIG_MAPS``), raw,
    # by namespace/name.
    mindcluster_config_maps: dict[str, Mapping[str, Any]] = field(default_factory=dict)
    # Device resources left out of pods' requests, nodes' allocatable, PodGroups' minResources
    # and queues' quotas (upstream's IgnoredDevicesList: it only grows), and the rule that
    # says which a node brings.
    ignored_resources: frozenset[str] = frozenset()
    ignored_resources_rule: IgnoredResourcesRule | None = None
    # DRA: DeviceClasses, ResourceSlices, ResourceClaims and ResourceClaimTemplates.
    dra: DraStore = field(default_factory=DraStore)
    # Jobs forgotten while a session runs (from its snapshot to its close), as (uid, name,
    # queue, namespace): the session still holds them, and its plugins and close write their
    # per-job series again after the cache removed them. Not kept outside a session (a
    # standby scheduler takes no snapshots).
    forgotten_jobs: list[tuple[str, str, str, str]] = field(default_factory=list)
    session_running: bool = False
    lock: threading.RLock = field(default_factory=threading.RLock)
    # While ``charges_batched`` runs: the copies of new pods' tasks their nodes hold but have
    # not charged yet, by node name, charged node by node at its end (None: charged at once).
    _uncharged: dict[str, list[TaskInfo]] | None = field(default=None, repr=False)

    # ------------------------------------------------------------------ events

    def apply_event(self, kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        """Apply one watch event (``ADDED``/``MODIFIED``/``DELETED``) of a raw object."""
        if event_type not in EVENT_TYPES:
            raise CacheEventError(f"unknown event type {event_type!r} for {kind}")
        handler = _HANDLERS.get(kind)
        if handler is None:
            raise CacheEventError(f"the scheduler cache does not track kind {kind!r}")
        with self.lock:
            if self._uncharged and not (
                kind in _KINDS_AWAY_FROM_NODES
                or (kind == "Pod" and event_type == ADDED and pod_key(obj) not in self.tasks)
            ):
                self._charge_held()  # what may read or move a node's books sees them whole
            handler(self, event_type, obj)

    def apply_pod_status(self, old: Mapping[str, Any], pod: Mapping[str, Any]) -> None:
        """``apply_event("Pod", MODIFIED, pod)`` for a status write: ``pod`` is ``old`` (the
        version this cache was given last) with another ``status``, its ``spec`` the same
        object, its metadata a copy with another ``resourceVersion`` at most (labels and
        annotations the same objects). The new task keeps what the old one read of the
        metadata and spec (uid, job, role, priority...) and reads the status, the node and the
        binding annotations afresh: the task ``TaskInfo.from_pod`` makes, without reading the
        whole pod again (a kubelet's report: 60k of them in a 5k-node dump's first cycles).
        Anything else takes ``apply_event``."""
        with self.lock:
            previous = self.tasks.get(pod_key(pod)) if _STATUS_WRITES_READ_LESS else None
            task = (
                None
                if previous is None or self._uncharged
                else _task_of_status_write(previous, old, pod)
            )
            if previous is None or task is None:
                self.apply_event("Pod", MODIFIED, pod)
                return
            carry_node_facts(previous, task)
            if not self._replace_in_place(previous, task):
                self._remove_task(previous)
                self._add_task(task)

    def apply_events(self, events: Iterable[tuple[str, str, Mapping[str, Any]]]) -> None:
        for kind, event_type, obj in events:
            self.apply_event(kind, event_type, obj)

    @contextlib.contextmanager
    def charges_batched(self) -> Iterator[None]:
        """Inside, a new pod on a known node is put there without charging its request; at
        the end each node is charged once for all of them (``NodeInfo.charge_held``: the same
        sums, bit for bit). An event that may read or move a node's books (a pod seen before,
        a Node, a ConfigMap...) and a snapshot charge what waits first; PodGroups, Queues and
        the like do not. For loading a dump: 50k pods cost a numpy row update each otherwise."""
        with self.lock:
            self._uncharged = {}
        try:
            yield
        finally:
            with self.lock:
                self._charge_held()
                self._uncharged = None

    def _charge_held(self) -> None:
        uncharged = self._uncharged
        if not uncharged:
            return
        for name, held in uncharged.items():
            self.nodes[name].charge_held(held)
        uncharged.clear()

    # ---- pods

    def _tracks_pod(self, pod: Mapping[str, Any]) -> bool:
        spec = pod.get("spec") or {}
        scheduler = spec.get("schedulerName") or DEFAULT_SCHEDULER_NAME
        return scheduler in self.scheduler_names or bool(spec.get("nodeName"))

    def _on_pod(self, event_type: str, pod: Mapping[str, Any]) -> None:
        key = pod_key(pod)
        previous = self.tasks.get(key)
        tracked = event_type != DELETED and self._tracks_pod(pod)
        if previous is None or not tracked:
            if previous is not None:
                self._remove_task(previous)
            if not tracked:
                return
            task = TaskInfo.from_pod(pod, pod_request(pod).without(self.ignored_resources))
            self._add_task(task)
        else:
            try:
                if same_pod_request(previous.pod, pod):
                    request = previous.resreq  # shared, as task copies share it: never mutated
                else:
                    request = pod_request(pod).without(self.ignored_resources)
                task = TaskInfo.from_pod(pod, request)
                if request is previous.resreq:
                    # The same spec and request: the same facts its node sums.
                    carry_node_facts(previous, task)
            except Exception:
                self._remove_task(previous)  # a pod the cache cannot read is not kept
                raise
            if not self._replace_in_place(previous, task):
                self._remove_task(previous)
                self._add_task(task)
        if event_type == ADDED and not task.node_name:
            self._observe_watched(task)

    def _replace_in_place(self, previous: TaskInfo, task: TaskInfo) -> bool:
        """Put ``task`` where ``previous`` was when nothing the books count changed (a pod's
        kubelet reporting it Running: 50k such updates in a 5k-node dump's first cycle).
        The result is what removing ``previous`` and adding ``task`` gives (the same dict
        orders included) without taking the request off the node and the job and putting
        it back. False, with nothing changed, when that shortcut does not apply."""
        # Another status that counts the same (Bound to Running): the node's and the job's
        # sums stay; the status index moves.
        same_count = task.status is previous.status or (
            task.status in ALLOCATED_STATUSES and previous.status in ALLOCATED_STATUSES
        )
        if (
            task.uid != previous.uid
            or task.resreq is not previous.resreq
            or task.job != previous.job
            or not same_count
            # A Binding task is re-checked against the node's idle when added again.
            or task.status is TaskStatus.BINDING
            or task.node_name != previous.node_name
            or task.task_role != previous.task_role
            or task.best_effort != previous.best_effort
        ):
            return False
        key = task.key
        job = self.jobs.get(task.job) if task.job else None
        if task.job and (
            job is None or job.sub_group_policies or job.tasks.get(task.uid) is not previous
        ):
            return False
        # Removing the last task of a job without PodGroup forgets the job: not a shortcut.
        if job is not None and job.pod_group is None and len(job.tasks) == 1:
            return False
        node = None
        if task.node_name:
            node = self.nodes.get(task.node_name)
            if node is None or node.node is None:
                return False  # a placeholder node goes and comes back: not a shortcut
            held = node.tasks.get(key)
            if held is None or held.status is not previous.status or held.resreq is not task.resreq:
                return False
        self.tasks.pop(key)
        self.tasks[key] = task
        if job is not None:
            job.replace_task(previous, task)
        if node is not None:
            node.swap_task(task)
        return True

    def _observe_watched(self, task: TaskInfo) -> None:
        """``task_scheduling_latency{stage="Watched"}``: a pending pod reached the cache."""
        if not metrics.RECORDING.on:
            return
        created = metrics.epoch_seconds(task.creation_timestamp)
        if created is not None:
            metrics.TASK_WATCHED.observe(metrics.milliseconds(max(0.0, self.clock() - created)))

    def _add_task(self, task: TaskInfo) -> None:
        self.tasks[task.key] = task
        if task.job:
            job = self.jobs.get(task.job)
            if job is None:
                job = self.jobs[task.job] = JobInfo(uid=task.job)
            job.add_task(task)
        # Finished pods hold nothing on their node.
        if task.node_name and task.status not in COMPLETED_STATUSES:
            node = self.nodes.get(task.node_name)
            if node is None:
                node = self._placeholder_node(task.node_name)
            uncharged = self._uncharged
            if uncharged is None or node.node is None or task.status is TaskStatus.BINDING:
                if uncharged and task.status is TaskStatus.BINDING:
                    self._charge_held()  # its room is checked against idle
                node.add_task(task)
            else:
                held = node.hold_uncharged(task)
                pending = uncharged.get(task.node_name)
                if pending is None:
                    uncharged[task.node_name] = [held]
                else:
                    pending.append(held)

    def _remove_task(self, task: TaskInfo) -> None:
        self.tasks.pop(task.key, None)
        if task.job and task.job in self.jobs:
            job = self.jobs[task.job]
            job.delete_task(task)
            if not job.tasks and job.pod_group is None:
                self._forget_job(job)
        if task.node_name and task.node_name in self.nodes:
            node = self.nodes[task.node_name]
            if task.key in node.tasks:
                node.remove_task(task)
            if node.node is None and not node.tasks:
                self._drop_node(node.name)

    # ---- nodes

    def _placeholder_node(self, name: str) -> NodeInfo:
        """A node a pod names before the node itself is known: NotReady, out of snapshots."""
        node = NodeInfo(name=name, matrix=self.matrix, row=self.matrix.add_row())
        self.nodes[name] = node
        self.node_list.append(name)
        return node

    def _on_node(self, event_type: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        name = str(meta.get("name", ""))
        if not node_selected(self.node_selector, meta.get("labels")):
            # Not ours (any more): Volcano skips such a node; one relabelled out leaves.
            event_type = DELETED
        if event_type == DELETED:
            node = self.nodes.get(name)
            if node is None:
                return
            self.hyper_node_store.delete_node(name)
            if node.tasks:
                node.node = None
                node.phase_reason = "NodeDeleted"
                node.phase = node.phase.NOT_READY
            else:
                self._drop_node(name)
            return
        node = self.nodes.get(name) or self._placeholder_node(name)
        if self.ignored_resources_rule is not None:
            self._ignore(self.ignored_resources_rule(obj, self.device_configs))
        node.set_node(obj, self.ignored_resources)
        # Labels feed regexMatch/labelMatch members; a status-only update costs a dict compare.
        self.hyper_node_store.set_node(name, (obj.get("metadata") or {}).get("labels"))

    def _drop_node(self, name: str) -> None:
        node = self.nodes.pop(name)
        self.node_usage.pop(name, None)
        self.matrix.free_row(node.row)
        self.node_list.remove(name)

    # ---- CRDs and the rest

    def _forget_job(self, job: JobInfo) -> None:
        """The job is gone: so are its per-job metric series (``DeleteJobMetrics``), or every
        job ever scheduled would stay a series in /metrics."""
        del self.jobs[job.uid]
        metrics.forget_job(job.name, job.queue, job.namespace)
        if self.session_running:
            self.forgotten_jobs.append((job.uid, job.name, job.queue, job.namespace))

    def forget_series_of_jobs_gone_during_session(self) -> None:
        """After a session closed: the series of jobs deleted while it ran, which its plugins
        (drf's share) and its close (unscheduled tasks) wrote again from the snapshot. Found
        by ``bench churn``: without it a few series of deleted jobs stayed every round."""
        with self.lock:
            for uid, name, queue, namespace in self.forgotten_jobs:
                if uid not in self.jobs:
                    metrics.forget_job(name, queue, namespace)
            self.forgotten_jobs.clear()
            self.session_running = False

    def _on_pod_group(self, event_type: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        uid = f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
        job = self.jobs.get(uid)
        if event_type == DELETED:
            if job is not None:
                job.unset_pod_group()
                if not job.tasks:
                    self._forget_job(job)
            return
        if job is None:
            job = self.jobs[uid] = JobInfo(uid=uid)
        job.set_pod_group(self._pod_group(obj))
        metrics.job_pod_group_set(job.name, job.queue, job.namespace, job.creation_timestamp)

    def _on_queue(self, event_type: str, obj: Mapping[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name", ""))
        if event_type == DELETED:
            self.queues.pop(name, None)
            # ``DeleteQueueMetrics``: a deleted queue's series go with it.
            metrics.forget_queue(name)
        else:
            self.queues[name] = self._queue(obj)

    def _on_priority_class(self, event_type: str, obj: Mapping[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name", ""))
        if event_type == DELETED:
            self.priority_classes.pop(name, None)
            if self.global_default_class == name:
                self.global_default_class = ""
        else:
            self.priority_classes[name] = int(obj.get("value") or 0)
            if obj.get("globalDefault"):
                self.global_default_class = name
            elif self.global_default_class == name:
                self.global_default_class = ""
        self.default_priority = self.priority_classes.get(self.global_default_class, 0)

    def _on_hyper_node(self, event_type: str, obj: Mapping[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name", ""))
        if event_type == DELETED:
            self.hyper_nodes.pop(name, None)
            self.hyper_node_store.delete_hyper_node(name)
            return
        self.hyper_nodes[name] = obj
        try:
            self.hyper_node_store.set_hyper_node(obj)
        except HyperNodeSpecError as error:
            # The API server's CRD validation keeps such objects out of a live cluster; if one
            # gets here anyway, scheduling goes on without it rather than on its stale version.
            log.error("%s; the HyperNode is left out of the network topology", error)
            self.hyper_node_store.delete_hyper_node(name)

    def _on_numatopology(self, event_type: str, obj: Mapping[str, Any]) -> None:
        name = str((obj.get("metadata") or {}).get("name", ""))
        if event_type == DELETED:
            self.numatopologies.pop(name, None)
            return
        try:
            self.numatopologies[name] = parse_numatopology(obj)
        except NumatopologySpecError as error:
            # Placing pods by a stale or half-read topology would get them refused by the
            # kubelet; without one, numa-aware treats the node as having none.
            log.error("%s; the node is scheduled as if it had no Numatopology", error)
            self.numatopologies.pop(name, None)

    def _on_pdb(self, event_type: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
        if event_type == DELETED:
            self.pod_disruption_budgets.pop(key, None)
        else:
            self.pod_disruption_budgets[key] = obj

    def _on_config_map(self, event_type: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        key = f"{meta.get('namespace') or 'default'}/{meta.get('name', '')}"
        data = obj.get("data") or {}
        if _is_mindcluster_config_map(meta):
            if event_type == DELETED:
                self.mindcluster_config_maps.pop(key, None)
            else:
                self.mindcluster_config_maps[key] = obj
        text = data.get(DEVICE_CONFIG_KEY) if isinstance(data, Mapping) else None
        if event_type == DELETED or not isinstance(text, str):
            self.device_configs.pop(key, None)
            return
        self.device_configs[key] = text
        # The device configuration names the resources nodes bring.
        self._apply_ignored_resources_rule()

    # ---- ignored device resources

    def set_ignored_resources_rule(self, rule: IgnoredResourcesRule | None) -> None:
        """The conf's rule for the device resources Volcano ignores; every node is read
        against a new one. Names once ignored stay so (upstream's list only grows)."""
        with self.lock:
            if rule == self.ignored_resources_rule:
                return
            self.ignored_resources_rule = rule
            self._apply_ignored_resources_rule()

    def _apply_ignored_resources_rule(self) -> None:
        rule = self.ignored_resources_rule
        if rule is None:
            return
        names: set[str] = set()
        for node in self.nodes.values():
            if node.node is not None:
                names.update(rule(node.node, self.device_configs))
        self._ignore(frozenset(names))

    def _ignore(self, names: frozenset[str]) -> None:
        """Upstream leaves ignored names out of every resource list it reads after they are
        appended; here what was read before is read again too, so the order the objects
        arrived in does not matter."""
        added = names - self.ignored_resources
        if not added:
            return
        self._charge_held()  # every node and task is read again below
        self.ignored_resources = self.ignored_resources | added
        log.info("device resources left out of resource counting: %s", ", ".join(sorted(added)))
        for node in list(self.nodes.values()):
            if node.node is not None:
                node.set_node(node.node, self.ignored_resources)
        for task in list(self.tasks.values()):
            if added.isdisjoint(task.resreq.scalar_resources):
                continue
            # Out and back in, so the job's and the node's sums follow; the task keeps its
            # status (a bind in flight stays one). Sessions hold copies: the old request
            # object is theirs, untouched.
            self._remove_task(task)
            task.resreq = task.resreq.without(added)
            task.init_resreq = task.init_resreq.without(added)
            task.best_effort = task.resreq.is_empty()
            self._add_task(task)
        for job in self.jobs.values():
            if job.pod_group is not None:
                job.pod_group = self._without_ignored(job.pod_group)
        for name, queue in list(self.queues.items()):
            self.queues[name] = self._queue_without_ignored(queue)

    def _pod_group(self, obj: Mapping[str, Any]) -> PodGroupInfo:
        return self._without_ignored(PodGroupInfo.from_dict(obj, self.default_queue))

    def _without_ignored(self, info: PodGroupInfo) -> PodGroupInfo:
        kept = _without_names(info.min_resources, self.ignored_resources)
        return info if kept is info.min_resources else replace(info, min_resources=kept)

    def _queue(self, obj: Mapping[str, Any]) -> QueueInfo:
        return self._queue_without_ignored(QueueInfo.from_dict(obj))

    def _queue_without_ignored(self, queue: QueueInfo) -> QueueInfo:
        names = self.ignored_resources
        if not names:
            return queue
        return replace(
            queue,
            capability=queue.capability.without(names) if queue.capability else None,
            deserved=queue.deserved.without(names) if queue.deserved else None,
            guarantee=queue.guarantee.without(names) if queue.guarantee else None,
        )

    def _on_resource_quota(self, event_type: str, obj: Mapping[str, Any]) -> None:
        meta = obj.get("metadata") or {}
        namespace = str(meta.get("namespace") or "default")
        name = str(meta.get("name", ""))
        collection = self.namespace_collection.get(namespace)
        if event_type == DELETED:
            if collection is not None:
                collection.delete(name)
            return
        try:
            status = QuotaStatus.from_dict(obj)
        except QuotaSpecError as error:
            # The API server keeps such objects out of a live cluster; a stale version must
            # not go on limiting the namespace either.
            log.error("%s; the ResourceQuota is left out", error)
            if collection is not None:
                collection.delete(name)
            return
        if collection is None:
            collection = self.namespace_collection[namespace] = NamespaceCollection(namespace)
        collection.update(name, status)

    def _on_dra(self, kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        deleted = event_type == DELETED
        if kind == "DeviceClass":
            self.dra.on_class(deleted, obj)
        elif kind == "ResourceSlice":
            self.dra.on_slice(deleted, obj)
        elif kind == "ResourceClaim":
            self.dra.on_claim(deleted, obj)
        else:
            self.dra.on_template(deleted, obj)

    # ------------------------------------------------------------------ snapshot

    def job_priority(self, job: JobInfo) -> int:
        """The value of the PodGroup's PriorityClass, else the global default, else 0."""
        name = job.pod_group.priority_class_name if job.pod_group is not None else ""
        if name and name in self.priority_classes:
            return self.priority_classes[name]
        return self.default_priority

    def snapshot(self) -> ClusterSnapshot:
        """A session's private copy: ready nodes (compact matrix rows in node-list order),
        queues, and every job that has a PodGroup in a known queue."""
        with self.lock:
            self._charge_held()
            self.forgotten_jobs.clear()  # not in this snapshot: nothing will write them again
            self.session_running = True
            ready = [self.nodes[name] for name in self.node_list if self.nodes[name].ready]
            matrix = self.matrix.take([node.row for node in ready])
            nodes = {node.name: node.clone_into(matrix, row) for row, node in enumerate(ready)}
            jobs: dict[str, JobInfo] = {}
            for uid, job in self.jobs.items():
                if job.pod_group is None or job.queue not in self.queues:
                    continue
                job.priority = self.job_priority(job)
                jobs[uid] = job.snapshot_copy()
            return ClusterSnapshot(
                jobs=jobs,
                nodes=nodes,
                node_list=[node.name for node in ready],
                matrix=matrix,
                queues={name: queue.clone() for name, queue in self.queues.items()},
                priority_classes=dict(self.priority_classes),
                node_usage=(
                    {
                        node.name: self.node_usage[node.name]
                        for node in ready
                        if node.name in self.node_usage
                    }
                    if self.node_usage
                    else {}
                ),
                hyper_nodes=list(self.hyper_nodes.values()),
                hyper_node_tree=self._hyper_node_tree([node.name for node in ready]),
                pod_disruption_budgets=list(self.pod_disruption_budgets.values()),
                numa_info={
                    node.name: self.numatopologies[node.name]
                    for node in ready
                    if node.name in self.numatopologies
                },
                namespace_info={
                    name: collection.snapshot()
                    for name, collection in self.namespace_collection.items()
                },
                device_configs=dict(self.device_configs),
                mindcluster_config_maps=dict(self.mindcluster_config_maps),
                dra=None if self.dra.empty else self.dra.snapshot(),
            )

    # ---- node metrics

    def node_names(self) -> list[str]:
        """The nodes a metrics collection asks about (``sc.NodeList``)."""
        with self.lock:
            return list(self.node_list)

    def set_node_usage(self, usage: Mapping[str, NodeUsage]) -> None:
        """Record collected node metrics (``setMetricsData``); a node the cache no longer
        knows is skipped, as upstream."""
        with self.lock:
            for name, node_usage in usage.items():
                if name not in self.nodes:
                    log.error("The information about node %s cannot be found in the cache.", name)
                    continue
                self.node_usage[name] = node_usage

    def _hyper_node_tree(self, ready_nodes: list[str]) -> HyperNodeTree | None:
        """The HyperNode tree over the ready nodes, or None without any HyperNode (the session
        then makes the bare virtual root itself, only if something asks for it)."""
        if not self.hyper_node_store.specs:
            return None
        return self.hyper_node_store.tree(ready_nodes)

    # ------------------------------------------------------------------ session outputs

    def add_bind_task(self, task: TaskInfo) -> None:
        """A session committed ``task`` to ``task.node_name``: account it as Binding here
        (so the next snapshot sees it placed) and hand it to the binder. Refused, with the
        cache unchanged, when the pod is gone or the node has no room left for it."""
        with self.lock:
            self._assume_bound(task)
        self.binder.bind(task, task.node_name)

    def add_bind_tasks(self, tasks: Sequence[TaskInfo]) -> list[Exception | None]:
        """``add_bind_task`` of each of ``tasks``, in order, as one call: the cache's part of
        every bind under one hold of the lock, then the binder's, in the same order. Per
        task, what ``add_bind_task`` would have raised (None: bound); a task refused does not
        stop the others, as a statement goes on after a failed bind."""
        outcomes: list[Exception | None] = []
        with self.lock:
            for task in tasks:
                try:
                    self._assume_bound(task)
                except Exception as error:  # handed back to the statement
                    outcomes.append(error)
                else:
                    outcomes.append(None)
        binder = self.binder
        for at, task in enumerate(tasks):
            if outcomes[at] is None:
                try:
                    binder.bind(task, task.node_name)
                except Exception as error:  # handed back to the statement
                    outcomes[at] = error
        return outcomes

    def _assume_bound(self, task: TaskInfo) -> None:
        """The cache's part of a bind (the lock held): the task Binding on its node."""
        key = task.key
        cached = self.tasks.get(key)
        if cached is None or cached.uid != task.uid:
            raise CacheBindError(f"pod {key} no longer exists; not bound")
        bound = cached.clone()
        bound.node_name = task.node_name
        bound.status = TaskStatus.BINDING
        bound.pod_annotations = dict(task.pod_annotations)
        if not (_BIND_PENDING_IN_PLACE and self._bind_pending(key, cached, bound)):
            self._remove_task(cached)
            try:
                self._add_task(bound)
            except NodeFitError as error:
                self._remove_task(bound)
                self._add_task(cached)
                raise CacheBindError(f"pod {key}: {error}") from error
        if task.claim_allocations:
            consumer = {"resource": "pods", "name": task.name, "uid": task.uid}
            for claim_key, allocation in task.claim_allocations.items():
                self.dra.assume(claim_key, allocation or {}, consumer)

    def _bind_pending(self, key: str, cached: TaskInfo, bound: TaskInfo) -> bool:
        """``_remove_task(cached)`` then ``_add_task(bound)`` for the common bind: a task on
        no node yet, of a job that stays known, going to a known node that has the room
        (the same dicts in the same orders, the same sums), without the general path's
        checks for what does not apply. False, with nothing changed, when it does not apply
        (the general path then binds or refuses)."""
        if cached.node_name or self._uncharged:
            return False
        node = self.nodes.get(bound.node_name)
        if node is None or node.node is None:
            return False
        job = None
        if cached.job:
            job = self.jobs.get(cached.job)
            # Without its PodGroup, a job losing its last task is forgotten.
            if job is None or (job.pod_group is None and len(job.tasks) == 1):
                return False
        # The node first: it refuses (no room, already there) before changing anything, and
        # it reads nothing of the job or the task index the lines below change.
        try:
            if _BOUND_TASK_SHARED:
                # The cache made ``bound`` for this bind and never changes a task in place:
                # the node, the job and the task index may hold the one object.
                node.adopt_task(bound)
            else:
                node.add_task(bound)
        except NodeFitError:
            return False
        del self.tasks[key]
        if job is not None:
            existing = job.tasks.get(cached.uid)
            if job_module._ONE_CALL_MOVES and existing is not None and not job.sub_group_policies:
                job.refile_task(existing, bound, bound.status)
            else:
                job.delete_task(cached)
                job.add_task(bound)
        self.tasks[key] = bound
        return True

    def evict(self, task: TaskInfo, reason: str) -> None:
        with self.lock:
            cached = self.tasks.get(task.key)
            if cached is not None:
                self._remove_task(cached)
                releasing = cached.clone()
                releasing.status = TaskStatus.RELEASING
                self._add_task(releasing)
        self.evictor.evict(task, reason)
        self.recorder.record(
            "Pod",
            task.namespace,
            task.name,
            "Warning",
            "Evict",
            f"Pod is evicted, because of {reason}",
        )
        if task.job:
            namespace, group = task.job.split("/", 1)
            self.recorder.record("PodGroup", namespace, group, "Normal", "Evict", reason)

    def update_pod_group_status(self, job: JobInfo) -> None:
        if job.pod_group is None:
            return
        status = job.pod_group.status_dict()
        with self.lock:
            cached = self.jobs.get(job.uid)
            if cached is not None and cached.pod_group is not None:
                cached.pod_group.phase = job.pod_group.phase
                cached.pod_group.conditions = [dict(c) for c in job.pod_group.conditions]
                cached.pod_group.running = job.pod_group.running
                cached.pod_group.succeeded = job.pod_group.succeeded
                cached.pod_group.failed = job.pod_group.failed
        self.status_updater.update_pod_group_status(job.namespace, job.name, status)

    def update_job_info(self, job: JobInfo) -> None:
        """``updateJobInfo``: the HyperNodes the job and its sub-jobs occupy (and the ones
        gangpreempt/gangreclaim nominated) are kept on the cache's job for later sessions."""
        with self.lock:
            cached = self.jobs.get(job.uid)
            if cached is None:
                return
            cached.allocated_hyper_node = job.allocated_hyper_node
            for sub_job in job.all_sub_jobs():
                mine = cached.sub_jobs.get(sub_job.uid)
                if mine is None and sub_job.uid == cached.uid:
                    mine = cached.default_sub_job()
                if mine is not None:
                    mine.copy_status_from(sub_job)

    def update_queue_status(self, queue: str, allocated: Resource) -> None:
        listed = allocated.to_list()
        with self.lock:
            cached = self.queues.get(queue)
            if cached is not None:
                cached.allocated_status = listed
        self.status_updater.update_queue_status(queue, listed)

    def update_pod_condition(
        self, task: TaskInfo, condition: Mapping[str, Any], nominated_node: str
    ) -> None:
        self.status_updater.update_pod_condition(task, condition, nominated_node)

    def record_event(
        self, kind: str, namespace: str, name: str, event_type: str, reason: str, message: str
    ) -> None:
        self.recorder.record(kind, namespace, name, event_type, reason, message)


def _task_of_status_write(
    previous: TaskInfo, old: Mapping[str, Any], pod: Mapping[str, Any]
) -> TaskInfo | None:
    """``TaskInfo.from_pod(pod, previous.resreq)`` when ``pod`` differs from ``old``, the pod
    ``previous`` was read from, in its status and resourceVersion only (see
    ``apply_pod_status``), and neither reports container resources (``same_pod_request``);
    None otherwise. The cache never changes what its tasks read of the metadata and the spec
    (a bind or an eviction changes the status, the node and the binding annotations, which
    are read here again; ignored resources change the request, which is kept)."""
    if previous.pod is not old:
        return None
    meta, old_meta, spec = pod.get("metadata"), old.get("metadata"), pod.get("spec")
    if spec is not old.get("spec") or not isinstance(spec, dict):
        return None
    if not isinstance(meta, dict) or not isinstance(old_meta, dict):
        return None
    annotations = meta.get("annotations")
    if (
        annotations is not old_meta.get("annotations")
        or meta.get("labels") is not old_meta.get("labels")
        or meta.get("uid") != old_meta.get("uid")
        or meta.get("name") != old_meta.get("name")
        or meta.get("namespace") != old_meta.get("namespace")
        or meta.get("creationTimestamp") != old_meta.get("creationTimestamp")
        or reports_resources(old)
        or reports_resources(pod)
    ):
        return None
    request = previous.resreq
    # Positional, in the fields' order (see from_pod): the metadata's and the spec's facts
    # as read before, the status, node and binding annotations as from_pod reads them.
    return TaskInfo(
        previous.uid,
        previous.job,
        previous.name,
        previous.namespace,
        pod,
        request,
        request,
        task_status_from(pod, meta, spec),
        str(spec.get("nodeName") or ""),
        previous.task_role,
        previous.priority,
        previous.preemptable,
        request.is_empty(),
        previous.sch_gated,
        previous.revocable_zone,
        previous.creation_timestamp,
        None,
        False,
        "",
        dict(annotations or {}),
    )


_HANDLERS: Final[dict[str, Callable[[SchedulerCache, str, Mapping[str, Any]], None]]] = {
    "Pod": SchedulerCache._on_pod,
    "Node": SchedulerCache._on_node,
    "PodGroup": SchedulerCache._on_pod_group,
    "Queue": SchedulerCache._on_queue,
    "HyperNode": SchedulerCache._on_hyper_node,
    "Numatopology": SchedulerCache._on_numatopology,
    "PriorityClass": SchedulerCache._on_priority_class,
    "PodDisruptionBudget": SchedulerCache._on_pdb,
    "ResourceQuota": SchedulerCache._on_resource_quota,
    "ConfigMap": SchedulerCache._on_config_map,
}
for _dra_kind in ("DeviceClass", "ResourceSlice", "ResourceClaim", "ResourceClaimTemplate"):
    _HANDLERS[_dra_kind] = functools.partial(
        lambda kind, cache, event_type, obj: cache._on_dra(kind, event_type, obj), _dra_kind
    )
