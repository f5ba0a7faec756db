"""Left-to-right float sums of a column of values, in C where that gives the same float.

Python's ``start + v0 + v1 + ...`` rounds after every addition, so in general only the same
additions in the same order give the same float. When every value and ``start`` are whole,
non-negative numbers and the total stays below 2**53, every partial sum is an integer a
float64 holds exactly: no addition rounds, and ``math.fsum`` (the exactly rounded sum) gives
that same float. ``JobInfo.task_sums`` sums a job's 100 tasks' requests this way, the column
read by ``map`` and ``operator.attrgetter`` rather than a Python loop over the tasks.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

# Below this every non-negative integer, and every sum of such, is exact in a float64.
_EXACT_BELOW: Final = 2.0**53


def all_whole(values: Sequence[float]) -> bool:
    """``all(value >= 0.0 and value % 1.0 == 0.0 for value in values)`` (NaN and infinities
    are not whole), in C for a column of floats."""
    try:
        if not all(map(float.is_integer, values)):
            return False
    except TypeError:
        # An int (or another kind of number) among them: asked one by one.
        return all(value >= 0.0 and value % 1.0 == 0.0 for value in values)
    return not values or min(values) >= 0.0


def column_sum(start: float, values: Sequence[float], whole: bool) -> float:
    """``start + values[0] + values[1] + ...`` added left to right, as floats add; ``whole``
    is ``all_whole(values)``."""
    # (A start of -0.0 stays -0.0 when only zeros are added, which fsum does not keep.)
    if whole and start >= 0.0 and start % 1.0 == 0.0 and math.copysign(1.0, start) > 0.0:
        total = math.fsum(values) + start
        # A total below 2**53 means the exact sum is (rounding never crosses a float), so no
        # partial sum rounded either way.
        if total < _EXACT_BELOW:
            return total
    for value in values:
        start += value
    return start
