"""One in-process scheduling session at scale, with a fake binder.

Reports the time of the snapshot, of opening the session, of each action and of closing it,
and the peak RSS, for two clusters (issue "Scheduler core"):

* 1k nodes, 10k pending pods in 100 gangs;
* 5k nodes, 50k running pods, 10k pending pods in 100 gangs of 100;
* with ``--singles`` (only): 1k nodes, 4,000 running and 1,000 pending one-pod jobs (bare
  pods the PodGroup controller gave a PodGroup each: the live streaming-singles shape).

Goal: the whole session at most 1.0 s at 5k nodes, the snapshot at most 150 ms.

    python -m bench session            # both sizes
    python -m bench session --small    # only the 1k-node cluster
    python -m bench session --large --cold   # only the 5k-node cluster, cold start
    python -m bench session --singles        # only the one-pod jobs
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from dataclasses import dataclass
from typing import Any

from bench import objects
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework.conf import default_conf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.scheduler.cycle import freeze_long_lived, gc_paused
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action


@dataclass(frozen=True)
class Size:
    name: str
    nodes: int
    running_per_node: int
    gangs: int
    gang_size: int
    # Running pods per PodGroup (None: one PodGroup per node for all of its pods).
    running_group_size: int | None = None


SMALL = Size("1k nodes / 10k pending (100 gangs of 100)", 1000, 0, 100, 100)
LARGE = Size("5k nodes / 50k running + 10k pending (100 gangs of 100)", 5000, 10, 100, 100)
SINGLES = Size("1k nodes / 4k running + 1k pending one-pod jobs", 1000, 4, 1000, 1, 1)


def build_cache(size: Size, pending: bool = True) -> SchedulerCache:
    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event(
        "Queue",
        "ADDED",
        {
            "kind": "Queue",
            "metadata": {"name": "default"},
            "spec": {"weight": 1},
            "status": {"state": "Open"},
        },
    )
    for i in range(size.nodes):
        cache.apply_event("Node", "ADDED", objects.node(f"node-{i:05d}", "64", "256Gi"))
    if size.running_per_node and size.running_group_size == 1:
        # Running one-pod jobs, each pod with a PodGroup of its own.
        for i in range(size.nodes):
            for j in range(size.running_per_node):
                group = f"running-{i:05d}-{j}"
                cache.apply_event("PodGroup", "ADDED", objects.pod_group(group, 1, "Running"))
                cache.apply_event(
                    "Pod", "ADDED", objects.pod(f"{group}-0", group, "2", f"node-{i:05d}")
                )
    elif size.running_per_node:
        # Running work: one PodGroup per node's worth of pods, already Running.
        for i in range(size.nodes):
            group = f"running-{i:05d}"
            cache.apply_event("PodGroup", "ADDED", objects.pod_group(group, 1, "Running"))
            for j in range(size.running_per_node):
                cache.apply_event(
                    "Pod", "ADDED", objects.pod(f"{group}-{j}", group, "2", f"node-{i:05d}")
                )
    if pending:
        objects.add_pending_gangs(cache, size.gangs, size.gang_size)
    return cache


def run(size: Size, warm: bool = False) -> dict[str, float]:
    """One session the way the scheduler loop runs it: after the initial sync the cache is
    frozen out of the garbage collector's sight, and the cycle runs with collection paused.

    ``warm``: the steady state of a running scheduler. An earlier cycle has already seen the
    running pods (it scheduled one small gang), then the 10k pending pods arrive. Both
    cycles share one ``SchedulingState``, as the scheduler loop's cycles do (what plugins
    remember from one session to the next, the session count, the rotating start index)."""
    cache = build_cache(size, pending=not warm)
    conf = default_conf(BUILTIN_ACTIONS)
    registry = PluginRegistry()
    # The scheduler checks its conf's plugins and their arguments against the registry when
    # it loads the conf (``conf_check.load_conf``), which imports each plugin's module: that
    # is its start's cost, not its first session's (about 70 ms here).
    for tier in conf.tiers:
        for plugin in tier.plugins:
            registry.declared_plugin_arguments(plugin.name)
    state = SchedulingState()
    if warm:
        objects.add_pending_gangs(cache, 1, 10, prefix="warmup")
        with gc_paused():
            measure_session(cache, conf, registry, state)
        cache.forget_series_of_jobs_gone_during_session()  # as the loop does after a cycle
        objects.add_pending_gangs(cache, size.gangs, size.gang_size)
    freeze_long_lived()
    with gc_paused():
        return measure_session(cache, conf, registry, state)


def measure_session(
    cache: SchedulerCache,
    conf: Any,
    registry: PluginRegistry,
    state: SchedulingState | None = None,
) -> dict[str, float]:
    """One session's phases (wall seconds each, its total and CPU) and how many gang pods it
    bound (the benches name their gangs ``gang-*``); ``state``: the scheduler's, kept from
    earlier cycles (a fresh one when not given)."""
    timings: dict[str, float] = {}
    # CPU time too: on a shared, loaded machine it is the steadier figure.
    cpu_started = time.process_time()
    started = time.perf_counter()
    snapshot = cache.snapshot()
    timings["snapshot"] = time.perf_counter() - started
    mark = time.perf_counter()
    ssn = open_session(snapshot, conf, registry, cache, state or SchedulingState())
    timings["open"] = time.perf_counter() - mark
    for name in conf.actions:
        mark = time.perf_counter()
        new_action(name).execute(ssn)
        timings[name] = time.perf_counter() - mark
    mark = time.perf_counter()
    close_session(ssn)
    timings["close"] = time.perf_counter() - mark
    timings["session total"] = time.perf_counter() - started
    timings["session CPU"] = time.process_time() - cpu_started
    binder = cache.binder
    assert isinstance(binder, RecordingBinder)
    timings["binds"] = float(sum(1 for key in binder.binds if "/gang-" in key))
    return timings


def print_timings(timings: dict[str, float], peak_mib: float | None = None) -> None:
    """``measure_session``'s figures, one a line (milliseconds; the binds as a count), then
    the process's peak RSS when given."""
    for name, value in timings.items():
        if name == "binds":
            print(f"  {name:<14} {int(value):>9d}")
        else:
            print(f"  {name:<14} {value * 1000:>9.1f} ms")
    if peak_mib is not None:
        print(f"  {'peak RSS':<14} {peak_mib:>9.0f} MiB")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench session")
    parser.add_argument("--small", action="store_true", help="only the 1k-node cluster")
    parser.add_argument("--large", action="store_true", help="only the 5k-node cluster")
    parser.add_argument("--cold", action="store_true", help="only the cold start")
    parser.add_argument("--singles", action="store_true", help="only the one-pod jobs")
    args = parser.parse_args(argv)
    if args.singles:
        sizes = [SINGLES]
    else:
        sizes = [SMALL] if args.small else [LARGE] if args.large else [SMALL, LARGE]
    states = (False,) if args.cold else (False, True)
    for size, warm in [(size, warm) for size in sizes for warm in states]:
        timings = run(size, warm)
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        state = "steady state (running pods seen by an earlier cycle)" if warm else "cold start"
        print(f"\nsession: {size.name}, {state}")
        print_timings(timings, peak_mib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
