"""HAMi vGPU (``pkg/scheduler/api/devices/nvidia/vgpu``): cards shared by memory, cores and a
number of slices, registered by HAMi's device plugin on the node.

Registration: a node has vGPUs when its allocatable has non-zero ``volcano.sh/vgpu-number``,
``volcano.sh/vgpu-cores`` and ``volcano.sh/vgpu-memory`` and its
``volcano.sh/node-vgpu-register`` annotation lists cards as
``uuid,count,memory,type,health,mode:`` entries (a card's id is its position in the list).
Upstream at the mirror's HEAD checks no handshake annotation for vGPU; neither does this.

Use: which card a pod holds, and how much of it, comes from its ``volcano.sh/vgpu-ids-new``
annotation (``uuid,type,memory,cores:`` per card, ``;`` between containers).

Fit (``checkNodeGPUSharingPredicateAndScore``): each container asking vGPUs takes ``nums``
cards, trying them in the policy's order (binpack: most used memory first; spread: fewest
pods first; otherwise highest id first) and skipping a card that: the pod's UUID
allow/deny annotations exclude, is full (slices, memory, cores), is exclusive (cores 100)
or would become so, already holds a pod of the same PodGroup when the pod asks
``volcano.sh/vgpu-podgroup-policy: spread``, is held by a pod matching one of the same
GPUExclusiveRules (``exclusive``), or is of a type the pod's
``nvidia.com/use-gputype`` / ``nouse-gputype`` annotation excludes. The containers' picks
accumulate, so a later container sees the earlier ones.

Vectorised: per node row the cards' slices, memory and cores (used and total) are ``[N, C]``
arrays (and, with GPUExclusiveRules, one ``[N, C]`` mask per rule of the cards its pods hold);
a task's mask is, per container, "enough cards that fit this container alone", a
necessary condition over all nodes in a few comparisons. The exact fit above (``fit``, the
scalar reference) then runs only for the nodes that pass it, as the task's per-node predicate.

A node registering ``mig`` (its last card decides, as upstream) hands out MIG instances by
the geometries of the device config (``mig``); without a geometry for its last card's model
it is shared as hami-core, as upstream falls back (said once).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, FloatArray
from volcano_py.api.quantity import QuantityError, quantity_value
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import (
    GROUP_NAME_ANNOTATION,
    VOLCANO_GROUP_NAME_ANNOTATION,
    Status,
    StatusCode,
    TaskStatus,
)
from volcano_py.framework.hooks import NodeMask
from volcano_py.plugins._plugin_helpers import warn_once
from volcano_py.plugins.deviceshare.config import (
    VGPU_CORES,
    VGPU_MEMORY,
    VGPU_NUMBER,
    Geometry,
    MigGeometries,
    NvidiaConfig,
)
from volcano_py.plugins.deviceshare.exclusive import ExclusiveRule, task_rules
from volcano_py.plugins.deviceshare.mig import (
    MigUsage,
    add_mig_used,
    decode_mig_id,
    find_match,
    geometries_for_type,
    largest_offer,
    scaled,
    sub_mig_used,
    unscaled,
)
from volcano_py.plugins.deviceshare.options import BINPACK, SPREAD
from volcano_py.plugins.deviceshare.requests import (
    NO_PERCENTAGE,
    NVIDIA,
    ContainerDeviceRequest,
    container_device_requests,
    has_vgpu_request,
)

log = logging.getLogger(__name__)

DEVICE_NAME: Final = "hamivgpu"
NODE_REGISTER: Final = "volcano.sh/node-vgpu-register"
GPU_IN_USE: Final = "nvidia.com/use-gputype"
GPU_NO_USE: Final = "nvidia.com/nouse-gputype"
USE_UUID: Final = "volcano.sh/vgpu-use-gpuuuid"
NO_USE_UUID: Final = "volcano.sh/vgpu-nouse-gpuuuid"
ASSIGNED_TIME: Final = "volcano.sh/vgpu-time"
ASSIGNED_IDS: Final = "volcano.sh/vgpu-ids-new"
ASSIGNED_IDS_TO_ALLOCATE: Final = "volcano.sh/devices-to-allocate"
ASSIGNED_NODE: Final = "volcano.sh/vgpu-node"
BIND_TIME: Final = "volcano.sh/bind-time"
BIND_PHASE: Final = "volcano.sh/bind-phase"
MODE_ANNOTATION: Final = "volcano.sh/vgpu-mode"
PODGROUP_POLICY: Final = "volcano.sh/vgpu-podgroup-policy"
PODGROUP_SPREAD: Final = "spread"
HAMI_CORE: Final = "hami-core"
MIG: Final = "mig"
# Released with the pod unless the device plugin already took it (bind-phase success).
ANNOTATION_KEYS: Final = (
    ASSIGNED_NODE,
    ASSIGNED_IDS,
    ASSIGNED_IDS_TO_ALLOCATE,
    ASSIGNED_TIME,
    BIND_TIME,
    BIND_PHASE,
)
# FilterNode's status message for every vGPU misfit (the details go to the log upstream).
ERR_VGPU: Final = "hami-vgpuDeviceSharing error"
# Up to this many changed rows are refreshed one by one in Python, more with numpy.
_ROWS_IN_PYTHON: Final = 16
BINPACK_MULTIPLIER: Final = 100
SPREAD_MULTIPLIER: Final = 100
NOT_HOLDING: Final = frozenset({TaskStatus.RELEASING, TaskStatus.PIPELINED})


@dataclass(slots=True)
class VgpuCard:
    id: int
    uuid: str
    number: int
    memory: int
    type: str
    health: bool
    used_num: int = 0
    used_mem: int = 0
    used_core: int = 0
    # Pod key -> (memory, cores, PodGroup key) it holds on this card.
    pods: dict[str, tuple[int, int, str]] = field(default_factory=dict)
    # MIG: the geometries of the card's model (empty: none known) and what is in use.
    geometries: tuple[Geometry, ...] = ()
    mig: MigUsage = field(default_factory=MigUsage)


@dataclass(slots=True)
class VgpuNode:
    name: str
    mode: str
    cards: dict[int, VgpuCard]


@dataclass(frozen=True, slots=True)
class UsedDevice:
    """One card of a container's allocation (``ContainerDevice``)."""

    uuid: str
    type: str
    usedmem: int
    usedcores: int


def _go_atoi(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        return 0


def _go_parse_bool(text: str) -> bool:
    return text in ("1", "t", "T", "TRUE", "true", "True")


def decode_node_devices(
    name: str, text: str, known: Sequence[MigGeometries] = ()
) -> VgpuNode | None:
    """``decodeNodeDevices``: the cards of a registration annotation; None when malformed.
    ``known``: the configured MIG geometries."""
    if ":" not in text:
        return None
    cards: dict[int, VgpuCard] = {}
    mode = HAMI_CORE
    for index, entry in enumerate(text.split(":")):
        if "," not in entry:
            continue
        items = entry.split(",")
        if len(items) < 6:
            log.error("wrong Node GPU info: %s", entry)
            return None
        card = cards[index] = VgpuCard(
            id=index,
            uuid=items[0],
            number=_go_atoi(items[1]),
            memory=_go_atoi(items[2]),
            type=items[3],
            health=_go_parse_bool(items[4]),
        )
        mode = MIG if items[5] == MIG else HAMI_CORE
        if mode == MIG:
            geometries = geometries_for_type(card.type, known)
            if geometries is None:
                warn_once(
                    log,
                    f"deviceshare: node {name}: no MIG geometry in the device config"
                    f" (knownMigGeometries) for GPU type {card.type!r}; falling back to"
                    " hami-core, as Volcano does",
                )
                mode = HAMI_CORE
            else:
                card.geometries = geometries
    return VgpuNode(name, mode, cards)


def _allocatable_positive(node: Mapping[str, Any], resource: str) -> bool:
    allocatable = (node.get("status") or {}).get("allocatable")
    if not allocatable or resource not in allocatable:
        return False
    try:
        return quantity_value(allocatable[resource]) != 0
    except QuantityError:
        return False


def node_devices(
    name: str, node: Mapping[str, Any] | None, known: Sequence[MigGeometries] = ()
) -> VgpuNode | None:
    """``NewGPUDevices``: a node's vGPU cards, or None when it registers none."""
    if node is None:
        return None
    text = ((node.get("metadata") or {}).get("annotations") or {}).get(NODE_REGISTER)
    if text is None:
        return None
    if not all(_allocatable_positive(node, r) for r in (VGPU_NUMBER, VGPU_CORES, VGPU_MEMORY)):
        return None
    devices = decode_node_devices(name, str(text), known)
    if devices is None or not devices.cards:
        return None
    return devices


def encode_pod_devices(containers: Sequence[Sequence[UsedDevice]]) -> str:
    """``encodePodDevices``: ``uuid,type,mem,cores:`` per card, ``;`` between containers."""
    return ";".join(
        "".join(f"{d.uuid},{d.type},{d.usedmem},{d.usedcores}:" for d in devices)
        for devices in containers
    )


# A pod's annotation is read every session while it runs: each distinct text parsed once.
@functools.lru_cache(maxsize=65536)
def decode_pod_devices(text: str) -> tuple[tuple[UsedDevice, ...], ...]:
    """``DecodePodDevices``; malformed entries are skipped (as upstream)."""
    if not text:
        return ()
    found: list[tuple[UsedDevice, ...]] = []
    for part in text.split(";"):
        devices: list[UsedDevice] = []
        for entry in part.split(":") if part else ():
            if "," not in entry:
                continue
            fields = entry.split(",")
            if len(fields) < 4:
                continue
            try:
                memory, cores = int(fields[2]), int(fields[3])
            except ValueError:
                continue
            if memory < 0 or cores < 0 or memory >= 2**32 or cores >= 2**32:
                continue
            devices.append(UsedDevice(fields[0], fields[1], memory, cores))
        found.append(tuple(devices))
    return tuple(found)


def pod_group_key(task: TaskInfo) -> str:
    annotations = task.pod_annotations
    group = annotations.get(GROUP_NAME_ANNOTATION) or annotations.get(
        VOLCANO_GROUP_NAME_ANNOTATION, ""
    )
    return f"{task.namespace}/{group}" if group else ""


def _contains_any(card_type: str, wanted: str) -> bool:
    upper = card_type.upper()
    return any(value.upper() in upper for value in wanted.split(","))


def gpu_type_allowed(annotations: Mapping[str, str], card_type: str) -> bool:
    """``checkGPUtype``: use-gputype (if set) must match; else nouse-gputype must not."""
    if GPU_IN_USE in annotations:
        return _contains_any(card_type, annotations[GPU_IN_USE])
    if GPU_NO_USE in annotations:
        return not _contains_any(card_type, annotations[GPU_NO_USE])
    return True


def type_allowed(annotations: Mapping[str, str], card: VgpuCard, request_type: str) -> bool:
    """``checkType``."""
    if request_type not in card.type:
        return False
    if request_type == NVIDIA:
        return gpu_type_allowed(annotations, card.type)
    return False


def _uuid_list(value: str | None) -> list[str]:
    return [part.strip() for part in (value or "").split(",") if part.strip()]


@dataclass(frozen=True, slots=True)
class UuidFilter:
    allow: tuple[str, ...]
    deny: tuple[str, ...]

    @classmethod
    def of(cls, annotations: Mapping[str, str]) -> UuidFilter:
        return cls(
            tuple(_uuid_list(annotations.get(USE_UUID))),
            tuple(_uuid_list(annotations.get(NO_USE_UUID))),
        )

    @property
    def enabled(self) -> bool:
        return bool(self.allow or self.deny)

    def matches(self, uuid: str) -> bool:
        if not uuid and self.enabled:
            return False
        if self.allow and uuid not in self.allow:
            return False
        return uuid not in self.deny


def card_order(
    cards: Mapping[int, VgpuCard], used: Mapping[int, list[int]], policy: str
) -> list[int]:
    """``sortedDeviceIndicesByPolicy`` over the tentative usage ``used[id] = [num, mem, core]``."""
    ids = sorted(cards)
    if policy == BINPACK:
        return sorted(ids, key=lambda i: (-used[i][1], i))
    if policy == SPREAD:
        return sorted(ids, key=lambda i: (used[i][0], i))
    return ids[::-1]


def card_score(policy: str, card: VgpuCard, used: Sequence[int]) -> float:
    """``GPUScore`` of a card after this pod's tentative use of it."""
    if policy == BINPACK:
        return BINPACK_MULTIPLIER * (used[1] / card.memory) if card.memory else math.inf
    if policy == SPREAD:
        return float(SPREAD_MULTIPLIER) if used[0] == 0 else 0.0
    return 0.0


@dataclass(frozen=True, slots=True)
class VgpuAsk:
    """What a task asks of vGPUs, read once per pod.

    ``simple``: one container asks and no annotation narrows the cards (UUIDs, GPU types,
    PodGroup spread). Then a node fits exactly when enough of its cards each fit the
    container, which the vectorised mask decides alone; otherwise the mask is a necessary
    condition and the scalar fit decides on the nodes it lets through."""

    requests: tuple[ContainerDeviceRequest, ...]
    any_request: bool
    simple: bool
    mode: str | None


def _simple(task: TaskInfo, requests: Sequence[ContainerDeviceRequest]) -> bool:
    annotations = task.pod_annotations
    return (
        len(requests) <= 1
        and not UuidFilter.of(annotations).enabled
        and GPU_IN_USE not in annotations
        and GPU_NO_USE not in annotations
        and not (annotations.get(PODGROUP_POLICY) == PODGROUP_SPREAD and pod_group_key(task))
        and all(r.type == NVIDIA for r in requests)
    )


def vgpu_ask(task: TaskInfo, config: NvidiaConfig) -> VgpuAsk:
    cached: tuple[NvidiaConfig, VgpuAsk] | None = task.derived.get("deviceshare.vgpu")
    if cached is not None and cached[0] == config:
        return cached[1]
    requests = container_device_requests(task.pod, config)
    ask = VgpuAsk(
        requests,
        has_vgpu_request(task.pod, config),
        _simple(task, requests),
        task.pod_annotations.get(MODE_ANNOTATION),
    )
    task.derived["deviceshare.vgpu"] = (config, ask)
    return ask


@dataclass(frozen=True, slots=True)
class FitResult:
    devices: tuple[tuple[UsedDevice, ...], ...] = ()
    score: float = 0.0
    error: str = ""

    @property
    def fits(self) -> bool:
        return not self.error


def fit(
    task: TaskInfo,
    node: VgpuNode,
    requests: Sequence[ContainerDeviceRequest],
    policy: str,
    excluded: Set[int] = frozenset(),
    memory_factor: int = 0,
) -> FitResult:
    """``checkNodeGPUSharingPredicateAndScore`` on a tentative copy of the usage.
    ``excluded``: the card ids GPUExclusiveRules keep from this pod (upstream caps them as
    full: ``capGPUs``). On a MIG node each card gives a MIG instance (``MIGFactory.TryAddPod``);
    the instances taken by earlier containers of the pod count as taken (upstream's tentative
    fit does not record them, so two containers could get the same instance)."""
    annotations = task.pod_annotations
    mode = annotations.get(MODE_ANNOTATION)
    if mode is not None and mode != node.mode:
        return FitResult(
            error=f"pod required sharing mode {mode} is not the same as the node mode {node.mode}"
        )
    if not requests:
        return FitResult()
    cards = node.cards
    used = {i: [c.used_num, c.used_mem, c.used_core] for i, c in cards.items()}
    mig_node = node.mode == MIG
    tentative_mig: dict[int, MigUsage] = {}
    group = pod_group_key(task) if annotations.get(PODGROUP_POLICY) == PODGROUP_SPREAD else ""
    uuids = UuidFilter.of(annotations)
    chosen: list[tuple[UsedDevice, ...]] = []
    score = 0.0
    for request in requests:
        remaining = request.nums
        if remaining > len(cards):
            return FitResult(error=f"no enough gpu cards on node {node.name}")
        picked: list[UsedDevice] = []
        uuid_matched = False
        for i in card_order(cards, used, policy):
            card, usage = cards[i], used[i]
            if not uuids.matches(card.uuid):
                continue
            uuid_matched = True
            if card.number <= usage[0] or i in excluded:
                continue
            if group and any(g == group and (m > 0 or c > 0) for m, c, g in card.pods.values()):
                continue
            if request.mem_percentage_req != NO_PERCENTAGE:
                memreq = int(card.memory * request.mem_percentage_req / 100.0)
            else:
                memreq = request.memreq
            if card.memory - usage[1] < memreq:
                continue
            if usage[2] + request.coresreq > 100:
                continue
            if request.coresreq == 100 and usage[0] > 0:
                continue
            if usage[2] == 100 and request.coresreq == 0:
                continue
            if not type_allowed(annotations, card, request.type):
                continue
            device_id, added = card.uuid, memreq
            if mig_node:
                mig = tentative_mig.get(i) or card.mig
                match = find_match(card.uuid, scaled(memreq, memory_factor), mig, card.geometries)
                if match is None:
                    continue
                device_id, instance_memory = match
                added = unscaled(instance_memory, memory_factor)
                if i not in tentative_mig:
                    mig = tentative_mig[i] = card.mig.copy()
                taken = decode_mig_id(device_id)
                if taken is not None:
                    add_mig_used(mig, card.geometries, *taken)
            usage[0] += 1
            usage[1] += added
            usage[2] += request.coresreq
            if remaining > 0:
                remaining -= 1
                picked.append(UsedDevice(device_id, request.type, memreq, request.coresreq))
                score += card_score(policy, card, usage)
            if remaining == 0:
                break
        if remaining > 0:
            if uuids.enabled and not uuid_matched:
                return FitResult(
                    error=(
                        f"no GPU matches UUID constraints {USE_UUID}="
                        f'"{annotations.get(USE_UUID, "")}", {NO_USE_UUID}='
                        f'"{annotations.get(NO_USE_UUID, "")}" on node {node.name}'
                    )
                )
            return FitResult(error="not enough gpu fitted on this node")
        chosen.append(tuple(picked))
    return FitResult(tuple(chosen), score)


def _find_card(node: VgpuNode, uuid: str) -> VgpuCard | None:
    """The first card (by id) whose UUID the used device's contains (as upstream matches)."""
    for card_id in sorted(node.cards):
        card = node.cards[card_id]
        if card.uuid in uuid:
            return card
    return None


def _fresh(template: VgpuNode) -> VgpuNode:
    """A session's own copy of a node's decoded cards, with no usage yet."""
    return VgpuNode(
        template.name,
        template.mode,
        {
            card_id: VgpuCard(
                card.id,
                card.uuid,
                card.number,
                card.memory,
                card.type,
                card.health,
                geometries=card.geometries,
            )
            for card_id, card in template.cards.items()
        },
    )


# What a pod holds of one card: (card id, memory counted, cores, MIG instance or None).
Held = tuple[int, int, int, tuple[str, int] | None]


def _memory_taken(
    node: VgpuNode, card: VgpuCard, device: UsedDevice, memory_factor: int
) -> tuple[int, tuple[str, int] | None] | None:
    """The memory a device of a pod takes on its card and, on a MIG node, its instance
    (``MIGFactory.AddPod``: the instance's memory); None when its MIG id is malformed."""
    if node.mode != MIG:
        return device.usedmem, None
    instance = decode_mig_id(device.uuid)
    if instance is None:
        log.error("deviceshare: node %s: bad MIG device id %r", node.name, device.uuid)
        return None
    memory = add_mig_used(card.mig, card.geometries, *instance)
    return unscaled(memory, memory_factor), instance


def add_resource(
    node: VgpuNode,
    key: str,
    group: str,
    annotations: Mapping[str, str],
    memory_factor: int = 0,
) -> list[Held]:
    """``AddResource``: the cards a pod's ``vgpu-ids-new`` names become its (``AddPod``: a
    card counts a pod once)."""
    text = annotations.get(ASSIGNED_IDS)
    if text is None:
        return []
    held: list[Held] = []
    for devices in decode_pod_devices(text):
        for device in devices:
            card = _find_card(node, device.uuid)
            if card is None or key in card.pods:
                continue
            taken = _memory_taken(node, card, device, memory_factor)
            if taken is None:
                continue
            memory, instance = taken
            card.pods[key] = (memory, device.usedcores, group)
            card.used_num += 1
            card.used_mem += memory
            card.used_core += device.usedcores
            held.append((card.id, memory, device.usedcores, instance))
    return held


def hold(
    node: VgpuNode,
    key: str,
    group: str,
    devices: Sequence[Sequence[UsedDevice]],
    memory_factor: int = 0,
) -> list[Held]:
    """Record a fit's cards as the pod's (``TryAddPod`` per card and container, then
    ``addToPodMap``; a MIG instance is marked taken at once, where upstream leaves it to the
    next session, so a second pod of this session does not get it too)."""
    held: list[Held] = []
    for container in devices:
        for device in container:
            card = _find_card(node, device.uuid)
            if card is None:
                continue
            taken = _memory_taken(node, card, device, memory_factor)
            if taken is None:
                continue
            added, instance = taken
            memory, cores, _ = card.pods.get(key, (0, 0, group))
            card.pods[key] = (memory + added, cores + device.usedcores, group)
            card.used_num += 1
            card.used_mem += added
            card.used_core += device.usedcores
            held.append((card.id, added, device.usedcores, instance))
    return held


class VgpuDevices:
    """The session's vGPU accounting: the cards of every node, and ``[N, C]`` mirrors of
    their usage for the vectorised prefilter."""

    def __init__(
        self,
        node_list: Sequence[NodeInfo],
        config: NvidiaConfig,
        policy: str,
        registrations: dict[str, tuple[Any, Any, VgpuNode | None]] | None = None,
        rules: tuple[ExclusiveRule, ...] = (),
    ) -> None:
        """``registrations``: node name -> (node object, MIG geometries, its decoded cards)
        kept from one session to the next, so an unchanged node is not decoded again.
        ``rules``: GPUExclusiveRules."""
        self.config = config
        self.memory_factor = config.gpu_memory_factor
        self.policy = policy
        self.rules = rules
        # Task key -> the rules it matches, for the pods holding cards that match any.
        self.holder_rules: dict[str, frozenset[int]] = {}
        self.node_names = [node.name for node in node_list]
        size = len(node_list)
        self.nodes: dict[int, VgpuNode] = {}
        known = registrations if registrations is not None else {}
        geometries = config.mig_geometries
        for node in node_list:
            seen = known.get(node.name)
            if seen is not None and seen[0] is node.node and seen[1] is geometries:
                template = seen[2]
            else:
                template = node_devices(node.name, node.node, geometries)
                known[node.name] = (node.node, geometries, template)
            if template is not None:
                self.nodes[node.row] = _fresh(template)
        if len(known) > 2 * size:
            # Forget nodes that left the cluster.
            current = set(self.node_names)
            for name in [name for name in known if name not in current]:
                del known[name]
        width = max((max(d.cards) + 1 for d in self.nodes.values()), default=0)
        self.has_device: BoolArray = np.zeros(size, dtype=bool)
        # Cards whose type names NVIDIA (checkType's general check for an NVIDIA request).
        self.nvidia: BoolArray = np.zeros((size, width), dtype=bool)
        self.number: FloatArray = np.full((size, width), -1.0)
        self.memory: FloatArray = np.zeros((size, width))
        self.used_num: FloatArray = np.zeros((size, width))
        self.used_mem: FloatArray = np.zeros((size, width))
        self.used_core: FloatArray = np.zeros((size, width))
        # MIG nodes, and per card the largest instance memory it can still give (inf on a
        # hami-core node, -1 when none).
        self.node_mig: BoolArray = np.zeros(size, dtype=bool)
        self.mig_offer: FloatArray = np.full((size, width), np.inf)
        # [rule, row, card]: the card is held by a pod matching the rule (hami-core nodes).
        self.reserved: BoolArray = np.zeros((len(rules), size, width), dtype=bool)
        # Task key -> (row, [(card id, memory, cores, MIG instance)]) of what each pod holds.
        self.holders: dict[str, tuple[int, list[Held]]] = {}
        self.version = 0
        # The row each change touched, in order: ``version`` indexes it.
        self._changed_rows: list[int] = []
        self._all_rows = np.arange(size, dtype=np.intp)
        self._per_node_cache: dict[Any, tuple[int, Any]] = {}
        self._masks: dict[
            tuple[tuple[ContainerDeviceRequest, ...], bool, str | None, frozenset[int]],
            tuple[int, NodeMask],
        ] = {}
        cells: list[tuple[int, int, VgpuCard]] = []
        for row, devices in self.nodes.items():
            ruled = False
            for task in node_list[row].tasks.values():
                if task.status not in NOT_HOLDING:
                    self.add_from_annotations(task, row, task.pod_annotations)
                    ruled = ruled or task.key in self.holder_rules
            cells.extend((row, card_id, card) for card_id, card in devices.cards.items())
            if ruled:
                self._refresh_reserved(row)
            if devices.mode == MIG:
                self.node_mig[row] = True
                self._refresh_mig(row)
        # One fancy-indexed write per array rather than one per card.
        if cells:
            rows = np.fromiter((c[0] for c in cells), dtype=np.intp, count=len(cells))
            columns = np.fromiter((c[1] for c in cells), dtype=np.intp, count=len(cells))
            cards = [c[2] for c in cells]
            self.has_device[rows] = True
            self.nvidia[rows, columns] = [NVIDIA in card.type for card in cards]
            self.number[rows, columns] = [card.number for card in cards]
            self.memory[rows, columns] = [card.memory for card in cards]
            self.used_num[rows, columns] = [card.used_num for card in cards]
            self.used_mem[rows, columns] = [card.used_mem for card in cards]
            self.used_core[rows, columns] = [card.used_core for card in cards]

    # ---- accounting

    def _refresh_reserved(self, row: int) -> None:
        """Which rules hold which cards of ``row`` (``ruleGPUs``), from the cards' pods."""
        if not self.rules:
            return
        self.reserved[:, row, :] = False
        node = self.nodes.get(row)
        if node is None or node.mode != HAMI_CORE:
            # Exclusivity concerns hami-core sharing only.
            return
        for card_id, card in node.cards.items():
            for key in card.pods:
                for rule in self.holder_rules.get(key, ()):
                    self.reserved[rule, row, card_id] = True

    def _reserved_cards(self, rules: frozenset[int], rows: Any) -> Any:
        """``[len(rows), C]``: the cards a pod matching ``rules`` may not take."""
        return self.reserved[sorted(rules)][:, rows].any(axis=0)

    def excluded_cards(self, task: TaskInfo, row: int) -> frozenset[int]:
        """``reservedGPUsForPod``: the ids of the cards of ``row`` held by pods matching one
        of the rules ``task`` matches."""
        rules = task_rules(task, self.rules)
        if not rules:
            return frozenset()
        return frozenset(np.flatnonzero(self.reserved[sorted(rules), row].any(axis=0)).tolist())

    def _refresh_mig(self, row: int) -> None:
        node = self.nodes[row]
        for card_id, card in node.cards.items():
            self.mig_offer[row, card_id] = largest_offer(card.mig, card.geometries)

    def _mirror(self, row: int) -> None:
        self._refresh_reserved(row)
        if self.node_mig[row]:
            self._refresh_mig(row)
        for card_id, card in self.nodes[row].cards.items():
            self.nvidia[row, card_id] = NVIDIA in card.type
            self.number[row, card_id] = card.number
            self.memory[row, card_id] = card.memory
            self.used_num[row, card_id] = card.used_num
            self.used_mem[row, card_id] = card.used_mem
            self.used_core[row, card_id] = card.used_core
        self._changed_rows.append(row)
        self.version += 1

    def add_from_annotations(
        self, task: TaskInfo, row: int, annotations: Mapping[str, str]
    ) -> None:
        """``AddResource`` (hami-core ``AddPod``: a card counts a pod once)."""
        held = add_resource(
            self.nodes[row], task.key, pod_group_key(task), annotations, self.memory_factor
        )
        if held:
            self.holders[task.key] = (row, held)
            self._note_rules(task)

    def _note_rules(self, task: TaskInfo) -> None:
        rules = task_rules(task, self.rules)
        if rules:
            self.holder_rules[task.key] = rules

    def release(self, key: str) -> bool:
        held = self.holders.pop(key, None)
        if held is None:
            return False
        row, cards = held
        self.holder_rules.pop(key, None)
        node = self.nodes[row]
        for card_id, memory, cores, instance in cards:
            card = node.cards[card_id]
            card.used_num -= 1
            card.used_mem -= memory
            card.used_core -= cores
            card.pods.pop(key, None)
            if instance is not None:
                sub_mig_used(card.mig, card.geometries, *instance)
        self._mirror(row)
        return True

    def requested(self, task: TaskInfo) -> bool:
        """``HasDeviceRequest``."""
        return vgpu_ask(task, self.config).any_request

    def fit_on(self, task: TaskInfo, row: int) -> FitResult:
        requests = vgpu_ask(task, self.config).requests
        excluded = self.excluded_cards(task, row)
        return fit(task, self.nodes[row], requests, self.policy, excluded, self.memory_factor)

    def allocate(self, task: TaskInfo, row: int) -> FitResult:
        """``Allocate``: the fit, recorded (each card of each container counted)."""
        result = self.fit_on(task, row)
        if not result.fits:
            return result
        held = hold(
            self.nodes[row], task.key, pod_group_key(task), result.devices, self.memory_factor
        )
        self.holders[task.key] = (row, held)
        self._note_rules(task)
        self._mirror(row)
        return result

    def restore(self, task: TaskInfo, row: int, annotations: Mapping[str, str]) -> None:
        self.add_from_annotations(task, row, annotations)
        self._mirror(row)

    # ---- predicate

    def mask(self, task: TaskInfo) -> NodeMask | None:
        """Nodes without vGPUs pass (the resource fit decides for them); a node with them
        passes when, per container, enough of its cards could each take that container."""
        ask = vgpu_ask(task, self.config)
        if not ask.any_request:
            return None
        rules = task_rules(task, self.rules)
        key = (ask.requests, ask.simple, ask.mode, rules)
        cached = self._masks.get(key)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        possible: BoolArray = self.has_device.copy()
        if ask.mode == HAMI_CORE:
            possible &= ~self.node_mig
        elif ask.mode == MIG:
            possible &= self.node_mig
        elif ask.mode is not None:
            possible[:] = False
        for request in ask.requests:
            possible &= self._fit_counts(request, ask.simple, rules) >= request.nums
        passed: BoolArray = ~self.has_device | possible

        def reason(row: int) -> Status:
            return Status(
                StatusCode.UNSCHEDULABLE,
                ERR_VGPU,
                "deviceshare",
            )

        node_mask = NodeMask(passed, reason)
        self._masks[key] = (self.version, node_mask)
        return node_mask

    def _memreq(self, request: ContainerDeviceRequest, rows: Any) -> Any:
        memory = self.memory[rows]
        if request.mem_percentage_req != NO_PERCENTAGE:
            return np.floor(memory * request.mem_percentage_req / 100.0)
        return np.full_like(memory, float(request.memreq))

    def _cards_fitting(
        self,
        request: ContainerDeviceRequest,
        typed: bool,
        rows: Any,
        rules: frozenset[int] = frozenset(),
    ) -> Any:
        """``[len(rows), C]``: the cards that could take ``request`` alone (``typed``: their
        type checked too, which the simple requests need for the mask to be exact)."""
        number, used_num = self.number[rows], self.used_num[rows]
        used_core = self.used_core[rows]
        cores = request.coresreq
        fits = (
            (number >= 0)
            & (number > used_num)
            & (self.memory[rows] - self.used_mem[rows] >= self._memreq(request, rows))
            & (used_core + cores <= 100)
        )
        if cores == 100:
            fits &= used_num == 0
        if cores == 0:
            fits &= used_core != 100
        if typed:
            fits &= self.nvidia[rows]
        if rules:
            fits &= ~self._reserved_cards(rules, rows)
        # A MIG card needs an instance of the asked memory (hami-core cards: inf).
        factor = self.memory_factor if self.memory_factor > 1 else 1
        fits &= self.mig_offer[rows] >= self._memreq(request, rows) * factor
        return fits

    def _binpack_scores(
        self, request: ContainerDeviceRequest, rows: Any, rules: frozenset[int]
    ) -> FloatArray:
        """The binpack score of a simple request at ``rows`` (0 where it does not fit)."""
        fitting = self._cards_fitting(request, True, rows, rules)
        # binpack's card order: most used memory first, lowest id on a tie (stable sort).
        used_mem = self.used_mem[rows]
        order = np.argsort(np.where(fitting, -used_mem, np.inf), axis=1, kind="stable")
        chosen = order[:, : request.nums]
        picked = np.take_along_axis(fitting, chosen, axis=1)
        memory = np.take_along_axis(self.memory[rows], chosen, axis=1)
        used = np.take_along_axis(used_mem, chosen, axis=1)
        memreq = np.take_along_axis(self._memreq(request, rows), chosen, axis=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            card_scores = BINPACK_MULTIPLIER * (used + memreq) / memory
        found: FloatArray = np.zeros(len(fitting))
        fits = picked.all(axis=1) & self.has_device[rows]
        found[fits] = card_scores[fits].sum(axis=1)
        return found

    def _per_node(self, key: Any, compute: Any, compute_row: Any) -> Any:
        """``compute(rows)`` over every node, kept per ``key`` and recomputed only for the
        rows placements changed since (usually one: ``compute_row(row)``, plain Python over
        its few cards, cheaper there than numpy's per-call overhead)."""
        cached = self._per_node_cache.get(key)
        if cached is None:
            values = compute(self._all_rows)
        elif cached[0] == self.version:
            return cached[1]
        else:
            values = cached[1].copy()
            dirty = set(self._changed_rows[cached[0] :])
            if len(dirty) <= _ROWS_IN_PYTHON:
                for row in dirty:
                    values[row] = compute_row(row)
            else:
                rows = np.fromiter(dirty, dtype=np.intp, count=len(dirty))
                values[rows] = compute(rows)
        self._per_node_cache[key] = (self.version, values)
        return values

    def _row_fitting(
        self,
        request: ContainerDeviceRequest,
        typed: bool,
        row: int,
        rules: frozenset[int] = frozenset(),
    ) -> list[int]:
        """The ids of the cards of ``row`` that could take ``request`` alone (the scalar
        statement of ``_cards_fitting``)."""
        node = self.nodes.get(row)
        if node is None:
            return []
        excluded: Set[int] = (
            frozenset(np.flatnonzero(self.reserved[sorted(rules), row].any(axis=0)).tolist())
            if rules
            else frozenset()
        )
        cores = request.coresreq
        found = []
        for card_id, card in sorted(node.cards.items()):
            if request.mem_percentage_req != NO_PERCENTAGE:
                memreq = int(card.memory * request.mem_percentage_req / 100.0)
            else:
                memreq = request.memreq
            if (
                card.number > card.used_num
                and card.memory - card.used_mem >= memreq
                and card.used_core + cores <= 100
                and not (cores == 100 and card.used_num > 0)
                and not (cores == 0 and card.used_core == 100)
                and (not typed or NVIDIA in card.type)
                and card_id not in excluded
                and (
                    node.mode != MIG
                    or largest_offer(card.mig, card.geometries)
                    >= scaled(memreq, self.memory_factor)
                )
            ):
                found.append(card_id)
        return found

    def _row_binpack(
        self, request: ContainerDeviceRequest, row: int, rules: frozenset[int]
    ) -> float:
        node = self.nodes.get(row)
        if node is None:
            return 0.0
        fitting = self._row_fitting(request, True, row, rules)
        if len(fitting) < request.nums:
            return 0.0
        chosen = sorted(fitting, key=lambda i: (-node.cards[i].used_mem, i))[: request.nums]
        score = 0.0
        for card_id in chosen:
            card = node.cards[card_id]
            if request.mem_percentage_req != NO_PERCENTAGE:
                memreq = int(card.memory * request.mem_percentage_req / 100.0)
            else:
                memreq = request.memreq
            score += card_score(BINPACK, card, [card.used_num + 1, card.used_mem + memreq, 0])
        return score

    def _fit_counts(
        self, request: ContainerDeviceRequest, typed: bool, rules: frozenset[int]
    ) -> Any:
        return self._per_node(
            ("count", request, typed, rules),
            lambda rows: self._cards_fitting(request, typed, rows, rules).sum(axis=1),
            lambda row: len(self._row_fitting(request, typed, row, rules)),
        )

    def needs_scalar_fit(self, task: TaskInfo) -> bool:
        ask = vgpu_ask(task, self.config)
        return ask.any_request and not ask.simple

    def score(self, task: TaskInfo, row: int) -> float:
        """``ScoreNode``: the fit's score on this node (0 when it does not fit)."""
        if row not in self.nodes:
            return 0.0
        result = self.fit_on(task, row)
        return result.score if result.fits else 0.0

    def scores(self, task: TaskInfo, rows: Any) -> FloatArray:
        """The fit's score at each of ``rows`` (0 where it does not fit or no vGPU):
        vectorised for a simple request, the scalar fit per node otherwise."""
        ask = vgpu_ask(task, self.config)
        found: FloatArray = np.zeros(len(rows))
        if self.policy != BINPACK or not ask.requests:
            # spread's card score counts the card after this pod's own use (as upstream), so
            # it is 0; no policy scores 0.
            return found
        if not ask.simple:
            for i in np.flatnonzero(self.has_device[rows]):
                found[i] = self.score(task, int(rows[i]))
            return found
        request = ask.requests[0]
        if request.nums <= 0:
            return found
        rules = task_rules(task, self.rules)
        every: FloatArray = self._per_node(
            ("binpack", request, rules),
            lambda subset: self._binpack_scores(request, subset, rules),
            lambda row: self._row_binpack(request, row, rules),
        )
        scored: FloatArray = every[rows]
        if self.node_mig.any():
            # A MIG card counts the instance's memory, not the request's: the scalar fit
            # scores the (few) MIG nodes.
            scored = scored.copy()
            for i in np.flatnonzero(self.node_mig[rows]):
                scored[i] = self.score(task, int(rows[i]))
        return scored

    def predicate(self, task: TaskInfo, node: NodeInfo) -> Status | None:
        """The exact fit on one node (the mask let it through)."""
        if node.row not in self.nodes:
            return None
        result = self.fit_on(task, node.row)
        if result.fits:
            return None
        return Status(StatusCode.UNSCHEDULABLE, ERR_VGPU, "deviceshare")
