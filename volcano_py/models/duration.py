"""Go ``time.Duration`` strings ("90s", "1h30m", "250ms"), as ``metav1.Duration`` fields
(``runningEstimate``, a lifecycle policy's ``timeout``) carry them."""

from __future__ import annotations

import re
from typing import Final

_UNIT_SECONDS: Final = {
    "ns": 1e-9,
    "us": 1e-6,
    "µs": 1e-6,
    "μs": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "m": 60.0,
    "h": 3600.0,
}
_TERM: Final = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)")


class DurationError(ValueError):
    """Not a Go duration; the message names the value."""


def parse_duration(text: str) -> float:
    """The duration in seconds, parsed the way Go's ``time.ParseDuration`` does."""
    body = text
    sign = 1.0
    if body and body[0] in "+-":
        sign = -1.0 if body[0] == "-" else 1.0
        body = body[1:]
    if body == "0":
        return 0.0
    if not body:
        raise DurationError(f"invalid duration {text!r}")
    total = 0.0
    position = 0
    while position < len(body):
        match = _TERM.match(body, position)
        if match is None:
            raise DurationError(
                f"invalid duration {text!r}: expected a number and a unit "
                "(ns, us, ms, s, m, h), e.g. 90s or 1h30m"
            )
        total += float(match[1]) * _UNIT_SECONDS[match[2]]
        position = match.end()
    return sign * total
