"""``tree_copy`` gives what ``copy.deepcopy`` gives for a parsed document: an equal tree
sharing no dict or list with the original (a YAML alias copied for each place)."""

from __future__ import annotations

import copy
import datetime as dt
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.sim.tree_copy import tree_copy

_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=5),
    st.just(dt.date(2026, 1, 1)),
    st.just(frozenset({1})),
)
_TREES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=3), inner, max_size=4)
    ),
    max_leaves=40,
)


def _containers(value: Any) -> list[Any]:
    found = []
    if isinstance(value, dict | list | set):
        found.append(value)
        for item in value.values() if isinstance(value, dict) else value:
            found += _containers(item)
    return found


@settings(max_examples=300, deadline=None)
@given(_TREES)
def test_a_copy_is_deepcopys_and_shares_no_container(tree: Any) -> None:
    made = tree_copy(tree)
    assert made == copy.deepcopy(tree)
    assert repr(made) == repr(tree)  # the same key orders and leaf types
    originals = {id(c) for c in _containers(tree)}
    assert not originals & {id(c) for c in _containers(made)}


def test_a_yaml_alias_is_copied_for_each_place() -> None:
    doc = yaml.safe_load("a: &x {k: [1, 2]}\nb: *x\nwhen: 2026-01-01\ns: !!set {q: null}\n")
    made = tree_copy(doc)
    assert made == doc
    assert made["a"] is not made["b"] and made["a"] is not doc["a"]
    made["a"]["k"].append(3)
    assert made["b"]["k"] == [1, 2] and doc["a"]["k"] == [1, 2]
    assert made["s"] == {"q"} and made["s"] is not doc["s"]
