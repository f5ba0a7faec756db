"""Read the scheduling-relevant fields of raw pod and node dicts.

Pods and nodes stay the JSON a watch delivered (no client model objects); these accessors
tolerate absent and ``null`` fields the way the Go structs' zero values do.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

Json = Mapping[str, Any]
Frozen = tuple[Any, ...] | str | int | float | bool | None

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


def labels(obj: Json | None) -> Mapping[str, str]:
    return mapping(mapping((obj or _EMPTY).get("metadata")).get("labels"))


def name(obj: Json | None) -> str:
    return str(mapping((obj or _EMPTY).get("metadata")).get("name") or "")


def namespace(pod: Json) -> str:
    return str(mapping(pod.get("metadata")).get("namespace") or "default")


def affinity(pod: Json) -> Mapping[str, Any]:
    return mapping(spec(pod).get("affinity"))


def node_selector(pod: Json) -> Mapping[str, str]:
    return mapping(spec(pod).get("nodeSelector"))


def tolerations(pod: Json) -> Sequence[Mapping[str, Any]]:
    return [mapping(t) for t in sequence(spec(pod).get("tolerations"))]


def node_taints(node: Json | None) -> Sequence[Mapping[str, Any]]:
    return [mapping(t) for t in sequence(spec(node).get("taints"))]


def containers(pod: Json) -> Sequence[Mapping[str, Any]]:
    return [mapping(c) for c in sequence(spec(pod).get("containers"))]


def init_containers(pod: Json) -> Sequence[Mapping[str, Any]]:
    return [mapping(c) for c in sequence(spec(pod).get("initContainers"))]


def has_pod_affinity(pod: Json) -> bool:
    """kube-scheduler's ``podWithAffinity``: any inter-pod (anti-)affinity section at all.
    Called for every pod of the session, hence the early exits."""
    pod_spec = pod.get("spec")
    if not pod_spec:
        return False
    section = mapping(pod_spec).get("affinity")
    if not section:
        return False
    section = mapping(section)
    return section.get("podAffinity") is not None or section.get("podAntiAffinity") is not None


def freeze(value: object) -> Frozen:
    """A hashable, order-insensitive (for mappings) image of a JSON value, to key caches by
    the parts of a pod spec a computation depends on."""
    if isinstance(value, Mapping):
        return tuple(sorted((str(k), freeze(v)) for k, v in value.items()))
    if isinstance(value, list | tuple):
        return ("[", *(freeze(v) for v in value))
    if value is None or isinstance(value, str | int | float | bool):
        return value
    return repr(value)
