"""One scheduling session with DRA claims at 5k nodes (issue 19: the DRA Filter must stay
vectorised over nodes, and pods without claims must pay nothing for it).

5k nodes, each publishing 8 GPUs in a ResourceSlice of its own (driver ``gpu.example.com``,
a DeviceClass selecting it by CEL); 100 gangs of 100 pending pods, each with a ResourceClaim of
its own asking for 2 GPUs (as the resourceclaim controller makes them from a template). With
``--baseline``, the same gangs without claims on the same cluster (its slices still there),
and with ``--no-dra`` without any DRA object: the cost of the rest of the session.

    python -m bench dra            # 5k nodes
    python -m bench dra --small    # 1k nodes
"""

from __future__ import annotations

import argparse
import resource
import sys
from typing import Any

from bench import objects
from bench.session import measure_session, print_timings
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingBinder
from volcano_py.framework.conf import parse_conf
from volcano_py.scheduler.cycle import freeze_long_lived, gc_paused
from volcano_py.scheduler.registry import BUILTIN_ACTIONS, PluginRegistry

DRIVER = "gpu.example.com"
GPUS = 8
GANGS, GANG_SIZE = 100, 100

CONF = """\
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
"""


def device_slice(node: str) -> dict[str, Any]:
    devices = [
        {"name": f"gpu-{i}", "attributes": {"model": {"string": "A100"}}} for i in range(GPUS)
    ]
    return {
        "metadata": {"name": f"{node}-gpus"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": devices,
        },
    }


def claim(name: str) -> dict[str, Any]:
    request = {"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": 2}}
    return {
        "metadata": {"name": name, "namespace": objects.NAMESPACE, "uid": f"uid-{name}"},
        "spec": {"devices": {"requests": [request]}},
    }


def build_cache(nodes: int, claims: bool, dra_objects: bool) -> SchedulerCache:
    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event("Queue", "ADDED", objects.queue("default"))
    if dra_objects:
        selector = {"cel": {"expression": f'device.driver == "{DRIVER}"'}}
        cache.apply_event(
            "DeviceClass",
            "ADDED",
            {"metadata": {"name": DRIVER}, "spec": {"selectors": [selector]}},
        )
    for i in range(nodes):
        name = f"node-{i:05d}"
        cache.apply_event("Node", "ADDED", objects.node(name, "64", "256Gi"))
        if dra_objects:
            cache.apply_event("ResourceSlice", "ADDED", device_slice(name))

    def claiming_pod(name: str, group: str, _: int) -> dict[str, Any]:
        pod = objects.pod(name, group, "1")
        if claims:
            # Its claim first, as the resourceclaim controller makes it before the pod binds.
            cache.apply_event("ResourceClaim", "ADDED", claim(f"{name}-gpu"))
            pod["spec"]["resourceClaims"] = [{"name": "gpu", "resourceClaimName": f"{name}-gpu"}]
        return pod

    objects.add_pending_gangs(cache, GANGS, GANG_SIZE, claiming_pod)
    return cache


def run(nodes: int, claims: bool, dra_objects: bool) -> dict[str, float]:
    cache = build_cache(nodes, claims, dra_objects)
    conf = parse_conf(CONF, BUILTIN_ACTIONS)
    freeze_long_lived()
    with gc_paused():
        return measure_session(cache, conf, PluginRegistry())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench dra")
    parser.add_argument("--small", action="store_true", help="1k nodes instead of 5k")
    parser.add_argument(
        "--baseline", action="store_true", help="also the gangs without claims (slices kept)"
    )
    parser.add_argument("--no-dra", action="store_true", help="also a cluster without DRA")
    args = parser.parse_args(argv)
    nodes = 1000 if args.small else 5000
    runs = [("pods with a 2-GPU claim each", True, True)]
    if args.baseline:
        runs.append(("pods without claims, slices published", False, True))
    if args.no_dra:
        runs.append(("pods without claims, no DRA objects", False, False))
    for kind, claims, dra_objects in runs:
        timings = run(nodes, claims, dra_objects)
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"\nsession: {nodes} nodes x {GPUS} GPUs (ResourceSlices), {GANGS * GANG_SIZE}"
            f" pending pods ({GANGS} gangs of {GANG_SIZE}), {kind}"
        )
        print_timings(timings, peak_mib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
