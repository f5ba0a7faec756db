"""Kubernetes resource quantities ("500m", "1Gi", "2e3") parsed exactly, converted once.

Parsing follows ``k8s.io/apimachinery/pkg/api/resource.ParseQuantity``: the value is exact, then
rounded *away from zero* to a whole number of nano-units (``"0.1n"`` is ``1n``), as the API server
stores it. ``quantity_value`` and ``quantity_milli_value`` are ``Quantity.Value()`` and
``MilliValue()``: they also round away from zero (``"0.1"`` -> 1, ``"-0.5"`` -> -1). The scheduler
then works on plain floats. Formatting back produces the canonical spelling the API server and
kubectl print (``Quantity.String()``).

Deliberate difference: where Kubernetes would silently wrap or zero a value that does not fit an
int64 (``"100E"``, ``"1e30"``, ``"16Ei"``), these functions raise ``QuantityError``.
"""

from __future__ import annotations

import functools
import math
import re
from decimal import (
    MAX_EMAX,
    MAX_PREC,
    MIN_EMIN,
    ROUND_UP,
    Context,
    Decimal,
    DecimalException,
    localcontext,
)
from typing import Final

_BINARY_SUFFIXES: Final = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_DECIMAL_SUFFIXES: Final = {
    "n": -9,
    "u": -6,
    "m": -3,
    "": 0,
    "k": 3,
    "M": 6,
    "G": 9,
    "T": 12,
    "P": 15,
    "E": 18,
}
_DECIMAL_SUFFIX_OF_EXPONENT: Final = {exponent: s for s, exponent in _DECIMAL_SUFFIXES.items()}
_BINARY_SUFFIX_OF_POWER: Final = {0: "", **{p // 10: s for s, p in _BINARY_SUFFIXES.items()}}
# ASCII digits only: ``\d`` would also admit other scripts' digits, which Kubernetes rejects.
_QUANTITY_RE: Final = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<exponent>[eE][+-]?[0-9]+)|(?P<suffix>Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)"
)
_NANO: Final = Decimal("1e-9")
# Exact arithmetic: enough precision that no product is rounded, exponents as Kubernetes allows.
_EXACT: Final = Context(prec=MAX_PREC, Emax=MAX_EMAX, Emin=MIN_EMIN)
# Far beyond anything an int64 can count, even in milli-units; refused rather than computed.
_MAX_ADJUSTED_EXPONENT: Final = 30
INT64_MAX: Final = 2**63 - 1
INT64_MIN: Final = -(2**63)


class QuantityError(ValueError):
    """A string that is not a Kubernetes quantity; the message names the value."""


def parse_quantity(value: str | int | float | Decimal) -> Decimal:
    """The value of a Kubernetes quantity (``"1Gi"`` -> 1073741824), exact to the nano-unit."""
    if isinstance(value, bool):
        raise QuantityError(f"invalid quantity {value!r}: expected a number or a quantity string")
    if isinstance(value, int):
        return Decimal(value)
    if isinstance(value, float | Decimal):
        if not (math.isfinite(value) if isinstance(value, float) else value.is_finite()):
            raise QuantityError(f"invalid quantity {value!r}: not a finite number")
        return _round_to_nano(Decimal(repr(value)) if isinstance(value, float) else value, value)
    if not isinstance(value, str):
        raise QuantityError(f"invalid quantity {value!r}: expected a number or a quantity string")
    return _parse_quantity_text(value)


# A cluster repeats a handful of quantity strings ("1", "500m", "1Gi") over tens of thousands
# of pods; a Decimal is immutable, so one parse per distinct string serves them all.
@functools.lru_cache(maxsize=4096)
def _parse_quantity_text(value: str) -> Decimal:
    # The API server trims surrounding whitespace when it decodes a quantity (UnmarshalJSON).
    match = _QUANTITY_RE.fullmatch(value.strip())
    if match is None:
        raise QuantityError(f"invalid quantity {value!r}")
    number = Decimal(match["number"])
    if number.is_zero():
        return Decimal(0)
    try:
        with localcontext(_EXACT):
            if match["exponent"]:
                exact = number.scaleb(int(match["exponent"][1:]))
            elif match["suffix"] in _BINARY_SUFFIXES:
                exact = number * (2 ** _BINARY_SUFFIXES[match["suffix"]])
            else:
                exact = number.scaleb(_DECIMAL_SUFFIXES[match["suffix"] or ""])
    except DecimalException as error:  # pragma: no cover - the exact context does not trap
        raise QuantityError(f"invalid quantity {value!r}") from error
    return _round_to_nano(exact, value)


def _round_to_nano(exact: Decimal, original: object) -> Decimal:
    if exact.is_zero():
        return Decimal(0)
    if exact.adjusted() > _MAX_ADJUSTED_EXPONENT:
        raise QuantityError(
            f"invalid quantity {original!r}: out of range (at most 10^30; Kubernetes counts"
            " resources in an int64)"
        )
    if exact.adjusted() < -10:
        # Below one nano-unit: Kubernetes rounds any non-zero amount up to the smallest one.
        return _NANO.copy_sign(exact)
    if exact.as_tuple().exponent >= -9:  # type: ignore[operator]  # finite: an int
        return exact
    with localcontext(_EXACT):
        return exact.quantize(_NANO, rounding=ROUND_UP)


def _to_int64(scaled: Decimal, original: object) -> int:
    with localcontext(_EXACT):
        whole = int(scaled.to_integral_value(rounding=ROUND_UP))
    if not INT64_MIN <= whole <= INT64_MAX:
        raise QuantityError(
            f"invalid quantity {original!r}: out of range (Kubernetes counts it in an int64,"
            " of milli-units for cpu)"
        )
    return whole


def quantity_value(value: str | int | float | Decimal) -> int:
    """``Quantity.Value()``: the integer value, rounded away from zero."""
    if type(value) is str:
        return _text_value(value)
    return _to_int64(parse_quantity(value), value)


def quantity_milli_value(value: str | int | float | Decimal) -> int:
    """``Quantity.MilliValue()``: the value in thousandths, rounded away from zero."""
    if type(value) is str:
        return _text_milli_value(value)
    return _to_int64(parse_quantity(value).scaleb(3), value)


# Remembered per spelling, as the parse is (60k pods' requests at 5k nodes); an error is
# raised again on each call (lru_cache keeps only answers).
@functools.lru_cache(maxsize=4096)
def _text_value(value: str) -> int:
    return _to_int64(parse_quantity(value), value)


@functools.lru_cache(maxsize=4096)
def _text_milli_value(value: str) -> int:
    return _to_int64(parse_quantity(value).scaleb(3), value)


# ---------------------------------------------------------------------------- formatting


def go_int64(amount: float) -> int:
    """Go's ``int64(f)`` as Volcano's ``ConvertRes2ResList`` applies it: truncation toward zero.

    Out of range (an "infinite" resource holds ``math.MaxFloat64``) saturates at the int64 bounds;
    Go leaves that conversion implementation-defined (amd64 yields the minimum int64)."""
    if math.isnan(amount):
        raise ValueError("cannot format NaN as a quantity")
    if amount >= 2.0**63:
        return INT64_MAX
    if amount < -(2.0**63):
        return INT64_MIN
    return int(amount)


def _remove_factors(value: int, base: int) -> tuple[int, int]:
    """``removeInt64Factors``: strip factors of ``base`` from ``value``, counting them."""
    negative = value < 0
    result = -value if negative else value
    times = 0
    while result >= base and result % base == 0:
        result //= base
        times += 1
    return (-result if negative else result), times


def format_decimal_si(unscaled: int, scale: int = 0) -> str:
    """The canonical DecimalSI spelling of ``unscaled * 10**scale`` (``int64Amount`` with
    ``AsCanonicalBytes``): the largest exponent that is a multiple of 3 and keeps the mantissa
    whole, e.g. ``(1500, -3) -> "1500m"``, ``(2000, -3) -> "2"``, ``(10**6, -3) -> "1k"``."""
    if unscaled == 0:
        return "0"
    mantissa, times = _remove_factors(unscaled, 10)
    exponent = scale + times
    remainder = exponent % 3
    mantissa *= 10**remainder
    exponent -= remainder
    suffix = _DECIMAL_SUFFIX_OF_EXPONENT.get(exponent)
    if suffix is None:  # pragma: no cover - no int64 at scale -3 or 0 reaches beyond "E"
        return f"{mantissa}e{exponent}"
    return f"{mantissa}{suffix}"


def format_binary_si(amount: int) -> str:
    """The canonical BinarySI spelling of a whole amount: under 1024 in magnitude as DecimalSI
    (``1000 -> "1k"``), else the largest power of 1024 that divides it (``3 * 2**30 -> "3Gi"``,
    ``1536 -> "1536"``, ``10**9 -> "1000000000"``)."""
    if -1024 < amount < 1024:
        return format_decimal_si(amount)
    mantissa, times = _remove_factors(amount, 1024)
    return f"{mantissa}{_BINARY_SUFFIX_OF_POWER[times]}"


def format_milli(milli: float) -> str:
    """``resource.NewMilliQuantity(int64(milli), DecimalSI).String()``:
    ``1500 -> "1500m"``, ``2000 -> "2"``."""
    return format_decimal_si(go_int64(milli), -3)


def format_bytes(amount: float) -> str:
    """``resource.NewQuantity(int64(amount), BinarySI).String()``:
    ``1073741824 -> "1Gi"``, ``1536 -> "1536"``."""
    return format_binary_si(go_int64(amount))


def format_count(amount: float) -> str:
    """``resource.NewQuantity(int64(amount), DecimalSI).String()`` (``pods``):
    ``110 -> "110"``, ``1000 -> "1k"``."""
    return format_decimal_si(go_int64(amount))
