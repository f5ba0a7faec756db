"""The strict-field checkers' inline text checks (``strict_fields._INLINE_TEXT``: text
fields and items checked in the struct and collection checkers, not through a checker
each) give the verdicts the per-leaf checkers give, and a checker that passes an object
passes only what the naming walk finds nothing wrong with. Random pod-shaped objects (real
field names, wrong types, unknown fields) run through both."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.models import strict_fields

_KEYS = st.sampled_from(
    [
        "metadata", "spec", "status", "name", "namespace", "labels", "annotations",
        "containers", "initContainers", "image", "resources", "requests", "limits", "cpu",
        "nodeName", "phase", "conditions", "type", "lastTransitionTime", "env", "value",
        "ports", "containerPort", "tolerations", "key", "operator", "priority", "command",
        "args", "nodeSelector", "creationTimestamp", "startTime", "hostIP", "unknownField",
    ]
)  # fmt: skip
_LEAVES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 2**64),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "x", "1", "500m", "1Gi", "bad quantity", "Running"]),
    st.just(dt.date(2026, 1, 1)),
    st.just(dt.datetime(2026, 1, 1, tzinfo=dt.UTC)),
)
_VALUES = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=25,
)
_TYPES = ("V1Pod", "V1Node", "V1ObjectMeta", "V1Container")


def _verdicts(obj: Any, inline: bool, monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    with monkeypatch.context() as patch:
        patch.setattr(strict_fields, "_INLINE_TEXT", inline)
        patch.setattr(strict_fields, "_CHECKERS", {})
        return [strict_fields._checker(name)(obj) for name in _TYPES]


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_inline_text_checks_give_the_per_leaf_verdicts(obj: dict[str, Any]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        inline = _verdicts(obj, True, monkeypatch)
        assert inline == _verdicts(obj, False, monkeypatch)
    for name, passed in zip(_TYPES, inline, strict=True):
        if passed:
            walk = strict_fields._Walk()
            walk.core(obj, name, ())
            assert walk.problems == [], (name, obj)
