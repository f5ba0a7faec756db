"""``dumps_indented`` is ``json.dumps(value, indent=2)``, text for text, for any JSON-like
value: what it writes itself and what it leaves to ``json.dumps`` (non-string keys, NaN and
infinities, tuples, subclasses of builtin types)."""

from __future__ import annotations

import enum
import json
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.sim.json_text import dumps_indented

scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(),
)
keys = st.one_of(st.text(), st.integers(), st.booleans(), st.none(), st.floats(allow_nan=False))
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=8), inner, max_size=5),
        st.dictionaries(keys, inner, max_size=3),
    ),
    max_leaves=40,
)


@settings(max_examples=500, deadline=None)
@given(values)
def test_the_same_text_as_json_dumps(value):
    assert dumps_indented(value) == json.dumps(value, indent=2)


class Phase(enum.StrEnum):
    RUNNING = "Running"


def test_fallbacks_give_the_same_text():
    for value in (
        {"a": [1, 2.5, math.nan]},
        {1: "x", "b": {}},
        {"phase": Phase.RUNNING},
        ("a", {"b": []}),
        {"é": "ü\n\u2028", "empty": [], "nested": [[], {}]},
    ):
        assert dumps_indented(value) == json.dumps(value, indent=2)
