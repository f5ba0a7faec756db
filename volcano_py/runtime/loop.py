"""The scheduling loop's thread: one session per ``--schedule-period``, timed into Volcano's
latency metrics.

As Volcano's ``wait.Until(runOnce, period)``, the period is the pause *after* a cycle, so a long
cycle never overlaps the next. The loop asks ``may_schedule()`` before each cycle: the live
scheduler answers "the cache has listed every kind once and, with leader election, this
replica holds the Lease".
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from volcano_py import metrics
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.plugin import Plugin, PluginBuilder
from volcano_py.framework.session import SchedulingState
from volcano_py.runtime.conffile import ConfFile
from volcano_py.runtime.event_gate import EventGate
from volcano_py.scheduler.cycle import CycleTimings, run_cycle

if TYPE_CHECKING:
    from volcano_py.framework.session import Session

log = logging.getLogger(__name__)


class TimedPlugin:
    """A plugin whose session open and close are observed into
    ``volcano_plugin_scheduling_latency_milliseconds{plugin,OnSession}``; every other
    attribute is the wrapped plugin's."""

    def __init__(self, inner: Plugin) -> None:
        self._inner = inner
        self.name = inner.name

    def on_session_open(self, ssn: Session) -> None:
        started = time.perf_counter()
        self._inner.on_session_open(ssn)
        metrics.PLUGIN_SCHEDULING_LATENCY.labels(self.name, "OnSessionOpen").observe(
            metrics.milliseconds(time.perf_counter() - started)
        )

    def on_session_close(self, ssn: Session) -> None:
        started = time.perf_counter()
        self._inner.on_session_close(ssn)
        metrics.PLUGIN_SCHEDULING_LATENCY.labels(self.name, "OnSessionClose").observe(
            metrics.milliseconds(time.perf_counter() - started)
        )

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._inner, attribute)


def timed_builders(builders: Mapping[str, PluginBuilder]) -> dict[str, PluginBuilder]:
    def wrap(builder: PluginBuilder) -> PluginBuilder:
        def build(arguments: Arguments) -> Plugin:
            return TimedPlugin(builder(arguments))

        return build

    return {name: wrap(builder) for name, builder in builders.items()}


def record_cycle_metrics(timings: CycleTimings) -> None:
    """Volcano's per-session metrics: e2e (whole session), open (snapshot + open), actions."""
    metrics.E2E_SCHEDULING_LATENCY.observe(metrics.milliseconds(timings.total))
    metrics.OPEN_SESSION_DURATION.observe(metrics.milliseconds(timings.snapshot + timings.open))
    for action, seconds in timings.actions.items():
        metrics.ACTION_SCHEDULING_LATENCY.labels(action).observe(metrics.milliseconds(seconds))


def describe(timings: CycleTimings) -> str:
    parts = [f"snapshot {timings.snapshot * 1000:.1f}", f"open {timings.open * 1000:.1f}"]
    parts += [f"{name} {seconds * 1000:.1f}" for name, seconds in timings.actions.items()]
    parts.append(f"close {timings.close * 1000:.1f}")
    return f"{timings.total * 1000:.1f} ms ({', '.join(parts)})"


# How often a loop that may not schedule yet looks again (seconds).
NOT_READY_POLL = 0.05


class SchedulerLoop:
    def __init__(
        self,
        cache: SchedulerCache,
        conf: ConfFile,
        plugins: Mapping[str, PluginBuilder],
        period: float,
        *,
        may_schedule: Callable[[], bool] = lambda: True,
        state: SchedulingState | None = None,
        on_cycle: Callable[[int, CycleTimings], None] | None = None,
        gate: EventGate | None = None,
    ) -> None:
        self.cache = cache
        self.conf = conf
        self.plugins = timed_builders(plugins)
        self.period = period
        self.may_schedule = may_schedule
        self.state = state if state is not None else SchedulingState(clock=time.time)
        self.on_cycle = on_cycle
        # Watch events wait at the gate while a session runs (live; None: applied at once).
        self.gate = gate
        self.cycles = 0
        self.failures = 0
        # Monotonic times the health check reads (floats: atomic to read across threads).
        self.last_tick = time.monotonic()
        self.cycle_started: float | None = None

    def run_once(self) -> CycleTimings | None:
        """One session; None if it raised (logged: one bad cycle must not stop the loop)."""
        conf = self.conf.current()
        self.cycle_started = time.monotonic()
        if self.gate is not None:
            self._hold_gate()
        try:
            timings = run_cycle(self.cache, conf, self.plugins, self.state)
        except Exception:
            self.failures += 1
            log.exception("scheduling cycle %d failed", self.cycles + 1)
            return None
        finally:
            if self.gate is not None:
                self.gate.release()
            self.cycle_started = None
        self.cycles += 1
        record_cycle_metrics(timings)
        if self.on_cycle is not None:
            self.on_cycle(self.cycles, timings)
        elif log.isEnabledFor(logging.DEBUG):
            log.debug("cycle %d: %s", self.cycles, describe(timings))
        return timings

    def _hold_gate(self) -> None:
        assert self.gate is not None
        started = time.perf_counter()
        applied = self.gate.hold()
        if applied and log.isEnabledFor(logging.DEBUG):
            log.debug(
                "applied %d queued watch events before cycle %d in %.1f ms",
                applied,
                self.cycles + 1,
                (time.perf_counter() - started) * 1000,
            )

    def run(self, stop: threading.Event) -> None:
        """Cycles until ``stop`` is set; the period is the pause after each cycle. Until it
        may schedule (the cache not synced yet, not the leader) it looks again every
        ``NOT_READY_POLL`` seconds, not every period: upstream starts its first session as
        soon as the cache has synced, and a restart's first binds wait on it."""
        while not stop.is_set():
            self.last_tick = time.monotonic()
            if self.may_schedule():
                self.run_once()
                self.last_tick = time.monotonic()
                stop.wait(self.period)
            else:
                stop.wait(min(self.period, NOT_READY_POLL))

    def healthy(self, now: float | None = None) -> bool:
        """Alive: ticked lately, or busy in a cycle that has not run for ten minutes."""
        now = time.monotonic() if now is None else now
        started = self.cycle_started
        if started is not None:
            return now - started < 600.0
        return now - self.last_tick < max(60.0, 10 * self.period)
