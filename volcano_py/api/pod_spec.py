"""Read a raw pod dict's fields the way the Go structs' zero values read them.

Pods stay the JSON a watch delivered (no client model objects): an absent or ``null`` field
reads as an empty mapping or sequence. The plugins' ``_kube_scheduling.podspec`` builds its
accessors on these; the pod facts the cache keeps per node (``api.pod_facts``) read them too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Json = Mapping[str, Any]

_EMPTY: Mapping[str, Any] = {}


def mapping(value: object) -> Mapping[str, Any]:
    # ``type(...) is dict`` first: JSON objects are dicts, and the ABC check is slow.
    if type(value) is dict or (value is not None and isinstance(value, Mapping)):
        return value
    return _EMPTY


def sequence(value: object) -> Sequence[Any]:
    if type(value) is list or isinstance(value, tuple):
        return value
    return ()


def spec(obj: Json | None) -> Mapping[str, Any]:
    return mapping((obj or _EMPTY).get("spec"))


def containers(pod: Json) -> Sequence[Mapping[str, Any]]:
    return [mapping(c) for c in sequence(spec(pod).get("containers"))]


def init_containers(pod: Json) -> Sequence[Mapping[str, Any]]:
    return [mapping(c) for c in sequence(spec(pod).get("initContainers"))]
