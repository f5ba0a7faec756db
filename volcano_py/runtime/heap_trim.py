"""Give the C heap's free pages back to the system now and then (glibc only).

Objects larger than 512 bytes (a pod's dict tables, JSON bodies, TLS buffers) come from the C
allocator, and glibc keeps what is freed for reuse: a burst of pods created and deleted leaves
free memory in its arenas (one per thread that allocated), counted in the RSS. ``bench churn``
measured it (docs/benchmarks.md): after 15 rounds of 5,100 pods the scheduler's glibc heap held
70 MB for 55 MB in use, the controllers' 38 MB for 26 MB. ``malloc_trim(0)`` releases the free
pages inside every arena (``madvise``) without moving anything; the next burst gets its pages
back from the kernel. Go's runtime returns such memory by itself; a Python process has to ask.
It does nothing for pymalloc's arenas (small objects), which CPython frees when they empty.
Elsewhere (musl, macOS) there is no such call and this does nothing.
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
