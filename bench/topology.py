"""One scheduling session with hard network topology at scale (issue 12, "Performance").

5,000 nodes of 64 CPU under 500 tier-1 HyperNodes of 10 nodes and 50 tier-2 HyperNodes of 10
tier-1 ones (550 HyperNodes in all), the cluster half full of running pods. Pending:

* ``--gangs`` gangs of 64 pods of 4 CPU, ``networkTopology: {mode: hard, highestTierAllowed:
  1}``: each must fit inside one tier-1 HyperNode (256 of its 640 CPU);
* ``--sub-grouped`` jobs of 4 sub-groups of 16 pods of 4 CPU (``subGroupPolicy`` with
  ``subGroupSize: 16``, ``minSubGroups: 4``, each sub-group hard at tier 1, the job hard at
  tier 2).

Reported: the snapshot, session open, each action, close, the whole session (wall clock, and
the process's CPU time: on a shared machine the wall clock also counts other processes' turns),
the pods bound, and a digest of the placements (every bind, pod and node, in bind order): a
speed-up must leave it unchanged. Goal: one session within 2 s.

A job with several sub-groups is searched best predicted score first (upstream dry-runs every
candidate HyperNode of its allowed tiers, 500 tier-1 ones here, which cost about 500 times a
gang's placement); ``--sub-grouped`` shows its cost, ``--gangs 0 --sub-grouped 1`` alone.

    python -m bench topology
    python -m bench topology --gangs 20 --sub-grouped 5    # a smaller run
    python -m bench topology --profile 30                  # cProfile, the 30 costliest calls
"""

from __future__ import annotations

import argparse
import cProfile
import hashlib
import pstats
import sys
from typing import Any

from bench import objects
from bench.session import measure_session, print_timings
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework.conf import parse_conf
from volcano_py.scheduler.cycle import freeze_long_lived, gc_paused
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry

NODES = 5000
NODES_PER_TIER1 = 10
TIER1_PER_TIER2 = 10
RUNNING_PER_NODE = 4  # of 8 CPU: half of each node's 64 CPU

CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: network-topology-aware
"""


def hyper_node(name: str, tier: int, members: list[str], kind: str) -> dict[str, Any]:
    return {
        "kind": "HyperNode",
        "metadata": {"name": name},
        "spec": {
            "tier": tier,
            "members": [{"type": kind, "selector": {"exactMatch": {"name": m}}} for m in members],
        },
    }


def topology_group(
    name: str, min_member: int, topology: dict[str, Any], policies: list[dict[str, Any]] | None
) -> dict[str, Any]:
    group = objects.pod_group(name, min_member, "Inqueue")
    group["spec"]["networkTopology"] = topology
    if policies:
        group["spec"]["subGroupPolicy"] = policies
    return group


def build_cache(gangs: int, sub_grouped: int) -> SchedulerCache:
    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event("Queue", "ADDED", objects.queue("default"))
    names = [f"node-{i:05d}" for i in range(NODES)]
    for name in names:
        cache.apply_event("Node", "ADDED", objects.node(name, "64", "256Gi"))
    tier1 = []
    for h in range(NODES // NODES_PER_TIER1):
        members = names[h * NODES_PER_TIER1 : (h + 1) * NODES_PER_TIER1]
        tier1.append(f"leaf-{h:03d}")
        cache.apply_event("HyperNode", "ADDED", hyper_node(tier1[-1], 1, members, "Node"))
    for s in range(len(tier1) // TIER1_PER_TIER2):
        members = tier1[s * TIER1_PER_TIER2 : (s + 1) * TIER1_PER_TIER2]
        cache.apply_event(
            "HyperNode", "ADDED", hyper_node(f"spine-{s:02d}", 2, members, "HyperNode")
        )
    for i, name in enumerate(names):
        group = f"running-{i:05d}"
        cache.apply_event("PodGroup", "ADDED", objects.pod_group(group, 1, "Running"))
        for j in range(RUNNING_PER_NODE):
            cache.apply_event("Pod", "ADDED", objects.pod(f"{group}-{j}", group, "8", name))
    for g in range(gangs):
        group = f"gang-{g:03d}"
        topology = {"mode": "hard", "highestTierAllowed": 1}
        cache.apply_event("PodGroup", "ADDED", topology_group(group, 64, topology, None))
        for t in range(64):
            cache.apply_event("Pod", "ADDED", objects.pod(f"{group}-w{t}", group, "4"))
    policy = {
        "name": "part",
        "subGroupSize": 16,
        "minSubGroups": 4,
        "matchLabelKeys": ["partition"],
        "networkTopology": {"mode": "hard", "highestTierAllowed": 1},
    }
    for g in range(sub_grouped):
        group = f"gang-sub-{g:03d}"
        topology = {"mode": "hard", "highestTierAllowed": 2}
        cache.apply_event("PodGroup", "ADDED", topology_group(group, 64, topology, [policy]))
        for t in range(64):
            pod = objects.pod(f"{group}-w{t}", group, "4")
            pod["metadata"]["labels"] = {"partition": str(t // 16)}
            cache.apply_event("Pod", "ADDED", pod)
    return cache


def placement_digest(binder: RecordingBinder) -> str:
    """Every bind (pod and node) in bind order, hashed: equal digests, equal decisions."""
    text = "\n".join(f"{pod} {node}" for pod, node in binder.order)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def run(gangs: int, sub_grouped: int, profile: int = 0) -> tuple[dict[str, float], str]:
    """The session's timings and the digest of its placements; with ``profile``, the session
    runs under cProfile and its ``profile`` costliest calls (own time) are printed."""
    cache = build_cache(gangs, sub_grouped)
    conf = parse_conf(CONF, BUILTIN_ACTIONS)
    registry = PluginRegistry()
    freeze_long_lived()
    profiler = cProfile.Profile() if profile else None
    with gc_paused():
        if profiler is not None:
            profiler.enable()
        timings = measure_session(cache, conf, registry)
        if profiler is not None:
            profiler.disable()
    if profiler is not None:
        stats = pstats.Stats(profiler, stream=sys.stdout)
        stats.sort_stats("tottime").print_stats(profile)
        stats.sort_stats("cumulative").print_stats(profile)
    binder = cache.binder
    assert isinstance(binder, RecordingBinder)
    return timings, placement_digest(binder)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench topology")
    parser.add_argument("--gangs", type=int, default=100, help="hard tier-1 gangs of 64 pods")
    parser.add_argument(
        "--sub-grouped", type=int, default=20, help="jobs of 4 hard tier-1 sub-groups of 16"
    )
    parser.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="run the session under cProfile and print its N costliest calls",
    )
    args = parser.parse_args(argv)
    timings, digest = run(args.gangs, args.sub_grouped, args.profile)
    print(
        f"\nsession: {NODES} nodes, {NODES // NODES_PER_TIER1} tier-1 + "
        f"{NODES // NODES_PER_TIER1 // TIER1_PER_TIER2} tier-2 HyperNodes, {args.gangs} hard "
        f"gangs of 64, {args.sub_grouped} jobs of 4 hard sub-groups of 16"
    )
    print_timings(timings)
    print(f"  {'placements':<14} {digest:>9}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
