"""Property tests of the resource model: algebra, and agreement of every comparison with the
seed's definition (seed 004: "a blank dimension is zero / infinity"), computed independently here.

Values are whole numbers so the 0.1 tolerance never decides an answer. Where a property only
holds away from an upstream quirk, the strategy or a guard says which quirk and why.
"""

from __future__ import annotations

import math
from decimal import Decimal

from hypothesis import given
from hypothesis import strategies as st

from volcano_py.api.quantity import format_bytes, format_count, format_milli, parse_quantity
from volcano_py.api.resource import (
    CPU,
    MEMORY,
    PODS,
    DimensionDefault,
    Resource,
    ResourceUnderflowError,
    exceeded_part,
)

ZERO = DimensionDefault.ZERO
INFINITY = DimensionDefault.INFINITY
SCALARS = ["nvidia.com/gpu", "example.com/fpga", "hugepages-2Mi", "ephemeral-storage"]
defaults = st.sampled_from([ZERO, INFINITY])
amounts = st.integers(min_value=0, max_value=10**6).map(float)
# cpu/memory either absent (0) or clearly present: "below MIN_RESOURCE" is what the partial
# comparisons read as unbounded under INFINITY (the seed-004 reading, see resource.py).
present_or_zero = st.one_of(st.just(0.0), st.integers(min_value=1, max_value=10**6).map(float))
positive = st.integers(min_value=1, max_value=10**6).map(float)


@st.composite
def resources(
    draw: st.DrawFn,
    cpu_mem: st.SearchStrategy[float] = present_or_zero,
    scalar: st.SearchStrategy[float] = amounts,
) -> Resource:
    names = draw(st.lists(st.sampled_from(SCALARS), unique=True, max_size=len(SCALARS)))
    return Resource(
        milli_cpu=draw(cpu_mem),
        memory=draw(cpu_mem),
        scalar_resources={name: draw(scalar) for name in names},
    )


# Scalars a side defines hold at least 1: upstream's Less/LessPartly/LessEqualPartly decide a
# dimension only the right side names without reading its value ("missing in r" counts as
# less), which agrees with "blank is zero" exactly when that value is positive.
seed_resources = resources(scalar=positive)


# ------------------------------------------------------------------ the seed's definition


def _vectors(
    left: Resource, right: Resource, default: DimensionDefault, partial: bool
) -> list[tuple[float, float]]:
    """Per-dimension (left, right) pairs with blanks filled as the seed says."""
    blank = 0.0 if default is ZERO else math.inf

    def base(value: float) -> float:
        if partial and default is INFINITY and value < 0.1:
            return math.inf
        return value

    pairs = [
        (base(left.milli_cpu), base(right.milli_cpu)),
        (base(left.memory), base(right.memory)),
    ]
    for name in left.scalar_resources.keys() | right.scalar_resources.keys():
        pairs.append(
            (left.scalar_resources.get(name, blank), right.scalar_resources.get(name, blank))
        )
    return pairs


def model(function: str, left: Resource, right: Resource, default: DimensionDefault) -> bool:
    partial = "partly" in function or function in ("greater", "greater_equal")
    pairs = _vectors(left, right, default, partial)
    return {
        "less": all(a < b for a, b in pairs),
        "less_equal": all(a <= b for a, b in pairs),
        "less_partly": any(a < b for a, b in pairs),
        "less_equal_partly": any(a <= b for a, b in pairs),
        "equal": all(a == b for a, b in pairs),
        "greater": all(a > b for a, b in pairs),
        "greater_equal": all(a >= b for a, b in pairs),
        "greater_partly": any(a > b for a, b in _vectors(left, right, default, False)),
        "greater_equal_partly": any(a >= b for a, b in _vectors(left, right, default, False)),
    }[function]


FUNCTIONS = [
    "less",
    "less_equal",
    "less_partly",
    "less_equal_partly",
    "equal",
    "greater",
    "greater_equal",
]


@given(seed_resources, seed_resources, defaults, st.sampled_from(FUNCTIONS))
def test_comparisons_follow_the_seed_definition(
    left: Resource, right: Resource, default: DimensionDefault, function: str
) -> None:
    assert getattr(left, function)(right, default) is model(function, left, right, default)


@given(seed_resources, seed_resources, defaults)
def test_greater_partly_follows_the_seed_definition(
    left: Resource, right: Resource, default: DimensionDefault
) -> None:
    # greater_partly/greater_equal_partly are "not less_equal"/"not less" over the literal
    # cpu/memory (they are built on the whole-vector comparisons, as upstream's GreaterPartly).
    # Under INFINITY upstream's GreaterPartly skips dimensions only the right side names.
    if default is INFINITY:
        right = Resource(
            right.milli_cpu,
            right.memory,
            {n: v for n, v in right.scalar_resources.items() if n in left.scalar_resources},
        )
    assert left.greater_partly(right, default) is model("greater_partly", left, right, default)
    assert left.greater_equal_partly(right, default) is model(
        "greater_equal_partly", left, right, default
    )


@given(seed_resources, seed_resources, defaults)
def test_transformation_column(left: Resource, right: Resource, default: DimensionDefault) -> None:
    assert left.greater(right, default) is not left.less_equal_partly(right, default)
    assert left.greater_equal(right, default) is not left.less_partly(right, default)
    assert left.greater_equal_partly(right, default) is not left.less(right, default)
    assert (
        left.greater_partly(right, default)
        is not left.less_equal_with_resources_name(right, default)[0]
    )
    if default is ZERO or right.scalar_resources.keys() <= left.scalar_resources.keys():
        assert left.greater_partly(right, default) is not left.less_equal(right, default)


# ------------------------------------------------------------------ order laws


@given(resources(scalar=amounts), defaults)
def test_less_equal_and_equal_are_reflexive_less_is_not(
    resource: Resource, default: DimensionDefault
) -> None:
    assert resource.less_equal(resource.clone(), default)
    assert resource.equal(resource.clone(), default)
    assert not resource.less(resource.clone(), default)
    assert resource.less_equal_partly(resource.clone(), default)
    assert resource.greater_equal(resource.clone(), default)


@given(resources(cpu_mem=positive), resources(cpu_mem=positive), defaults)
def test_whole_vector_implies_partial(
    left: Resource, right: Resource, default: DimensionDefault
) -> None:
    # cpu/memory present: under INFINITY a blank cpu is read differently by the partial
    # comparisons (seed reading) and the whole-vector ones (upstream), see resource.py.
    if left.less(right, default):
        assert left.less_equal(right, default)
        assert left.less_partly(right, default)
    if left.less_equal(right, default):
        assert left.less_equal_partly(right, default)


@given(resources(), resources(), defaults)
def test_less_equal_with_resources_name_names_what_is_short(
    left: Resource, right: Resource, default: DimensionDefault
) -> None:
    ok, names = left.less_equal_with_resources_name(right, default)
    assert ok is (not names)
    if default is ZERO:
        assert ok is left.less_equal(right, ZERO)
    for name in names:
        right_value = (
            right.get(name) if name in (CPU, MEMORY) else right.scalar_resources.get(name, 0.0)
        )
        assert left.get(name) > right_value


@given(resources(), resources(), resources())
def test_less_equal_with_dimension_only_reads_requested_dimensions(
    left: Resource, right: Resource, request: Resource
) -> None:
    ok, names = left.less_equal_with_dimension_and_resources_name(right, request)
    requested = {CPU} if request.milli_cpu > 0 else set()
    requested |= {MEMORY} if request.memory > 0 else set()
    requested |= {n for n, v in request.scalar_resources.items() if v > 0 and n != PODS}
    expected = sorted(n for n in requested if left.get(n) > right.get(n))
    assert (ok, sorted(names)) == (not expected, expected)


# ------------------------------------------------------------------ arithmetic


@given(resources(), resources())
def test_add_then_sub_returns_the_original(base: Resource, other: Resource) -> None:
    result = base.clone().add(other).sub(other)
    assert result.equal(base, ZERO)
    assert result.milli_cpu == base.milli_cpu and result.memory == base.memory
    for name in result.scalar_resources.keys() | base.scalar_resources.keys():
        assert result.scalar_resources.get(name, 0.0) == base.scalar_resources.get(name, 0.0)


@given(resources(), resources())
def test_sub_refuses_exactly_when_other_does_not_fit(base: Resource, other: Resource) -> None:
    fits = other.less_equal(base, ZERO)
    loose = base.clone().sub_without_assert(other)
    try:
        strict = base.clone().sub(other)
    except ResourceUnderflowError:
        assert not fits
    else:
        assert fits
        assert strict == loose


@given(resources(), st.lists(resources(), max_size=6))
def test_add_all_is_add_in_turn_bit_for_bit(base: Resource, others: list[Resource]) -> None:
    one_by_one = base.clone()
    for other in others:
        one_by_one.add(other)
    together = base.clone().add_all(others)
    assert together == one_by_one
    assert list(together.scalar_resources) == list(one_by_one.scalar_resources)


@given(resources(), resources())
def test_add_is_commutative(left: Resource, right: Resource) -> None:
    assert left.clone().add(right) == right.clone().add(left)


@given(resources(), st.integers(min_value=1, max_value=64))
def test_multi_then_divide(resource: Resource, ratio: int) -> None:
    assert resource.clone().multi(ratio).multi(1 / ratio).equal(resource, ZERO)


@given(resources(), resources())
def test_diff_increased_and_decreased_recombine(left: Resource, right: Resource) -> None:
    increased, decreased = left.diff(right, ZERO)
    rebuilt = right.clone().add(increased).sub_without_assert(decreased)
    assert rebuilt.milli_cpu == left.milli_cpu and rebuilt.memory == left.memory
    for name in left.scalar_resources.keys() | right.scalar_resources.keys():
        inc = increased.scalar_resources.get(name, 0.0)
        dec = decreased.scalar_resources.get(name, 0.0)
        assert inc >= 0 and dec >= 0 and inc * dec == 0
        assert right.scalar_resources.get(name, 0.0) + inc - dec == left.scalar_resources.get(
            name, 0.0
        )
    assert exceeded_part(left, right) == increased


@given(resources(), resources())
def test_diff_under_infinity_marks_one_sided_dimensions(left: Resource, right: Resource) -> None:
    increased, decreased = left.diff(right, INFINITY)
    for name in left.scalar_resources.keys() ^ right.scalar_resources.keys():
        if name in left.scalar_resources:
            assert decreased.scalar_resources[name] == -1  # right side unbounded
        else:
            assert increased.scalar_resources[name] == -1  # left side unbounded


@given(resources(), resources())
def test_set_max_and_min_dimension_bound_both_sides(left: Resource, right: Resource) -> None:
    high = left.clone()
    high.set_max_resource(right)
    low = left.clone().min_dimension_resource(right, ZERO)
    assert left.less_equal(high, ZERO) and right.less_equal(high, ZERO)
    assert low.less_equal(left, ZERO) and low.less_equal(right, ZERO)
    for name in high.scalar_resources:
        assert high.scalar_resources[name] == max(
            left.scalar_resources.get(name, -math.inf), right.scalar_resources.get(name, -math.inf)
        )
    assert low.scalar_resources.keys() == left.scalar_resources.keys()


@given(resources(), resources())
def test_min_dimension_infinity_leaves_undefined_dimensions(
    left: Resource, right: Resource
) -> None:
    low = left.clone().min_dimension_resource(right, INFINITY)
    for name, value in left.scalar_resources.items():
        expected = min(value, right.scalar_resources.get(name, math.inf))
        assert low.scalar_resources[name] == expected


@given(resources(), resources())
def test_clone_is_independent(left: Resource, right: Resource) -> None:
    copy = left.clone()
    copy.add(right).multi(3)
    copy.scalar_resources["x.io/y"] = 1
    assert "x.io/y" not in left.scalar_resources


# ------------------------------------------------------------------ quantities round-trip

milli = st.integers(min_value=-(10**15), max_value=10**15)
whole = st.integers(min_value=-(2**62), max_value=2**62)


@given(milli)
def test_format_milli_round_trips(value: int) -> None:
    assert parse_quantity(format_milli(value)) * 1000 == value


@given(whole)
def test_format_bytes_round_trips(value: int) -> None:
    assert parse_quantity(format_bytes(value)) == value


@given(whole)
def test_format_count_round_trips(value: int) -> None:
    assert parse_quantity(format_count(value)) == Decimal(value)


@given(
    st.integers(min_value=0, max_value=10**12),
    st.integers(min_value=0, max_value=2**50),
    st.integers(min_value=0, max_value=10**4),
    st.dictionaries(st.sampled_from(SCALARS), st.integers(min_value=0, max_value=10**12)),
)
def test_to_list_from_list_round_trip(
    cpu: int, memory: int, pods: int, scalars: dict[str, int]
) -> None:
    original = Resource(
        milli_cpu=cpu,
        memory=memory,
        scalar_resources={**{n: float(v) for n, v in scalars.items()}, PODS: float(pods)},
        max_task_num=pods,
    )
    listed = original.to_list()
    assert all(isinstance(v, str) for v in listed.values())
    assert Resource.from_list(listed) == original
    assert Resource.from_list(listed).to_list() == listed
