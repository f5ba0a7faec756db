"""Watch events held back while a session runs, applied to the cache between sessions.

The live scheduler decodes watch events on its I/O thread and applies them to the
``SchedulerCache`` there, while the scheduling thread runs sessions: both share one GIL and the
cache lock. Under a busy watch stream (pods relabelled, node heartbeats) applying an event, its
Python object building and the node's accounting, took GIL time from every session, and the
scheduling thread's own lock takes (the snapshot, every bind) waited behind an event the I/O
thread was preempted in the middle of; while the snapshot held the lock, the whole I/O loop
(binds included) stood still in ``apply_event`` (``bench watch-load`` measures it).

So events pass through this gate. Between sessions it applies each at once, on the I/O thread,
as before. While a session runs (``hold()`` to ``release()``) it only queues them: the I/O
thread decodes and queues, never waits for the cache lock, and the session's thread keeps the
GIL for the session. ``hold()`` first applies whatever is still queued, on the scheduling
thread, so a session sees every event received before it began; ``release()`` hands the queue
back to the I/O thread, which applies it in short slices between its other work.

Deferring an event is the same as the watch delivering it a moment later, which it may always
do: the order of events is kept (one queue for every kind; one applier at a time), and the pod
feed's hold on pods whose bind is in flight is decided when the event is applied, against the
binds the session made. A session that runs so long that ``limit`` events queue up no longer
holds them: the I/O thread applies them as they come, as it did before, rather than keep an
unbounded backlog alive.
"""

from __future__ import annotations

import asyncio
import collections
import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import Any, Final

log = logging.getLogger(__name__)

EventSink = Callable[[str, str, Mapping[str, Any]], None]
Queued = tuple[EventSink, str, str, Mapping[str, Any]]

# Seconds of applying per turn of the I/O loop while it drains the queue: binds, watches and
# probes are served between slices.
SLICE_SECONDS: Final = 0.005


class EventGate:
    """The gate in front of the cache's event sinks (see the module docstring)."""

    def __init__(
        self, *, limit: int = 20_000, clock: Callable[[], float] = time.perf_counter
    ) -> None:
        self.limit = limit
        self.clock = clock
        # Set once the I/O loop runs (the gate is made before it): where the queue is drained.
        self.loop: asyncio.AbstractEventLoop | None = None
        self._queue: collections.deque[Queued] = collections.deque()
        # One applier at a time, so queued events are applied in the order they came.
        self._applying = threading.Lock()
        self._holding = False
        self._draining = False
        self.deferred = 0
        self.overflowed = 0

    # ---- the I/O thread

    def wrap(self, sink: EventSink) -> EventSink:
        """``sink`` behind the gate."""

        def gated(kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
            self.submit(sink, kind, event_type, obj)

        return gated

    def submit(self, sink: EventSink, kind: str, event_type: str, obj: Mapping[str, Any]) -> None:
        if not self._holding and not self._queue:
            with self._applying:
                sink(kind, event_type, obj)
            return
        # Behind a queue (held, or still draining): after it, to keep the order.
        self._queue.append((sink, kind, event_type, obj))
        self.deferred += 1
        if len(self._queue) > self.limit and self._holding:
            # The session outlasts what is worth keeping back: apply as the events come.
            self.overflowed += 1
            self._schedule_drain()

    def _schedule_drain(self) -> None:
        if self._draining or self.loop is None:
            return
        self._draining = True
        try:
            self.loop.call_soon_threadsafe(self._drain_slice)
        except RuntimeError:  # the loop closed (shutting down): nothing left to apply to
            self._draining = False

    def _drain_slice(self) -> None:
        """Apply queued events for about ``SLICE_SECONDS``; come back on the next turn."""
        self._draining = False
        deadline = self.clock() + SLICE_SECONDS
        with self._applying:
            while self._queue and (not self._holding or len(self._queue) > self.limit // 2):
                self._apply_one()
                if self.clock() > deadline:
                    break
        if self._queue and (not self._holding or len(self._queue) > self.limit // 2):
            self._schedule_drain()

    def _apply_one(self) -> None:
        sink, kind, event_type, obj = self._queue.popleft()
        try:
            sink(kind, event_type, obj)
        except Exception:
            # As the informer does: one object the cache cannot take must not stop the rest.
            meta = obj.get("metadata") or {}
            log.exception(
                "%s %s %s/%s: not applied to the cache",
                kind,
                event_type,
                meta.get("namespace") or "",
                meta.get("name", ""),
            )

    # ---- the scheduling thread

    def hold(self) -> int:
        """A session begins: apply what is still queued, then queue everything until
        ``release()``. Returns how many events were applied here."""
        self._holding = True
        applied = 0
        with self._applying:
            while self._queue:
                self._apply_one()
                applied += 1
        return applied

    def release(self) -> None:
        """The session ended: the I/O thread applies the queue and then each event again."""
        self._holding = False
        if self._queue:
            self._schedule_drain()

    @property
    def queued(self) -> int:
        return len(self._queue)

    @property
    def holding(self) -> bool:
        return self._holding
