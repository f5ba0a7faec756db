"""Upstream's ``pkg/scheduler/api/resource_info_test.go`` tables, transcribed case by case.

Each parametrisation is named ``<UpstreamTest>/<table>/<index>`` after the Go test, its table
(``zero``/``infinity`` where upstream splits by ``DimensionDefaultValue``) and the case's index
there. Go's ``&Resource{}`` (nil ``ScalarResources``) and ``make(map..., 0)`` are both an empty
dict here: Python cannot tell a nil map from an empty one, and upstream's ``equality.Semantic``
comparisons treat them alike in every case below.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Sequence

import pytest

from volcano_py.api.resource import (
    MAX_FLOAT,
    MAX_INT_AS_FLOAT,
    DimensionDefault,
    Resource,
    ResourceUnderflowError,
    intersection,
    intersection_with_ignored_scalar_resources,
)

ZERO = DimensionDefault.ZERO
INFINITY = DimensionDefault.INFINITY
S1 = "scalar.test/scalar1"
HP = "hugepages-test"
GPU = "nvidia.com/gpu"


def R(cpu: float = 0, mem: float = 0, scalars: dict[str, float] | None = None) -> Resource:
    return Resource(milli_cpu=cpu, memory=mem, scalar_resources=dict(scalars or {}))


def cases(test: str, rows: Iterable[Sequence[object]], table: str = "") -> list[object]:
    prefix = f"{test}/{table}/" if table else f"{test}/"
    return [pytest.param(*row, id=f"{prefix}{index}") for index, row in enumerate(rows)]


# ------------------------------------------------------------------ construction


@pytest.mark.parametrize(
    ("resource_list", "expected"),
    cases(
        "TestNewResource",
        [
            ({}, R()),
            (
                # NewScaledQuantity(4, -3) is "4m"; NewQuantity(2000, BinarySI) is 2000 bytes.
                {"cpu": "4m", "memory": 2000, S1: 1, "hugepages-test": 2, "ephemeral-storage": 3},
                R(4, 2000, {S1: 1000, "hugepages-test": 2000, "ephemeral-storage": 3000}),
            ),
        ],
    ),
)
def test_new_resource(resource_list: dict[str, object], expected: Resource) -> None:
    assert Resource.from_list(resource_list) == expected  # type: ignore[arg-type]


def test_infinite_resource() -> None:  # TestInfiniteResource
    assert Resource.infinite() == Resource(
        milli_cpu=MAX_FLOAT, memory=MAX_FLOAT, max_task_num=2**63 - 1
    )


@pytest.mark.parametrize(
    ("resource", "name", "quantity", "expected"),
    cases(
        "TestResourceAddScalar",
        [
            (R(), "scalar1", 100, R(0, 0, {"scalar1": 100})),
            (R(4000, 8000, {HP: 2}), "scalar2", 200, R(4000, 8000, {HP: 2, "scalar2": 200})),
        ],
    ),
)
def test_resource_add_scalar(
    resource: Resource, name: str, quantity: float, expected: Resource
) -> None:
    resource.add_scalar(name, quantity)
    assert resource == expected


@pytest.mark.parametrize(
    ("resource1", "resource2", "expected"),
    cases(
        "TestSetMaxResource",
        [
            (R(), R(4000, 2000, {S1: 1, HP: 2}), R(4000, 2000, {S1: 1, HP: 2})),
            (
                R(4000, 4000, {S1: 1, HP: 2}),
                R(4000, 2000, {S1: 4, HP: 5}),
                R(4000, 4000, {S1: 4, HP: 5}),
            ),
        ],
    ),
)
def test_set_max_resource(resource1: Resource, resource2: Resource, expected: Resource) -> None:
    resource1.set_max_resource(resource2)
    assert resource1 == expected


@pytest.mark.parametrize(
    ("resource", "name", "expected"),
    cases(
        "TestIsZero",
        [
            (R(), "cpu", True),
            (R(4000, 4000, {S1: 4, HP: 5}), "cpu", False),
            (R(4000, 4000, {S1: 0, HP: 5}), S1, True),
        ],
    ),
)
def test_is_zero(resource: Resource, name: str, expected: bool) -> None:
    assert resource.is_zero(name) is expected


def test_is_zero_unknown_scalar_raises_where_upstream_asserts() -> None:
    # Upstream: assert.Assertf(found, "unknown resource %s") panics; here a KeyError.
    with pytest.raises(KeyError, match="unknown resource"):
        R(1, 1, {S1: 1}).is_zero(GPU)
    # With no scalar map at all upstream returns true before the assertion.
    assert R(1, 1).is_zero(GPU)


# ------------------------------------------------------------------ arithmetic


@pytest.mark.parametrize(
    ("resource1", "resource2", "expected"),
    cases(
        "TestAddResource",
        [
            (R(), R(4000, 2000, {S1: 1, HP: 2}), R(4000, 2000, {S1: 1, HP: 2})),
            (
                R(4000, 4000, {S1: 1, HP: 2}),
                R(4000, 2000, {S1: 4, HP: 5}),
                R(8000, 6000, {S1: 5, HP: 7}),
            ),
            (R(4000, 4000, {S1: 1}), R(4000, 2000, {S1: 4, HP: 5}), R(8000, 6000, {S1: 5, HP: 5})),
        ],
    ),
)
def test_add_resource(resource1: Resource, resource2: Resource, expected: Resource) -> None:
    assert resource1.add(resource2) is resource1
    assert resource1 == expected


@pytest.mark.parametrize(
    ("resource1", "resource2", "expected"),
    cases(
        "TestSubResource",
        [
            (R(4000, 2000, {S1: 1, HP: 2}), R(), R(4000, 2000, {S1: 1, HP: 2})),
            (
                R(4000, 4000, {S1: 1000, HP: 2000}),
                R(3000, 2000, {S1: 500, HP: 1000}),
                R(1000, 2000, {S1: 500, HP: 1000}),
            ),
        ],
    ),
)
def test_sub_resource(resource1: Resource, resource2: Resource, expected: Resource) -> None:
    assert resource1.sub(resource2) is resource1
    assert resource1 == expected


def test_sub_underflow_raises_where_upstream_panics() -> None:
    # Upstream: Sub asserts rr.LessEqual(r, Zero) and panics (unless PANIC_ON_ERROR=false).
    left = R(1000, 1000, {GPU: 1000})
    with pytest.raises(ResourceUnderflowError, match="not sufficient"):
        left.sub(R(2000, 0))
    with pytest.raises(ValueError):  # ResourceUnderflowError is a ValueError
        left.sub(R(0, 0, {GPU: 2000}))
    assert left == R(1000, 1000, {GPU: 1000}), "a refused sub leaves the resource untouched"


def test_sub_without_assert_goes_negative_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    left = R(1000, 1000, {GPU: 1000})
    with caplog.at_level(logging.ERROR, logger="volcano_py.api.resource"):
        left.sub_without_assert(R(2000, 0, {GPU: 3000}))
    assert left == R(-1000, 1000, {GPU: -2000})
    assert "['cpu', 'nvidia.com/gpu']" in caplog.text


@pytest.mark.parametrize(
    ("resource1", "resource2", "increased", "decreased"),
    cases(
        "TestDiff",
        [
            (R(), R(), R(), R()),
            (R(1000, 2000), R(), R(1000, 2000), R()),
            (R(), R(1000, 2000), R(), R(1000, 2000)),
            (R(1000, 2000, {S1: 1000}), R(2000, 1000), R(0, 1000, {S1: 1000}), R(1000, 0)),
            (R(2000, 1000), R(1000, 2000, {S1: 1000}), R(1000, 0), R(0, 1000, {S1: 1000})),
            (
                R(1000, 2000, {S1: 3000}),
                R(2000, 1000, {S1: 1000}),
                R(0, 1000, {S1: 2000}),
                R(1000, 0),
            ),
        ],
        "zero",
    )
    + cases(
        "TestDiff",
        [
            # Under Infinity a dimension one side lacks is unbounded there, marked -1.
            (R(1000, 2000, {S1: 1000}), R(2000, 1000), R(0, 1000), R(1000, 0, {S1: -1})),
            (R(2000, 1000), R(1000, 2000, {S1: 1000}), R(1000, 0, {S1: -1}), R(0, 1000)),
        ],
        "infinity",
    ),
)
def test_diff(
    request: pytest.FixtureRequest,
    resource1: Resource,
    resource2: Resource,
    increased: Resource,
    decreased: Resource,
) -> None:
    default = INFINITY if "/infinity/" in request.node.callspec.id else ZERO
    assert resource1.diff(resource2, default) == (increased, decreased)


# ------------------------------------------------------------------ whole-vector comparisons

LESS_ZERO = [
    (R(), R(), False),
    (R(), R(4000, 2000, {S1: 1000, HP: 2000}), True),
    (R(4000, 4000, {S1: 1000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), True),
    (R(4000, 4000, {S1: 5000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), False),
    (R(9000, 4000, {S1: 1000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), False),
]
LESS_INFINITY = [
    (R(1000, 1000, {S1: 1000, HP: 2000}), R(2000, 2000, {HP: 3000}), True),
    (R(1000, 1000, {HP: 1000}), R(2000, 2000, {S1: 1000, HP: 2000}), False),
    (R(1000, 1000, {HP: 2000}), R(2000, 2000, {S1: 1000, HP: 2000}), False),
]


@pytest.mark.parametrize(
    ("left", "right", "default", "expected"),
    cases("TestLess", [(*c[:2], ZERO, c[2]) for c in LESS_ZERO], "zero")
    + cases("TestLess", [(*c[:2], INFINITY, c[2]) for c in LESS_INFINITY], "infinity"),
)
def test_less(left: Resource, right: Resource, default: DimensionDefault, expected: bool) -> None:
    assert left.less(right, default) is expected


LESS_EQUAL_ZERO = [
    (R(), R(), True),
    (R(), R(4000, 2000, {S1: 1000, HP: 2000}), True),
    (R(4000, 2000, {S1: 1000, HP: 2000}), R(), False),
    (R(4000, 4000, {S1: 1000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), True),
    (R(4000, 8000, {S1: 1000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), True),
    (R(4000, 4000, {S1: 4000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), True),
    (R(4000, 4000, {S1: 5000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), False),
    (R(9000, 4000, {S1: 1000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), False),
]
LESS_EQUAL_INFINITY = [
    (R(), R(), True),
    (R(), R(4000, 2000, {S1: 1000, HP: 2000}), False),
    (R(4000, 2000, {S1: 1000, HP: 2000}), R(), False),
    (R(4000, 2000), R(4000, 2000, {S1: 1000, HP: 2000}), False),
    (R(4000, 2000, {S1: 1000, HP: 2000}), R(4000, 2000), True),
]


@pytest.mark.parametrize(
    ("left", "right", "default", "expected"),
    cases("TestLessEqual", [(*c[:2], ZERO, c[2]) for c in LESS_EQUAL_ZERO], "zero")
    + cases("TestLessEqual", [(*c[:2], INFINITY, c[2]) for c in LESS_EQUAL_INFINITY], "infinity"),
)
def test_less_equal(
    left: Resource, right: Resource, default: DimensionDefault, expected: bool
) -> None:
    assert left.less_equal(right, default) is expected


@pytest.mark.parametrize(
    ("left", "right", "req", "expected", "names"),
    cases(
        "TestLessEqualWithDimensionAndResourcesName",
        [
            (R(), R(), None, True, []),
            (R(5000, 4000), R(), None, False, ["cpu", "memory"]),
            (R(5000, 0), R(4000, 2000, {S1: 1000}), R(1000, 0), False, ["cpu"]),
            (R(3000, 3000), R(4000, 2000), R(0, 1000), False, ["memory"]),
            (R(4, 4000), R(), R(), True, []),
            (R(4, 4000, {GPU: 1}), R(8, 8000), R(4, 2000, {GPU: 1}), False, [GPU]),
            (
                R(10, 4000, {GPU: 1}),
                R(100, 8000, {"nvidia.com/A100": 1}),
                R(10, 4000, {GPU: 0, "nvidia.com/A100": 1, "scalar": 1}),
                True,
                [],
            ),
            (
                R(110, 4000, {GPU: 1, "nvidia.com/A100": 1, "scalar": 1}),
                R(100, 8000, {"nvidia.com/A100": 1, "scalar": 1}),
                R(0, 4000, {GPU: 0, "nvidia.com/A100": 1, "scalar": 1}),
                True,
                [],
            ),
        ],
    ),
)
def test_less_equal_with_dimension_and_resources_name(
    left: Resource, right: Resource, req: Resource | None, expected: bool, names: list[str]
) -> None:
    # Upstream compares the name slice in order, unsorted.
    assert left.less_equal_with_dimension_and_resources_name(right, req) == (expected, names)
    assert left.less_equal_with_dimension(right, req) is expected


def test_less_equal_with_dimension_and_resources_name_nil_right() -> None:
    # rr == nil: false, naming every dimension r holds (ResourceNames) -- our None.
    ok, names = R(5000, 0, {GPU: 1000, S1: 0}).less_equal_with_dimension_and_resources_name(
        None, R(1, 1)
    )
    assert (ok, sorted(names)) == (False, ["cpu", GPU])


# ------------------------------------------------------------------ partial comparisons

LESS_PARTLY_ZERO = [
    (R(), R(), False),
    (R(), R(2000, 2000, {S1: 1000, HP: 2000}), True),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(), False),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(4000, 2000, {S1: 1000, HP: 2000}), True),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(2000, 4000, {S1: 1000, HP: 2000}), True),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(2000, 2000, {S1: 2000, HP: 2000}), True),
    (R(2000, 2000, {HP: 2000}), R(2000, 2000, {S1: 1000, HP: 2000}), True),
    (R(4000, 4000, {S1: 1000, HP: 2000}), R(2000, 2000, {S1: 1000, HP: 2000}), False),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(2000, 2000, {HP: 2000}), False),
]
LESS_PARTLY_INFINITY = [
    (R(2000, 2000, {HP: 2000}), R(2000, 2000, {S1: 1000, HP: 2000}), False),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(2000, 2000, {HP: 2000}), True),
]


@pytest.mark.parametrize(
    ("left", "right", "default", "expected"),
    cases("TestLessPartly", [(*c[:2], ZERO, c[2]) for c in LESS_PARTLY_ZERO], "zero")
    + cases("TestLessPartly", [(*c[:2], INFINITY, c[2]) for c in LESS_PARTLY_INFINITY], "infinity"),
)
def test_less_partly(
    left: Resource, right: Resource, default: DimensionDefault, expected: bool
) -> None:
    assert left.less_partly(right, default) is expected


LESS_EQUAL_PARTLY_ZERO = [
    (R(), R(), True),
    (R(), R(2000, 2000, {S1: 1000, HP: 2000}), True),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(), False),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(4000, 2000, {S1: 1000, HP: 2000}), True),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(2000, 4000, {S1: 1000, HP: 2000}), True),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(2000, 2000, {S1: 2000, HP: 2000}), True),
    (R(2000, 2000, {HP: 2000}), R(2000, 2000, {S1: 1000, HP: 2000}), True),
    (R(4000, 4000, {S1: 1000, HP: 2000}), R(2000, 2000, {S1: 1000, HP: 2000}), True),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(2000, 2000, {HP: 2000}), True),
]
LESS_EQUAL_PARTLY_INFINITY = [
    (R(2000, 2000, {HP: 2000}), R(2000, 2000, {S1: 1000, HP: 2000}), True),
    (R(2000, 2000, {S1: 1000, HP: 2000}), R(2000, 2000, {HP: 2000}), True),
]


@pytest.mark.parametrize(
    ("left", "right", "default", "expected"),
    cases("TestLessEqualPartly", [(*c[:2], ZERO, c[2]) for c in LESS_EQUAL_PARTLY_ZERO], "zero")
    + cases(
        "TestLessEqualPartly",
        [(*c[:2], INFINITY, c[2]) for c in LESS_EQUAL_PARTLY_INFINITY],
        "infinity",
    ),
)
def test_less_equal_partly(
    left: Resource, right: Resource, default: DimensionDefault, expected: bool
) -> None:
    assert left.less_equal_partly(right, default) is expected


@pytest.mark.parametrize(
    ("left", "right", "req", "expected", "names"),
    cases(
        "TestLessEqualPartlyWithDimension",
        [
            (R(1000), R(2000), None, False, []),
            (R(3000), R(2000), R(4000), False, []),
            (R(1000), R(2000), R(500), True, ["cpu"]),
            (R(0, 1024), R(0, 1024), R(0, 512), True, ["memory"]),
            (R(0, 0, {GPU: 2}), R(0, 0, {GPU: 4}), R(0, 0, {GPU: 1}), True, [GPU]),
            (R(0, 0, {GPU: 4}), R(0, 0, {GPU: 4}), R(0, 0, {GPU: 2}), True, [GPU]),
            (
                R(3000, 2048, {GPU: 5}),
                R(2000, 1024, {GPU: 4}),
                R(1000, 512, {GPU: 1}),
                False,
                [],
            ),
            (
                R(0, 0, {"rdma": 2, "fpga": 2}),
                R(0, 0, {"rdma": 2}),
                R(1000, 512, {"rdma": 1, "fpga": 1, GPU: 2}),
                True,
                ["cpu", "memory", "rdma", GPU],
            ),
            (
                R(0, 0, {"rdma": 1, "fpga": 2, GPU: 2}),
                R(0, 0, {"rdma": 2, "fpga": 2}),
                R(1000, 512, {GPU: 2, "rdma": 1, "fpga": 1}),
                True,
                ["cpu", "memory", "rdma", "fpga"],
            ),
        ],
    ),
)
def test_less_equal_partly_with_dimension(
    left: Resource, right: Resource, req: Resource | None, expected: bool, names: list[str]
) -> None:
    ok, got = left.less_equal_partly_with_dimension(right, req)
    assert (ok, sorted(got)) == (expected, sorted(names))


@pytest.mark.parametrize(
    ("left", "right", "req", "expected", "names"),
    cases(
        "TestLessEqualPartlyWithDimensionZeroFiltered",
        [
            (R(0, 0), R(0, 0), R(1000, 512), False, []),
            (R(1000, 0), R(2000, 0), R(1000, 512), True, ["cpu"]),
            (R(0, 0), R(0, 2048), R(1000, 512), True, ["memory"]),
            (R(1000, 1024), R(2000, 2048), R(1000, 512), True, ["cpu", "memory"]),
            (
                R(0, 1024),
                R(2000, 0, {GPU: 4}),
                R(1000, 512, {GPU: 2}),
                True,
                ["cpu", GPU],
            ),
            (
                R(0, 0, {"rdma": 2, "fpga": 2}),
                R(0, 0, {"rdma": 2}),
                R(1000, 512, {GPU: 2, "rdma": 1, "fpga": 1}),
                True,
                ["rdma"],
            ),
            (
                R(0, 0, {"rdma": 1, "fpga": 2, GPU: 2}),
                R(0, 0, {"rdma": 2, "fpga": 2}),
                R(1000, 512, {GPU: 2, "rdma": 1, "fpga": 1}),
                True,
                ["rdma", "fpga"],
            ),
        ],
    ),
)
def test_less_equal_partly_with_dimension_zero_filtered(
    left: Resource, right: Resource, req: Resource, expected: bool, names: list[str]
) -> None:
    ok, got = left.less_equal_partly_with_dimension_zero_filtered(right, req)
    assert (ok, sorted(got)) == (expected, sorted(names))


def test_less_equal_partly_with_dimension_zero_filtered_nil_request() -> None:
    assert R(1).less_equal_partly_with_dimension_zero_filtered(R(2), None) == (False, [])


@pytest.mark.parametrize(
    ("left", "right", "req", "expected", "names"),
    cases(
        "TestGreaterPartlyWithDimension",
        [
            (R(1000), R(500), None, False, []),  # nil req returns false
            (R(2000), R(1000), R(1000), True, ["cpu"]),  # cpu greater
            (R(0, 0, {GPU: 2}), R(0, 0, {GPU: 1}), R(0, 0, {GPU: 1}), True, [GPU]),  # scalar
            (R(2000, 2048), R(1000, 1024), R(1000, 1024), True, ["cpu", "memory"]),  # both
            (R(1000, 2048), R(1000, 1024), R(1000), False, []),  # memory not requested
            (R(1000, 1024), R(2000, 2048), R(1000, 1024), False, []),  # nothing greater
        ],
    ),
)
def test_greater_partly_with_dimension(
    left: Resource, right: Resource, req: Resource | None, expected: bool, names: list[str]
) -> None:
    ok, got = left.greater_partly_with_dimension(right, req)
    assert (ok, sorted(got)) == (expected, sorted(names))


def test_greater_partly_with_dimension_doc_examples() -> None:
    # The examples in upstream's doc comment of GreaterPartlyWithDimension; rr nil is empty.
    assert R(0, 0, {GPU: 2}).greater_partly_with_dimension(None, R(0, 0, {GPU: 1})) == (
        True,
        [GPU],
    )
    assert R(4000).greater_partly_with_dimension(R(0), R(2000)) == (True, ["cpu"])
    assert R(0, 0, {GPU: 2}).greater_partly_with_relevant_dimensions(R(), R(0, 0, {GPU: 1})) == (
        False,
        [],
    )
    assert R(4000).greater_partly_with_relevant_dimensions(R(0), R(2000)) == (False, [])
    assert R(0, 0, {GPU: 2}).greater_partly_with_relevant_dimensions(
        R(0, 0, {GPU: 0}), R(0, 0, {GPU: 1})
    ) == (True, [GPU])
    assert R(4000).greater_partly_with_relevant_dimensions(R(0.1), R(2000)) == (True, ["cpu"])
    left, right = R(4000, 8192, {GPU: 2}), R(2000, 8192, {GPU: 1})
    for method in (
        left.greater_partly_with_dimension,
        left.greater_partly_with_relevant_dimensions,
    ):
        assert method(right, R(0, 0, {GPU: 1})) == (True, [GPU])
        assert method(right, R(2000, 0, {GPU: 1})) == (True, ["cpu", GPU])
        assert method(right, R(0, 4096, {GPU: 0})) == (False, [])


@pytest.mark.parametrize(
    ("left", "right", "req", "expected", "names"),
    cases(
        "TestGreaterPartlyWithRelevantDimensions",
        [
            (R(1000), R(500), None, False, []),  # nil req returns false
            (R(2000), R(1000), R(1000), True, ["cpu"]),  # rr has cpu
            (R(2000), R(), R(1000), False, []),  # rr has no cpu: ignored
            (R(0, 0, {GPU: 2}), R(0, 0, {GPU: 1}), R(0, 0, {GPU: 1}), True, [GPU]),
            (R(0, 0, {GPU: 2}), R(), R(0, 0, {GPU: 1}), False, []),  # rr lacks the scalar
            (R(1000, 2048), R(1000, 1024), R(1000, 1024), True, ["memory"]),
            (R(1000, 1024), R(2000, 2048), R(1000, 1024), False, []),  # nothing greater
        ],
    ),
)
def test_greater_partly_with_relevant_dimensions(
    left: Resource, right: Resource, req: Resource | None, expected: bool, names: list[str]
) -> None:
    ok, got = left.greater_partly_with_relevant_dimensions(right, req)
    assert (ok, sorted(got)) == (expected, sorted(names))


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    cases(
        "TestEqual",
        [
            (R(), R(), True),
            (R(2000, 2000, {}), R(2000, 2000, {S1: 0}), True),
            (R(2000, 2000, {HP: 2000}), R(2000, 2000, {HP: 2000}), True),
            (R(), R(2000, 4000, {S1: 1000, HP: 2000}), False),
        ],
    ),
)
def test_equal(left: Resource, right: Resource, expected: bool) -> None:
    assert left.equal(right, ZERO) is expected
    assert right.equal(left, ZERO) is expected


def test_equal_is_symmetric_where_upstream_is_not() -> None:
    # DELIBERATE DIVERGENCE. Upstream's Equal walks only r's scalars (rr's extra dimensions are
    # never looked at) and ignores its defaultValue, so {cpu 1} == {cpu 1, gpu 1} there but not
    # the reverse. Seed 004 defines Equal on both sides' dimensions, and no upstream scheduling
    # decision calls Equal (only a test helper), so we follow the seed.
    left, right = R(1000, 1000), R(1000, 1000, {GPU: 1000})
    assert not left.equal(right, ZERO)
    assert not right.equal(left, ZERO)
    # Under INFINITY a scalar only one side names is unbounded there: never equal.
    assert not R(1, 1, {GPU: 0}).equal(R(1, 1), INFINITY)
    assert R(1, 1, {GPU: 5}).equal(R(1, 1, {GPU: 5.05}), INFINITY)


@pytest.mark.parametrize(
    ("left", "right", "default", "expected"),
    cases(
        "TestMinDimensionResourceZero",
        [
            (
                R(4000, 2000, {S1: 1, HP: 2}),
                R(3000, 2000, {S1: 0, HP: 0}),
                ZERO,
                R(3000, 2000, {S1: 0, HP: 0}),
            ),
            (
                R(4000, 4000, {S1: 1000, HP: 2000}),
                R(5000, 2000, {S1: 0, HP: 3000}),
                ZERO,
                R(4000, 2000, {S1: 0, HP: 2000}),
            ),
            (
                R(4000, 2000, {S1: 1, HP: 2}),
                R(3000, 2000, {S1: 0}),
                ZERO,
                R(3000, 2000, {S1: 0, HP: 0}),
            ),
            (
                R(4000, 4000, {S1: 1000, HP: 2000}),
                R(MAX_FLOAT, 2000),
                ZERO,
                R(4000, 2000, {S1: 0, HP: 0}),
            ),
        ],
    )
    + cases(
        "TestMinDimensionResourceInfinity",
        [
            (
                R(4000, 2000, {S1: 1, HP: 2}),
                R(3000, 2000, {S1: 0}),
                INFINITY,
                R(3000, 2000, {S1: 0, HP: 2}),
            ),
            (
                R(4000, 4000, {S1: 1000, HP: 2000}),
                R(MAX_FLOAT, 2000),
                INFINITY,
                R(4000, 2000, {S1: 1000, HP: 2000}),
            ),
        ],
    ),
)
def test_min_dimension_resource(
    left: Resource, right: Resource, default: DimensionDefault, expected: Resource
) -> None:
    assert left.min_dimension_resource(right, default) is left
    assert left == expected


def test_min_dimension_resource_doc_example() -> None:
    # The doc comment on upstream's MinDimensionResource.
    left = R(2000, 4047845376, {"hugepages-2Mi": 0, "hugepages-1Gi": 0})
    left.min_dimension_resource(R(3000, 1000), ZERO)
    assert left == R(2000, 1000, {"hugepages-2Mi": 0, "hugepages-1Gi": 0})


RESOURCES_NAME_ZERO = [
    (R(), R(), []),
    (R(), R(4000, 2000, {S1: 1000, HP: 2000}), []),
    (R(4000, 2000, {S1: 1000, HP: 2000}), R(), ["cpu", "memory", S1, HP]),
    (R(4000, 4000, {S1: 1000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), []),
    (R(4000, 8000, {S1: 1000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), []),
    (R(4000, 4000, {S1: 4000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), []),
    (R(4000, 4000, {S1: 5000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), [S1]),
    (R(9000, 4000, {S1: 1000, HP: 2000}), R(8000, 8000, {S1: 4000, HP: 5000}), ["cpu"]),
]
RESOURCES_NAME_INFINITY = [
    (R(), R(), []),
    (R(), R(4000, 2000, {S1: 1000, HP: 2000}), []),
    (R(4000, 2000, {S1: 1000, HP: 2000}), R(), ["cpu", "memory"]),
]


@pytest.mark.parametrize(
    ("left", "right", "default", "names"),
    cases(
        "TestResource_LessEqualResource",
        [(*c[:2], ZERO, c[2]) for c in RESOURCES_NAME_ZERO],
        "zero",
    )
    + cases(
        "TestResource_LessEqualResource",
        [(*c[:2], INFINITY, c[2]) for c in RESOURCES_NAME_INFINITY],
        "infinity",
    ),
)
def test_less_equal_with_resources_name(
    left: Resource, right: Resource, default: DimensionDefault, names: list[str]
) -> None:
    ok, got = left.less_equal_with_resources_name(right, default)
    assert (ok, sorted(got)) == (not names, sorted(names))


@pytest.mark.parametrize(
    ("child", "parent", "exceeds", "names"),
    cases(
        "TestResource_GreaterPartly",
        [
            (R(0, 0, {"vendor.com/gpu-x": 0}), R(), False, []),  # missing parent key, zero
            (R(0, 0, {"vendor.com/gpu-x": 8}), R(), False, []),  # missing parent key, positive
            (
                R(0, 0, {"vendor.com/gpu-x": 8}),
                R(0, 0, {"vendor.com/gpu-x": 4}),
                True,
                ["vendor.com/gpu-x"],
            ),
            (R(8000), R(4000), True, ["cpu"]),  # cpu exceeds parent
        ],
    ),
)
def test_greater_partly(child: Resource, parent: Resource, exceeds: bool, names: list[str]) -> None:
    # Upstream's GreaterPartly returns (bool, names); ours splits it in two.
    assert child.greater_partly(parent, INFINITY) is exceeds
    ok, got = child.greater_partly_with_resources_name(parent, INFINITY)
    assert (ok, sorted(got)) == (exceeds, sorted(names))


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    cases(
        "TestIntersection",
        [
            (R(1000), R(0, 2048), []),  # no intersection
            (R(), R(0, 2048, {"fpga": 2}), []),  # left is empty
            (R(0, 2048, {"fpga": 2}), R(), []),  # right is empty
            (R(0, 0, {"fpga": 2, GPU: 1}), R(0, 0, {"fpga": 1, "rdma": 1}), ["fpga"]),
            (R(0.2, 0, {"fpga": 0, GPU: 1}), R(1, 0, {"fpga": 2, GPU: 2}), ["cpu", GPU]),
        ],
    ),
)
def test_intersection(left: Resource, right: Resource, expected: list[str]) -> None:
    assert sorted(intersection(left, right)) == sorted(expected)


@pytest.mark.parametrize(
    ("left", "right", "expected"),
    cases(
        "TestIntersectionWithIgnoredScalarResources",
        [
            (R(1000), R(0, 2048), []),
            (R(), R(), []),
            (R(0, 0, {"pods": 2, GPU: 1}), R(0, 0, {"pods": 1, GPU: 2}), [GPU]),
            (R(0, 0, {"pods": 2}), R(0, 0, {"pods": 1}), []),
        ],
    ),
)
def test_intersection_with_ignored_scalar_resources(
    left: Resource, right: Resource, expected: list[str]
) -> None:
    assert sorted(intersection_with_ignored_scalar_resources(left, right)) == sorted(expected)


@pytest.mark.parametrize(
    ("resource", "expected"),
    cases(
        "TestResourceString",
        [
            (R(2000, 4096), "cpu 2000.00, memory 4096.00"),
            (R(MAX_FLOAT, MAX_FLOAT), "cpu maxFloat, memory maxFloat"),
            (
                R(1000, 2048, {GPU: MAX_INT_AS_FLOAT}),
                "cpu 1000.00, memory 2048.00, nvidia.com/gpu maxInt",
            ),
            (
                R(MAX_FLOAT, MAX_FLOAT, {GPU: MAX_INT_AS_FLOAT}),
                "cpu maxFloat, memory maxFloat, nvidia.com/gpu maxInt",
            ),
        ],
    ),
)
def test_resource_string(resource: Resource, expected: str) -> None:
    assert str(resource) == expected
