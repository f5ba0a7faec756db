"""numa-aware at scale: one allocate session over nodes that all carry a Numatopology.

Each node has 2 NUMA nodes of 32 CPUs (single-numa-node, static CPU manager); the pending
work is Guaranteed pods of 8 whole CPUs in gangs, half of them with a topology policy, half
without (which the kubelet's policy still constrains). Reported: the session's time with the
default plugins, with numa-aware added, and the added cost per pod placed.

    python -m bench numa               # 1k nodes, 1,000 pods
    python -m bench numa --nodes 5000 --gangs 50
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench import objects
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier, default_conf
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.scheduler.cycle import gc_paused
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry, new_action

CPUS_PER_NUMA = 32


def numatopology(name: str) -> dict[str, Any]:
    total = 2 * CPUS_PER_NUMA
    return {
        "apiVersion": "nodeinfo.volcano.sh/v1alpha1",
        "kind": "Numatopology",
        "metadata": {"name": name},
        "spec": {
            "policies": {
                "CPUManagerPolicy": "static",
                "TopologyManagerPolicy": "single-numa-node",
            },
            "numares": {"cpu": {"allocatable": f"0-{total - 1}", "capacity": total}},
            "cpuDetail": {
                str(cpu): {
                    "numa": cpu // CPUS_PER_NUMA,
                    "socket": cpu // CPUS_PER_NUMA,
                    "core": cpu // 2,
                }
                for cpu in range(total)
            },
        },
    }


def build_cache(nodes: int, gangs: int, gang_size: int) -> SchedulerCache:
    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event("Queue", "ADDED", objects.queue("default"))
    for i in range(nodes):
        name = f"node-{i:05d}"
        cache.apply_event("Node", "ADDED", objects.node(name, "64", "256Gi"))
        cache.apply_event("Numatopology", "ADDED", numatopology(name))
    objects.add_pending_gangs(cache, gangs, gang_size, guaranteed_pod)
    return cache


def guaranteed_pod(name: str, group: str, gang: int) -> dict[str, Any]:
    """A Guaranteed pod of 8 CPUs; those of every other gang with a topology policy."""
    pod = objects.pod(name, group, "8")
    container = pod["spec"]["containers"][0]
    container["resources"]["requests"]["memory"] = "8Gi"
    container["resources"]["limits"] = dict(container["resources"]["requests"])
    if gang % 2 == 0:
        pod["metadata"].setdefault("annotations", {})["volcano.sh/numa-topology-policy"] = (
            "single-numa-node"
        )
    return pod


def session_time(cache: SchedulerCache, conf: SchedulerConf) -> tuple[float, int]:
    with gc_paused():
        started = time.perf_counter()
        ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, SchedulingState())
        for name in conf.actions:
            new_action(name).execute(ssn)
        close_session(ssn)
        elapsed = time.perf_counter() - started
    binder = cache.binder
    assert isinstance(binder, RecordingBinder)
    return elapsed, len(binder.binds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench numa")
    parser.add_argument("--nodes", type=int, default=1000)
    parser.add_argument("--gangs", type=int, default=10)
    parser.add_argument("--gang-size", type=int, default=100)
    args = parser.parse_args(argv)
    base = default_conf(BUILTIN_ACTIONS)
    with_numa = SchedulerConf(
        actions=list(base.actions),
        tiers=[
            *base.tiers[:-1],
            Tier(
                [
                    *base.tiers[-1].plugins,
                    PluginOption.with_flags("numa-aware", "enablePredicate", "enableNodeOrder"),
                ]
            ),
        ],
    )
    print(
        f"numa-aware: {args.nodes} nodes with a Numatopology, {args.gangs} gangs of "
        f"{args.gang_size} Guaranteed 8-CPU pods"
    )
    results = {}
    for label, conf in (("default plugins", base), ("with numa-aware", with_numa)):
        cache = build_cache(args.nodes, args.gangs, args.gang_size)
        elapsed, binds = session_time(cache, conf)
        results[label] = (elapsed, binds)
        print(f"  {label:<16} {elapsed * 1000:>9.1f} ms  {binds:>6d} binds")
    extra = results["with numa-aware"][0] - results["default plugins"][0]
    placed = max(results["with numa-aware"][1], 1)
    print(f"  {'added per pod':<16} {extra * 1000 / placed:>9.3f} ms")
    return 0
