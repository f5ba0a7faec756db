"""Go ``time.Duration`` strings ("90s", "1h30m", "250ms"), as ``metav1.Duration`` fields
(``runningEstimate``, a lifecycle policy's ``timeout``) carry them."""

from __future__ import annotations

from volcano_py.api.go_duration import DurationError, parse_go_duration_seconds

__all__ = ["DurationError", "parse_duration"]


def parse_duration(text: str) -> float:
    """The duration in seconds, parsed the way Go's ``time.ParseDuration`` does."""
    return parse_go_duration_seconds(text)
