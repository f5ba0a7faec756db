"""Reading plain Kubernetes dicts defensively.

The controllers receive raw objects (JSON shape) that admission may not have seen yet, so every
accessor tolerates a missing or mistyped field and falls back to what the Go structs would hold
(the zero value) instead of raising.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

Raw = Mapping[str, Any]

_EMPTY: Raw = {}


def mapping(value: object) -> Raw:
    # ``type(...) is dict`` first: JSON objects are dicts, and the ABC check is slow.
    if type(value) is dict:
        return value
    return _EMPTY if value is None or not isinstance(value, Mapping) else value


def items(value: object) -> list[Any]:
    return list(value) if isinstance(value, list | tuple) else []


def text(value: object) -> str:
    return value if isinstance(value, str) else ""


def integer(value: object, default: int = 0) -> int:
    # bool is an int in Python but never one in JSON.
    if isinstance(value, bool) or not isinstance(value, int):
        return default
    return value


def optional_int(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value


def metadata(obj: Raw) -> Raw:
    return mapping(obj.get("metadata"))


def spec(obj: Raw) -> Raw:
    return mapping(obj.get("spec"))


def status(obj: Raw) -> Raw:
    return mapping(obj.get("status"))


def name(obj: Raw) -> str:
    return text(metadata(obj).get("name"))


def namespace(obj: Raw) -> str:
    return text(metadata(obj).get("namespace"))


def uid(obj: Raw) -> str:
    return text(metadata(obj).get("uid"))


def annotations_of(obj: Raw) -> dict[str, str]:
    return {str(k): str(v) for k, v in mapping(metadata(obj).get("annotations")).items()}


def labels_of(obj: Raw) -> dict[str, str]:
    return {str(k): str(v) for k, v in mapping(metadata(obj).get("labels")).items()}


def is_deleting(obj: Raw) -> bool:
    return bool(metadata(obj).get("deletionTimestamp"))


def pod_phase(pod: Raw) -> str:
    return text(status(pod).get("phase"))


def controller_reference(owner: Raw, api_version: str, kind: str) -> dict[str, Any]:
    """``metav1.NewControllerRef``: the owner reference a controller puts on what it creates."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "name": name(owner),
        "uid": uid(owner),
        "controller": True,
        "blockOwnerDeletion": True,
    }


def controller_of(obj: Raw) -> Raw | None:
    """``metav1.GetControllerOf``: the owner reference marked ``controller: true``."""
    for reference in items(metadata(obj).get("ownerReferences")):
        ref = mapping(reference)
        if ref.get("controller") is True:
            return ref
    return None


def deep_copy(obj: Raw) -> dict[str, Any]:
    # The objects are small JSON trees; a structural copy keeps callers' inputs untouched.
    return copy.deepcopy(dict(obj))
