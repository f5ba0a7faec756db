"""DRA's CEL selectors (``api.dra_cel``) with Kubernetes' ``device`` variable and its
``quantity``/``semver`` libraries, and the allocator's filter timeout
(``dynamicresources.filterTimeoutSeconds``)."""

from __future__ import annotations

from fractions import Fraction

import pytest

from volcano_py.api import dra
from volcano_py.api.dra_cel import (
    SelectorError,
    SemverValue,
    device_activation,
    evaluate,
    selector_problem,
)

DEVICE = device_activation(
    "gpu.example.com",
    {
        "gpu.example.com": {
            "model": "A100",
            "index": 3,
            "driverVersion": SemverValue.parse("1.2.3"),
        },
        "numa.example.com": {"node": 1},
    },
    {"gpu.example.com": {"memory": Fraction(80 * 2**30)}},
    False,
)


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ('device.driver == "gpu.example.com"', True),
        ('device.attributes["gpu.example.com"].model == "A100"', True),
        ('device.attributes["gpu.example.com"].index >= 4', False),
        ('device.attributes["numa.example.com"].node == 1', True),
        ('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', True),
        ('device.capacity["gpu.example.com"].memory.isLessThan(quantity("100Gi"))', True),
        (
            'device.attributes["gpu.example.com"].driverVersion.isGreaterThan(semver("1.10.0"))',
            False,
        ),
        ('has(device.attributes["other.example.com"].x)', False),
        ("device.allowMultipleAllocations", False),
    ],
)
def test_selectors(expression: str, expected: bool) -> None:
    assert evaluate(expression, DEVICE) is expected


def test_a_missing_attribute_is_a_runtime_error() -> None:
    with pytest.raises(SelectorError, match="CEL runtime error"):
        evaluate('device.attributes["gpu.example.com"].nope == 1', DEVICE)


def test_a_non_boolean_result_is_an_error() -> None:
    with pytest.raises(SelectorError, match="not a boolean"):
        evaluate("1 + 1", DEVICE)


def test_syntax_errors_are_named() -> None:
    assert selector_problem("device.driver ==") is not None
    assert selector_problem('device.driver == "x"') is None


def test_the_filter_timeout_stops_a_long_search() -> None:
    """Twelve devices, two of every ``numa`` value but one: eight devices on one NUMA node
    cannot be found, and the search goes through every combination unless stopped."""
    devices = [
        dra.Device(("d", "p", f"g{i}"), {"d": {"numa": i % 6}}, {}, node_name="n")
        for i in range(12)
    ]
    claim = dra.parse_claim(
        {
            "metadata": {"name": "c", "namespace": "default"},
            "spec": {
                "devices": {
                    "requests": [{"name": "r", "exactly": {"deviceClassName": "x", "count": 8}}],
                    "constraints": [{"matchAttribute": "d/numa"}],
                }
            },
        }
    )
    classes = {"x": dra.DeviceClassInfo("x", ())}
    usage = dra.DeviceUsage()
    quick = dra.Allocator(classes, dra.SelectorCache(), usage, timeout=1e-9)
    with pytest.raises(dra.AllocationTimeout, match="timed out trying to allocate devices"):
        quick.allocate([claim], devices, "n")
    patient = dra.Allocator(classes, dra.SelectorCache(), usage, timeout=0)
    assert patient.allocate([claim], devices, "n") is None
