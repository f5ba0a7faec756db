"""A deep copy of a parsed document (dicts, lists, text, numbers, booleans, None), made
without ``copy.deepcopy``'s memo and dispatch: a dump's PodGroups are copied before their
defaults are written, 5.5k of them at 5k nodes.

What it copies is what ``copy.deepcopy`` gives, with one difference: a part the document
shares between two places (a YAML alias) is copied for each place, as the API server stores
an object (JSON has no aliases), instead of staying shared. Anything but the JSON types
(a date YAML read, a set) is handed to ``copy.deepcopy``.
"""

from __future__ import annotations

import copy
from typing import Any, Final

# Immutable leaves, kept as they are (deepcopy keeps them too).
_LEAVES: Final = frozenset({str, int, float, bool, type(None)})


def tree_copy(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {key: tree_copy(item) for key, item in value.items()}
    if kind is list:
        return [tree_copy(item) for item in value]
    if kind in _LEAVES:
        return value
    return copy.deepcopy(value)
