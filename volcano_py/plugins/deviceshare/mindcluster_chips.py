"""MindCluster 310P vNPU's model of one node (``ascend310p/vnpu/{device_info,device_manage,
utils}.go``, ``deviceshare/devices/ascend/310p/vnpu/init_policy.go``): the templates, what a pod
asks, the node's chips and their use, and the filter read node by node (``filter_node``, the
reference the vectorised filter in ``mindcluster`` is tested against). See ``mindcluster`` for
the behaviour as a whole.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from volcano_py.api.quantity import QuantityError, quantity_value
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.plugins._kube_scheduling.podspec import containers, mapping
from volcano_py.plugins.deviceshare.mindcluster_info import ASCEND310P, HW_PREFIX, NODED_STATUS

DEVICE_NAME: Final = "ascend310p-vNPU"
NPU_CORE: Final = "huawei.com/npu-core"
REAL_USE: Final = "huawei.com/AscendReal"
PREDICATE_TIME: Final = "predicate-time"
RING_CONTROLLER: Final = "ring-controller.atlas"
JOB_KIND_310P: Final = "ascend-310P"
VNPU_LEVEL: Final = "vnpu-level"
VNPU_DVPP: Final = "vnpu-dvpp"
LEVEL_LOW: Final = "low"
LEVEL_HIGH: Final = "high"
DVPP_ON: Final = "yes"
DVPP_OFF: Final = "no"
DVPP_NULL: Final = "null"
ACCELERATOR: Final = "accelerator"
SERVER_TYPE: Final = "servertype"
CHIP_TYPE_LABEL: Final = "node.kubernetes.io/npu.chip.name"
PRE_SEPARATE: Final = "PreSeparate"
UNHEALTHY_SUFFIX: Final = "-Unhealthy"
SCORE: Final = 8
NOT_HOLDING: Final = frozenset({TaskStatus.RELEASING, TaskStatus.PIPELINED})
# What ``Release`` asks to remove from the pod's bind annotations.
ANNOTATION_KEYS: Final = (PREDICATE_TIME, NPU_CORE)


class VResource(NamedTuple):
    """AI cores, AI CPUs and the DVPP state (``VResource``); arithmetic leaves DVPP alone.
    (A tuple: sessions make many, and a tuple is the cheapest immutable value to make.)"""

    aicore: int = 0
    aicpu: int = 0
    dvpp: str = ""

    def add(self, other: VResource) -> VResource:
        return VResource(self.aicore + other.aicore, self.aicpu + other.aicpu, self.dvpp)

    def sub(self, other: VResource) -> VResource:
        return VResource(self.aicore - other.aicore, self.aicpu - other.aicpu, self.dvpp)

    def with_dvpp(self, dvpp: str) -> VResource:
        return VResource(self.aicore, self.aicpu, dvpp)

    def be_greater(self, other: VResource) -> bool:
        """``BeGreater``: at least ``other`` in both counts."""
        return self.aicore >= other.aicore and self.aicpu >= other.aicpu


# The 310P templates a pod asks (``NewNPUDevices``' VT).
TEMPLATES: Final[Mapping[str, VResource]] = {
    "vir01": VResource(1, 1, DVPP_NULL),
    "vir02": VResource(2, 2, DVPP_NULL),
    "vir02_1c": VResource(2, 1, DVPP_NULL),
    "vir04": VResource(4, 4, DVPP_NULL),
    "vir04_3c": VResource(4, 3, DVPP_NULL),
    "vir04_3c_ndvpp": VResource(4, 3, DVPP_OFF),
    "vir04_4c_dvpp": VResource(4, 4, DVPP_ON),
}
TEMPLATE_CODES: Final[Mapping[str, int]] = {name: i for i, name in enumerate(TEMPLATES)}
TEMPLATE_BY_RESOURCE: Final[Mapping[VResource, str]] = {v: k for k, v in TEMPLATES.items()}

_B_TEMPLATES: Final[Mapping[str, VResource]] = {
    "vir06_1c_16g": VResource(6, 1, DVPP_NULL),
    "vir03_1c_8g": VResource(3, 1, DVPP_NULL),
    "vir12_3c_32g": VResource(12, 3, DVPP_NULL),
}
# What a running pod's template holds, by chip kind (Ascend310P) or chip type (910B*)
# (``initVolcanoFrameFromSsn``' VJobTemplate).
JOB_TEMPLATES: Final[Mapping[str, Mapping[str, VResource]]] = {
    ASCEND310P: TEMPLATES,
    "Ascend910": {
        "vir02": VResource(2, 1, DVPP_NULL),
        "vir04": VResource(4, 1, DVPP_NULL),
        "vir08": VResource(8, 3, DVPP_NULL),
        "vir16": VResource(16, 7, DVPP_NULL),
    },
    "910B1": _B_TEMPLATES,
    "910B2C": _B_TEMPLATES,
    "910B2": _B_TEMPLATES,
    "910B3": {
        "vir05_1c_16g": VResource(5, 1, DVPP_NULL),
        "vir10_3c_32g": VResource(10, 3, DVPP_NULL),
    },
    "910B4": {
        "vir05_1c_8g": VResource(5, 1, DVPP_NULL),
        "vir10_3c_16g_nm": VResource(10, 3, DVPP_OFF),
        "vir10_4c_16g_m": VResource(10, 4, DVPP_ON),
        "vir10_3c_16g": VResource(10, 3, DVPP_NULL),
    },
}
# (chip kind or type, AI cores per chip, AI CPUs per chip) (``initTemplate``).
NODE_TEMPLATES: Final = (
    (ASCEND310P, 8, 7),
    ("910B1", 25, 6),
    ("910B2C", 24, 6),
    ("910B3", 20, 6),
    ("910B4", 20, 6),
    ("910B2", 24, 6),
    (ASCEND310P, 10, 7),
)

# DVPP states in the arrays.
DVPP_CODES: Final[Mapping[str, int]] = {DVPP_OFF: 0, DVPP_NULL: 1, DVPP_ON: 2}
OTHER_DVPP: Final = 3
# Sole-template codes of a node (``ConCache``): none held, or several.
NO_TEMPLATE: Final = -1
MIXED_TEMPLATES: Final = -2
# A request no template matches (``GetTemplateByResReq`` fails).
UNKNOWN_TEMPLATE: Final = -3


# ---- the pod


def has_device_request(pod: Mapping[str, Any]) -> bool:
    """``HasDeviceRequest`` (``checkVNPUResourcesInPod``)."""
    labels = mapping(mapping(pod.get("metadata")).get("labels"))
    if labels.get(RING_CONTROLLER) != JOB_KIND_310P:
        return False
    return any(
        NPU_CORE in mapping(mapping(c.get("resources")).get("limits")) for c in containers(pod)
    )


def _core_value(quantity: Any) -> int:
    try:
        return quantity_value(quantity)
    except QuantityError:
        return 0


def requested_cores(pod: Mapping[str, Any]) -> int:
    """``getAiCoreNumFromPod``: the first container's non-zero ``npu-core`` request."""
    for container in containers(pod):
        requests = mapping(mapping(container.get("resources")).get("requests"))
        if NPU_CORE in requests:
            cores = _core_value(requests[NPU_CORE])
            if cores != 0:
                return cores
    return 0


def template_for(cores: int, level: str, dvpp: str) -> str:
    """``getResTemplateFromTaskSetting``; "" for a core count without a template."""
    if cores == 1:
        return "vir01"
    if cores == 2:
        return "vir02_1c" if level == LEVEL_LOW else "vir02"
    if cores == 4:
        if dvpp == DVPP_ON:
            return "vir04_4c_dvpp"
        if dvpp == DVPP_OFF:
            return "vir04_3c_ndvpp"
        return "vir04_3c" if level == LEVEL_LOW else "vir04"
    return ""


@dataclass(frozen=True, slots=True)
class VnpuAsk:
    """What a pod asks, node aside: its cores, and the template resource (``segment``) when
    not whole chips; ``dvpp_error`` when its ``vnpu-dvpp`` label is not a known value."""

    requested: bool
    cores: int
    segment: VResource
    dvpp_error: str = ""


def vnpu_ask(task: TaskInfo) -> VnpuAsk:
    cached: VnpuAsk | None = task.derived.get("deviceshare.mindcluster")
    if cached is not None:
        return cached
    pod = task.pod
    labels = mapping(mapping(pod.get("metadata")).get("labels"))
    level = str(labels.get(VNPU_LEVEL, LEVEL_LOW))
    if level not in (LEVEL_LOW, LEVEL_HIGH):
        level = LEVEL_LOW
    dvpp = str(labels.get(VNPU_DVPP, DVPP_NULL))
    error = "" if dvpp in DVPP_CODES else f"err dvpp value:{dvpp}"
    cores = requested_cores(pod)
    template = template_for(cores, level, dvpp)
    ask = VnpuAsk(has_device_request(pod), cores, TEMPLATES.get(template, VResource()), error)
    task.derived["deviceshare.mindcluster"] = ask
    return ask


def can_downgrade(request: VResource) -> bool:
    """``taskAICPUCanBeDowngrade``."""
    if request.aicore == 2 and request.aicpu == 2:
        return True
    return request.aicore == 4 and request.aicpu == 4 and request.dvpp != DVPP_ON


def downgrade(request: VResource) -> VResource:
    """``downgradeTaskAICPU``: one AI CPU less for 2 and 4 cores."""
    if request.aicore == 2:
        return VResource(request.aicore, 1, request.dvpp)
    if request.aicore == 4:
        return VResource(request.aicore, 3, request.dvpp)
    return request


# ---- chips and nodes


@dataclass(slots=True)
class VChip:
    id: int
    kind: str
    total: VResource
    used: VResource
    free: VResource
    segment: bool = False
    unstable: bool = False
    real_ids: list[str] = field(default_factory=list)

    def vgroups(self) -> int:
        """How many vGroups the chip's virtual devices sit in (``getVGroups``)."""
        groups = set()
        for real in self.real_ids:
            parts = real.split("_")
            if len(parts) < 2:
                continue
            try:
                groups.add(int(parts[-1]))
            except ValueError:
                continue
        return len(groups)

    def meets(self, request: VResource) -> bool:
        """``isChipMeetResReq``: resources, vGroups and DVPP."""
        if not self.free.be_greater(request):
            return False
        if self.kind == ASCEND310P and self.segment:
            groups = self.vgroups()
            if groups == 3 and request.aicore >= 4:
                return False
            if groups == 4 and request.aicore >= 2:
                return False
        if request.dvpp == DVPP_ON and self.free.dvpp != DVPP_ON:
            return False
        return not (request.dvpp == DVPP_NULL and self.free.dvpp == DVPP_OFF)

    def update_dvpp(self, dvpp: str) -> None:
        """``UpdateDVPP``."""
        if dvpp == DVPP_ON:
            self.used = self.used.with_dvpp(DVPP_ON)
            self.free = self.free.with_dvpp(DVPP_OFF)
        if dvpp == DVPP_OFF and self.used.dvpp == DVPP_OFF:
            self.free = self.free.with_dvpp(DVPP_ON)
        if dvpp == DVPP_NULL and self.used.dvpp != DVPP_ON:
            self.used = self.used.with_dvpp(DVPP_NULL)
            self.free = self.free.with_dvpp(DVPP_NULL)

    def reset_dvpp(self, dvpp: str) -> None:
        """``ResetDVPP``."""
        if dvpp == DVPP_ON:
            self.used = self.used.with_dvpp(DVPP_OFF)
            self.free = self.free.with_dvpp(DVPP_ON)


def new_chip(kind: str, chip_id: int, total: VResource) -> VChip:
    """``NewVChip``: all free, DVPP free to take."""
    return VChip(
        chip_id,
        kind,
        total.with_dvpp(DVPP_OFF),
        VResource(0, 0, DVPP_OFF),
        total.with_dvpp(DVPP_ON),
    )


@dataclass(slots=True)
class VnpuNode:
    """One node's vNPU state (``NPUDevices``); ``valid`` is ``ValidVNode``."""

    name: str
    annotations: Mapping[str, str]
    valid: bool = False
    why_invalid: str = ""
    chip_kind: str = ""
    chip_type: str = ""
    server_type: str = ""
    cores_per_chip: int = 0
    total: VResource = field(default_factory=VResource)
    chip_count: int = 0
    chips: dict[int, VChip] = field(default_factory=dict)
    unhealthy: set[int] = field(default_factory=set)
    # Template -> pods (task keys) holding it (``ConCache``; "" for whole chips).
    templates: dict[str, set[str]] = field(default_factory=dict)

    def copy(self) -> VnpuNode:
        """A copy the session may change (chips and templates its own)."""
        chips = {
            i: VChip(c.id, c.kind, c.total, c.used, c.free, c.segment, c.unstable, list(c.real_ids))
            for i, c in self.chips.items()
        }
        templates = {name: set(keys) for name, keys in self.templates.items()}
        found = VnpuNode(self.name, self.annotations, self.valid, self.why_invalid)
        found.chip_kind, found.chip_type, found.server_type = (
            self.chip_kind,
            self.chip_type,
            self.server_type,
        )
        found.cores_per_chip, found.total, found.chip_count = (
            self.cores_per_chip,
            self.total,
            self.chip_count,
        )
        found.chips, found.unhealthy, found.templates = chips, self.unhealthy, templates
        return found

    @property
    def pre_separate(self) -> bool:
        return self.annotations.get(NODED_STATUS) == PRE_SEPARATE

    def chip_total(self) -> VResource:
        """``getVChipTotalRes``."""
        if self.chip_count == 0:
            return VResource(0, 0, DVPP_OFF)
        return VResource(
            self.total.aicore // self.chip_count, self.total.aicpu // self.chip_count, DVPP_OFF
        )

    def is_whole(self, cores: int) -> bool:
        """``IsResourceWholeCard``."""
        return self.cores_per_chip != 0 and cores % self.cores_per_chip == 0

    def pod_resource(self, ask: VnpuAsk) -> VResource | str:
        """``GetPodResource`` on this node; the error text when the DVPP label is bad."""
        if self.total.aicore == 0:
            return VResource()
        if self.is_whole(ask.cores):
            return VResource(
                ask.cores, ask.cores * self.total.aicpu // self.total.aicore, DVPP_NULL
            )
        if ask.dvpp_error:
            return ask.dvpp_error
        return ask.segment

    def total_enough(self, request: VResource) -> bool:
        free = VResource()
        for chip in self.chips.values():
            free = free.add(chip.free)
        return free.be_greater(request)

    def chip_enough(self, request: VResource) -> bool:
        """``isNodeChipResEnough``."""
        if self.is_whole(request.aicore):
            free = sum(1 for c in self.chips.values() if not c.segment and c.free.aicore != 0)
            return request.aicore // self.cores_per_chip <= free
        return any(c.meets(request) and not c.unstable for c in self.chips.values())

    def sole_template(self) -> str | None:
        """The one template the node's pods hold; None when none or several."""
        return next(iter(self.templates)) if len(self.templates) == 1 else None

    def sorted_chips(self) -> list[VChip]:
        """Least free first (``vChipsList``); equal ones by id, where Go's sort leaves them
        in no set order."""
        return sorted(self.chips.values(), key=lambda c: (c.free.aicore, c.free.aicpu, c.id))

    def select_chips(self, request: VResource) -> str:
        """``SelectChipFromNode``: the chip id(s) for the annotation; ValueError when none."""
        chips = self.sorted_chips()
        if not chips:
            raise ValueError("selectChipFromNode sorted chips len 0")
        if self.is_whole(request.aicore):
            if self.cores_per_chip == 0:
                raise ValueError("AiCorePerChip is zero, division by zero avoided")
            count = request.aicore // self.cores_per_chip
            if count == 0:
                raise ValueError("task require card number 0")
            per_chip = VResource(request.aicore // count, request.aicpu // count, DVPP_NULL)
            picked = [c for c in chips if c.meets(per_chip) and not c.segment][:count]
            if len(picked) < count:
                raise ValueError(
                    f"selectChipFromNodeWhole free whole chip <{len(picked)}> not enough for"
                    f" req <{count}>"
                )
            return ",".join(str(c.id) for c in picked)
        for chip in chips:
            if chip.meets(request) and not chip.unstable:
                return str(chip.id)
        raise ValueError(
            f"selectChipFromNodeSegment available chip not found for req <{request.aicore}>"
        )

    # ---- use

    def add_use(self, key: str, allocation: str, resource: VResource) -> None:
        """``addResource``: a pod holding ``allocation`` (``<id>-<template>`` or whole
        chips) with ``resource`` (its ask on this node)."""
        parts = allocation.split("-")
        if len(parts) == 2:
            chip = self.chips.get(_to_int(parts[0]))
            if chip is not None:
                chip.used = chip.used.add(resource)
                chip.free = chip.free.sub(resource)
                if not self.is_whole(resource.aicore):
                    chip.segment = True
                chip.update_dvpp(resource.dvpp)
            template = parts[1]
        else:
            self._whole(parts[0], add=True)
            template = ""
        self.templates.setdefault(template, set()).add(key)

    def remove_use(self, key: str, allocation: str, resource: VResource) -> None:
        """``SubResource``."""
        parts = allocation.split("-")
        if len(parts) == 2:
            chip = self.chips.get(_to_int(parts[0]))
            if chip is not None:
                chip.used = chip.used.sub(resource)
                chip.free = chip.free.add(resource)
                chip.reset_dvpp(resource.dvpp)
            template = parts[1]
        else:
            self._whole(parts[0], add=False)
            template = ""
        holders = self.templates.get(template)
        if holders is not None:
            holders.discard(key)
            if not holders:
                del self.templates[template]

    def _whole(self, ids: str, add: bool) -> None:
        """``UpdateNodeInfoWhole{With,}{Add,Sub}``."""
        if self.chip_count == 0:
            return
        share = VResource(self.cores_per_chip, self.total.aicpu // self.chip_count, DVPP_NULL)
        for part in ids.split(","):
            chip = self.chips.get(_to_int(part))
            if chip is None:
                continue
            if add:
                chip.used = chip.used.add(share)
                chip.free = chip.free.sub(share)
                chip.update_dvpp(DVPP_NULL)
            else:
                chip.used = chip.used.sub(share)
                chip.free = chip.free.add(share)
                chip.reset_dvpp(DVPP_NULL)


def _to_int(text: str) -> int:
    """``strconv.Itoa(chipID) != id`` compares text: a chip is found by its decimal id only."""
    if text.isdigit() and str(int(text)) == text:
        return int(text)
    return -1


# ---- building a node (init_policy.go)


def _int_or_none(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def build_node(
    name: str,
    node: Mapping[str, Any],
    capacity_cores: float,
    annotations: Mapping[str, str],
    tasks: Sequence[TaskInfo],
) -> VnpuNode:
    """``initNPUNodeByNodeInf`` + ``setNodeVNPUInfo``: the node's chips and their use by the
    pods on it (``capacity_cores``: the capacity's ``npu-core`` in milli-units)."""
    found = VnpuNode(name, annotations)
    labels = mapping(mapping(node.get("metadata")).get("labels"))
    if capacity_cores <= 0:
        found.why_invalid = f"no {NPU_CORE} capacity"
        return found
    accelerator = str(labels.get(ACCELERATOR, ""))
    if ACCELERATOR not in labels or len(accelerator.split("-")) < 2:
        found.why_invalid = f"label {ACCELERATOR} absent or not <vendor>-<chip kind>"
        return found
    found.chip_kind = accelerator.split("-")[1]
    if SERVER_TYPE not in labels:
        found.why_invalid = f"no node label <{SERVER_TYPE}>"
        return found
    found.server_type = str(labels[SERVER_TYPE])
    if CHIP_TYPE_LABEL not in labels:
        found.why_invalid = f"no node label <{CHIP_TYPE_LABEL}>"
        return found
    found.chip_type = str(labels[CHIP_TYPE_LABEL])
    if HW_PREFIX + found.chip_kind not in annotations:
        found.why_invalid = "getFreeChipNum failed"
        return found
    found.total = VResource(int(capacity_cores / 1000), 0, "")
    server_parts = found.server_type.split("-")
    per_chip = _int_or_none(server_parts[1]) if len(server_parts) >= 2 else None
    if not per_chip:
        found.why_invalid = f"servertype {found.server_type} gives no cores per chip"
        return found
    found.cores_per_chip = per_chip
    if found.total.aicore % per_chip != 0 or found.total.aicore // per_chip == 0:
        found.why_invalid = "total cores cannot be divided into chips"
        return found
    found.chip_count = found.total.aicore // per_chip
    cpu_per_chip = -1
    for kind, cores, cpus in NODE_TEMPLATES:
        if (
            kind in (found.chip_kind, found.chip_type)
            and cores * found.chip_count == found.total.aicore
        ):
            cpu_per_chip = cpus
    if cpu_per_chip == -1:
        found.why_invalid = "no node template gives the AI CPUs per chip"
        return found
    found.total = VResource(found.total.aicore, cpu_per_chip * found.chip_count, DVPP_OFF)
    chip_total = found.chip_total()
    for chip_id in _chip_ids(annotations, found.chip_kind, ""):
        found.chips[chip_id] = new_chip(found.chip_kind, chip_id, chip_total)
    found.unhealthy = set(_chip_ids(annotations, found.chip_kind, UNHEALTHY_SUFFIX))
    for task in tasks:
        if any(HW_PREFIX in resource for resource in task.resreq.scalar_resources):
            _count_running_pod(found, task, chip_total)
        if task.status not in NOT_HOLDING and vnpu_ask(task).requested:
            # ``ConCache``: the template each vNPU pod holds ("" for whole chips).
            allocation = task.pod_annotations.get(NPU_CORE)
            if isinstance(allocation, str):
                parts = allocation.split("-")
                template = parts[1] if len(parts) == 2 else ""
                found.templates.setdefault(template, set()).add(task.key)
    found.valid = True
    return found


def _chip_ids(annotations: Mapping[str, str], kind: str, suffix: str) -> list[int]:
    text = annotations.get(HW_PREFIX + kind + suffix)
    if text is None:
        return []
    ids = []
    for chip in text.split(","):
        value = _int_or_none(chip.removeprefix(kind + "-")) if chip else None
        if value is not None:
            ids.append(value)
    return ids


def _count_running_pod(node: VnpuNode, task: TaskInfo, chip_total: VResource) -> None:
    """``addNPUResource``: what a pod on the node holds, from its annotations (those the
    scheduler bound it with included, before the pod's update shows them)."""
    annotations = task.pod_annotations
    allocation = annotations.get(NPU_CORE)
    if not isinstance(allocation, str):
        return
    real = str(annotations.get(REAL_USE) or "")
    unstable = not real
    if any(len(part.split("-")) == 1 for part in allocation.split(",")):
        ids = [_int_or_none(part) for part in allocation.split(",")]
        if any(i is None for i in ids):
            return
        for chip_id in ids:
            assert chip_id is not None
            if chip_id in node.unhealthy:
                continue
            chip = node.chips.setdefault(chip_id, new_chip(node.chip_kind, chip_id, chip_total))
            chip.unstable = chip.unstable or unstable
            chip.real_ids.append(str(chip_id))
            chip.used = chip.used.add(chip_total)
            chip.free = chip.free.sub(chip_total)
        return
    parts = allocation.split("-")
    chip_id = _int_or_none(parts[0]) if len(parts) == 2 else None
    if chip_id is None or chip_id in node.unhealthy:
        return
    chip = node.chips.setdefault(chip_id, new_chip(node.chip_kind, chip_id, chip_total))
    chip.unstable = chip.unstable or unstable
    if real:
        chip.real_ids.append(real)
    chip.segment = True
    kind = node.chip_kind if node.chip_kind == ASCEND310P else node.chip_type
    resource = JOB_TEMPLATES.get(kind, {}).get(parts[1])
    if resource is None:
        return
    chip.used = chip.used.add(resource)
    chip.free = chip.free.sub(resource)
    chip.update_dvpp(resource.dvpp)


# ---- the filter, scalar (the reference)


def filter_node(node: VnpuNode, ask: VnpuAsk, pod_name: str, idle_cores: float) -> tuple[str, bool]:
    """``FilterNode``: ("" when it passes, else why; whether the pod is downgraded here).
    ``idle_cores``: the node's idle ``npu-core`` in milli-units."""
    if node.pre_separate:
        return f"node is {PRE_SEPARATE}, due to nodeD reported node status", False
    if int(idle_cores / 1000) < ask.cores:
        return f"node not meet task request {NPU_CORE}:{ask.cores}", False
    return chip_filter(node, ask, pod_name)


def chip_filter(node: VnpuNode, ask: VnpuAsk, pod_name: str) -> tuple[str, bool]:
    """``CheckNodeNPUByPod``: the part of the filter the node's chips and pods decide."""
    request = node.pod_resource(ask)
    if isinstance(request, str):
        return request, False
    if not node.valid:
        return "checkNodeNPUByDyTask invalid VNode", False
    downgraded = False
    if (not node.total_enough(request) or not node.chip_enough(request)) and can_downgrade(request):
        request, downgraded = downgrade(request), True
    if not node.templates:
        return "", downgraded
    template = TEMPLATE_BY_RESOURCE.get(request)
    if template is None:
        return f"{request} not get template", downgraded
    if node.sole_template() == template:
        return "", downgraded
    return f"{pod_name} is using {node.name}, and not rewrite", downgraded
