"""Taints and tolerations (``v1helper.TolerationsTolerateTaint`` and friends, kube-scheduler's
TaintToleration and NodeUnschedulable plugins), scalar and readable.

* A toleration with an effect only tolerates taints of that effect; one with a key only taints
  of that key (an empty key with ``Exists`` tolerates every taint).
* Operator ``Equal`` (or empty) compares the values; ``Exists`` ignores them.
* Filtering looks at ``NoSchedule`` and ``NoExecute`` taints; ``PreferNoSchedule`` taints only
  lower the score.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

NO_SCHEDULE: Final = "NoSchedule"
NO_EXECUTE: Final = "NoExecute"
PREFER_NO_SCHEDULE: Final = "PreferNoSchedule"
FILTERED_EFFECTS: Final = frozenset({NO_SCHEDULE, NO_EXECUTE})
UNSCHEDULABLE_TAINT_KEY: Final = "node.kubernetes.io/unschedulable"


@dataclass(frozen=True, slots=True)
class Taint:
    key: str
    value: str
    effect: str

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Taint:
        return cls(
            str(raw.get("key") or ""), str(raw.get("value") or ""), str(raw.get("effect") or "")
        )


@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str

    @classmethod
    def of(cls, raw: Mapping[str, Any]) -> Toleration:
        return cls(
            str(raw.get("key") or ""),
            str(raw.get("operator") or ""),
            str(raw.get("value") or ""),
            str(raw.get("effect") or ""),
        )

    def tolerates(self, taint: Taint) -> bool:
        """``Toleration.ToleratesTaint``."""
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator in ("", "Equal"):
            return self.value == taint.value
        return self.operator == "Exists"


def tolerated(tolerations: Sequence[Toleration], taint: Taint) -> bool:
    return any(toleration.tolerates(taint) for toleration in tolerations)


def first_untolerated(taints: Sequence[Taint], tolerations: Sequence[Toleration]) -> Taint | None:
    """``FindMatchingUntoleratedTaint`` over the filtered effects: the first blocking taint,
    in the node's order."""
    for taint in taints:
        if taint.effect in FILTERED_EFFECTS and not tolerated(tolerations, taint):
            return taint
    return None


# Since kubernetes#134740 (1.35, cherry-picked to 1.34) the reason no longer names the taint:
# pod statuses must not leak taint keys and values. Volcano vendors kube-scheduler 1.36.
ERR_UNTOLERATED: Final = "node(s) had untolerated taint(s)"


def prefer_no_schedule_tolerations(tolerations: Sequence[Toleration]) -> tuple[Toleration, ...]:
    """``getAllTolerationPreferNoSchedule``: an empty effect means every effect."""
    return tuple(t for t in tolerations if t.effect in ("", PREFER_NO_SCHEDULE))


def intolerable_prefer_no_schedule(
    taints: Sequence[Taint], tolerations: Sequence[Toleration]
) -> int:
    """``countIntolerableTaintsPreferNoSchedule``, with the tolerations already narrowed."""
    return sum(
        1
        for taint in taints
        if taint.effect == PREFER_NO_SCHEDULE and not tolerated(tolerations, taint)
    )


UNSCHEDULABLE_TAINT: Final = Taint(UNSCHEDULABLE_TAINT_KEY, "", NO_SCHEDULE)


def tolerates_unschedulable(tolerations: Sequence[Toleration]) -> bool:
    """NodeUnschedulable: a pod tolerating the unschedulable taint ignores
    ``spec.unschedulable``."""
    return tolerated(tolerations, UNSCHEDULABLE_TAINT)
