"""The simulated clock: cycle N runs at ``--start`` + N x the schedule period.

Times inside the simulator are seconds since ``EPOCH`` (2026-01-01T00:00:00Z, the default
start), the scale ``sim.cluster.timestamp`` prints; a ``--start`` elsewhere is an offset on it.
Between two cycles the clock may jump over cycles in which nothing can change (the engine
decides which): the cycles jumped over still count, so cycle N always runs at the same time.
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass
from typing import Final

from volcano_py.sim.cluster import EPOCH

DEFAULT_START: Final = EPOCH
DEFAULT_PERIOD: Final = 1.0  # vc-scheduler's --schedule-period default
# Times computed from RFC 3339 stamps (whole seconds) and float sums: a due time within a
# nanosecond of a cycle's time is that cycle's.
_EPSILON: Final = 1e-9


class ClockError(ValueError):
    """A start time that is not RFC 3339 (the message says what was given)."""


def parse_start(text: str) -> dt.datetime:
    """An RFC 3339 time as ``--start`` takes it: a date, ``T``, a time and a zone (``Z`` or
    ``+hh:mm``); fractions of a second are kept."""
    candidate = text.strip()
    if "T" not in candidate.upper() or not (
        candidate.upper().endswith("Z") or candidate[-6:-5] in ("+", "-")
    ):
        raise ClockError(
            f"invalid RFC 3339 time {text!r}: expected e.g. 2026-01-01T00:00:00Z"
            " (a date, T, a time and a zone)"
        )
    try:
        moment = dt.datetime.fromisoformat(
            candidate[:-1] + "+00:00" if candidate[-1] in "zZ" else candidate
        )
    except ValueError as error:
        raise ClockError(f"invalid RFC 3339 time {text!r}: {error}") from None
    if moment.tzinfo is None:  # pragma: no cover - the zone check above rules it out
        raise ClockError(f"invalid RFC 3339 time {text!r}: no time zone")
    return moment.astimezone(dt.UTC)


def seconds_since_epoch(moment: dt.datetime) -> float:
    """``moment`` on the simulator's scale."""
    return (moment - EPOCH).total_seconds()


@dataclass(frozen=True, slots=True)
class SimClock:
    start: dt.datetime = DEFAULT_START
    period: float = DEFAULT_PERIOD

    @property
    def offset(self) -> float:
        """The start on the simulator's scale."""
        return seconds_since_epoch(self.start)

    def time_of_cycle(self, cycle: int) -> float:
        return self.offset + cycle * self.period

    def first_cycle_at_or_after(self, time: float) -> int:
        """The first cycle whose time is ``time`` or later (an event due then is seen then)."""
        return max(math.ceil((time - self.offset) / self.period - _EPSILON), 0)

    def last_cycle_within(self, seconds: float) -> int:
        """The last cycle at or before start + ``seconds`` (``--until`` is inclusive)."""
        return math.floor(seconds / self.period + _EPSILON)

    def datetime_at(self, time: float) -> dt.datetime:
        return EPOCH + dt.timedelta(seconds=time)

    @staticmethod
    def is_due(due: float, now: float) -> bool:
        return due <= now + _EPSILON
