"""``runtime/heap_trim``: the freed C heap given back to the system, now and then."""

from __future__ import annotations

import asyncio
import sys
import threading

import pytest

from volcano_py.runtime import heap_trim

GLIBC = sys.platform == "linux" and heap_trim.MALLOC_TRIM is not None


def rss_kib() -> int:
    with open("/proc/self/status") as status:
        return next(int(line.split()[1]) for line in status if line.startswith("VmRSS:"))


@pytest.mark.skipif(not GLIBC, reason="malloc_trim is glibc's")
def test_a_burst_freed_in_another_thread_goes_back_to_the_system() -> None:
    # As in the live processes: big objects (C heap, not pymalloc) made by a thread other than
    # the main one land in that thread's arena, which glibc keeps after they are freed.
    burst: list[bytes] = []
    thread = threading.Thread(target=lambda: burst.extend(bytes(4096) for _ in range(20_000)))
    thread.start()
    thread.join()
    # One in 20 kept: glibc can no longer shrink the arena from its top, and keeps the rest.
    kept = burst[::20]
    burst.clear()
    before = rss_kib()
    heap_trim.trim_heap()
    assert len(kept) == 1000
    assert rss_kib() < before - 40_000  # most of the 80 MB burst


def test_without_malloc_trim_nothing_is_trimmed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap_trim, "MALLOC_TRIM", None)
    assert heap_trim.trim_heap() is False
    # and the periodic task ends at once instead of waking up for nothing
    asyncio.run(asyncio.wait_for(heap_trim.trim_heap_periodically(0.01), 5))


def test_the_periodic_task_trims_until_cancelled(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    monkeypatch.setattr(heap_trim, "MALLOC_TRIM", lambda pad: calls.append(pad) or 1)

    async def run_a_while() -> None:
        task = asyncio.create_task(heap_trim.trim_heap_periodically(0.001))
        while len(calls) < 3:
            await asyncio.sleep(0.001)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(run_a_while())
    assert calls[:3] == [0, 0, 0]
