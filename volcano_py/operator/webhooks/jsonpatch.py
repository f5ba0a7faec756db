"""RFC 6902 JSON Patch between two JSON documents, as mutating webhooks answer.

Objects are compared key by key; lists of equal length element by element, other lists are
replaced whole (a patch of the mutating webhooks' size, never an index shuffle to get wrong).
"""

from __future__ import annotations

import copy
from typing import Any

Patch = list[dict[str, Any]]


def _escape(key: str) -> str:
    return key.replace("~", "~0").replace("/", "~1")


def _unescape(token: str) -> str:
    return token.replace("~1", "/").replace("~0", "~")


def _diff(before: Any, after: Any, path: str, patch: Patch) -> None:
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                patch.append({"op": "remove", "path": f"{path}/{_escape(key)}"})
        for key, value in after.items():
            where = f"{path}/{_escape(key)}"
            if key not in before:
                patch.append({"op": "add", "path": where, "value": copy.deepcopy(value)})
            else:
                _diff(before[key], value, where, patch)
        return
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        for index, (old, new) in enumerate(zip(before, after, strict=True)):
            _diff(old, new, f"{path}/{index}", patch)
        return
    # bool is an int in Python: True == 1 must still be a change in JSON.
    if type(before) is not type(after) or before != after:
        patch.append({"op": "replace", "path": path, "value": copy.deepcopy(after)})


def diff(before: Any, after: Any) -> Patch:
    """The operations that turn ``before`` into ``after`` (empty when equal)."""
    patch: Patch = []
    _diff(before, after, "", patch)
    return patch


class PatchError(ValueError):
    pass


def _tokens(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"invalid JSON pointer {path!r}")
    return [_unescape(token) for token in path[1:].split("/")]


def apply(document: Any, patch: Patch) -> Any:
    """``document`` with ``patch`` applied (add, remove, replace); the argument is untouched."""
    result = copy.deepcopy(document)
    for operation in patch:
        op, tokens = operation.get("op"), _tokens(str(operation.get("path", "")))
        if not tokens:
            if op in ("add", "replace"):
                result = copy.deepcopy(operation["value"])
                continue
            raise PatchError(f"cannot {op} the whole document")
        parent = result
        for token in tokens[:-1]:
            parent = parent[int(token)] if isinstance(parent, list) else parent[token]
        last = tokens[-1]
        if isinstance(parent, list):
            if op == "add":
                index = len(parent) if last == "-" else int(last)
                parent.insert(index, copy.deepcopy(operation["value"]))
            elif op == "replace":
                parent[int(last)] = copy.deepcopy(operation["value"])
            elif op == "remove":
                del parent[int(last)]
            else:
                raise PatchError(f"unsupported op {op!r}")
        elif isinstance(parent, dict):
            if op in ("add", "replace"):
                if op == "replace" and last not in parent:
                    raise PatchError(f"replace of missing {operation['path']!r}")
                parent[last] = copy.deepcopy(operation["value"])
            elif op == "remove":
                del parent[last]
            else:
                raise PatchError(f"unsupported op {op!r}")
        else:
            raise PatchError(f"{operation['path']!r} does not lead into an object or a list")
    return result
