"""What the scheduler knows of a namespace: the status of its ResourceQuotas
(``pkg/scheduler/api/namespace_info.go``).

The cache keeps one ``NamespaceCollection`` per namespace that has a ResourceQuota; a session
gets a ``NamespaceInfo`` per such namespace. Only the quota's *status* is read, as upstream
does: ``status.hard`` (the enforced limits, copied from ``spec.hard`` by Kubernetes' quota
controller) and ``status.used`` (what the namespace holds now).

Amounts are exact (``Decimal``), since quota checks compare quantities (``Quantity.Cmp``),
and each keeps the string it came from, for messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

from volcano_py.api.quantity import QuantityError, parse_quantity


class QuotaSpecError(ValueError):
    """A ResourceQuota the scheduler cannot read; the message names the object and field."""


@dataclass(frozen=True, slots=True)
class QuotaStatus:
    """One ResourceQuota's ``status``: resource name -> amount."""

    hard: Mapping[str, Decimal]
    used: Mapping[str, Decimal]
    # The quantity strings as written, for messages.
    hard_text: Mapping[str, str] = field(default_factory=dict)
    used_text: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, obj: Mapping[str, Any]) -> QuotaStatus:
        meta = obj.get("metadata") or {}
        where = f"ResourceQuota {meta.get('namespace') or 'default'}/{meta.get('name', '')}"
        status = obj.get("status") or {}
        if not isinstance(status, Mapping):
            raise QuotaSpecError(f"{where}: status: expected an object")
        hard, hard_text = _amounts(status.get("hard"), f"{where}: status.hard")
        used, used_text = _amounts(status.get("used"), f"{where}: status.used")
        return cls(hard, used, hard_text, used_text)


def _amounts(values: Any, where: str) -> tuple[dict[str, Decimal], dict[str, str]]:
    if values is None:
        return {}, {}
    if not isinstance(values, Mapping):
        raise QuotaSpecError(f"{where}: expected a map of resource quantities")
    amounts: dict[str, Decimal] = {}
    texts: dict[str, str] = {}
    for name, value in values.items():
        try:
            amounts[str(name)] = parse_quantity(value)
        except QuantityError as error:
            raise QuotaSpecError(f"{where}.{name}: {error}") from None
        texts[str(name)] = str(value)
    return amounts, texts


@dataclass(frozen=True, slots=True)
class NamespaceInfo:
    """A session's view of one namespace: its quotas' statuses, by quota name."""

    name: str
    quota_status: Mapping[str, QuotaStatus]


@dataclass(slots=True)
class NamespaceCollection:
    """The cache's record of one namespace, kept current by ResourceQuota events."""

    name: str
    quota_status: dict[str, QuotaStatus] = field(default_factory=dict)

    def update(self, quota_name: str, status: QuotaStatus) -> None:
        self.quota_status[quota_name] = status

    def delete(self, quota_name: str) -> None:
        self.quota_status.pop(quota_name, None)

    def snapshot(self) -> NamespaceInfo:
        # QuotaStatus is immutable: sharing it with the session is a copy.
        return NamespaceInfo(self.name, dict(self.quota_status))
