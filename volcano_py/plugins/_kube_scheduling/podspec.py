"""Read the scheduling-relevant fields of raw pod and node dicts.

Pods and nodes stay the JSON a watch delivered (no client model objects); these accessors
tolerate absent and ``null`` fields the way the Go structs' zero values do. The most basic
ones live in ``api.pod_spec`` (the scheduler cache reads them too) and are re-exported here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from volcano_py.api.pod_spec import Json as Json
from volcano_py.api.pod_spec import containers as containers
from volcano_py.api.pod_spec import init_containers as init_containers
from volcano_py.api.pod_spec import mapping as mapping
from volcano_py.api.pod_spec import sequence as sequence
from volcano_py.api.pod_spec import spec as spec

Frozen = tuple[Any, ...] | str | int | float | bool | None

_EMPTY: Mapping[str, Any] = {}


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
