"""A pod's resource quota usage and ResourceList arithmetic, as the controllers compute a
PodGroup's ``minResources``.

Upstream sums ``quotacore.PodUsageFunc`` (``pkg/controllers/util/util.go`` ``GetPodQuotaUsage``,
``CalTaskRequests``), so the list holds quota-style keys too (``requests.cpu``, ``limits.cpu``,
``count/pods``) next to ``cpu``, ``memory``, ``pods`` and extended resources; the scheduler drops
the quota-style keys when it reads the list. Values stay exact (Decimal) and keep the format of
the quantity they came from (``1Gi`` + ``1Gi`` prints ``2Gi``, ``500m`` x 3 prints ``1500m``), as
``resource.Quantity`` arithmetic does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from decimal import ROUND_UP, Decimal
from typing import Any, Final

from volcano_py.api.quantity import QuantityError, parse_quantity
from volcano_py.controllers.raw import Raw, items, mapping, pod_phase, spec

_BINARY_SUFFIXES: Final = ("Ki", "Mi", "Gi", "Ti", "Pi", "Ei")
_DECIMAL_SUFFIX_OF_EXPONENT: Final = {
    -9: "n",
    -6: "u",
    -3: "m",
    0: "",
    3: "k",
    6: "M",
    9: "G",
    12: "T",
    15: "P",
    18: "E",
}
_BINARY_SUFFIX_OF_POWER: Final = {0: "", 1: "Ki", 2: "Mi", 3: "Gi", 4: "Ti", 5: "Pi", 6: "Ei"}
_NANO: Final = Decimal("1e-9")
_REQUESTS_PREFIX: Final = "requests."
_LIMITS_PREFIX: Final = "limits."
_POD_LEVEL_RESOURCES: Final = ("cpu", "memory")


@dataclass(frozen=True, slots=True)
class Quantity:
    """An exact amount and whether it prints in binary (``Ki``, ``Gi``) units."""

    value: Decimal
    binary: bool = False

    @classmethod
    def parse(cls, raw: object) -> Quantity:
        if not isinstance(raw, str | int | float) or isinstance(raw, bool):
            raise QuantityError(f"invalid quantity {raw!r}")
        binary = isinstance(raw, str) and raw.strip().endswith(_BINARY_SUFFIXES)
        return cls(parse_quantity(raw), binary)

    def plus(self, other: Quantity) -> Quantity:
        # Quantity.Add keeps the receiver's format.
        return Quantity(self.value + other.value, self.binary)

    def times(self, count: int) -> Quantity:
        return Quantity(self.value * count, self.binary)

    def __str__(self) -> str:
        return format_quantity(self.value, self.binary)


QuotaList = dict[str, Quantity]


def _strip_factors(value: int, base: int) -> tuple[int, int]:
    times = 0
    while value and value % base == 0:
        value //= base
        times += 1
    return value, times


def format_quantity(value: Decimal, binary: bool = False) -> str:
    """``Quantity.String()``: the canonical spelling (``1500m``, ``2``, ``1k``, ``3Gi``)."""
    nanos = value.quantize(_NANO, rounding=ROUND_UP)
    if nanos.is_zero():
        return "0"
    whole = nanos == nanos.to_integral_value()
    if binary and whole and abs(nanos) >= 1024:
        amount = int(nanos)
        mantissa, power = _strip_factors(abs(amount), 1024)
        while power > 6:  # beyond Ei: keep the factor in the mantissa
            mantissa *= 1024
            power -= 1
        sign = "-" if amount < 0 else ""
        return f"{sign}{mantissa}{_BINARY_SUFFIX_OF_POWER[power]}"
    unscaled = int(nanos.scaleb(9))
    sign = "-" if unscaled < 0 else ""
    mantissa, times = _strip_factors(abs(unscaled), 10)
    exponent = times - 9
    remainder = exponent % 3
    mantissa *= 10**remainder
    exponent -= remainder
    while exponent > 18:
        mantissa *= 1000
        exponent -= 3
    return f"{sign}{mantissa}{_DECIMAL_SUFFIX_OF_EXPONENT[exponent]}"


def parse_list(resource_list: object) -> QuotaList:
    """A ResourceList; malformed quantities raise ``QuantityError`` naming them."""
    return {str(k): Quantity.parse(v) for k, v in mapping(resource_list).items()}


def format_list(quota: Mapping[str, Quantity]) -> dict[str, str]:
    return {name: str(quota[name]) for name in sorted(quota)}


def add_into(total: QuotaList, other: Mapping[str, Quantity]) -> None:
    """``quotav1.Add``/``addResourceList``: a key only the right side has is copied as is."""
    for name, quantity in other.items():
        present = total.get(name)
        total[name] = quantity if present is None else present.plus(quantity)


def max_into(total: QuotaList, other: Mapping[str, Quantity]) -> None:
    """``maxResourceList``: per key, the larger quantity (and its format)."""
    for name, quantity in other.items():
        present = total.get(name)
        if present is None or quantity.value > present.value:
            total[name] = quantity


def scaled(quota: Mapping[str, Quantity], count: int) -> QuotaList:
    """``CalTaskRequests``: ``count`` pods' worth (an empty list for count <= 0)."""
    total: QuotaList = {}
    if count <= 0:
        return total
    for name, quantity in quota.items():
        total[name] = quantity.times(count)
    return total


def lists_equal(left: object, right: object) -> bool:
    """``equality.Semantic.DeepEqual`` of two ResourceLists: same keys, same amounts."""
    if left is None or right is None:
        return left is None and right is None
    try:
        a, b = parse_list(left), parse_list(right)
    except QuantityError:
        return left == right
    return a.keys() == b.keys() and all(a[k].value == b[k].value for k in a)


def _container_list(container: Raw, which: str) -> QuotaList:
    return parse_list(mapping(mapping(container.get("resources")).get(which)))


def _pod_aggregate(pod_spec: Raw, which: str) -> QuotaList:
    """``resourcehelper.PodRequests`` / ``PodLimits``: the containers' sum; init containers run
    one at a time (their max counts), sidecars (restartable init containers) keep running and
    add up; pod-level resources override cpu and memory; overhead is added (to limits only
    where a limit exists)."""
    total: QuotaList = {}
    for container in items(pod_spec.get("containers")):
        add_into(total, _container_list(mapping(container), which))
    sidecars: QuotaList = {}
    init_max: QuotaList = {}
    for raw in items(pod_spec.get("initContainers")):
        container = mapping(raw)
        own = _container_list(container, which)
        if container.get("restartPolicy") == "Always":
            add_into(total, own)
            add_into(sidecars, own)
            running = dict(sidecars)
        else:
            running = dict(own)
            add_into(running, sidecars)
        max_into(init_max, running)
    max_into(total, init_max)
    pod_level = parse_list(mapping(mapping(pod_spec.get("resources")).get(which)))
    for name, quantity in pod_level.items():
        if name in _POD_LEVEL_RESOURCES or name.startswith("hugepages-"):
            total[name] = quantity
    overhead = parse_list(pod_spec.get("overhead"))
    if which == "requests":
        add_into(total, overhead)
    else:
        for name, quantity in overhead.items():
            if name in total:
                total[name] = total[name].plus(quantity)
    return total


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    return not _is_native(name) and not name.startswith(_REQUESTS_PREFIX)


_ONE: Final = Quantity(Decimal(1))


def pod_quota_usage(pod: Raw) -> QuotaList:
    """``GetPodQuotaUsage``: what a pod (or a task template: ``{"spec": ...}``) charges a
    ResourceQuota, plus the plain names of its extended resources."""
    usage: QuotaList = {"count/pods": _ONE}
    # Pods that reached a terminal phase no longer hold compute quota (QuotaV1Pod).
    if pod_phase(pod) in ("Succeeded", "Failed"):
        return usage
    pod_spec = spec(pod)
    requests = _pod_aggregate(pod_spec, "requests")
    limits = _pod_aggregate(pod_spec, "limits")
    usage["pods"] = _ONE
    for name in ("cpu", "memory", "ephemeral-storage"):
        if name in requests:
            usage[name] = requests[name]
            usage[_REQUESTS_PREFIX + name] = requests[name]
        if name in limits:
            usage[_LIMITS_PREFIX + name] = limits[name]
    for name, quantity in requests.items():
        if name.startswith("hugepages-"):
            usage[name] = quantity
            usage[_REQUESTS_PREFIX + name] = quantity
        if _is_extended(name):
            usage[_REQUESTS_PREFIX + name] = quantity
    # Volcano adds the bare name of every non-native requests.* entry (extended resources).
    for name in list(usage):
        if name.startswith(_REQUESTS_PREFIX) and not _is_native(name):
            usage[name.removeprefix(_REQUESTS_PREFIX)] = usage[name]
    return usage


def sum_usage(pods: Iterable[tuple[Raw, int]]) -> QuotaList:
    """The summed usage of ``count`` copies of each pod."""
    total: QuotaList = {}
    for pod, count in pods:
        add_into(total, scaled(pod_quota_usage(pod), count))
    return total


# ``min_resources`` answers pods whose resource fields read alike from one memo (the
# PodGroup controller asks it of every plain pod: 5k bare pods in a 5k-node dump, which ask
# alike). False: computed each time (the tests' reference).
_MIN_RESOURCES_MEMO = True
_MIN_RESOURCES: dict[tuple[Any, ...], dict[str, str]] = {}
_MIN_RESOURCES_KEPT: Final = 4096
# Amounts a key holds: text and whole numbers (a float's -0.0 equals 0.0 and True equals 1:
# such lists are computed, never remembered).
_PLAIN_AMOUNTS: Final = (str, int)


def min_resources(pod: Raw, count: int) -> dict[str, str]:
    """``format_list(scaled(pod_quota_usage(pod), count))``: what ``count`` pods like
    ``pod`` charge a ResourceQuota, as a PodGroup's ``minResources`` writes it. A new dict."""
    key = _usage_key(pod, count) if _MIN_RESOURCES_MEMO else None
    if key is None:
        return format_list(scaled(pod_quota_usage(pod), count))
    known = _MIN_RESOURCES.get(key)
    if known is None:
        known = format_list(scaled(pod_quota_usage(pod), count))  # raises before it is kept
        if len(_MIN_RESOURCES) >= _MIN_RESOURCES_KEPT:
            _MIN_RESOURCES.clear()
        _MIN_RESOURCES[key] = known
    return dict(known)


def _amounts(resource_list: object) -> tuple[Any, ...] | None:
    """A ResourceList's entries in order, each amount with its type ("1" and 1 are told
    apart); None when it is not a plain dict of text and whole numbers."""
    if resource_list is None:
        return ()
    if type(resource_list) is not dict:
        return None
    found = []
    for name, amount in resource_list.items():
        if type(name) is not str or type(amount) not in _PLAIN_AMOUNTS:
            return None
        found.append((name, type(amount), amount))
    return tuple(found)


def _resources(owner: object) -> tuple[Any, ...] | None:
    """A container's (or the pod's) requests and limits, as ``_amounts``."""
    if type(owner) is not dict:
        return None
    resources = owner.get("resources")
    if resources is None:
        return ((), ())
    if type(resources) is not dict:
        return None
    requests, limits = _amounts(resources.get("requests")), _amounts(resources.get("limits"))
    if requests is None or limits is None:
        return None
    return (requests, limits)


def _usage_key(pod: Raw, count: int) -> tuple[Any, ...] | None:
    """Everything ``pod_quota_usage`` reads of the pod, and ``count``; None for a pod whose
    fields are not plain dicts and lists of plain amounts (computed then, not remembered)."""
    pod_spec = pod.get("spec")
    if type(pod_spec) is not dict:
        return None
    containers, init_containers = pod_spec.get("containers"), pod_spec.get("initContainers")
    if type(containers) is not list or type(init_containers) not in (list, type(None)):
        return None
    parts: list[Any] = [count, pod_phase(pod) in ("Succeeded", "Failed")]
    for container in containers:
        part = _resources(container)
        if part is None:
            return None
        parts.append(part)
    parts.append("init")
    for container in init_containers or ():
        part = _resources(container)
        if part is None:
            return None
        policy = container.get("restartPolicy")
        if type(policy) not in (str, type(None)):
            return None
        parts.append((part, policy == "Always"))
    pod_level, overhead = _resources(pod_spec), _amounts(pod_spec.get("overhead"))
    if pod_level is None or overhead is None:
        return None
    parts.append(pod_level)
    parts.append(overhead)
    return tuple(parts)
