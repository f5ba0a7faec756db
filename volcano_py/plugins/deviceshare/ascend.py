"""HAMi Ascend vNPU (``pkg/scheduler/api/devices/ascend/hami``): Ascend NPUs shared by memory
(cut to the kind's partition templates) or, in hami-core mode, by memory and AI-core percent.

Kinds: one per ``vnpus`` entry of the device config (``commonWord``, e.g. ``Ascend310P``), each
accounted on its own, as upstream registers one device per common word.

Registration: a node has NPUs of a kind when its allocatable has a non-zero ``resourceName``
and its ``hami.io/node-register-<commonWord>`` annotation is a non-empty JSON list of
``{"id", "count", "devmem", "devcore", "custominfo": {"NetworkID": n}, ...}``. The node's
``hami-vnpu-core`` annotation (``"true"`` or not) overrides the config's ``hamiVnpuCore``.

Use: which card a pod holds comes from its ``hami.io/<commonWord>-devices-allocated``
annotation (``uuid,commonWord,memory,cores:`` per card, ``;`` after each container); a card
counts a pod once.

Fit (``selectDevices``): the pod's containers asking ``resourceName`` or
``resourceMemoryName`` (limits) each take ``nums`` cards, tried in the policy's order
(binpack: most used memory first; spread: unused first; otherwise as registered), a card
taken by an earlier container of the pod not reused. Memory not asked means the whole first
card; outside hami-core mode (the pod's ``huawei.com/vnpu-mode: hami-core``) the memory is
rounded up to the kind's smallest template that holds it, and several cards must each be
whole. On an ``Ascend910*`` kind whose cards all carry a NetworkID, the cards come from the
fullest network first.

Vectorised: per node row the cards' count, memory and cores (total and used) are ``[N, C]``
arrays, refreshed when a placement changes the row; a task's mask is, per container, "enough
cards that could take this container alone", exact for one container asking memory, and the
scalar fit (``select_devices``) runs only on the nodes it let through otherwise.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, FloatArray
from volcano_py.api.quantity import QuantityError, quantity_value
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import Status, StatusCode, TaskStatus
from volcano_py.framework.hooks import NodeMask
from volcano_py.plugins._kube_scheduling.podspec import containers, mapping
from volcano_py.plugins.deviceshare.config import NvidiaConfig, VnpuConfig
from volcano_py.plugins.deviceshare.options import BINPACK, SPREAD
from volcano_py.plugins.deviceshare.requests import (
    ContainerDeviceRequest,
    container_device_requests,
)

log = logging.getLogger(__name__)

HAMI_PREFIX: Final = "hami.io"
MODE_ANNOTATION: Final = "huawei.com/vnpu-mode"
HAMI_CORE: Final = "hami-core"
NODE_HAMI_CORE: Final = "hami-vnpu-core"
ASSIGNED_NODE: Final = "hami.io/vgpu-node"
ASSIGNED_TIME: Final = "hami.io/vgpu-time"
BIND_TIME: Final = "hami.io/bind-time"
BIND_PHASE: Final = "hami.io/bind-phase"
PREDICATE_TIME: Final = "predicate-time"
ASCEND910_PREFIX: Final = "Ascend910"
NETWORK_ID: Final = "NetworkID"
ASCEND910_NETWORK_WEIGHT: Final = 10
BINPACK_MULTIPLIER: Final = 100
SPREAD_MULTIPLIER: Final = 100
ERR_NO_DEVICE: Final = "no ascend device available"
ERR_INSUFFICIENT: Final = "no enough ascend device available"
ERR_PARTIAL: Final = (
    "vNPU does not support partial memory allocation when requesting multiple devices"
)
# Memory no card of the kind can give (see ``resolve_memreq``).
INFEASIBLE: Final = 2**31
NOT_HOLDING: Final = frozenset({TaskStatus.RELEASING, TaskStatus.PIPELINED})


def node_register_annotation(common_word: str) -> str:
    return f"{HAMI_PREFIX}/node-register-{common_word}"


def to_allocate_annotation(common_word: str) -> str:
    """``devices.InRequestDevices[commonWord]``."""
    return f"{HAMI_PREFIX}/{common_word}-devices-to-allocate"


def allocated_annotation(common_word: str) -> str:
    """``devices.SupportDevices[commonWord]``."""
    return f"{HAMI_PREFIX}/{common_word}-devices-allocated"


def runtime_annotation(common_word: str) -> str:
    return f"huawei.com/{common_word}"


def release_keys(common_words: Sequence[str]) -> tuple[str, ...]:
    """What ``Release`` asks to remove from a pod not yet bound by the device plugin."""
    keys = [ASSIGNED_NODE, ASSIGNED_TIME, BIND_PHASE, BIND_TIME, PREDICATE_TIME]
    for word in common_words:
        keys += [to_allocate_annotation(word), allocated_annotation(word), runtime_annotation(word)]
    return tuple(keys)


# ---- cards


@dataclass(slots=True)
class AscendCard:
    """One NPU (``DeviceInfo`` + ``DeviceUsage``)."""

    id: str
    count: int
    devmem: int
    devcore: int
    custom: Mapping[str, Any] | None = None
    used: int = 0
    usedmem: int = 0
    usedcores: int = 0
    # Pod key -> (memory, cores) it holds on this card (upstream's PodMap).
    pods: dict[str, tuple[int, int]] = field(default_factory=dict)

    @property
    def has_network_id(self) -> bool:
        return self.custom is not None and NETWORK_ID in self.custom

    @property
    def network_id(self) -> int | None:
        """The NetworkID when it is a JSON number (Go's ``float64``), truncated; else None."""
        value = (self.custom or {}).get(NETWORK_ID)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return None
        return int(value)


@dataclass(slots=True)
class AscendNode:
    name: str
    hami_core: bool
    # Card id -> card, in registration order.
    cards: dict[str, AscendCard]


def _go_field(entry: Mapping[str, Any], name: str) -> Any:
    """A JSON object's field as Go's decoder finds it: exact name first, then any case."""
    if name in entry:
        return entry[name]
    lowered = name.lower()
    for key, value in entry.items():
        if key.lower() == lowered:
            return value
    return None


def _go_int32(entry: Mapping[str, Any], name: str) -> int:
    value = _go_field(entry, name)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int) or not -(2**31) <= value < 2**31:
        raise ValueError(f"{name}: {value!r} is not an int32")
    return value


def decode_node_devices(text: str) -> list[AscendCard]:
    """``UnMarshalNodeDevices``: the cards of a registration annotation (ValueError when it
    does not decode as upstream's would not)."""
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise ValueError(str(error)) from error
    if document is None:
        return []
    if not isinstance(document, list):
        raise ValueError("not a JSON list")
    cards = []
    for entry in document:
        if entry is None:
            continue
        if not isinstance(entry, Mapping):
            raise ValueError(f"{entry!r} is not an object")
        card_id = _go_field(entry, "id")
        if card_id is not None and not isinstance(card_id, str):
            raise ValueError(f"id: {card_id!r} is not a string")
        custom = _go_field(entry, "custominfo")
        if custom is not None and not isinstance(custom, Mapping):
            raise ValueError(f"custominfo: {custom!r} is not an object")
        cards.append(
            AscendCard(
                id=card_id or "",
                count=_go_int32(entry, "count"),
                devmem=_go_int32(entry, "devmem"),
                devcore=_go_int32(entry, "devcore"),
                custom=custom,
            )
        )
    return cards


def _allocatable_nonzero(node: Mapping[str, Any], resource: str) -> bool:
    allocatable = mapping(mapping(node.get("status")).get("allocatable"))
    if resource not in allocatable:
        return False
    try:
        return quantity_value(allocatable[resource]) != 0
    except QuantityError:
        return False


def node_devices(
    name: str, node: Mapping[str, Any] | None, kind: VnpuConfig, hami_core_default: bool
) -> AscendNode | None:
    """``NewAscendDevices`` for one kind: the node's cards, or None when it registers none."""
    if node is None or not _allocatable_nonzero(node, kind.resource_name):
        return None
    annotations = mapping(mapping(node.get("metadata")).get("annotations"))
    hami_core = hami_core_default
    if NODE_HAMI_CORE in annotations:
        hami_core = annotations[NODE_HAMI_CORE] == "true"
    text = annotations.get(node_register_annotation(kind.common_word))
    if text is None:
        return None
    try:
        cards = decode_node_devices(str(text))
    except ValueError as error:
        log.warning("node %s: cannot decode %s devices: %s", name, kind.common_word, error)
        return None
    if not cards:
        return None
    # Keyed by id as upstream's map (a repeated id: the later entry, at the first place).
    return AscendNode(name, hami_core, {card.id: card for card in cards})


def ignored_resources(kind: VnpuConfig) -> tuple[str, str]:
    """``GetIgnoredDevices``: the kind's resources Volcano leaves out of every resource count
    once a node registers the kind (the cache drops them: see ``ignored``)."""
    return kind.resource_memory_name, f"{kind.resource_name}-core"


def _fresh(node: AscendNode) -> AscendNode:
    return AscendNode(
        node.name,
        node.hami_core,
        {
            i: AscendCard(c.id, c.count, c.devmem, c.devcore, c.custom)
            for i, c in node.cards.items()
        },
    )


# ---- the pod's usage


def _parse_int32(text: str) -> int:
    """``strconv.ParseInt(s, 10, 32)`` with the error ignored: 0, or clipped when too big."""
    try:
        value = int(text, 10)
    except ValueError:
        return 0
    return max(-(2**31), min(2**31 - 1, value))


@dataclass(frozen=True, slots=True)
class UsedCard:
    """One card of a container's allocation (``ContainerDevice``)."""

    uuid: str
    type: str
    usedmem: int
    usedcores: int


def decode_pod_devices(text: str) -> tuple[UsedCard, ...]:
    """The cards of a ``-devices-allocated`` annotation, every container's (``;``-separated);
    an entry with a comma and fewer than four fields spoils the whole annotation, as in
    upstream's ``DecodeContainerDevices``."""
    found = []
    for part in text.split(";"):
        for entry in part.split(":"):
            if "," not in entry:
                continue
            fields = entry.split(",")
            if len(fields) < 4:
                return ()
            found.append(
                UsedCard(fields[0], fields[1], _parse_int32(fields[2]), _parse_int32(fields[3]))
            )
    return tuple(found)


def encode_pod_devices(containers_cards: Sequence[Sequence[UsedCard]]) -> str:
    """``EncodePodSingleDevice``: ``uuid,type,mem,cores:`` per card, ``;`` after each
    container."""
    return "".join(
        "".join(f"{c.uuid},{c.type},{c.usedmem},{c.usedcores}:" for c in cards) + ";"
        for cards in containers_cards
    )


def add_resource(
    node: AscendNode, key: str, annotations: Mapping[str, str], common_word: str
) -> list[tuple[str, int, int]]:
    """``addResource``: what the pod's annotation says it holds, each card counted once per
    pod; the (card id, memory, cores) newly counted."""
    text = annotations.get(allocated_annotation(common_word))
    if text is None:
        return []
    held = []
    for used in decode_pod_devices(text):
        card = node.cards.get(used.uuid)
        if card is None:
            log.warning("ascend device %s not found", used.uuid)
            continue
        if key in card.pods:
            continue
        card.pods[key] = (used.usedmem, used.usedcores)
        card.used += 1
        card.usedmem += used.usedmem
        card.usedcores += used.usedcores
        held.append((card.id, used.usedmem, used.usedcores))
    return held


# ---- requests and fit


def trim_memory(kind: VnpuConfig, memory: int) -> tuple[int, str]:
    """``trimMemory``: the smallest template holding ``memory``; else the allocatable
    memory when within capacity; else 0."""
    for template in kind.templates:
        if memory <= template.memory:
            return template.memory, template.name
    if memory <= kind.memory_capacity:
        return kind.memory_allocatable, ""
    return 0, ""


def verify_req(request: ContainerDeviceRequest, kind: VnpuConfig) -> str | None:
    """``verifyReq``: several cards must each be given whole."""
    trimmed, _ = trim_memory(kind, request.memreq)
    if request.nums > 1 and trimmed != kind.memory_allocatable:
        return ERR_PARTIAL
    return None


def fit(
    request: ContainerDeviceRequest,
    card: AscendCard,
    kind: VnpuConfig,
    node_hami_core: bool,
    hami_core_mode: bool,
) -> bool:
    """``fit``: can ``card`` take one device of ``request`` now."""
    if request.type != kind.common_word:
        return False
    if hami_core_mode and not node_hami_core:
        return False
    if card.count <= card.used:
        return False
    if card.devmem - card.usedmem < request.memreq:
        return False
    total_core = 100 if hami_core_mode else card.devcore
    if total_core - card.usedcores < request.coresreq:
        return False
    if total_core == 100 and request.coresreq == 100 and card.used > 0:
        return False
    return not (total_core != 0 and card.usedcores == total_core and request.coresreq == 0)


def cal_score(policy: str, used: int, usedmem: int, devmem: int) -> float:
    """``CalScore`` of a card's current usage."""
    if devmem == 0:
        return 0.0
    if policy == BINPACK:
        return BINPACK_MULTIPLIER * (usedmem / devmem)
    if policy == SPREAD:
        return float(SPREAD_MULTIPLIER) if used == 0 else 0.0
    return 0.0


def _int32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def kind_names(kind: VnpuConfig) -> NvidiaConfig:
    """The kind's resource names in the shape ``ExtractResourceRequest`` reads (cores:
    ``<resourceName>-core``; no memory percentage)."""
    return NvidiaConfig(
        resource_count_name=kind.resource_name,
        resource_memory_name=kind.resource_memory_name,
        resource_core_name=f"{kind.resource_name}-core",
        resource_memory_percentage_name="",
    )


def resolve_memreq(
    request: ContainerDeviceRequest, kind: VnpuConfig, first_devmem: int, hami_core_mode: bool
) -> ContainerDeviceRequest:
    """``ResourceReqs``' per-node part: memory not asked is the whole first card's; outside
    hami-core mode it is rounded up to a template. Memory above the kind's capacity is
    ``INFEASIBLE`` (upstream trims it to 0, which then fits any card)."""
    memreq = request.memreq
    if memreq == 0 and request.mem_percentage_req != 0:
        memreq = _int32(first_devmem * request.mem_percentage_req) // 100
    if memreq > 0 and not hami_core_mode:
        trimmed, _ = trim_memory(kind, memreq)
        memreq = trimmed if trimmed > 0 else INFEASIBLE
    return ContainerDeviceRequest(
        request.nums, request.type, memreq, request.mem_percentage_req, request.coresreq
    )


@dataclass(frozen=True, slots=True)
class AscendAsk:
    """What a task asks of one kind, read once per pod. ``simple``: one container asking
    memory, so the vectorised mask decides alone."""

    requests: tuple[ContainerDeviceRequest, ...]
    any_request: bool
    hami_core_mode: bool
    simple: bool


def has_ascend_request(pod: Mapping[str, Any], kind: VnpuConfig) -> bool:
    """``HasDeviceRequest``: a container limits the kind's count or memory resource."""
    names = (kind.resource_name, kind.resource_memory_name)
    for container in containers(pod):
        limits = mapping(mapping(container.get("resources")).get("limits"))
        if any(name in limits for name in names):
            return True
    return False


def ascend_ask(task: TaskInfo, kind: VnpuConfig) -> AscendAsk:
    slot = f"deviceshare.ascend.{kind.common_word}"
    cached: tuple[VnpuConfig, AscendAsk] | None = task.derived.get(slot)
    if cached is not None and cached[0] == kind:
        return cached[1]
    requests = container_device_requests(task.pod, kind_names(kind), kind.common_word)
    ask = AscendAsk(
        requests,
        has_ascend_request(task.pod, kind),
        task.pod_annotations.get(MODE_ANNOTATION) == HAMI_CORE,
        len(requests) == 1 and requests[0].memreq != 0,
    )
    task.derived[slot] = (kind, ask)
    return ask


@dataclass(frozen=True, slots=True)
class Selection:
    """``selectDevices``' answer: the cards per container, or why not (and its status code)."""

    cards: tuple[tuple[AscendCard, ...], ...] = ()
    requests: tuple[ContainerDeviceRequest, ...] = ()
    error: str = ""
    code: StatusCode = StatusCode.SUCCESS

    @property
    def fits(self) -> bool:
        return not self.error


def _with_topology(nums: int, selected: Sequence[AscendCard]) -> list[AscendCard]:
    """``selectDevicesWithTopology``: cards of the network with most fitting cards first
    (equal counts: the network met first)."""
    networks: dict[int, list[AscendCard]] = {}
    for card in selected:
        network = card.network_id
        if network is not None:
            networks.setdefault(network, []).append(card)
    picked: list[AscendCard] = []
    for cards in sorted(networks.values(), key=len, reverse=True):
        for card in cards:
            picked.append(card)
            if len(picked) == nums:
                return picked
    return picked


def select_devices(node: AscendNode, kind: VnpuConfig, ask: AscendAsk, policy: str) -> Selection:
    """``selectDevices`` over the cards' current usage (a card is not reused by a later
    container; equal scores keep the registration order)."""
    cards = list(node.cards.values())
    if not cards:
        return Selection(error=ERR_NO_DEVICE, code=StatusCode.ERROR)
    cards.sort(key=lambda c: -cal_score(policy, c.used, c.usedmem, c.devmem))
    topology = kind.common_word.startswith(ASCEND910_PREFIX) and all(
        c.has_network_id for c in cards
    )
    taken: set[str] = set()
    chosen: list[tuple[AscendCard, ...]] = []
    resolved: list[ContainerDeviceRequest] = []
    for raw in ask.requests:
        request = resolve_memreq(raw, kind, cards[0].devmem, ask.hami_core_mode)
        if not ask.hami_core_mode:
            error = verify_req(request, kind)
            if error is not None:
                return Selection(error=error, code=StatusCode.ERROR)
        remaining = request.nums
        selected: list[AscendCard] = []
        for card in cards:
            if card.id in taken:
                continue
            if not fit(request, card, kind, node.hami_core, ask.hami_core_mode):
                continue
            selected.append(card)
            remaining -= 1
            if remaining <= 0 and not topology:
                break
        if remaining > 0:
            return Selection(error=ERR_INSUFFICIENT, code=StatusCode.UNSCHEDULABLE)
        if topology:
            selected = _with_topology(request.nums, selected)
        taken.update(card.id for card in selected)
        chosen.append(tuple(selected))
        resolved.append(request)
    return Selection(tuple(chosen), tuple(resolved))


def score_node(node: AscendNode, kind: VnpuConfig, ask: AscendAsk, policy: str) -> float:
    """``ScoreNode``: each container's first card's current score, plus, on an Ascend910
    kind whose chosen cards carry NetworkIDs, 10 times the share of the fullest network."""
    selection = select_devices(node, kind, ask, policy)
    if not selection.fits:
        return 0.0
    # A container given no card (it asked 0 and none fit) has no first card; upstream
    # indexes it and panics.
    firsts = [cards[0] for cards in selection.cards if cards]
    score = sum(cal_score(policy, c.used, c.usedmem, c.devmem) for c in firsts)
    if kind.common_word.startswith(ASCEND910_PREFIX) and all(c.has_network_id for c in firsts):
        counts: dict[int, int] = {}
        for card in firsts:
            network = card.network_id
            if network is not None:
                counts[network] = counts.get(network, 0) + 1
        total = sum(counts.values())
        if total == 0:
            return 0.0
        score += max(counts.values()) / total * ASCEND910_NETWORK_WEIGHT
    return score


def _go_json(value: Any) -> str:
    """``json.Marshal``'s text: compact, HTML characters escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def runtime_info(kind: VnpuConfig, selection: Selection, hami_core_mode: bool) -> str:
    """The ``huawei.com/<commonWord>`` annotation: per card its UUID and, in hami-core mode,
    memory and cores, else the template its memory was cut to (empty fields left out)."""
    infos: list[dict[str, Any]] = []
    for cards, request in zip(selection.cards, selection.requests, strict=True):
        for card in cards:
            info: dict[str, Any] = {}
            if card.id:
                info["UUID"] = card.id
            if hami_core_mode:
                if request.memreq:
                    info["memory"] = request.memreq
                if request.coresreq:
                    info["core"] = request.coresreq
            else:
                _, template = trim_memory(kind, request.memreq)
                if template:
                    info["temp"] = template
            infos.append(info)
    return _go_json(infos if infos else None)


def used_cards(kind: VnpuConfig, selection: Selection) -> list[list[UsedCard]]:
    return [
        [UsedCard(card.id, kind.common_word, request.memreq, request.coresreq) for card in cards]
        for cards, request in zip(selection.cards, selection.requests, strict=True)
    ]


# ---- the session's accounting of one kind


class AscendDevices:
    """One Ascend kind over the session's nodes: the cards of every node that registers it,
    and ``[N, C]`` mirrors of their usage for the vectorised mask and score."""

    def __init__(
        self,
        node_list: Sequence[NodeInfo],
        kind: VnpuConfig,
        hami_core_default: bool,
        policy: str,
        registrations: dict[str, tuple[Any, VnpuConfig, bool, AscendNode | None]] | None = None,
    ) -> None:
        """``registrations``: node name -> (node object, kind, default, decoded cards) kept
        from one session to the next, so an unchanged node is not decoded again."""
        self.kind = kind
        self.policy = policy
        size = len(node_list)
        self.nodes: dict[int, AscendNode] = {}
        known = registrations if registrations is not None else {}
        for node in node_list:
            seen = known.get(node.name)
            if (
                seen is not None
                and seen[0] is node.node
                and seen[1] == kind
                and seen[2] == hami_core_default
            ):
                template = seen[3]
            else:
                template = node_devices(node.name, node.node, kind, hami_core_default)
                known[node.name] = (node.node, kind, hami_core_default, template)
            if template is not None:
                # Shared until a pod's usage is counted on it (``_own``): most nodes of a
                # session are only read.
                self.nodes[node.row] = template
        if len(known) > 2 * size:
            current = {node.name for node in node_list}
            for name in [name for name in known if name not in current]:
                del known[name]
        width = max((len(n.cards) for n in self.nodes.values()), default=0)
        self.has_device: BoolArray = np.zeros(size, dtype=bool)
        self.hami_core: BoolArray = np.zeros(size, dtype=bool)
        # Rows whose score needs the scalar path (an Ascend910 kind with NetworkIDs).
        self.networked: BoolArray = np.zeros(size, dtype=bool)
        self.count: FloatArray = np.full((size, width), -1.0)
        self.devmem: FloatArray = np.zeros((size, width))
        self.devcore: FloatArray = np.zeros((size, width))
        self.used: FloatArray = np.zeros((size, width))
        self.usedmem: FloatArray = np.zeros((size, width))
        self.usedcores: FloatArray = np.zeros((size, width))
        # Task key -> (row, [(card id, memory, cores)]) of what each pod holds.
        self.holders: dict[str, tuple[int, list[tuple[str, int, int]]]] = {}
        self.version = 0
        self._owned: set[int] = set()
        # The row each change touched, in order: ``version`` indexes it.
        self._changed_rows: list[int] = []
        self._per_node_cache: dict[Any, tuple[int, Any]] = {}
        self._masks: dict[tuple[Any, ...], tuple[int, NodeMask]] = {}
        cells: list[tuple[int, int, AscendCard]] = []
        for row, devices in self.nodes.items():
            for task in node_list[row].tasks.values():
                if task.status not in NOT_HOLDING:
                    self.add_from_annotations(task, row, task.pod_annotations)
            cells.extend((row, column, card) for column, card in enumerate(devices.cards.values()))
        # One fancy-indexed write per array rather than one per card.
        if cells:
            at = (
                np.fromiter((c[0] for c in cells), dtype=np.intp, count=len(cells)),
                np.fromiter((c[1] for c in cells), dtype=np.intp, count=len(cells)),
            )
            cards = [c[2] for c in cells]
            self.count[at] = [card.count for card in cards]
            self.devmem[at] = [card.devmem for card in cards]
            self.devcore[at] = [card.devcore for card in cards]
            self.used[at] = [card.used for card in cards]
            self.usedmem[at] = [card.usedmem for card in cards]
            self.usedcores[at] = [card.usedcores for card in cards]
        networked = kind.common_word.startswith(ASCEND910_PREFIX)
        for row, devices in self.nodes.items():
            self.has_device[row] = True
            self.hami_core[row] = devices.hami_core
            self.networked[row] = networked and any(
                c.has_network_id for c in devices.cards.values()
            )

    # ---- accounting

    def _mirror(self, row: int) -> None:
        for column, card in enumerate(self.nodes[row].cards.values()):
            self.count[row, column] = card.count
            self.devmem[row, column] = card.devmem
            self.devcore[row, column] = card.devcore
            self.used[row, column] = card.used
            self.usedmem[row, column] = card.usedmem
            self.usedcores[row, column] = card.usedcores
        self._changed_rows.append(row)
        self.version += 1

    def _own(self, row: int) -> AscendNode:
        """The row's cards, copied from the kept registration before their first change."""
        if row not in self._owned:
            self.nodes[row] = _fresh(self.nodes[row])
            self._owned.add(row)
        return self.nodes[row]

    def add_from_annotations(
        self, task: TaskInfo, row: int, annotations: Mapping[str, str]
    ) -> None:
        held = add_resource(self._own(row), task.key, annotations, self.kind.common_word)
        if held:
            previous = self.holders.get(task.key)
            self.holders[task.key] = (row, (previous[1] if previous else []) + held)

    def restore(self, task: TaskInfo, row: int, annotations: Mapping[str, str]) -> None:
        self.add_from_annotations(task, row, annotations)
        self._mirror(row)

    def release(self, key: str) -> bool:
        """``SubResource``."""
        held = self.holders.pop(key, None)
        if held is None:
            return False
        row, cards = held
        node = self.nodes[row]
        for card_id, memory, cores in cards:
            card = node.cards[card_id]
            card.used -= 1
            card.usedmem -= memory
            card.usedcores -= cores
            card.pods.pop(key, None)
        self._mirror(row)
        return True

    def requested(self, task: TaskInfo) -> bool:
        return ascend_ask(task, self.kind).any_request

    def select(self, task: TaskInfo, row: int) -> Selection:
        return select_devices(self.nodes[row], self.kind, ascend_ask(task, self.kind), self.policy)

    def allocate(self, task: TaskInfo, row: int, now: int, node_name: str) -> Selection | str:
        """``Allocate``: the selection, recorded, and the bind annotations written into
        ``task.pod_annotations``; the error text when the pod does not fit."""
        selection = self.select(task, row)
        if not selection.fits:
            return f"failed to select ascend devices for pod {task.name}: {selection.error}"
        word = self.kind.common_word
        encoded = encode_pod_devices(used_cards(self.kind, selection))
        stamp = str(now)
        annotations = {
            to_allocate_annotation(word): encoded,
            allocated_annotation(word): encoded,
            PREDICATE_TIME: stamp,
            runtime_annotation(word): runtime_info(
                self.kind, selection, ascend_ask(task, self.kind).hami_core_mode
            ),
        }
        self.restore(task, row, annotations)
        annotations.update(
            {
                ASSIGNED_NODE: node_name,
                ASSIGNED_TIME: stamp,
                BIND_PHASE: "allocating",
                BIND_TIME: stamp,
            }
        )
        task.pod_annotations.update(annotations)
        return selection

    # ---- predicate and score

    def _cards_fitting(
        self, request: ContainerDeviceRequest, hami_core_mode: bool, rows: Any = slice(None)
    ) -> BoolArray:
        """``[len(rows), C]``: the cards that could take ``request`` alone (memory only when
        known)."""
        devcore, used, usedcores = self.devcore[rows], self.used[rows], self.usedcores[rows]
        total_core = np.full_like(devcore, 100.0) if hami_core_mode else devcore
        cores = request.coresreq
        fits: BoolArray = (self.count[rows] > used) & (total_core - usedcores >= cores)
        if request.memreq != 0:
            fits &= self.devmem[rows] - self.usedmem[rows] >= request.memreq
        if cores == 100:
            fits &= ~((total_core == 100) & (used > 0))
        if cores == 0:
            fits &= ~((total_core != 0) & (usedcores == total_core))
        if hami_core_mode:
            fits &= self.hami_core[rows][:, None]
        return fits

    def _per_node(self, key: Any, compute: Any) -> Any:
        """``compute(rows)`` over every node, kept per ``key`` and recomputed only on the rows
        placements changed since (usually one)."""
        cached = self._per_node_cache.get(key)
        if cached is None:
            values = compute(slice(None))
        elif cached[0] == self.version:
            return cached[1]
        else:
            values = cached[1].copy()
            dirty = sorted(set(self._changed_rows[cached[0] :]))
            rows = np.fromiter(dirty, dtype=np.intp, count=len(dirty))
            values[rows] = compute(rows)
        self._per_node_cache[key] = (self.version, values)
        return values

    def _fit_counts(self, request: ContainerDeviceRequest, hami_core_mode: bool) -> Any:
        """Per node, how many of its cards could take ``request`` alone."""
        return self._per_node(
            ("count", request, hami_core_mode),
            lambda rows: self._cards_fitting(request, hami_core_mode, rows).sum(axis=1),
        )

    def _best_scores(self, request: ContainerDeviceRequest, hami_core_mode: bool) -> Any:
        """Per node, the policy's score of the best-scored card that could take ``request``
        (the first card ``select_devices`` picks); -inf where none could."""

        def compute(rows: Any) -> Any:
            fitting = self._cards_fitting(request, hami_core_mode, rows)
            devmem, used = self.devmem[rows], self.used[rows]
            with np.errstate(divide="ignore", invalid="ignore"):
                if self.policy == BINPACK:
                    per_card = np.where(
                        devmem > 0, BINPACK_MULTIPLIER * self.usedmem[rows] / devmem, 0.0
                    )
                else:
                    per_card = np.where((devmem > 0) & (used == 0), float(SPREAD_MULTIPLIER), 0.0)
            return np.where(fitting, per_card, -np.inf).max(axis=1, initial=-np.inf)

        return self._per_node(("best", request, hami_core_mode), compute)

    def _known(self, ask: AscendAsk, raw: ContainerDeviceRequest) -> ContainerDeviceRequest:
        """The request with its memory resolved where that does not depend on the node
        (memory asked); memory 0 stays 0 (unknown: the mask leaves it out)."""
        if raw.memreq == 0:
            return raw
        return resolve_memreq(raw, self.kind, 0, ask.hami_core_mode)

    def mask(self, task: TaskInfo) -> NodeMask | None:
        """Nodes without this kind pass (the resource fit decides for them); a node with it
        passes when, per container, enough of its cards could each take that container."""
        ask = ascend_ask(task, self.kind)
        if not ask.any_request:
            return None
        key = (ask.requests, ask.hami_core_mode)
        cached = self._masks.get(key)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        possible: BoolArray = self.has_device.copy()
        code = StatusCode.UNSCHEDULABLE
        for raw in ask.requests:
            request = self._known(ask, raw)
            if (
                not ask.hami_core_mode
                and request.memreq != 0
                and verify_req(request, self.kind) is not None
            ):
                possible[:] = False
                code = StatusCode.ERROR
                break
            possible &= self._fit_counts(request, ask.hami_core_mode) >= request.nums
        passed: BoolArray = ~self.has_device | possible

        def reason(row: int) -> Status:
            return Status(code, ERR_NO_DEVICE, "deviceshare")

        node_mask = NodeMask(passed, reason)
        self._masks[key] = (self.version, node_mask)
        return node_mask

    def needs_scalar_fit(self, task: TaskInfo) -> bool:
        ask = ascend_ask(task, self.kind)
        return ask.any_request and not ask.simple

    def predicate(self, task: TaskInfo, node: NodeInfo) -> Status | None:
        """The exact fit on one node (the mask let it through)."""
        devices = self.nodes.get(node.row)
        if devices is None:
            return None
        selection = self.select(task, node.row)
        if selection.fits:
            return None
        return Status(selection.code, ERR_NO_DEVICE, "deviceshare")

    def scores(self, task: TaskInfo, rows: Any) -> FloatArray:
        """``ScoreNode`` at each of ``rows`` (0 where it does not fit or has no card of this
        kind): vectorised for a simple request on rows without NetworkIDs, else scalar."""
        ask = ascend_ask(task, self.kind)
        found: FloatArray = np.zeros(len(rows))
        if not ask.any_request or not ask.requests:
            return found
        scored_by_policy = self.policy in (BINPACK, SPREAD)
        # Without a policy only the NetworkID bonus scores.
        scalar: BoolArray = self.networked[rows] & self.has_device[rows]
        if ask.simple and scored_by_policy:
            request = self._known(ask, ask.requests[0])
            enough = self._fit_counts(request, ask.hami_core_mode)[rows] >= max(request.nums, 1)
            if not ask.hami_core_mode and verify_req(request, self.kind) is not None:
                enough[:] = False
            # The first card picked is the best-scored card that fits.
            best = self._best_scores(request, ask.hami_core_mode)[rows]
            found[:] = np.where(enough & self.has_device[rows], best, 0.0)
        elif scored_by_policy:
            scalar = self.has_device[rows]
        for i in np.flatnonzero(scalar):
            found[i] = score_node(self.nodes[int(rows[i])], self.kind, ask, self.policy)
        return found
