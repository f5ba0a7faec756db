"""Go's ``time.ParseDuration`` ("90s", "1h30m", "-1.5m", "250ms", "0"), in exact integer
nanoseconds. The one parser behind every duration volcano-py reads: lifecycle policy timeouts,
``metav1.Duration`` fields, command-line durations, plugin arguments, cron's ``@every``."""

from __future__ import annotations

import re
from decimal import Decimal
from typing import Final

NANOS_PER_SECOND: Final = 1_000_000_000
_NANOS_PER_UNIT: Final = {
    "ns": 1,
    "us": 1_000,
    "µs": 1_000,  # micro sign
    "μs": 1_000,  # Greek mu, which Go accepts too
    "ms": 1_000_000,
    "s": NANOS_PER_SECOND,
    "m": 60 * NANOS_PER_SECOND,
    "h": 3600 * NANOS_PER_SECOND,
}
_TERM: Final = re.compile(r"(\d+\.?\d*|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


class DurationError(ValueError):
    """Not a Go duration; the message names the text."""


def parse_go_duration_nanos(text: str) -> int:
    """The duration in nanoseconds; DurationError when Go would refuse it."""
    body, sign = text, 1
    if body[:1] in ("+", "-"):
        sign, body = (-1 if body[0] == "-" else 1), body[1:]
    if body == "0":
        return 0
    if not body:
        raise DurationError(f"invalid duration {text!r}")
    total, position = Decimal(0), 0
    while position < len(body):
        match = _TERM.match(body, position)
        if match is None:
            raise DurationError(
                f"invalid duration {text!r}: expected a number and a unit "
                "(ns, us, ms, s, m, h), e.g. 90s or 1h30m"
            )
        total += Decimal(match[1]) * _NANOS_PER_UNIT[match[2]]
        position = match.end()
    return sign * int(total)


def parse_go_duration_seconds(text: str) -> float:
    """The duration in seconds; DurationError when Go would refuse it."""
    return parse_go_duration_nanos(text) / NANOS_PER_SECOND
