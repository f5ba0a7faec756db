"""Preempt and reclaim sessions at scale (issue "Contention").

1k nodes of 10 CPU, full with 10k running 1-CPU pods (1000 low-priority jobs of 10), and 100
pending high-priority gangs of 10 one-CPU tasks:

* preempt: everything in one queue; the gangs preempt low-priority pods;
* reclaim: the running pods belong to an overused queue, the gangs to a second queue that
  deserves half the cluster;
* preempt-dry-run: preempt with ``enableTopologyAwarePreemption`` (a dry run over candidate
  nodes for every preemptor);
* gangpreempt and gangreclaim: the same two clusters, with the gang-aware actions (whole
  victim bundles, a dry run of each gang before anything is evicted).

Reports the time of the action (the victim search and the evictions), the evictions made and
evictions per second.

    python -m bench contention [preempt|preempt-dry-run|reclaim|gangpreempt|gangreclaim|all]
"""

from __future__ import annotations

import argparse
import sys
import time

from bench import objects
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder, RecordingEvictor
from volcano_py.framework.conf import parse_conf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.scheduler.cycle import freeze_long_lived, gc_paused
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action

NODES = 1000
RUNNING_JOBS, RUNNING_PER_JOB = 1000, 10
GANGS, GANG_SIZE = 100, 10

PREEMPT_CONF = """
actions: "enqueue, allocate, {action}"
tiers:
- plugins: [{name: priority}, {name: gang}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""
RECLAIM_CONF = """
actions: "enqueue, allocate, {action}"
tiers:
- plugins: [{name: priority}, {name: gang, enableReclaimable: false}, {name: conformance}]
- plugins: [{name: drf}, {name: predicates}, {name: proportion}, {name: nodeorder}]
"""


def build(low_queue: str, high_queue: str) -> SchedulerCache:
    cache = SchedulerCache(binder=RecordingBinder(), evictor=RecordingEvictor())
    for name in {low_queue, high_queue}:
        cache.apply_event("Queue", "ADDED", objects.queue(name))
    for name, value in (("low", 10), ("high", 100000)):
        cache.apply_event(
            "PriorityClass",
            "ADDED",
            {"kind": "PriorityClass", "metadata": {"name": name}, "value": value},
        )
    for i in range(NODES):
        cache.apply_event("Node", "ADDED", objects.node(f"node-{i:04d}", "10", "40Gi"))
    slot = 0
    for j in range(RUNNING_JOBS):
        group = f"low-{j:04d}"
        cache.apply_event(
            "PodGroup", "ADDED", objects.pod_group(group, 1, "Running", low_queue, "low")
        )
        for t in range(RUNNING_PER_JOB):
            node = f"node-{slot // 10:04d}"
            slot += 1
            cache.apply_event(
                "Pod", "ADDED", objects.pod(f"{group}-{t}", group, node=node, priority=10)
            )
    for g in range(GANGS):
        group = f"high-{g:03d}"
        cache.apply_event(
            "PodGroup", "ADDED", objects.pod_group(group, GANG_SIZE, "Inqueue", high_queue, "high")
        )
        for t in range(GANG_SIZE):
            cache.apply_event("Pod", "ADDED", objects.pod(f"{group}-{t}", group, priority=100000))
    return cache


KINDS = ("preempt", "preempt-dry-run", "reclaim", "gangpreempt", "gangreclaim")
DRY_RUN_CONF = """
configurations:
- name: preempt
  arguments: {enableTopologyAwarePreemption: true}
"""


def run(kind: str) -> dict[str, float]:
    action = "preempt" if kind == "preempt-dry-run" else kind
    if "preempt" in kind:
        cache, text = build("default", "default"), PREEMPT_CONF
    else:
        cache, text = build("low", "high"), RECLAIM_CONF
    if kind == "preempt-dry-run":
        text += DRY_RUN_CONF
    conf = parse_conf(text.replace("{action}", action), BUILTIN_ACTIONS)
    freeze_long_lived()
    timings: dict[str, float] = {}
    with gc_paused():
        ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState())
        for name in conf.actions:
            started = time.perf_counter()
            new_action(name).execute(ssn)
            timings[name] = time.perf_counter() - started
        close_session(ssn)
    evictor = cache.evictor
    assert isinstance(evictor, RecordingEvictor)
    timings["evictions"] = float(len(evictor.evicted))
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench contention")
    parser.add_argument("which", nargs="?", choices=(*KINDS, "all"), default="all")
    args = parser.parse_args(argv)
    kinds = list(KINDS) if args.which == "all" else [args.which]
    for kind in kinds:
        timings = run(kind)
        action_seconds = timings["preempt" if kind == "preempt-dry-run" else kind]
        evictions = int(timings["evictions"])
        rate = evictions / action_seconds if action_seconds > 0 else 0.0
        print(
            f"\n{kind}: {NODES} nodes, {RUNNING_JOBS * RUNNING_PER_JOB} running pods,"
            f" {GANGS} pending gangs of {GANG_SIZE}"
        )
        for name, value in timings.items():
            if name != "evictions":
                print(f"  {name:<10} {value * 1000:>9.1f} ms")
        print(f"  evictions  {evictions:>9d}")
        print(f"  rate       {rate:>9.0f} evictions/s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
