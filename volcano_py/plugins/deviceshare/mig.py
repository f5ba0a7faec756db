"""vGPU MIG mode (``pkg/scheduler/api/devices/nvidia/vgpu/mig.go``): a node whose vGPU
registration says ``mig`` hands out MIG instances of its cards, by the geometries the device
ConfigMap gives for the card's model (``knownMigGeometries``, matched as a substring of the
card's type). A card with no geometry for its model takes no MIG pod; a node whose last card
has none is shared as hami-core, as upstream falls back.

A card's usage: the geometry group in use (the first instance taken fixes it) and, per
instance name, the positions taken. A pod asking ``memory`` gets the smallest instance of the
group in use that has a free slot and at least that much memory, among the instance names
already in use there (upstream's ``pickFromGroup``: a name of the group not in use yet is not
offered while another is); with no group in use, the first group (in the configured order)
with such an instance. Its device id is ``<card uuid>[<group>-<position>]``, the position
counting the instances of the group in order. The card counts the instance's memory as used
(divided by ``gpuMemoryFactor`` when above 1; the request is multiplied by it to match).
"""

from __future__ import annotations

import bisect
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from volcano_py.plugins.deviceshare.config import Geometry, MigGeometries

log = logging.getLogger(__name__)

NO_GROUP: Final = -1


@dataclass(slots=True)
class InstanceUsage:
    """``MigTemplateUsage``: the taken positions of one instance name of the group in use."""

    memory: int
    used: list[int] = field(default_factory=list)


@dataclass(slots=True)
class MigUsage:
    """``MigInUse``: the group in use (``NO_GROUP``: none) and its instances' usage, by name."""

    group: int = NO_GROUP
    instances: dict[str, InstanceUsage] = field(default_factory=dict)

    def copy(self) -> MigUsage:
        return MigUsage(
            self.group,
            {name: InstanceUsage(u.memory, list(u.used)) for name, u in self.instances.items()},
        )


def geometries_for_type(
    card_type: str, known: Sequence[MigGeometries]
) -> tuple[Geometry, ...] | None:
    """``extractGeometryFromType``: the geometries of the first entry one of whose models the
    card's type contains; None when no entry does."""
    for entry in known:
        if any(model in card_type for model in entry.models):
            return entry.geometries
    return None


def _position(group: Geometry, count: int, used: Sequence[int], index: int) -> int:
    """``getPosition``: the instances before ``index`` plus its first free slot."""
    position = sum(instance.count for instance in group.instances[:index])
    taken = set(used)
    for slot in range(count):
        if slot not in taken:
            return position + slot
    return position


def find_position(group: Geometry, position: int) -> tuple[int, int]:
    """``findPosition``: (instance index, slot) of a position in the group; (-1, -1)."""
    total = 0
    for index, instance in enumerate(group.instances):
        if position < total + instance.count:
            return index, position - total
        total += instance.count
    return -1, -1


def pick_from_group(
    group: Geometry, usage: dict[str, InstanceUsage] | None, request_memory: int
) -> tuple[int, int] | None:
    """``pickFromGroup``: (position, instance memory) of the smallest instance that fits."""
    ordered = sorted(enumerate(group.instances), key=lambda item: item[1].memory)
    for index, instance in ordered:
        if not usage and instance.memory >= request_memory:
            return _position(group, instance.count, [], index), instance.memory
        for name, used in (usage or {}).items():
            if name != instance.name:
                continue
            if instance.count - len(used.used) > 0 and instance.memory >= request_memory:
                return _position(group, instance.count, used.used, index), instance.memory
    return None


def encode_mig_id(uuid: str, group: str, position: int) -> str:
    return f"{uuid}[{group}-{position}]"


def decode_mig_id(device_id: str) -> tuple[str, int] | None:
    """``decodeMIGID``: (group, position) of ``uuid[group-position]``; None when malformed.
    The position follows the last ``-`` (upstream refuses a group name with one)."""
    start, end = device_id.find("["), device_id.find("]")
    if start == -1 or end == -1 or start > end:
        return None
    group, dash, position = device_id[start + 1 : end].rpartition("-")
    if not dash:
        return None
    try:
        return group, int(position)
    except ValueError:
        return None


def find_match(
    uuid: str, request_memory: int, usage: MigUsage, geometries: Sequence[Geometry]
) -> tuple[str, int] | None:
    """``findMatch``: (device id, instance memory) of the instance a request gets."""
    if usage.group >= 0:
        if usage.group >= len(geometries):
            return None
        group = geometries[usage.group]
        picked = pick_from_group(group, usage.instances, request_memory)
        return None if picked is None else (encode_mig_id(uuid, group.group, picked[0]), picked[1])
    for group in geometries:
        picked = pick_from_group(group, None, request_memory)
        if picked is not None:
            return encode_mig_id(uuid, group.group, picked[0]), picked[1]
    return None


def add_mig_used(
    usage: MigUsage, geometries: Sequence[Geometry], group_name: str, position: int
) -> int:
    """``addMigUsed``: take the instance at ``position`` of group ``group_name``; its memory
    (0 when there is no such group or position). A position already taken stays taken once."""
    for group_index, group in enumerate(geometries):
        if group.group != group_name:
            continue
        index, slot = find_position(group, position)
        if index < 0:
            return 0
        usage.group = group_index
        instance = group.instances[index]
        used = usage.instances.get(instance.name)
        if used is None:
            usage.instances[instance.name] = InstanceUsage(instance.memory, [slot])
            return instance.memory
        at = bisect.bisect_left(used.used, slot)
        if at < len(used.used) and used.used[at] == slot:
            log.error("MIG instance %s[%s-%d] is already in use", instance.name, group_name, slot)
        else:
            used.used.insert(at, slot)
        return used.memory
    return 0


def sub_mig_used(
    usage: MigUsage, geometries: Sequence[Geometry], group_name: str, position: int
) -> int:
    """``subMigUsed``: give the instance back; its memory (0 when it was not taken). With no
    instance left in use the card is free to take any group again."""
    for group in geometries:
        if group.group != group_name:
            continue
        index, slot = find_position(group, position)
        if index < 0:
            return 0
        name = group.instances[index].name
        used = usage.instances.get(name)
        if used is None:
            return 0
        if slot in used.used:
            used.used.remove(slot)
        if not used.used:
            del usage.instances[name]
        if not usage.instances:
            usage.group = NO_GROUP
        return used.memory
    return 0


def largest_offer(usage: MigUsage, geometries: Sequence[Geometry]) -> int:
    """The largest instance memory ``find_match`` could give now (-1: none): a request of at
    most this much fits the card. The vectorised fit compares requests against it."""
    if usage.group >= 0:
        if usage.group >= len(geometries):
            return -1
        group = geometries[usage.group]
        if not usage.instances:
            return max((i.memory for i in group.instances), default=-1)
        return max(
            (
                instance.memory
                for instance in group.instances
                if instance.name in usage.instances
                and instance.count - len(usage.instances[instance.name].used) > 0
            ),
            default=-1,
        )
    return max((i.memory for group in geometries for i in group.instances), default=-1)


def scaled(memory: int, factor: int) -> int:
    """Upstream's memory factor: a request is matched at ``memory * factor``, an instance
    counts ``memory // factor`` on the card (only when the factor is above 1)."""
    return memory * factor if factor > 1 else memory


def unscaled(memory: int, factor: int) -> int:
    return memory // factor if factor > 1 else memory
