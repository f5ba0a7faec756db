"""Histogram observations taken in bulk: what ``Histogram.observe`` makes of each value in turn,
applied at once.

A run of like gang members observes four histograms per member (the predicate and scoring
stages, the job's end-to-end latency, the assumed latency at commit); ``observe`` takes two
locks and scans the bucket bounds for each. Kept in a list and applied by ``flush``, the
sum gets the same float additions in the same order and each bucket the same count (a bucket
holds whole numbers, so one ``inc(n)`` equals ``n`` ``inc(1)``), so the exposition is the same.
"""

from __future__ import annotations

from bisect import bisect_left

from prometheus_client import Histogram

# Observations are kept and applied in bulk (False: ``Histogram.observe`` per value at once,
# the tests' reference).
_BATCHED = True


class ObservationBatch:
    """Values for one histogram child (a labelled series or a label-less histogram), kept in
    order until ``flush``. Holders flush before anyone reads the histogram for a decision
    (nobody does: it is only exposed), at the latest at the end of their allocation attempt."""

    __slots__ = ("_histogram", "_values")

    def __init__(self, histogram: Histogram) -> None:
        self._histogram = histogram
        self._values: list[float] = []

    def observe(self, value: float) -> None:
        if _BATCHED:
            self._values.append(value)
        else:
            self._histogram.observe(value)

    def flush(self) -> None:
        values = self._values
        if not values:
            return
        self._values = []
        observe_all(self._histogram, values)


def observe_all(histogram: Histogram, values: list[float]) -> None:
    """``histogram.observe(value)`` for each of ``values``, in order."""
    # A labelled parent refuses, as ``observe`` does (prometheus_client leaves it untyped).
    histogram._raise_if_not_observable()  # type: ignore[no-untyped-call]
    bounds: list[float] = histogram._upper_bounds
    buckets = histogram._buckets
    total = histogram._sum.get()
    counts: dict[int, int] = {}
    for value in values:
        total += value
        # ``observe``: the first bucket whose bound is not below the value (none for NaN).
        index = bisect_left(bounds, value)
        if index < len(bounds) and value <= bounds[index]:
            counts[index] = counts.get(index, 0) + 1
    histogram._sum.set(total)
    for index, count in counts.items():
        buckets[index].inc(count)
