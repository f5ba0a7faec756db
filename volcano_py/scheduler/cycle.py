"""One scheduling cycle: snapshot, open the session, run the actions in order, close it."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field

from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import SchedulerConf
from volcano_py.framework.plugin import PluginBuilder
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.scheduler.device_resources import snapshot_for
from volcano_py.scheduler.registry import new_action


@dataclass
class CycleTimings:
    """Where a cycle's time went, in seconds (what the latency metrics report)."""

    snapshot: float = 0.0
    open: float = 0.0
    actions: dict[str, float] = field(default_factory=dict)
    close: float = 0.0

    @property
    def total(self) -> float:
        return self.snapshot + self.open + sum(self.actions.values()) + self.close


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside a cycle. The cache holds hundreds of thousands of
    long-lived objects; a full collection triggered mid-session scans them all and doubles
    the snapshot time. Reference counting still frees everything a session drops, and the
    collector catches up between cycles."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def freeze_long_lived() -> None:
    """Move everything alive now (the freshly synced cache) out of the collector's sight."""
    gc.collect()
    gc.freeze()


def run_cycle(
    cache: SchedulerCache,
    conf: SchedulerConf,
    plugins: Mapping[str, PluginBuilder],
    state: SchedulingState,
) -> CycleTimings:
    with gc_paused():
        return _run_cycle(cache, conf, plugins, state)


def _run_cycle(
    cache: SchedulerCache,
    conf: SchedulerConf,
    plugins: Mapping[str, PluginBuilder],
    state: SchedulingState,
) -> CycleTimings:
    timings = CycleTimings()
    started = time.perf_counter()
    snapshot = snapshot_for(cache, conf)
    timings.snapshot = time.perf_counter() - started

    started = time.perf_counter()
    ssn = open_session(snapshot, conf, plugins, cache, state)
    timings.open = time.perf_counter() - started

    for name in conf.actions:
        started = time.perf_counter()
        new_action(name).execute(ssn)
        timings.actions[name] = timings.actions.get(name, 0.0) + time.perf_counter() - started

    started = time.perf_counter()
    close_session(ssn)
    cache.forget_series_of_jobs_gone_during_session()
    timings.close = time.perf_counter() - started
    return timings
