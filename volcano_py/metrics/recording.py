"""Whether the scheduler records its per-job series and per-task observations.

A live scheduler always does (``/metrics`` serves them). ``volcano-py simulate`` serves no
``/metrics`` and reports no metric (docs/simulate.md), yet recording cost it about 5% of a
5k-node run: a labelled series looked up and set for each of 10k jobs in every session open
and close, and a histogram observation per task. It turns recording off for its run with
``recording_off``; nothing the scheduler decides reads a metric back.

What stays recorded either way: the per-queue series (a handful) and the session-wide gauges.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Final


@dataclass(slots=True)
class Recording:
    on: bool = True


RECORDING: Final = Recording()


@contextlib.contextmanager
def recording_off() -> Iterator[None]:
    """Per-job series and per-task observations are not recorded inside; as before after."""
    previous = RECORDING.on
    RECORDING.on = False
    try:
        yield
    finally:
        RECORDING.on = previous
