"""MindCluster's Ascend 310P vNPU (``deviceshare.AscendMindClusterVNPUEnable``;
``pkg/scheduler/api/devices/ascend/mindcluster/ascend310p/vnpu`` and
``plugins/deviceshare/devices/ascend/310p/vnpu``): AI cores of an NPU chip cut into the
virtual-instance templates the Ascend device plugin creates on demand.

A pod takes part when it is labelled ``ring-controller.atlas: ascend-310P`` and a container
limits ``huawei.com/npu-core``; it asks the first non-zero ``huawei.com/npu-core`` request of
its containers. A multiple of the node's cores per chip is whole chips; otherwise the pod's
``vnpu-level`` (``low``, the default, or ``high``) and ``vnpu-dvpp`` (``yes``/``no``/``null``)
labels pick the template (``vir01``, ``vir02[_1c]``, ``vir04[_3c][_ndvpp]``, ``vir04_4c_dvpp``).

A node is a vNPU node when its capacity has ``huawei.com/npu-core``, its labels
``accelerator`` (``huawei-Ascend310P``), ``servertype`` (``Ascend310P-<cores per chip>``) and
``node.kubernetes.io/npu.chip.name``, and its annotations (with MindCluster's device info over
them, ``mindcluster_info``) list its healthy chips under ``huawei.com/<chip kind>``. Its chips'
use comes from the ``huawei.com/npu-core`` annotation of the pods on it (``<id>-<template>``,
or ``<id>[,<id>...]`` for whole chips).

Filter (``FilterNode``), as upstream: the node is not ``PreSeparate`` (NodeD), has the cores
idle, is a valid vNPU node, the pod's ``vnpu-dvpp`` is valid, and the pods on the node that hold
a template all hold this pod's (whole-chip pods hold none, so they share a node with nobody).
A ``high`` pod whose template the node's chips cannot give is downgraded to the one-AI-CPU-less
template on that node. Like upstream the filter does not check that one chip can give the
template: the chip is chosen at allocation (the least free that fits), and a pod no chip takes
then fails there. The bind annotations are ``huawei.com/npu-core`` and ``predicate-time``.
Score (with ``ScheduleWeight``): 8 to the passing node with the fewest idle cores, or, when the
pod was downgraded on some nodes, 8 to each downgraded node in that order up to 16 to the first
that was not.

Vectorised: the per-chip state of every vNPU node is mirrored in ``[N, C]`` arrays and the
whole filter (downgrade included) is a few array operations per task; ``filter_node`` is the
scalar reading, kept as the reference a property test compares against.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray, NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode
from volcano_py.framework.hooks import NodeMask
from volcano_py.plugins._kube_scheduling.podspec import mapping
from volcano_py.plugins.deviceshare.mindcluster_chips import (
    ANNOTATION_KEYS,
    DVPP_CODES,
    DVPP_NULL,
    DVPP_OFF,
    DVPP_ON,
    MIXED_TEMPLATES,
    NO_TEMPLATE,
    NOT_HOLDING,
    NPU_CORE,
    OTHER_DVPP,
    PREDICATE_TIME,
    REAL_USE,
    SCORE,
    TEMPLATE_BY_RESOURCE,
    TEMPLATE_CODES,
    TEMPLATES,
    UNKNOWN_TEMPLATE,
    VnpuAsk,
    VnpuNode,
    VResource,
    build_node,
    chip_filter,
    downgrade,
    filter_node,
    vnpu_ask,
)
from volcano_py.plugins.deviceshare.mindcluster_info import (
    ASCEND310P,
    InitParams,
    NodeDeviceInfo,
    merged_annotations,
    node_device_info,
    read_config_maps_cached,
)

log = logging.getLogger(__name__)

# Up to this many rows changed since a mask was cached, they are read one by one (the
# scalar reading costs less than the array operations' overhead then).
_SCALAR_ROWS = 4

# What the plugin reads from here.
__all__ = ["ANNOTATION_KEYS", "NPU_CORE", "MindClusterDevices", "build_devices"]

# ---- the session's accounting


@dataclass(slots=True)
class Holding:
    row: int
    allocation: str
    resource: VResource


class MindClusterDevices:
    """The session's vNPU nodes and ``[N, C]`` mirrors of their chips."""

    def __init__(
        self,
        node_list: Sequence[NodeInfo],
        vnpu_nodes: Mapping[int, VnpuNode],
        matrix: NodeMatrix,
    ) -> None:
        """``vnpu_nodes``: by row, every node with ``npu-core`` capacity; ``matrix``: the
        session's, whose idle ``npu-core`` the filter reads."""
        size = len(node_list)
        self.node_list = node_list
        self.nodes = dict(vnpu_nodes)
        self._matrix = matrix
        # Each node's chips in id order, one column each.
        self.columns: dict[int, dict[int, int]] = {
            row: {chip_id: i for i, chip_id in enumerate(sorted(node.chips))}
            for row, node in self.nodes.items()
        }
        width = max((len(node.chips) for node in self.nodes.values()), default=0)
        self.width = width
        self.has_device: BoolArray = np.zeros(size, dtype=bool)
        self.valid: BoolArray = np.zeros(size, dtype=bool)
        self.pre_separate: BoolArray = np.zeros(size, dtype=bool)
        self.cores_per_chip: IntArray = np.zeros(size, dtype=np.int64)
        self.total_core: IntArray = np.zeros(size, dtype=np.int64)
        self.total_cpu: IntArray = np.zeros(size, dtype=np.int64)
        self.sole: IntArray = np.full(size, NO_TEMPLATE, dtype=np.int64)
        self.exists: BoolArray = np.zeros((size, width), dtype=bool)
        self.free_core: IntArray = np.zeros((size, width), dtype=np.int64)
        self.free_cpu: IntArray = np.zeros((size, width), dtype=np.int64)
        self.free_dvpp: IntArray = np.zeros((size, width), dtype=np.int64)
        self.segment: BoolArray = np.zeros((size, width), dtype=bool)
        self.unstable: BoolArray = np.zeros((size, width), dtype=bool)
        self.is_310p: BoolArray = np.zeros((size, width), dtype=bool)
        self.vgroups: IntArray = np.zeros((size, width), dtype=np.int64)
        # Task key -> what it holds where (so eviction and undo give it back).
        self.holders: dict[str, Holding] = {}
        # Task key -> the rows where the pod was downgraded this session (``DowngradeCache``).
        self.downgraded: dict[str, BoolArray] = {}
        self.version = 0
        # The row each change touched, in order: ``version`` indexes it.
        self._changed_rows: list[int] = []
        self._masks: dict[tuple[Any, ...], tuple[int, BoolArray, BoolArray]] = {}
        # Rows whose node this session copied (the others are shared with the memo).
        self._owned: set[int] = set()
        for row, node in self.nodes.items():
            if node.valid:
                for task in node_list[row].tasks.values():
                    self._count_existing(task, row)
            self.has_device[row] = True
            self.valid[row] = node.valid
            self.pre_separate[row] = node.pre_separate
            self.cores_per_chip[row] = node.cores_per_chip
            self.total_core[row] = node.total.aicore
            self.total_cpu[row] = node.total.aicpu
            self._mirror(row)

    # ---- accounting

    def _mirror(self, row: int) -> None:
        node = self.nodes[row]
        self.exists[row] = False
        self.free_core[row] = 0
        self.free_cpu[row] = 0
        self.segment[row] = False
        self.unstable[row] = False
        for chip_id, column in self.columns[row].items():
            chip = node.chips[chip_id]
            self.exists[row, column] = True
            self.free_core[row, column] = chip.free.aicore
            self.free_cpu[row, column] = chip.free.aicpu
            self.free_dvpp[row, column] = DVPP_CODES.get(chip.free.dvpp, OTHER_DVPP)
            self.segment[row, column] = chip.segment
            self.unstable[row, column] = chip.unstable
            self.is_310p[row, column] = chip.kind == ASCEND310P
            self.vgroups[row, column] = chip.vgroups()
        sole = node.sole_template()
        if not node.templates:
            self.sole[row] = NO_TEMPLATE
        elif sole is None:
            self.sole[row] = MIXED_TEMPLATES
        else:
            self.sole[row] = TEMPLATE_CODES.get(sole, len(TEMPLATE_CODES))
        self._changed_rows.append(row)
        self.version += 1

    def _count_existing(self, task: TaskInfo, row: int) -> None:
        """A pod already on the node: what it holds (counted on the chips, and its template,
        when the node was built) kept for its release."""
        if task.status in NOT_HOLDING or not vnpu_ask(task).requested:
            return
        allocation = task.pod_annotations.get(NPU_CORE)
        if not isinstance(allocation, str):
            return
        node = self.nodes[row]
        resource = node.pod_resource(vnpu_ask(task))
        self.holders[task.key] = Holding(
            row, allocation, resource if isinstance(resource, VResource) else VResource()
        )

    def requested(self, task: TaskInfo) -> bool:
        return vnpu_ask(task).requested

    def allocate(self, task: TaskInfo, row: int, now_ns: int) -> str:
        """``Allocate``: the chip chosen, the bind annotations written; the error text, or ""."""
        node = self.nodes.get(row)
        if node is None:
            return f"node {self.node_list[row].name} has no vNPU device"
        ask = vnpu_ask(task)
        resource = node.pod_resource(ask)
        if isinstance(resource, str):
            return resource
        request = resource
        marks = self.downgraded.get(task.key)
        if marks is not None and marks[row]:
            request = downgrade(request)
        try:
            chips = node.select_chips(request)
        except ValueError as error:
            return f"UseAnnotation dynamic {task.name} on {node.name} err: {error}"
        if node.is_whole(request.aicore):
            allocation = chips
        else:
            template = TEMPLATE_BY_RESOURCE.get(request)
            if template is None:
                return f"{request} not get template"
            allocation = f"{chips}-{template}"
        task.pod_annotations[PREDICATE_TIME] = str(now_ns)
        task.pod_annotations[NPU_CORE] = allocation
        # Upstream counts the pod's undowngraded ask on the chip (its template says the
        # downgraded one): so here too, until the next session reads the template.
        self.hold(task, row, allocation, resource)
        return ""

    def _own(self, row: int) -> VnpuNode:
        """The row's node, copied from the one kept across sessions before its first change."""
        if row not in self._owned:
            self.nodes[row] = self.nodes[row].copy()
            self._owned.add(row)
        return self.nodes[row]

    def hold(self, task: TaskInfo, row: int, allocation: str, resource: VResource) -> None:
        self._own(row).add_use(task.key, allocation, resource)
        self.holders[task.key] = Holding(row, allocation, resource)
        self._mirror(row)

    def restore(self, task: TaskInfo, row: int) -> None:
        """An undone eviction: the pod holds again what its annotation says."""
        allocation = _own_annotations(task).get(NPU_CORE)
        node = self.nodes.get(row)
        if node is None or not isinstance(allocation, str):
            return
        resource = node.pod_resource(vnpu_ask(task))
        self.hold(
            task, row, allocation, resource if isinstance(resource, VResource) else VResource()
        )

    def release(self, key: str) -> bool:
        held = self.holders.pop(key, None)
        if held is None:
            return False
        self._own(held.row).remove_use(key, held.allocation, held.resource)
        self._mirror(held.row)
        return True

    def idle_cores(self) -> FloatArray:
        """Every node's idle ``npu-core`` (milli-units) now."""
        column = self._matrix.index.columns.get(NPU_CORE)
        if column is None:
            return np.zeros(len(self.valid))
        idle: FloatArray = self._matrix.idle[: len(self.valid), column]
        return idle

    # ---- filter, vectorised

    def _chip_meets(self, rows: Any, core: IntArray, cpu: IntArray, dvpp: IntArray) -> BoolArray:
        """``isChipMeetResReq`` of every chip of ``rows`` for a per-node request."""
        c, p, d = core[:, None], cpu[:, None], dvpp[:, None]
        free_dvpp = self.free_dvpp[rows]
        meets: BoolArray = self.exists[rows] & (self.free_core[rows] >= c)
        meets &= self.free_cpu[rows] >= p
        grouped = self.is_310p[rows] & self.segment[rows]
        vgroups = self.vgroups[rows]
        meets &= ~(grouped & (vgroups == 3) & (c >= 4))
        meets &= ~(grouped & (vgroups == 4) & (c >= 2))
        on, null, off = DVPP_CODES[DVPP_ON], DVPP_CODES[DVPP_NULL], DVPP_CODES[DVPP_OFF]
        meets &= ~((d == on) & (free_dvpp != on))
        meets &= ~((d == null) & (free_dvpp == off))
        return meets

    def _chip_passes(self, ask: VnpuAsk, rows: Any = slice(None)) -> tuple[BoolArray, BoolArray]:
        """Per node of ``rows``, the part of the filter that depends on the chips: (passes,
        downgraded), idle cores and PreSeparate aside."""
        per_chip = self.cores_per_chip[rows]
        total_core, total_cpu = self.total_core[rows], self.total_cpu[rows]
        exists, free_core = self.exists[rows], self.free_core[rows]
        size = len(per_chip)
        whole = whole_request(np.full(size, ask.cores), per_chip)
        safe_total = np.where(total_core == 0, 1, total_core)
        seg = ask.segment
        seg_dvpp = DVPP_CODES.get(seg.dvpp, OTHER_DVPP)
        core = np.where(whole, ask.cores, seg.aicore)
        cpu = np.where(whole, ask.cores * total_cpu // safe_total, seg.aicpu)
        dvpp = np.where(whole, DVPP_CODES[DVPP_NULL], seg_dvpp)
        initialised = total_core != 0
        # ``GetPodResource`` on a node not set up: an empty request.
        core = np.where(initialised, core, 0)
        cpu = np.where(initialised, cpu, 0)
        dvpp = np.where(initialised, dvpp, OTHER_DVPP)
        # Where the filter gets as far as the downgrade (``CheckNodeNPUByDyPod``).
        ok: BoolArray = self.valid[rows].copy()
        if ask.dvpp_error:
            ok &= whole | ~initialised
        total_enough = (np.where(exists, free_core, 0).sum(axis=1) >= core) & (
            np.where(exists, self.free_cpu[rows], 0).sum(axis=1) >= cpu
        )
        meets = self._chip_meets(rows, core, cpu, dvpp)
        whole_free = (exists & ~self.segment[rows] & (free_core != 0)).sum(axis=1)
        chips_needed = core // np.where(per_chip == 0, 1, per_chip)
        chip_enough = np.where(
            whole_request(core, per_chip),
            chips_needed <= whole_free,
            (meets & ~self.unstable[rows]).any(axis=1)
            if self.width
            else np.zeros(size, dtype=bool),
        )
        not_meet = ~total_enough | ~chip_enough
        can = ((core == 2) & (cpu == 2)) | (
            (core == 4) & (cpu == 4) & (dvpp != DVPP_CODES[DVPP_ON])
        )
        down = ok & not_meet & can
        cpu = np.where(down & (core == 2), 1, np.where(down & (core == 4), 3, cpu))
        code = np.full(size, UNKNOWN_TEMPLATE, dtype=np.int64)
        for name, resource in TEMPLATES.items():
            match = (
                (core == resource.aicore)
                & (cpu == resource.aicpu)
                & (dvpp == DVPP_CODES[resource.dvpp])
            )
            code = np.where(match, TEMPLATE_CODES[name], code)
        sole = self.sole[rows]
        ok &= (sole == NO_TEMPLATE) | ((code >= 0) & (sole == code))
        return ok, down

    def mask(self, task: TaskInfo) -> NodeMask | None:
        ask = vnpu_ask(task)
        if not ask.requested:
            return None
        key = (ask.cores, ask.segment, ask.dvpp_error)
        cached = self._masks.get(key)
        if cached is None:
            chips_ok, down = self._chip_passes(ask)
        elif cached[0] == self.version:
            _, chips_ok, down = cached
        else:
            # Only the rows placements changed since (usually one) are read again.
            _, chips_ok, down = cached
            chips_ok, down = chips_ok.copy(), down.copy()
            dirty = sorted(set(self._changed_rows[cached[0] :]))
            if len(dirty) <= _SCALAR_ROWS:
                for row in dirty:
                    why, downgraded = chip_filter(self.nodes[row], ask, task.name)
                    chips_ok[row], down[row] = why == "", downgraded
            else:
                rows = np.fromiter(dirty, dtype=np.intp, count=len(dirty))
                chips_ok[rows], down[rows] = self._chip_passes(ask, rows)
        self._masks[key] = (self.version, chips_ok, down)
        idle = self.idle_cores()
        passed: BoolArray = chips_ok & ~self.pre_separate & (np.floor(idle / 1000) >= ask.cores)
        # Upstream records a downgrade on every node its filter reached it on.
        reached = down & ~self.pre_separate & (np.floor(idle / 1000) >= ask.cores)
        marks = self.downgraded.get(task.key)
        self.downgraded[task.key] = reached if marks is None else marks | reached

        def reason(row: int) -> Status:
            node = self.nodes.get(row)
            if node is None:
                why = f"not have {NPU_CORE}"
            else:
                why, _ = filter_node(node, ask, task.name, float(idle[row]))
            return Status(StatusCode.ERROR, why or "vNPU filter failed", "deviceshare")

        return NodeMask(passed, reason)

    # ---- score

    def scores(self, task: TaskInfo, rows: IntArray) -> FloatArray:
        """``ScoreBatchNodes`` over ``rows`` (the nodes that passed)."""
        found: FloatArray = np.zeros(len(rows))
        if not vnpu_ask(task).requested or len(rows) == 0:
            return found
        idle = self.idle_cores()
        order = np.argsort(idle[rows], kind="stable")
        marks = self.downgraded.get(task.key)
        down = marks[rows] if marks is not None else np.zeros(len(rows), dtype=bool)
        if not down.any():
            found[order[0]] = SCORE
            return found
        for i in order:
            if not down[i]:
                found[i] += 2 * SCORE
                break
            found[i] += SCORE
        return found


def whole_request(core: IntArray, per_chip: IntArray) -> BoolArray:
    """``IsResourceWholeCard`` of a per-node request."""
    safe = np.where(per_chip == 0, 1, per_chip)
    result: BoolArray = (per_chip != 0) & (core % safe == 0)
    return result


def _own_annotations(task: TaskInfo) -> Mapping[str, Any]:
    return mapping(mapping(task.pod.get("metadata")).get("annotations"))


_NO_DEVICE_INFO: Final = NodeDeviceInfo()


def _pods_signature(tasks: Sequence[TaskInfo]) -> tuple[tuple[Any, ...], ...]:
    """What of the node's pods goes into its chips: each pod object, status and the
    annotations the scheduler bound it with."""
    return tuple(
        (t.pod, t.status, t.pod_annotations.get(NPU_CORE), t.pod_annotations.get(REAL_USE))
        for t in tasks
    )


def _same(kept: tuple[Any, ...], now: tuple[Any, ...]) -> bool:
    """The signature of a node built before equals this one (objects by identity)."""
    if kept[0] is not now[0] or kept[1] is not now[1] or kept[2:5] != now[2:5]:
        return False
    old_pods, new_pods = kept[5], now[5]
    return len(old_pods) == len(new_pods) and all(
        a[0] is b[0] and a[1:] == b[1:] for a, b in zip(old_pods, new_pods, strict=True)
    )


def build_devices(
    node_list: Sequence[NodeInfo],
    matrix: NodeMatrix,
    config_maps: Mapping[str, Mapping[str, Any]],
    params: InitParams,
    now: int,
    memo: dict[str, Any] | None = None,
) -> MindClusterDevices:
    """``initializeDevicesWithSession``: every node with ``npu-core`` capacity, set up from its
    labels, its annotations with MindCluster's device info over them, and its pods.
    ``memo`` (kept from one session to the next): a node whose object, device info and pods
    are those of an earlier session is not built again."""
    memo = memo if memo is not None else {}
    built: dict[str, tuple[tuple[Any, ...], VnpuNode]] = memo.setdefault("nodes", {})
    column = matrix.index.columns.get(NPU_CORE)
    rows: list[int] = []
    if column is not None and matrix.size:
        rows = [int(r) for r in np.flatnonzero(matrix.capacity[: len(node_list), column] > 0)]
    nodes: dict[int, VnpuNode] = {}
    if rows:
        assert column is not None
        info = read_config_maps_cached(memo, config_maps, params.use_cluster_d)
        for row in rows:
            node = node_list[row]
            raw = node.node or {}
            tasks = list(node.tasks.values())
            capacity = float(matrix.capacity[row, column])
            devices = info.devices.get(node.name, _NO_DEVICE_INFO)
            status = info.node_status.get(node.name, "")
            signature = (
                raw,
                devices,
                status,
                capacity,
                params.self_maintain_available_card,
                _pods_signature(tasks),
            )
            kept = built.get(node.name)
            if kept is not None and _same(kept[0], signature):
                nodes[row] = kept[1]
                continue
            own = mapping(mapping(raw.get("metadata")).get("annotations"))
            device_info = node_device_info(
                devices, own, tasks, params.self_maintain_available_card, now
            )
            annotations = merged_annotations(own, device_info, status)
            nodes[row] = build_node(node.name, raw, capacity, annotations, tasks)
            built[node.name] = (signature, nodes[row])
        if len(built) > 2 * len(rows):
            current = {node_list[row].name for row in rows}
            for name in [name for name in built if name not in current]:
                del built[name]
    return MindClusterDevices(node_list, nodes, matrix)
