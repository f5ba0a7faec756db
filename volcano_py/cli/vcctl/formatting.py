"""How Go prints the values vcctl shows: ages, times, quantities, JSON maps, ``%v`` of a list.

Upstream prints with ``fmt`` on typed objects; vcctl reads raw JSON, so each helper here
reproduces what the Go value would print (``metav1.Time`` in local time, a zero time for a
missing one, a ``Quantity`` in its canonical spelling, ``json.Marshal`` of a map).
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any, Final

from volcano_py.api.quantity import (
    QuantityError,
    format_binary_si,
    format_decimal_si,
    parse_quantity,
)

GO_ZERO_TIME: Final = "0001-01-01 00:00:00 +0000 UTC"
QUANTITY_SYNTAX_ERROR: Final = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)
_BINARY_SUFFIX: Final = re.compile(r"[KMGTPE]i\s*$")
_EXPONENT: Final = re.compile(r"[0-9.][eE][+-]?[0-9]+\s*$")


def human_duration(seconds: float) -> str:
    """apimachinery's ``duration.HumanDuration`` (also upstream's ``util.HumanDuration``)."""
    whole = int(seconds)  # Go's int(d.Seconds()) truncates toward zero
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 60 * 2:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m" if rest == 0 else f"{minutes}m{rest}s"
    if minutes < 60 * 3:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h" if rest == 0 else f"{hours}h{rest}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d" if rest == 0 else f"{hours // 24}d{rest}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        return f"{hours // 24 // 365}y{(hours // 24) % 365}d"
    return f"{hours // 24 // 365}y"


def parse_time(value: Any) -> datetime | None:
    """An API timestamp (RFC 3339), or None when absent or unreadable."""
    if not isinstance(value, str) or not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def since(value: Any, now: datetime | None = None) -> str:
    """Upstream's ``translateTimestampSince``: ``<unknown>`` for a zero time, else the age."""
    stamp = parse_time(value)
    if stamp is None:
        return "<unknown>"
    current = now or datetime.now(UTC)
    return human_duration((current - stamp).total_seconds())


def go_time(value: Any) -> str:
    """``%s`` of a ``metav1.Time``: local time as Go's ``Time.String()``; the zero time when
    absent (JSON ``null`` decodes to it)."""
    stamp = parse_time(value)
    if stamp is None:
        return GO_ZERO_TIME
    return stamp.astimezone().strftime("%Y-%m-%d %H:%M:%S %z %Z")


def go_date(value: Any) -> str:
    """``Time.Format("2006-01-02")`` of a ``metav1.Time`` (local date; zero time 0001-01-01)."""
    stamp = parse_time(value)
    return "0001-01-01" if stamp is None else stamp.astimezone().strftime("%Y-%m-%d")


def go_json(value: Any) -> str:
    """``json.Marshal`` of a ``map[string]string``: sorted keys, compact, HTML-escaped."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026")):
        text = text.replace(char, escaped)
    return text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")


def go_list(values: Any) -> str:
    """``%v`` of a ``[]string``: ``[a b]``; ``[]`` when absent."""
    return "[" + " ".join(str(v) for v in values or []) + "]"


def canonical_quantity(value: Any) -> str:
    """``resource.Quantity.String()`` of a quantity as the API holds it (``"1000m"`` -> ``"1"``,
    ``"100Mi"`` stays, ``"1.5Gi"`` -> ``"1536Mi"``, ``"1e3"`` -> ``"1e3"``); ``"0"`` when
    absent. Raises QuantityError for text that is no quantity."""
    if value is None or value == "":
        return "0"
    amount = parse_quantity(value)
    text = str(value)
    if _BINARY_SUFFIX.search(text) and -1024 < amount < 1024:
        return _decimal_si(amount)
    if _BINARY_SUFFIX.search(text) and amount == amount.to_integral_value():
        return format_binary_si(int(amount))
    if _EXPONENT.search(text):
        return _decimal_exponent(amount)
    return _decimal_si(amount)


def _nano_units(amount: Decimal) -> int:
    return int(amount.scaleb(9))  # exact: parse_quantity rounds to whole nano-units


def _decimal_si(amount: Decimal) -> str:
    return format_decimal_si(_nano_units(amount), -9)


def _decimal_exponent(amount: Decimal) -> str:
    spelled = format_decimal_si(_nano_units(amount), -9)
    match = re.fullmatch(r"(-?[0-9]+)([numkMGTPE]?)", spelled)
    if match is None or not match[2]:
        return spelled
    exponent = {"n": -9, "u": -6, "m": -3, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
    return f"{match[1]}e{exponent[match[2]]}"


def resource_list(spec: str) -> dict[str, str]:
    """Upstream's ``PopulateResourceListV1``: ``cpu=1000m,memory=100Mi`` -> a ResourceList in
    canonical spelling (as the Go client would send it); ``""`` -> empty."""
    if spec == "":
        return {}
    result: dict[str, str] = {}
    for statement in spec.split(","):
        parts = statement.split("=")
        if len(parts) != 2:
            raise ValueError(f"invalid argument syntax {statement}, expected <resource>=<value>")
        try:
            result[parts[0]] = canonical_quantity(parts[1]) if parts[1] else _empty_quantity()
        except QuantityError:
            raise ValueError(QUANTITY_SYNTAX_ERROR) from None
    return result


def _empty_quantity() -> str:
    # resource.ParseQuantity("") fails with ErrFormatWrong, as the regular expression says.
    raise QuantityError("empty")
