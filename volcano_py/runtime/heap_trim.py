"""Give the C heap's free pages back to the system now and then (glibc only).

Objects larger than 512 bytes (a pod's dicts, JSON bodies, TLS buffers) come from the C
allocator, and glibc keeps what is freed for reuse: a burst of pods created and deleted leaves
the freed memory in its arenas, one per thread that allocated, and the process's RSS stays at
the burst's peak. ``bench churn`` measured it (docs/benchmarks.md): after 6 rounds of churn the
scheduler's glibc heap held 233 MB for 113 MB in use, and ``malloc_trim(0)`` took its RSS from
355 to 280 MiB. Go's runtime returns such memory by itself; a Python process has to ask.
``malloc_trim`` releases the free pages inside every arena (``madvise``), keeping the arenas:
nothing is moved, the next burst gets its pages back from the kernel. Elsewhere (musl,
macOS) there is no such call and this does nothing.
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import time
from collections.abc import Callable
from typing import Final

log = logging.getLogger(__name__)

# Seconds between trims: a trim walks the free chunks of every arena (about a millisecond for
# a 100 MB heap), and memory a burst freed is back with the system within this.
HEAP_TRIM_PERIOD: Final = 30.0


def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    try:
        function = ctypes.CDLL(name).malloc_trim  # CDLL: the GIL is released during the call
    except (OSError, AttributeError, TypeError):
        return None
    function.argtypes = [ctypes.c_size_t]
    function.restype = ctypes.c_int
    return function


MALLOC_TRIM: Final = _malloc_trim()


def trim_heap() -> bool:
    """``malloc_trim(0)``: True if memory was given back, False if none (or not glibc)."""
    if MALLOC_TRIM is None:
        return False
    return bool(MALLOC_TRIM(0))


async def trim_heap_periodically(period: float = HEAP_TRIM_PERIOD) -> None:
    """Until cancelled: `trim_heap` every ``period`` seconds."""
    if MALLOC_TRIM is None:
        log.debug("no malloc_trim in this C library: the heap is not trimmed")
        return
    while True:
        await asyncio.sleep(period)
        started = time.perf_counter()
        released = trim_heap()
        log.debug(
            "heap trim: %s in %.1f ms",
            "memory released" if released else "nothing to release",
            (time.perf_counter() - started) * 1000,
        )
