"""Go's ``time.Duration`` text (lifecycle policy timeouts, ``runningDuration``) and RFC 3339
timestamps, in exact integer nanoseconds so a printed duration is the one Go would print."""

from __future__ import annotations

from datetime import datetime
from typing import Final

from volcano_py.api.go_duration import NANOS_PER_SECOND, parse_go_duration_nanos

SECOND: Final = NANOS_PER_SECOND


def parse_go_duration(value: str) -> int:
    """``time.ParseDuration``: ``"1h30m"`` -> nanoseconds."""
    return parse_go_duration_nanos(value)


def _fraction(value: int, scale: int) -> str:
    whole, rest = divmod(value, scale)
    if not rest:
        return str(whole)
    digits = str(rest).rjust(len(str(scale)) - 1, "0").rstrip("0")
    return f"{whole}.{digits}"


def format_go_duration(nanos: int) -> str:
    """``time.Duration.String()``: ``90s`` -> ``"1m30s"``, ``1h`` -> ``"1h0m0s"``."""
    if nanos == 0:
        return "0s"
    sign = "-" if nanos < 0 else ""
    left = abs(nanos)
    if left < SECOND:
        if left < 1_000:
            return f"{sign}{left}ns"
        if left < 1_000_000:
            return f"{sign}{_fraction(left, 1_000)}µs"
        return f"{sign}{_fraction(left, 1_000_000)}ms"
    hours, left = divmod(left, 3_600 * SECOND)
    minutes, left = divmod(left, 60 * SECOND)
    text = f"{_fraction(left, SECOND)}s"
    if hours or minutes:
        text = f"{minutes}m{text}"
    if hours:
        text = f"{hours}h{text}"
    return sign + text


def parse_timestamp(value: str) -> datetime | None:
    """An RFC 3339 timestamp (``metav1.Time``), or None when absent or malformed."""
    if not value:
        return None
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def nanos_between(start: str, end: str) -> int:
    """``end - start`` in nanoseconds; 0 when either is missing (Go's zero time arithmetic would
    give nonsense there, and nobody reads it)."""
    begin, finish = parse_timestamp(start), parse_timestamp(end)
    if begin is None or finish is None:
        return 0
    delta = finish - begin
    return (delta.days * 86_400 + delta.seconds) * SECOND + delta.microseconds * 1_000
