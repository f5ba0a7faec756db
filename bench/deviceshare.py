"""One scheduling session with GPU-share pods at 5k GPU nodes (issue 12: the per-card fit must
stay vectorised over nodes).

5k nodes of 8 cards (``volcano.sh/gpu-memory`` 80000, ``volcano.sh/gpu-number`` 8), 4 running
GPU-share pods per node (each 6000 of a card's 10000, on every other card, placed by
``volcano.sh/gpu-index``: a node's total free memory fits 11 more pods, its cards only 4), then
100 gangs of 100 pending pods asking 5000 ``volcano.sh/gpu-memory`` each (GPU sharing), or, with
``--vgpu``, the same shape as HAMi vGPU (cards registered in ``volcano.sh/node-vgpu-register``,
pods asking ``volcano.sh/vgpu-memory``), with the binpack policy and a score weight.

    python -m bench deviceshare            # GPU sharing and vGPU
    python -m bench deviceshare --small    # 1k nodes
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

CARDS = 8
CARD_MEMORY = 10000
RUNNING_PER_NODE = 4
GANGS, GANG_SIZE = 100, 100

CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
  - name: predicates
  - name: proportion
  - name: nodeorder
{deviceshare}"""
DEVICESHARE = """\
  - name: deviceshare
    arguments:
{arguments}
"""
GPU_SHARE_ARGUMENTS = "      deviceshare.GPUSharingEnable: true"
VGPU_ARGUMENTS = """\
      deviceshare.VGPUEnable: true
      deviceshare.SchedulePolicy: binpack
      deviceshare.ScheduleWeight: 10"""


def gpu_node(name: str, vgpu: bool) -> dict[str, Any]:
    node = objects.node(name, "64", "256Gi")
    allocatable = node["status"]["allocatable"]
    if vgpu:
        allocatable.update(
            {
                "volcano.sh/vgpu-number": str(CARDS * 10),
                "volcano.sh/vgpu-memory": str(CARDS * CARD_MEMORY),
                "volcano.sh/vgpu-cores": str(CARDS * 100),
            }
        )
        register = "".join(
            f"GPU-{name}-{card},10,{CARD_MEMORY},NVIDIA-A100,true,hami-core:"
            for card in range(CARDS)
        )
        node["metadata"]["annotations"] = {"volcano.sh/node-vgpu-register": register}
    else:
        allocatable.update(
            {"volcano.sh/gpu-memory": str(CARDS * CARD_MEMORY), "volcano.sh/gpu-number": "8"}
        )
    node["status"]["capacity"] = dict(allocatable)
    return node


def gpu_pod(name: str, group: str, memory: int, vgpu: bool, node: str = "", card: int = 0) -> Any:
    pod = objects.pod(name, group, "1", node)
    container = pod["spec"]["containers"][0]
    if vgpu:
        container["resources"]["limits"] = {
            "volcano.sh/vgpu-number": "1",
            "volcano.sh/vgpu-memory": str(memory),
        }
        if node:
            pod["metadata"]["annotations"]["volcano.sh/vgpu-ids-new"] = (
                f"GPU-{node}-{card},NVIDIA,{memory},0:"
            )
    else:
        container["resources"]["limits"] = {"volcano.sh/gpu-memory": str(memory)}
        container["resources"]["requests"]["volcano.sh/gpu-memory"] = str(memory)
        if node:
            pod["metadata"]["annotations"]["volcano.sh/gpu-index"] = str(card)
    return pod


def build_cache(nodes: int, vgpu: bool) -> SchedulerCache:
    cache = SchedulerCache(binder=RecordingBinder())
    cache.apply_event("Queue", "ADDED", objects.queue("default"))
    for i in range(nodes):
        cache.apply_event("Node", "ADDED", gpu_node(f"node-{i:05d}", vgpu))
    for i in range(nodes):
        name = f"node-{i:05d}"
        group = f"running-{i:05d}"
        cache.apply_event("PodGroup", "ADDED", objects.pod_group(group, 1, "Running"))
        for j in range(RUNNING_PER_NODE):
            pod = gpu_pod(f"{group}-{j}", group, 6000, vgpu, name, (i + 2 * j) % CARDS)
            cache.apply_event("Pod", "ADDED", pod)
    objects.add_pending_gangs(
        cache, GANGS, GANG_SIZE, lambda name, group, _: gpu_pod(name, group, 5000, vgpu)
    )
    return cache


def run(nodes: int, vgpu: bool, baseline: bool = False) -> dict[str, float]:
    """One session; ``baseline``: the same cluster with deviceshare left out of the conf (the
    cost of the rest of the session, to compare against)."""
    cache = build_cache(nodes, vgpu)
    arguments = VGPU_ARGUMENTS if vgpu else GPU_SHARE_ARGUMENTS
    plugin = "" if baseline else DEVICESHARE.format(arguments=arguments)
    conf = parse_conf(CONF.format(deviceshare=plugin), BUILTIN_ACTIONS)
    registry = PluginRegistry()
    freeze_long_lived()
    with gc_paused():
        return measure_session(cache, conf, registry)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench deviceshare")
    parser.add_argument("--small", action="store_true", help="1k nodes instead of 5k")
    parser.add_argument("--vgpu", action="store_true", help="only the vGPU cluster")
    parser.add_argument("--share", action="store_true", help="only the GPU-share cluster")
    parser.add_argument(
        "--baseline", action="store_true", help="also each cluster without deviceshare"
    )
    args = parser.parse_args(argv)
    nodes = 1000 if args.small else 5000
    kinds = [False, True]
    if args.vgpu != args.share:
        kinds = [args.vgpu]
    runs = [(vgpu, baseline) for vgpu in kinds for baseline in (False, True)]
    for vgpu, baseline in runs:
        if baseline and not args.baseline:
            continue
        timings = run(nodes, vgpu, baseline)
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        kind = "vGPU (binpack, weight 10)" if vgpu else "GPU sharing by memory"
        if baseline:
            kind += ", baseline without deviceshare"
        print(
            f"\nsession: {nodes} GPU nodes x {CARDS} cards, {nodes * RUNNING_PER_NODE} running +"
            f" {GANGS * GANG_SIZE} pending GPU pods ({GANGS} gangs of {GANG_SIZE}), {kind}"
        )
        print_timings(timings, peak_mib)
    return 0


if __name__ == "__main__":
    sys.exit(main())
