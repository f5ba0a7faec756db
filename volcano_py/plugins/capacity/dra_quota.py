"""DRA quota of the capacity plugin (``capacity.go``'s draQuotaAttr, docs/design/
capacity-dra-support.md): a queue's ``deviceclass/<class>`` (device count) and
``<dim>.deviceclass/<class>`` (consumable capacity) keys limit what its pods' ResourceClaims
hold of that DeviceClass.

As upstream: only ``capability`` is a limit (``deserved`` and ``guarantee`` take the same keys
and are parsed, but the checks read ``capability``); a class the capability does not name is
not limited; a claim shared by several pods of the queue counts once; capacity counts per
device (``count: 2`` of ``memory: 8Gi`` is 16Gi), only with ``DRAConsumableCapacityEnable``;
``allocationMode: All`` and ``firstAvailable`` requests are not counted.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Final

from volcano_py.api.dra import DraAmount, DraAmounts, claim_amounts, task_claims
from volcano_py.api.dra_cel import exact_quantity
from volcano_py.api.quantity import QuantityError
from volcano_py.api.task import TaskInfo

__all__ = ["DraAmount", "DraAmounts", "DraQuota", "claim_amounts", "task_claims"]

log = logging.getLogger(__name__)

COUNT_PREFIX: Final = "deviceclass/"
CAPACITY_SEPARATOR: Final = ".deviceclass/"


def merge(into: DraAmounts, amounts: Mapping[str, DraAmount], sign: int = 1) -> None:
    for name, amount in amounts.items():
        into.setdefault(name, DraAmount()).add(amount, sign)


def parse_resource_list(values: Mapping[str, Any] | None) -> DraAmounts:
    """``parseDRAResourceList``: the DRA keys of a queue's resource list."""
    found: DraAmounts = {}
    for key, value in (values or {}).items():
        name = str(key)
        at = name.find(CAPACITY_SEPARATOR)
        try:
            amount = exact_quantity(value)
        except QuantityError:
            continue
        if at > 0:
            dim, device_class = name[:at], name[at + len(CAPACITY_SEPARATOR) :]
            if dim and device_class:
                found.setdefault(device_class, DraAmount()).capacity[dim] = amount
        elif name.startswith(COUNT_PREFIX) and name[len(COUNT_PREFIX) :]:
            found.setdefault(name[len(COUNT_PREFIX) :], DraAmount()).count = int(amount)
    return found


@dataclass(slots=True)
class DraQuota:
    capability: DraAmounts
    deserved: DraAmounts
    guarantee: DraAmounts
    allocated: DraAmounts = field(default_factory=dict)
    inqueue: DraAmounts = field(default_factory=dict)
    claim_refs: dict[str, int] = field(default_factory=dict)

    @classmethod
    def of_queue(cls, spec: Mapping[str, Any]) -> DraQuota | None:
        capability = parse_resource_list(spec.get("capability"))
        deserved = parse_resource_list(spec.get("deserved"))
        guarantee = parse_resource_list((spec.get("guarantee") or {}).get("resource"))
        if not (capability or deserved or guarantee):
            return None
        return cls(capability, deserved, guarantee)

    def incremental(self, claims: Mapping[str, DraAmounts]) -> DraAmounts:
        """What the task adds: its claims the queue does not hold yet."""
        found: DraAmounts = {}
        for key, amounts in claims.items():
            if self.claim_refs.get(key, 0) == 0:
                merge(found, amounts)
        return found

    def add_task(self, claims: Mapping[str, DraAmounts]) -> None:
        for key, amounts in claims.items():
            if self.claim_refs.get(key, 0) == 0:
                merge(self.allocated, amounts)
            self.claim_refs[key] = self.claim_refs.get(key, 0) + 1

    def remove_task(self, claims: Mapping[str, DraAmounts]) -> None:
        for key, amounts in claims.items():
            refs = self.claim_refs.get(key, 0)
            if refs <= 1:
                merge(self.allocated, amounts, -1)
                self.claim_refs.pop(key, None)
            else:
                self.claim_refs[key] = refs - 1

    def fits(self, request: Mapping[str, DraAmount], consumable: bool, with_inqueue: bool) -> str:
        """``checkDRAAllocatable``: "" when ``request`` fits the capability, else why not."""
        for device_class, amount in request.items():
            limit = self.capability.get(device_class)
            if limit is None:
                continue
            held = self.allocated.get(device_class, DraAmount())
            queued = self.inqueue.get(device_class, DraAmount()) if with_inqueue else DraAmount()
            if limit.count > 0 and held.count + queued.count + amount.count > limit.count:
                return f"{COUNT_PREFIX}{device_class}"
            if consumable:
                for dim, wanted in amount.capacity.items():
                    cap = limit.capacity.get(dim)
                    used = held.capacity.get(dim, Fraction(0)) + queued.capacity.get(
                        dim, Fraction(0)
                    )
                    if cap is None or used + wanted > cap:
                        return f"{dim}{CAPACITY_SEPARATOR}{device_class}"
        return ""


def job_minimum(tasks: Iterable[TaskInfo], minimum: int, claims_of: Any) -> DraAmounts:
    """``GetMinDRAResources``, simplified to the first ``minimum`` tasks in order: what the
    gang needs of each class to start (a shared claim once)."""
    found: DraAmounts = {}
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        if index >= max(minimum, 0):
            break
        for key, amounts in claims_of(task).items():
            if key not in seen:
                seen.add(key)
                merge(found, amounts)
    return found
