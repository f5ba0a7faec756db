"""Kubernetes resource quantities ("500m", "1Gi", "2e3") parsed exactly, converted once.

Parsing goes through Decimal so that "0.1" or "1.5Gi" round the way the API server rounds
(``Quantity.Value()`` and ``MilliValue()`` round *up* to the next integer); the scheduler then
works on plain floats. Formatting back produces the canonical spelling kubectl prints.
"""

from __future__ import annotations

import re
from decimal import ROUND_CEILING, Decimal, InvalidOperation
from typing import Final

_BINARY_SUFFIXES: Final = {
    "Ki": Decimal(2) ** 10,
    "Mi": Decimal(2) ** 20,
    "Gi": Decimal(2) ** 30,
    "Ti": Decimal(2) ** 40,
    "Pi": Decimal(2) ** 50,
    "Ei": Decimal(2) ** 60,
}
_DECIMAL_SUFFIXES: Final = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}
_QUANTITY_RE: Final = re.compile(
    r"^(?P<number>[+-]?(?:\d+(?:\.\d*)?|\.\d+))"
    r"(?:(?P<exponent>[eE][+-]?\d+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)$"
)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message names the value."""


def parse_quantity(value: str | int | float) -> Decimal:
    """The exact value of a Kubernetes quantity (``"1Gi"`` -> 1073741824)."""
    if isinstance(value, bool):
        raise QuantityError(f"invalid quantity {value!r}: expected a number or a quantity string")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float):
        return Decimal(repr(value))
    if not isinstance(value, str):
        raise QuantityError(f"invalid quantity {value!r}: expected a number or a quantity string")
    match = _QUANTITY_RE.match(value.strip())
    if match is None:
        raise QuantityError(f"invalid quantity {value!r}")
    try:
        number = Decimal(match["number"])
    except InvalidOperation as error:  # pragma: no cover - the regex admits only valid numbers
        raise QuantityError(f"invalid quantity {value!r}") from error
    if match["exponent"]:
        return number * (Decimal(10) ** int(match["exponent"][1:]))
    suffix = match["suffix"] or ""
    if suffix in _BINARY_SUFFIXES:
        return number * _BINARY_SUFFIXES[suffix]
    return number * _DECIMAL_SUFFIXES[suffix]


def _ceil(value: Decimal) -> int:
    return int(value.to_integral_value(rounding=ROUND_CEILING))


def quantity_value(value: str | int | float) -> int:
    """``Quantity.Value()``: the integer value, rounded up."""
    return _ceil(parse_quantity(value))


def quantity_milli_value(value: str | int | float) -> int:
    """``Quantity.MilliValue()``: the value in thousandths, rounded up."""
    return _ceil(parse_quantity(value) * 1000)


def format_milli(milli: float) -> str:
    """A milli-valued amount as kubectl prints it: ``1500 -> "1500m"``, ``2000 -> "2"``."""
    whole = int(milli)
    if whole % 1000 == 0:
        return str(whole // 1000)
    return f"{whole}m"


def format_bytes(amount: float) -> str:
    """A whole amount as the API server prints a binary-SI quantity: ``1073741824 -> "1Gi"``,
    and in decimal SI when the binary spelling would not be exact (``10**9 -> "1G"``)."""
    whole = int(amount)
    if whole == 0:
        return "0"
    for suffix in ("Ei", "Pi", "Ti", "Gi", "Mi", "Ki"):
        unit = int(_BINARY_SUFFIXES[suffix])
        if whole % unit == 0:
            return f"{whole // unit}{suffix}"
    for suffix in ("E", "P", "T", "G", "M", "k"):
        unit = int(_DECIMAL_SUFFIXES[suffix])
        if whole % unit == 0:
            return f"{whole // unit}{suffix}"
    return str(whole)


def format_count(amount: float) -> str:
    """A plain whole count (``pods``)."""
    return str(int(amount))
