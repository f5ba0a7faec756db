"""GPU sharing by memory and by whole cards (``pkg/scheduler/api/devices/nvidia/gpushare``).

A node has GPUs when its ``status.capacity`` has both ``volcano.sh/gpu-memory`` (the total)
and a non-zero ``volcano.sh/gpu-number``: that many cards of equal memory (total / number),
ids 0..n-1, minus the ids its ``volcano.sh/gpu-unhealthy-ids`` annotation lists. Which pods
use which card comes from the pods' ``volcano.sh/gpu-index`` annotation (written at bind);
a card's used memory is the GPU memory of every pod on it.

A pod asking ``volcano.sh/gpu-memory`` needs one card with that much free (the lowest such
card id is taken at allocation); one asking ``volcano.sh/gpu-number`` needs that many idle
cards (cards no pod uses).

Vectorised: the session keeps, per node row, the cards' memory, used memory and pod counts
as ``[N, C]`` arrays and from them the best single-card free memory and the idle card count
per node, updated for one row on each placement; a task's fit over all nodes is then two
comparisons. ``card_choice`` is the scalar, readable statement of the same rule (and what an
allocation runs on its one node); a property test holds the two equal.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

import numpy as np

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import BoolArray, FloatArray, IntArray
from volcano_py.api.quantity import QuantityError, quantity_value
from volcano_py.api.task import TaskInfo, derived_fact
from volcano_py.api.types import Status, StatusCode, TaskStatus
from volcano_py.framework.hooks import NodeMask
from volcano_py.plugins.deviceshare.requests import (
    GPU_MEMORY,
    GPU_NUMBER,
    gpu_memory_of_pod,
    gpu_number_of_pod,
)

DEVICE_NAME: Final = "GpuShare"
PREDICATE_TIME: Final = "volcano.sh/predicate-time"
GPU_INDEX: Final = "volcano.sh/gpu-index"
UNHEALTHY_GPU_IDS: Final = "volcano.sh/gpu-unhealthy-ids"
# Released with the pod (``Release``'s annotation keys).
ANNOTATION_KEYS: Final = (PREDICATE_TIME, GPU_INDEX)

# A node's tasks in these states hold no card (``NodeInfo.AddTask`` adds devices otherwise).
NOT_HOLDING: Final = frozenset({TaskStatus.RELEASING, TaskStatus.PIPELINED})


@dataclass(frozen=True, slots=True)
class GpuRequest:
    memory: int
    number: int


def gpu_request(task: TaskInfo) -> GpuRequest:
    return derived_fact(  # type: ignore[no-any-return]
        task,
        "deviceshare.gpushare",
        lambda t: GpuRequest(gpu_memory_of_pod(t.pod), gpu_number_of_pod(t.pod)),
    )


def _capacity_value(node: Mapping[str, Any], resource: str) -> int | None:
    capacity = (node.get("status") or {}).get("capacity") or {}
    if resource not in capacity:
        return None
    try:
        return quantity_value(capacity[resource])
    except QuantityError:
        return None


def unhealthy_ids(node: Mapping[str, Any]) -> set[int]:
    """The ids of ``volcano.sh/gpu-unhealthy-ids``; unparsable entries are skipped."""
    text = ((node.get("metadata") or {}).get("annotations") or {}).get(UNHEALTHY_GPU_IDS)
    found: set[int] = set()
    if text is None:
        return found
    for part in str(text).split(","):
        try:
            found.add(int(part))
        except ValueError:
            continue
    return found


def node_cards(node: Mapping[str, Any] | None) -> dict[int, int] | None:
    """Card id -> memory of a node's healthy GPUs (``NewGPUDevices``); None without GPUs."""
    if node is None:
        return None
    total = _capacity_value(node, GPU_MEMORY)
    number = _capacity_value(node, GPU_NUMBER)
    if total is None or number is None or number <= 0:
        return None
    per_card = total // number
    unhealthy = unhealthy_ids(node)
    return {card: per_card for card in range(number) if card not in unhealthy}


def gpu_index(annotations: Mapping[str, str]) -> list[int] | None:
    """``GetGPUIndex``: the card ids of ``volcano.sh/gpu-index``; None when absent or bad."""
    value = annotations.get(GPU_INDEX)
    if value is None:
        return None
    try:
        return [int(part) for part in value.split(",")]
    except ValueError:
        return None


def format_gpu_index(ids: Sequence[int]) -> str:
    return ",".join(str(card) for card in ids)


def card_choice(
    memory: Sequence[float],
    used: Sequence[float],
    pods: Sequence[int],
    request: GpuRequest,
) -> list[int] | None:
    """The card positions an allocation takes (lowest first), or None when the node cannot
    hold the request: one card with ``request.memory`` free, else ``request.number`` idle
    cards. Positions are card ids in id order (missing cards have memory < 0)."""
    if request.memory > 0:
        for card, (total, in_use) in enumerate(zip(memory, used, strict=True)):
            if total >= 0 and max(total - in_use, 0) >= request.memory:
                return [card]
        return None
    if request.number > 0:
        idle = [card for card, total in enumerate(memory) if total >= 0 and pods[card] == 0]
        return idle[: request.number] if len(idle) >= request.number else None
    return []


class GpuShareDevices:
    """The session's per-card accounting of every node with GPUs, as arrays over rows."""

    def __init__(
        self,
        node_list: Sequence[NodeInfo],
        sharing: bool,
        number: bool,
        inventory: dict[str, tuple[Any, dict[int, int] | None]] | None = None,
    ) -> None:
        """``inventory``: node name -> (node object, its cards) kept from one session to the
        next, so an unchanged node is not read again."""
        self.sharing = sharing
        self.number = number
        size = len(node_list)
        inventories: list[tuple[int, dict[int, int]]] = []
        known = inventory if inventory is not None else {}
        for node in node_list:
            seen = known.get(node.name)
            if seen is not None and seen[0] is node.node:
                cards = seen[1]
            else:
                cards = node_cards(node.node)
                known[node.name] = (node.node, cards)
            if cards:
                inventories.append((node.row, cards))
        if len(known) > 2 * size:
            current = {node.name for node in node_list}
            for name in [name for name in known if name not in current]:
                del known[name]
        width = max((max(cards) + 1 for _, cards in inventories), default=0)
        self.node_names = [node.name for node in node_list]
        # -1: no such card (never existed, or unhealthy).
        self.memory: FloatArray = np.full((size, width), -1.0)
        self.used: FloatArray = np.zeros((size, width))
        self.pods: IntArray = np.zeros((size, width), dtype=np.intp)
        self.has_device: BoolArray = np.zeros(size, dtype=bool)
        cells = [
            (row, card, amount) for row, cards in inventories for card, amount in cards.items()
        ]
        if cells:
            rows, columns, amounts = zip(*cells, strict=True)
            self.has_device[list(rows)] = True
            self.memory[list(rows), list(columns)] = amounts
        self.best_free: FloatArray = np.full(size, -1.0)
        self.idle: IntArray = np.zeros(size, dtype=np.intp)
        # Task key -> (row, card ids, memory per card) of every pod holding cards.
        self.holders: dict[str, tuple[int, tuple[int, ...], int]] = {}
        self.version = 0
        self._masks: dict[tuple[int, int], tuple[int, NodeMask]] = {}
        # What the running pods hold, summed in one pass (np.add.at) rather than per card.
        held_rows: list[int] = []
        held_cards: list[int] = []
        held_memory: list[int] = []
        width = self.memory.shape[1]
        for row, cards in inventories:
            for task in node_list[row].tasks.values():
                if task.status in NOT_HOLDING:
                    continue
                request = gpu_request(task)
                if request.memory <= 0 and request.number <= 0:
                    continue
                ids = gpu_index(task.pod_annotations)
                if not ids:
                    continue
                kept = tuple(c for c in ids if 0 <= c < width and c in cards)
                self.holders[task.key] = (row, kept, request.memory)
                for card in kept:
                    held_rows.append(row)
                    held_cards.append(card)
                    held_memory.append(request.memory)
        if held_rows:
            np.add.at(self.used, (held_rows, held_cards), held_memory)
            np.add.at(self.pods, (held_rows, held_cards), 1)
        self._refresh_all()

    # ---- accounting

    def _refresh_all(self) -> None:
        exists = self.memory >= 0
        if self.memory.shape[1] == 0:
            return
        free = np.where(exists, np.maximum(self.memory - self.used, 0.0), -1.0)
        self.best_free = np.where(self.has_device, free.max(axis=1), -1.0)
        self.idle = (exists & (self.pods == 0)).sum(axis=1)

    def _refresh(self, row: int) -> None:
        # A handful of cards: plain Python over the row beats numpy's per-call overhead.
        memory, used, pods = self.memory[row].tolist(), self.used[row].tolist(), self.pods[row]
        free = [max(m - u, 0.0) for m, u in zip(memory, used, strict=True) if m >= 0]
        self.best_free[row] = max(free, default=-1.0) if self.has_device[row] else -1.0
        self.idle[row] = sum(
            1 for m, n in zip(memory, pods.tolist(), strict=True) if m >= 0 and n == 0
        )
        self.version += 1

    def _hold(self, key: str, row: int, cards: Sequence[int], memory: int) -> None:
        width = self.memory.shape[1]
        kept = tuple(c for c in cards if 0 <= c < width and self.memory[row, c] >= 0)
        if key in self.holders:
            self.release(key)
        for card in kept:
            self.used[row, card] += memory
            self.pods[row, card] += 1
        self.holders[key] = (row, kept, memory)

    def add_from_annotations(
        self, task: TaskInfo, row: int, annotations: Mapping[str, str]
    ) -> None:
        """``AddResource``: a pod asking GPUs holds the cards its gpu-index names."""
        request = gpu_request(task)
        if request.memory <= 0 and request.number <= 0:
            return
        cards = gpu_index(annotations)
        if cards:
            self._hold(task.key, row, cards, request.memory)

    def release(self, key: str) -> bool:
        held = self.holders.pop(key, None)
        if held is None:
            return False
        row, cards, memory = held
        for card in cards:
            self.used[row, card] -= memory
            self.pods[row, card] -= 1
        self._refresh(row)
        return True

    def requested(self, task: TaskInfo) -> bool:
        """``HasDeviceRequest``."""
        request = gpu_request(task)
        return (self.sharing and request.memory > 0) or (self.number and request.number > 0)

    def allocate(self, task: TaskInfo, row: int) -> list[int] | None:
        """``Allocate``: take cards on ``row`` for ``task``; None when none fit."""
        request = gpu_request(task)
        chosen = card_choice(
            self.memory[row].tolist(), self.used[row].tolist(), self.pods[row].tolist(), request
        )
        if not chosen:
            return None
        self._hold(task.key, row, chosen, request.memory)
        self._refresh(row)
        return chosen

    def restore(self, task: TaskInfo, row: int, annotations: Mapping[str, str]) -> None:
        self.add_from_annotations(task, row, annotations)
        self._refresh(row)

    # ---- predicate

    def mask(self, task: TaskInfo) -> NodeMask | None:
        """``FilterNode`` over every node; nodes without GPUs pass (as upstream, whose
        predicate only looks at the devices a node has: the resource fit rejects them)."""
        if not self.requested(task):
            return None
        request = gpu_request(task)
        shape = (request.memory, request.number)
        cached = self._masks.get(shape)
        if cached is not None and cached[0] == self.version:
            return cached[1]
        memory_ok, number_ok = self._checks(request)
        passed: BoolArray = ~self.has_device | (memory_ok & number_ok)
        names = self.node_names

        def reason(row: int) -> Status:
            if not memory_ok[row]:
                why = f"GpuShare no enough gpu memory on node {names[row]}"
            else:
                why = f"GpuNumber no enough gpu number on node {names[row]}"
            return Status(StatusCode.UNSCHEDULABLE, why, "deviceshare")

        node_mask = NodeMask(passed, reason)
        self._masks[shape] = (self.version, node_mask)
        return node_mask

    def _checks(self, request: GpuRequest) -> tuple[BoolArray, BoolArray]:
        size = len(self.has_device)
        memory_ok: BoolArray = np.ones(size, dtype=bool)
        number_ok: BoolArray = np.ones(size, dtype=bool)
        if self.sharing and request.memory > 0:
            memory_ok = self.best_free >= request.memory
        if self.number and request.number > 0:
            number_ok = self.idle >= request.number
        return memory_ok, number_ok
