"""What Kubernetes' ResourceQuota controller does in a live cluster, for the simulator: keep
each quota's ``status.hard`` equal to ``spec.hard`` and its ``status.used`` equal to what the
namespace's pods hold, so the ``resourcequota`` plugin reads the numbers it would read live.

Usage is computed for the pod resource names the quota controller's pod evaluator knows:
``cpu``/``memory``/``ephemeral-storage`` and their ``requests.`` forms (requests), ``limits.``
names (limits), ``requests.<extended resource>``, ``pods`` and ``count/pods`` (pods that are
not Succeeded or Failed). For any other name (object counts such as ``count/services``) the
input's ``status.used`` is kept, 0 if it gives none, with a warning naming the quota and the
resource. Quota scopes are not simulated (every pod of the namespace counts), with a warning.
Admission (the API server refusing a pod that would exceed a quota) is not simulated either.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, Final

from volcano_py.api.quantity import QuantityError, parse_quantity

log = logging.getLogger(__name__)

TERMINAL_PHASES: Final = frozenset({"Succeeded", "Failed"})
STANDARD_REQUEST_NAMES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
POD_COUNT_NAMES: Final = frozenset({"pods", "count/pods"})


def _amount(value: Any) -> Decimal:
    try:
        return parse_quantity(value)
    except QuantityError:
        return Decimal(0)  # the input checks refused such pods already


def _container_amounts(container: Mapping[str, Any], part: str) -> dict[str, Decimal]:
    resources = container.get("resources") or {}
    values = dict(resources.get(part) or {})
    if part == "requests":
        # A limit stands in for a missing request (API defaulting).
        for name, limit in (resources.get("limits") or {}).items():
            values.setdefault(name, limit)
    return {str(name): _amount(value) for name, value in values.items()}


def pod_amounts(pod: Mapping[str, Any], part: str) -> dict[str, Decimal]:
    """``resourcehelper.PodRequests`` / ``PodLimits``: the containers summed, the largest
    init-container step (sidecars included) if larger, plus the overhead."""
    spec = pod.get("spec") or {}
    total: dict[str, Decimal] = {}
    for container in spec.get("containers") or []:
        for name, amount in _container_amounts(container, part).items():
            total[name] = total.get(name, Decimal(0)) + amount
    sidecars: dict[str, Decimal] = {}
    init_peak: dict[str, Decimal] = {}
    for container in spec.get("initContainers") or []:
        amounts = _container_amounts(container, part)
        if container.get("restartPolicy") == "Always":
            for name, amount in amounts.items():
                sidecars[name] = sidecars.get(name, Decimal(0)) + amount
                total[name] = total.get(name, Decimal(0)) + amount
            step = dict(sidecars)
        else:
            step = {
                name: amounts.get(name, Decimal(0)) + sidecars.get(name, Decimal(0))
                for name in {*amounts, *sidecars}
            }
        for name, amount in step.items():
            init_peak[name] = max(init_peak.get(name, Decimal(0)), amount)
    for name, amount in init_peak.items():
        total[name] = max(total.get(name, Decimal(0)), amount)
    for name, amount in (spec.get("overhead") or {}).items():
        total[str(name)] = total.get(str(name), Decimal(0)) + _amount(amount)
    return total


def _usage_of(name: str, pods: Iterable[Mapping[str, Any]]) -> Decimal | None:
    """What the namespace's live ``pods`` use of quota resource ``name``; None for a name the
    pod evaluator does not compute."""
    if name in POD_COUNT_NAMES:
        return Decimal(sum(1 for _ in pods))
    if name in STANDARD_REQUEST_NAMES:
        part, resource = "requests", name
    elif name.startswith("requests."):
        part, resource = "requests", name.removeprefix("requests.")
    elif name.startswith("limits."):
        part, resource = "limits", name.removeprefix("limits.")
    else:
        return None
    return sum((pod_amounts(pod, part).get(resource, Decimal(0)) for pod in pods), Decimal(0))


def _text(amount: Decimal) -> str:
    return format(amount.normalize(), "f") if amount else "0"


@dataclass
class QuotaStatusController:
    """Recomputes every ResourceQuota's status from the cluster's pods."""

    warned: set[tuple[str, str]] = field(default_factory=set)

    def _warn(self, quota: str, subject: str, message: str) -> None:
        if (quota, subject) not in self.warned:
            self.warned.add((quota, subject))
            log.warning("ResourceQuota %s: %s", quota, message)

    def status_of(
        self, key: str, quota: Mapping[str, Any], pods: list[Mapping[str, Any]]
    ) -> dict[str, Any]:
        spec = quota.get("spec") or {}
        if spec.get("scopes") or spec.get("scopeSelector"):
            self._warn(
                key, "scopes", "quota scopes are not simulated; every pod of the namespace counts"
            )
        hard = dict(spec.get("hard") or {})
        given_used = (quota.get("status") or {}).get("used") or {}
        used: dict[str, str] = {}
        for name in hard:
            usage = _usage_of(name, pods)
            if usage is None:
                self._warn(
                    key,
                    name,
                    f"the simulator does not compute the usage of {name!r}; status.used.{name}"
                    f" stays {given_used.get(name, '0')!r}",
                )
                used[name] = str(given_used.get(name, "0"))
            else:
                used[name] = _text(usage)
        return {"hard": hard, "used": used}

    def sync(
        self,
        quotas: Iterable[tuple[str, dict[str, Any]]],
        pods: Iterable[tuple[str, dict[str, Any]]],
    ) -> list[dict[str, Any]]:
        """The quotas whose status changed, updated (copies, for the cluster to store)."""
        by_namespace: dict[str, list[Mapping[str, Any]]] = {}
        for key, pod in pods:
            if (pod.get("status") or {}).get("phase") in TERMINAL_PHASES:
                continue
            by_namespace.setdefault(key.split("/", 1)[0], []).append(pod)
        changed: list[dict[str, Any]] = []
        for key, quota in quotas:
            namespace = key.split("/", 1)[0]
            status = self.status_of(key, quota, by_namespace.get(namespace, []))
            if quota.get("status") != status:
                updated = copy.deepcopy(quota)
                updated["status"] = status
                changed.append(updated)
        return changed
