"""The deviceshare plugin itself: reads its arguments, builds the session's device accounting
(GpuShare, vGPU and the Ascend vNPU kinds) and registers the predicate, the score and the
event handlers that pick cards at allocation and write them into the pod's bind annotations.

Upstream picks the cards in the predicates plugin's allocate event (``devices.Allocate``) and
merges the returned annotations into ``TaskInfo.PodAnnotations``, which the binder sends with
the Binding; here deviceshare's own event handler does both (plugins do not reach into each
other), into ``TaskInfo.pod_annotations``, which both binders (live and ``simulate``) send.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import FloatArray, IntArray
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event, EventHandler
from volcano_py.framework.session import Session
from volcano_py.plugins._plugin_helpers import warn_once
from volcano_py.plugins.deviceshare import ascend, gpushare, mindcluster, vgpu
from volcano_py.plugins.deviceshare.ascend import AscendDevices
from volcano_py.plugins.deviceshare.config import nvidia_config, vnpus_config
from volcano_py.plugins.deviceshare.gpushare import GpuShareDevices, format_gpu_index
from volcano_py.plugins.deviceshare.mindcluster import MindClusterDevices, build_devices
from volcano_py.plugins.deviceshare.mindcluster_info import INIT_PARAMS, InitParams
from volcano_py.plugins.deviceshare.nodelock import (
    ASCEND_HAMI_LOCK,
    GPUSHARE_LOCK,
    VGPU_LOCK,
    NodeLocks,
    Refusal,
)
from volcano_py.plugins.deviceshare.options import (
    ARGUMENTS,
    BINPACK,
    PLUGIN_NAME,
    SCHEDULE_POLICY,
    SPREAD,
    UNPORTED,
    UNSUPPORTED_ARGUMENTS,
    DeviceShareOptions,
    refused_arguments,
)
from volcano_py.plugins.deviceshare.vgpu import VgpuDevices, encode_pod_devices

log = logging.getLogger(__name__)

# What the conf check reads next to ``new`` (see framework.conf_check).
__all__ = ["ARGUMENTS", "REFUSED_ARGUMENTS", "UNSUPPORTED_ARGUMENTS", "DeviceSharePlugin", "new"]
REFUSED_ARGUMENTS = refused_arguments


def _own_annotations(task: TaskInfo) -> Mapping[str, str]:
    annotations: Mapping[str, str] = (task.pod.get("metadata") or {}).get("annotations") or {}
    return annotations


def _bound_to(task: TaskInfo, node_name: str) -> bool:
    """The pod already runs there (an eviction this session undone): its cards are those of
    its own annotations, not a new pick."""
    return str((task.pod.get("spec") or {}).get("nodeName") or "") == node_name


class DeviceSharePlugin:
    name = PLUGIN_NAME

    def __init__(self, arguments: Arguments) -> None:
        self.arguments = arguments
        self.options = DeviceShareOptions.from_arguments(arguments)
        for key, why in UNPORTED.items():
            if key in arguments:
                warn_once(log, f"{PLUGIN_NAME}: argument {key} has no effect: {why}")
        policy = self.options.schedule_policy
        if policy not in ("", BINPACK, SPREAD):
            # Volcano takes any string and then orders cards as without a policy.
            warn_once(
                log,
                f"{PLUGIN_NAME}: {SCHEDULE_POLICY} {policy!r} is neither {BINPACK!r} nor"
                f" {SPREAD!r}; vGPU cards are tried highest id first and not scored, as Volcano"
                " does without a policy",
            )
        self.conflict = self.options.conflict()
        if self.conflict is not None:
            # The conf check refuses this before any session; a plugin built otherwise
            # (a test, an embedding) does nothing rather than guess which switch wins.
            warn_once(log, f"{PLUGIN_NAME}: {self.conflict}; the plugin does nothing")
        self.gpushare: GpuShareDevices | None = None
        self.vgpu: VgpuDevices | None = None
        # One per Ascend kind of the device config (HAMi vNPU).
        self.ascend: list[AscendDevices] = []
        self.ascend_words: tuple[str, ...] = ()
        # With deviceshare.NodeLockEnable: the session's node locks.
        self.locks: NodeLocks | None = None
        self.mindcluster: MindClusterDevices | None = None

    def on_session_open(self, ssn: Session) -> None:
        options = self.options
        if self.conflict is not None:
            return
        memory = ssn.state.plugin_memory.setdefault(PLUGIN_NAME, {})
        if options.gpushare:
            self.gpushare = GpuShareDevices(
                ssn.node_list,
                options.gpu_sharing,
                options.gpu_number,
                memory.setdefault("gpushare inventory", {}),
            )
        if options.vgpu:
            config = nvidia_config(ssn.device_configs, options.config_key)
            self.vgpu = VgpuDevices(
                ssn.node_list,
                config,
                options.schedule_policy,
                memory.setdefault("vgpu registrations", {}),
                options.exclusive_rules,
            )
        if options.ascend_hami_vnpu:
            vnpus = vnpus_config(ssn.device_configs, options.config_key)
            registrations = memory.setdefault("ascend registrations", {})
            self.ascend_words = tuple(kind.common_word for kind in vnpus.configs)
            self.ascend = [
                AscendDevices(
                    ssn.node_list,
                    kind,
                    vnpus.hami_vnpu_core,
                    options.schedule_policy,
                    registrations.setdefault(kind.common_word, {}),
                )
                for kind in vnpus.configs
            ]
        if options.ascend_mindcluster_vnpu:
            self.mindcluster = build_devices(
                ssn.node_list,
                ssn.matrix,
                ssn.mindcluster_config_maps,
                InitParams.from_arguments(ssn.conf.configurations.get(INIT_PARAMS, {})),
                int(ssn.now),
                memory.setdefault("mindcluster config maps", {}),
            )
        if (
            self.gpushare is None
            and self.vgpu is None
            and not self.ascend
            and self.mindcluster is None
        ):
            return
        if options.node_lock:
            self.locks = NodeLocks(memory.setdefault("node locks", {}), ssn.now)
        for devices in (self.gpushare, self.vgpu, *self.ascend, self.mindcluster):
            if devices is not None:
                ssn.add_predicate_mask_fn(self.name, devices.mask)
        if self.vgpu is not None:
            ssn.add_task_predicate_fn(self.name, self._vgpu_predicate)
        for kind in self.ascend:
            ssn.add_task_predicate_fn(self.name, self._ascend_predicate(kind))
        scored = self.vgpu is not None or self.ascend or self.mindcluster is not None
        if scored and options.schedule_weight > 0:
            ssn.add_batch_node_order_fn(self.name, self._scores)
        ssn.add_event_handler(
            EventHandler(
                allocate=lambda event: self._allocate(ssn, event),
                deallocate=lambda event: self._deallocate(ssn, event),
                owner=self.name,
            )
        )

    def on_session_close(self, ssn: Session) -> None:
        if self.locks is not None:
            self.locks.record_fit_errors(ssn.jobs)
            self.locks.close(ssn.nodes)
            self.locks = None
        self.gpushare = None
        self.vgpu = None
        self.ascend = []
        self.mindcluster = None

    # ---- predicate and score

    def _vgpu_predicate(
        self, task: TaskInfo
    ) -> Callable[[TaskInfo, NodeInfo], Status | None] | None:
        """The exact per-node fit, for the requests the vectorised mask cannot decide."""
        devices = self.vgpu
        if devices is None or not devices.needs_scalar_fit(task):
            return None
        return devices.predicate

    @staticmethod
    def _ascend_predicate(
        devices: AscendDevices,
    ) -> Callable[[TaskInfo], Callable[[TaskInfo, NodeInfo], Status | None] | None]:
        def for_task(task: TaskInfo) -> Callable[[TaskInfo, NodeInfo], Status | None] | None:
            return devices.predicate if devices.needs_scalar_fit(task) else None

        return for_task

    def _scores(self, task: TaskInfo, rows: IntArray) -> FloatArray:
        """Upstream's NodeOrderFn: the devices' scores summed and rounded, times
        ScheduleWeight (GpuShare's ScoreNode is 0); plus its BatchNodeOrderFn, MindCluster
        vNPU's, times ScheduleWeight."""
        batch: FloatArray = np.zeros(len(rows))
        vnpu = self.mindcluster
        if vnpu is not None and vnpu.requested(task):
            batch = vnpu.scores(task, rows) * self.options.schedule_weight
        found: FloatArray = np.zeros(len(rows))
        asked = False
        for devices in (self.vgpu, *self.ascend):
            if devices is not None and devices.requested(task):
                found += devices.scores(task, rows)
                asked = True
        if not asked:
            return found + batch
        scores: FloatArray = np.floor(found + 0.5) * self.options.schedule_weight + batch
        return scores

    # ---- allocation events

    def _allocate(self, ssn: Session, event: Event) -> None:
        task = event.task
        node = ssn.nodes.get(task.node_name)
        if node is None:
            return
        row = node.row
        share = self.gpushare
        if share is not None and share.has_device[row] and share.requested(task):
            if _bound_to(task, node.name) and gpushare.GPU_INDEX in _own_annotations(task):
                share.restore(task, row, _own_annotations(task))
            else:
                if self.locks is not None and gpushare.gpu_request(task).memory > 0:
                    # Upstream locks only for a pod sharing a card by memory.
                    refusal = self.locks.take(task, node, GPUSHARE_LOCK)
                    if refusal is not None:
                        self._refused(
                            event,
                            node,
                            refusal,
                            f"node {node.name} locked for lockname gpushare {refusal.reason}",
                        )
                        return
                cards = share.allocate(task, row)
                if cards is None:
                    event.error = (
                        f"the node {node.name} can't place the pod {task.name}"
                        f" in ns {task.namespace}"
                    )
                    return
                task.pod_annotations[gpushare.PREDICATE_TIME] = str(int(ssn.now * 1e9))
                task.pod_annotations[gpushare.GPU_INDEX] = format_gpu_index(cards)
        self._allocate_vgpu(ssn, event, node)
        if not event.error:
            self._allocate_ascend(ssn, event, node)
        if not event.error:
            self._allocate_mindcluster(ssn, event, node)

    def _refused(self, event: Event, node: NodeInfo, refusal: Refusal, error: str) -> None:
        """The allocation is vetoed for a held lock (``error``: Volcano's words for it)."""
        event.error = error
        if self.locks is not None:
            self.locks.refuse(event.task, node, error, refusal)

    def _allocate_vgpu(self, ssn: Session, event: Event, node: NodeInfo) -> None:
        task, row = event.task, node.row
        devices = self.vgpu
        if devices is not None and devices.has_device[row] and devices.requested(task):
            if _bound_to(task, node.name) and vgpu.ASSIGNED_IDS in _own_annotations(task):
                devices.restore(task, row, _own_annotations(task))
                return
            result = devices.allocate(task, row)
            if not result.fits:
                event.error = result.error
                return
            if self.locks is not None:
                # Upstream locks after the fit.
                refusal = self.locks.take(task, node, VGPU_LOCK)
                if refusal is not None:
                    devices.release(task.key)
                    self._refused(
                        event,
                        node,
                        refusal,
                        f"node {node.name} locked for {task.name} hamivgpu lockname"
                        f" {refusal.reason}",
                    )
                    return
            ids = encode_pod_devices(result.devices)
            now = str(int(ssn.now))
            task.pod_annotations.update(
                {
                    vgpu.ASSIGNED_NODE: node.name,
                    vgpu.ASSIGNED_TIME: now,
                    vgpu.ASSIGNED_IDS: ids,
                    vgpu.ASSIGNED_IDS_TO_ALLOCATE: ids,
                    vgpu.BIND_PHASE: "allocating",
                    vgpu.BIND_TIME: now,
                }
            )

    def _allocate_ascend(self, ssn: Session, event: Event, node: NodeInfo) -> None:
        task, row = event.task, node.row
        for kind in self.ascend:
            if not kind.has_device[row] or not kind.requested(task):
                continue
            word = kind.kind.common_word
            own = _own_annotations(task)
            if _bound_to(task, node.name) and ascend.allocated_annotation(word) in own:
                kind.restore(task, row, own)
                continue
            if self.locks is not None:
                refusal = self.locks.take(task, node, ASCEND_HAMI_LOCK)
                if refusal is not None:
                    self._refused(
                        event,
                        node,
                        refusal,
                        f"node {node.name} locked for {task.name} hami vnpu. lockname"
                        f" {refusal.reason}",
                    )
                    return
            result = kind.allocate(task, row, int(ssn.now), node.name)
            if isinstance(result, str):
                event.error = result
                return

    def _allocate_mindcluster(self, ssn: Session, event: Event, node: NodeInfo) -> None:
        task, row = event.task, node.row
        devices = self.mindcluster
        if devices is None or not devices.has_device[row] or not devices.requested(task):
            return
        if _bound_to(task, node.name) and mindcluster.NPU_CORE in _own_annotations(task):
            devices.restore(task, row)
            return
        error = devices.allocate(task, row, int(ssn.now * 1e9))
        if error:
            event.error = error

    def _deallocate(self, ssn: Session, event: Event) -> None:
        task = event.task
        if self.locks is not None:
            self.locks.release(task)
        share = self.gpushare
        if share is not None and share.requested(task):
            share.release(task.key)
            for key in gpushare.ANNOTATION_KEYS:
                task.pod_annotations.pop(key, None)
        devices = self.vgpu
        if devices is not None and devices.requested(task):
            devices.release(task.key)
            # Once bound, the device plugin owns these annotations.
            if _own_annotations(task).get(vgpu.BIND_PHASE) != "success":
                for key in vgpu.ANNOTATION_KEYS:
                    task.pod_annotations.pop(key, None)
        released = [kind.release(task.key) for kind in self.ascend if kind.requested(task)]
        # Once bound, the device plugin owns these annotations (``Release``).
        if any(released) and _own_annotations(task).get(ascend.BIND_PHASE) != "success":
            for key in ascend.release_keys(self.ascend_words):
                task.pod_annotations.pop(key, None)
        vnpu = self.mindcluster
        if vnpu is not None and vnpu.requested(task) and vnpu.release(task.key):
            # ``Release``'s keys, but a bound pod's own annotations stay what it was bound with.
            own = _own_annotations(task)
            for key in mindcluster.ANNOTATION_KEYS:
                if key in own:
                    task.pod_annotations[key] = own[key]
                else:
                    task.pod_annotations.pop(key, None)


def new(arguments: Arguments) -> DeviceSharePlugin:
    return DeviceSharePlugin(arguments)
