"""Kubernetes quantities: every spelling ``resource.ParseQuantity`` accepts, what it rejects,
``Value()``/``MilliValue()`` rounding, and the canonical ``String()`` spelling back."""

from __future__ import annotations

from decimal import Decimal

import pytest

from volcano_py.api.quantity import (
    INT64_MAX,
    QuantityError,
    format_binary_si,
    format_bytes,
    format_count,
    format_decimal_si,
    format_milli,
    parse_quantity,
    quantity_milli_value,
    quantity_value,
)
from volcano_py.api.resource import MAX_FLOAT, Resource, is_scalar_resource_name

Ki, Mi, Gi = 2**10, 2**20, 2**30


@pytest.mark.parametrize(
    ("spelling", "exact", "value", "milli"),
    [
        # plain numbers and signs
        ("0", "0", 0, 0),
        ("1", "1", 1, 1000),
        ("+1", "1", 1, 1000),
        ("-1", "-1", -1, -1000),
        ("007", "7", 7, 7000),
        ("-0", "0", 0, 0),
        # decimals
        ("1.5", "1.5", 2, 1500),
        (".5", "0.5", 1, 500),
        ("+.5", "0.5", 1, 500),
        ("5.", "5", 5, 5000),
        ("0.1", "0.1", 1, 100),  # Value() rounds up
        ("-0.5", "-0.5", -1, -500),  # ... away from zero
        ("-.1m", "-0.0001", -1, -1),
        # decimal SI suffixes
        ("1n", "1e-9", 1, 1),
        ("1u", "1e-6", 1, 1),
        ("500m", "0.5", 1, 500),
        ("1m", "0.001", 1, 1),
        ("1.0001m", "0.0010001", 1, 2),  # MilliValue() rounds up
        ("1k", "1000", 1000, 10**6),
        ("1M", "1e6", 10**6, 10**9),
        ("1G", "1e9", 10**9, 10**12),
        ("1T", "1e12", 10**12, 10**15),
        ("1P", "1e15", 10**15, 10**18),
        ("2.5G", "2.5e9", 25 * 10**8, 25 * 10**11),
        ("1.G", "1e9", 10**9, 10**12),  # Kubernetes' parser allows "1.G"
        # binary SI suffixes
        ("1Ki", "1024", Ki, Ki * 1000),
        ("1Mi", str(Mi), Mi, Mi * 1000),
        ("1Gi", str(Gi), Gi, Gi * 1000),
        ("1.5Gi", str(3 * Gi // 2), 3 * Gi // 2, 3 * Gi // 2 * 1000),
        ("1Ti", str(2**40), 2**40, 2**40 * 1000),
        ("1Pi", str(2**50), 2**50, 2**50 * 1000),
        ("0.5Ki", "512", 512, 512000),
        ("-1Mi", str(-Mi), -Mi, -Mi * 1000),
        # decimal exponents
        ("1e3", "1000", 1000, 10**6),
        ("1E3", "1000", 1000, 10**6),  # E followed by digits is an exponent, not exa
        ("1e+3", "1000", 1000, 10**6),
        ("1e-3", "0.001", 1, 1),
        ("1E-3", "0.001", 1, 1),
        ("2.5e2", "250", 250, 250000),
        ("-2e0", "-2", -2, -2000),
        # rounded up to whole nano-units when parsed, as the API server stores them
        ("0.1n", "1e-9", 1, 1),
        ("1e-20", "1e-9", 1, 1),
        ("1e-2000000000", "1e-9", 1, 1),
        ("1.0000000001", "1.000000001", 2, 1001),
        # Negative and finer than nano: Kubernetes' big-decimal path rounds *toward +inf* here
        # (Value() 0, MilliValue() -999), unlike its int64 path; we round away from zero always.
        ("-1.0000000001", "-1.000000001", -2, -1001),
        # surrounding whitespace is trimmed when the API server decodes a quantity
        (" 1Gi ", str(Gi), Gi, Gi * 1000),
    ],
)
def test_parse_quantity_spellings(spelling: str, exact: str, value: int, milli: int) -> None:
    assert parse_quantity(spelling) == Decimal(exact)
    assert quantity_value(spelling) == value
    assert quantity_milli_value(spelling) == milli


def test_parse_quantity_exa() -> None:
    assert parse_quantity("1E") == Decimal(10**18)
    assert quantity_value("1E") == 10**18
    assert quantity_value("7Ei") == 7 * 2**60


@pytest.mark.parametrize(
    ("number", "exact", "milli"),
    [
        (3, "3", 3000),
        (0, "0", 0),
        (-2, "-2", -2000),
        (0.5, "0.5", 500),
        (0.1, "0.1", 100),  # the float's repr, not its binary expansion
        (1e-5, "0.00001", 1),
        (Decimal("2.5"), "2.5", 2500),
    ],
)
def test_parse_quantity_numbers(number: int | float | Decimal, exact: str, milli: int) -> None:
    # YAML/JSON numbers (cpu: 2, cpu: 0.5) arrive as Python numbers.
    assert parse_quantity(number) == Decimal(exact)
    assert quantity_milli_value(number) == milli


@pytest.mark.parametrize(
    "bad",
    [
        "",
        " ",
        "abc",
        "Gi",
        "m",
        "1K",  # kilo is a lowercase k
        "1ki",
        "1KI",
        "1gi",
        "1e",  # "e" alone is no suffix
        "1e3Ki",
        "1Gi1",
        "1 Gi",
        "--1",
        "+-1",
        "1..5",
        "1.2.3",
        ".",
        "+",
        "-",
        "0x10",
        "1_000",  # Python's Decimal would accept the underscore
        "١",  # an Arabic-Indic digit: Python's \d and Decimal would accept it
        "1b",
        "1B",
        "1i",
        "1m5",
        "Infinity",
        "NaN",
    ],
)
def test_parse_quantity_rejects_with_the_value_named(bad: str) -> None:
    with pytest.raises(QuantityError) as info:
        parse_quantity(bad)
    assert repr(bad) in str(info.value)
    assert isinstance(info.value, ValueError)


@pytest.mark.parametrize(
    "bad", [float("nan"), float("inf"), float("-inf"), Decimal("NaN"), None, True, [1], {"cpu": 1}]
)
def test_parse_quantity_rejects_non_quantities(bad: object) -> None:
    with pytest.raises(QuantityError, match="invalid quantity"):
        parse_quantity(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("spelling", "function"),
    [
        ("1e2000000000", parse_quantity),
        ("1e31", parse_quantity),
        ("100E", quantity_value),  # Kubernetes' Value() overflows to 0 here
        ("8Ei", quantity_value),  # 2**63: one past int64; Kubernetes caps BinarySI at 2**63-1
        ("16Ei", quantity_value),
        ("7Ei", quantity_milli_value),  # fits as a value, not in milli-units
        ("9223372036854775808", quantity_value),
    ],
)
def test_out_of_int64_range_is_refused(spelling: str, function: object) -> None:
    # DELIBERATE DIVERGENCE: Kubernetes silently wraps or zeroes these; we refuse them.
    with pytest.raises(QuantityError, match=r"out of range|int64") as info:
        function(spelling)  # type: ignore[operator]
    assert repr(spelling) in str(info.value)


def test_int64_bounds_are_accepted() -> None:
    assert quantity_value(str(INT64_MAX)) == INT64_MAX
    assert quantity_value("-9223372036854775808") == -(2**63)
    assert quantity_milli_value("9223372036854775807m") == INT64_MAX


# ------------------------------------------------------------------ from_list errors and names


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("cpu", "1x"),
        ("memory", "lots"),
        ("pods", "1.5.0"),
        ("nvidia.com/gpu", "two"),
        ("ephemeral-storage", None),
        ("hugepages-2Mi", float("nan")),
    ],
)
def test_from_list_names_resource_and_value(name: str, bad: object) -> None:
    with pytest.raises(ValueError) as info:
        Resource.from_list({name: bad})  # type: ignore[dict-item]
    assert repr(bad) in str(info.value)
    assert repr(name) in str(info.value)


@pytest.mark.parametrize(
    ("name", "scalar"),
    [
        ("nvidia.com/gpu", True),
        ("example.com/foo_bar.baz-1", True),
        ("hugepages-2Mi", True),
        ("attachable-volumes-aws-ebs", True),
        ("kubernetes.io/batteries", True),  # prefixed native
        ("foo.kubernetes.io/bar", True),
        ("requests.nvidia.com/gpu", False),  # quota spelling, not a resource
        ("requests.cpu", False),
        ("limits.memory", False),
        ("cpu-typo", False),
        ("a/b/c", False),  # not a qualified name
        ("Example.com/gpu", False),  # the prefix must be a lowercase DNS subdomain
        ("/gpu", False),
        ("example.com/", False),
        ("example.com/-gpu", False),
        ("example.com/" + "g" * 63, True),
        ("example.com/" + "g" * 64, False),
    ],
)
def test_is_scalar_resource_name(name: str, scalar: bool) -> None:
    assert is_scalar_resource_name(name) is scalar


def test_from_list_drops_what_the_scheduler_does_not_account() -> None:
    resource = Resource.from_list(
        {
            "cpu": "1",
            "count/pods": "10",
            "requests.nvidia.com/gpu": "4",
            "limits.cpu": "2",
            "a/b/c": "1",
            "Example.com/gpu": "1",
            "nvidia.com/gpu": "1",
        }
    )
    assert resource == Resource(milli_cpu=1000, scalar_resources={"nvidia.com/gpu": 1000})


def test_from_list_units() -> None:
    resource = Resource.from_list(
        {
            "cpu": "250m",
            "memory": "1.5Gi",
            "pods": "110",
            "ephemeral-storage": "1Ki",
            "hugepages-2Mi": "4Mi",
            "nvidia.com/gpu": 2,
        }
    )
    assert resource == Resource(
        milli_cpu=250,
        memory=3 * Gi // 2,
        scalar_resources={
            "pods": 110,  # a whole count
            "ephemeral-storage": 1024 * 1000,  # milli-units
            "hugepages-2Mi": 4 * Mi * 1000,
            "nvidia.com/gpu": 2000,
        },
        max_task_num=110,
    )


# ------------------------------------------------------------------ canonical formatting


@pytest.mark.parametrize(
    ("milli", "spelling"),
    [
        (0, "0"),
        (1, "1m"),
        (500, "500m"),
        (1000, "1"),
        (1500, "1500m"),
        (2000, "2"),
        (10_000, "10"),
        (1_000_000, "1k"),
        (1_500_000, "1500"),
        (2 * 10**9, "2M"),
        (-500, "-500m"),
        (-2000, "-2"),
        (999.9, "999m"),  # Go's int64() truncates toward zero
        (-999.9, "-999m"),
        (MAX_FLOAT, "9223372036854775807m"),  # saturates (Go leaves this undefined)
    ],
)
def test_format_milli(milli: float, spelling: str) -> None:
    assert format_milli(milli) == spelling


@pytest.mark.parametrize(
    ("amount", "spelling"),
    [
        (0, "0"),
        (1, "1"),
        (512, "512"),
        (1000, "1k"),  # below 1024 BinarySI prints as DecimalSI
        (1023, "1023"),
        (1024, "1Ki"),
        (1536, "1536"),
        (3000, "3000"),  # not "3k": from 1024 up only powers of 1024 are factored out
        (10**9, "1000000000"),  # a decimal gigabyte has no BinarySI spelling
        (Mi, "1Mi"),
        (3 * Gi // 2, "1536Mi"),
        (Gi, "1Gi"),
        (5 * 2**40, "5Ti"),
        (2**50, "1Pi"),
        (2**60, "1Ei"),
        (-Gi, "-1Gi"),
        (-1000, "-1k"),
        (-1536, "-1536"),
        (1073741824.7, "1Gi"),
        (MAX_FLOAT, "9223372036854775807"),
    ],
)
def test_format_bytes(amount: float, spelling: str) -> None:
    assert format_bytes(amount) == spelling


@pytest.mark.parametrize(
    ("count", "spelling"),
    [(0, "0"), (1, "1"), (110, "110"), (1000, "1k"), (1500, "1500"), (2000, "2k")],
)
def test_format_count(count: int, spelling: str) -> None:
    assert format_count(count) == spelling


def test_format_primitives() -> None:
    assert format_decimal_si(15, 2) == "1500"
    assert format_decimal_si(1, 18) == "1E"
    assert format_decimal_si(1, -9) == "1n"
    assert format_decimal_si(12, -7) == "1200n"
    assert format_binary_si(7 * 2**60) == "7Ei"


def test_format_nan_is_refused() -> None:
    with pytest.raises(ValueError, match="NaN"):
        format_milli(float("nan"))


def test_to_list_canonical() -> None:
    resource = Resource.from_list(
        {
            "cpu": "1.5",
            "memory": "1.5Gi",
            "pods": "110",
            "nvidia.com/gpu": "2",
            "ephemeral-storage": "10Gi",
            "hugepages-2Mi": "1Gi",
            "example.com/fpga": "500m",
        }
    )
    # ConvertRes2ResList: cpu milli DecimalSI, memory BinarySI, pods whole, every other scalar
    # from milli-units as DecimalSI -- so 10Gi of ephemeral-storage comes back in plain bytes.
    assert resource.to_list() == {
        "cpu": "1500m",
        "memory": "1536Mi",
        "pods": "110",
        "nvidia.com/gpu": "2",
        "ephemeral-storage": "10737418240",
        "hugepages-2Mi": "1073741824",
        "example.com/fpga": "500m",
    }
    assert Resource.from_list(resource.to_list()) == resource


def test_to_list_empty_and_infinite() -> None:
    assert Resource().to_list() == {"cpu": "0", "memory": "0"}
    assert Resource.infinite().to_list() == {
        "cpu": "9223372036854775807m",
        "memory": "9223372036854775807",
    }
