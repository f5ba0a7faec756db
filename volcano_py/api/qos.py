"""A pod's QoS class (Kubernetes' ``GetPodQOS``), read by the simulated kubelet and by
``numa-aware`` (only Guaranteed pods get CPUs pinned by the kubelet's static CPU manager)."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

from volcano_py.api.quantity import QuantityError, parse_quantity

GUARANTEED: Final = "Guaranteed"
BURSTABLE: Final = "Burstable"
BEST_EFFORT: Final = "BestEffort"


def _mapping(value: object) -> Mapping[str, Any]:
    # ``type(...) is dict`` first: JSON objects are dicts, and the ABC check is slow.
    return value if type(value) is dict or isinstance(value, Mapping) else {}


def _list(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def _amounts(values: Mapping[str, Any]) -> dict[str, float]:
    """The non-zero cpu and memory amounts (the only resources QoS looks at)."""
    found: dict[str, float] = {}
    for name in ("cpu", "memory"):
        if name in values:
            value = values[name]
            # Remembered per spelling: a dump's pods share a handful of quantities.
            amount = _amount(value) if type(value) in _HASHABLE else _parsed(value)
            if amount:
                found[name] = amount
    return found


_HASHABLE: Final = frozenset({str, int, float})


def _parsed(value: Any) -> float | None:
    try:
        return float(parse_quantity(value))
    except QuantityError:
        return None


_amount = functools.lru_cache(maxsize=4096)(_parsed)


# The class of pods whose containers ask alike, by ``_resources_key``: the simulated kubelet
# asks it of every pod it starts (50k in a 5k-node dump), and a dump's pods ask alike.
_BY_RESOURCES: dict[tuple[Any, ...], str] = {}
_BY_RESOURCES_KEPT: Final = 4096


def _resources_key(spec: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """Each container's requests and limits, in order, for a pod without init containers
    whose resources are plain dicts of hashable non-bool values; None for any other."""
    containers = spec.get("containers")
    if spec.get("initContainers") or type(containers) is not list:
        return None
    parts = []
    for container in containers:
        if type(container) is not dict:
            return None
        resources = container.get("resources") or {}
        if type(resources) is not dict:
            return None
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        if type(requests) is not dict or type(limits) is not dict:
            return None
        for value in (*requests.values(), *limits.values()):
            if type(value) not in _HASHABLE:
                return None  # True would be taken for 1 as a key
        parts.append((tuple(requests.items()), tuple(limits.items())))
    return tuple(parts)


def qos_class(pod: Mapping[str, Any]) -> str:
    """``GetPodQOS``: Guaranteed when every container limits cpu and memory and requests no
    other amount; BestEffort when nothing asks for cpu or memory; Burstable otherwise.
    Requests default to limits, as the API server defaults them. Pods that ask alike share
    one answer (``_resources_key``)."""
    spec = _mapping(pod.get("spec"))
    key = _resources_key(spec)
    if key is None:
        return _qos_class(spec)
    known = _BY_RESOURCES.get(key)
    if known is None:
        if len(_BY_RESOURCES) >= _BY_RESOURCES_KEPT:
            _BY_RESOURCES.clear()
        known = _BY_RESOURCES[key] = _qos_class(spec)
    return known


def _qos_class(spec: Mapping[str, Any]) -> str:
    containers = [_mapping(c) for c in _list(spec.get("containers"))] + [
        _mapping(c) for c in _list(spec.get("initContainers"))
    ]
    any_amount = False
    guaranteed = True
    for container in containers:
        resources = _mapping(container.get("resources"))
        limits = _amounts(_mapping(resources.get("limits")))
        requests = {**limits, **_amounts(_mapping(resources.get("requests")))}
        if requests or limits:
            any_amount = True
        if guaranteed and (
            "cpu" not in limits
            or "memory" not in limits
            or any(limits.get(name) != amount for name, amount in requests.items())
        ):
            guaranteed = False
    if not any_amount:
        return BEST_EFFORT
    return GUARANTEED if guaranteed else BURSTABLE
