"""User guide ``how_to_use_resource_strategy_fit_plugin``: with the guide's conf (cpu and memory
``LeastAllocated``, ``nvidia.com/gpu`` ``MostAllocated`` of weight 2) a CPU pod goes to the
emptier node and a GPU pod to the node whose GPUs are already most used; a pod's
``volcano.sh/resource-strategy-scoring-type``/``-weight`` annotations override the global
strategy for it, as on the tasks of the guide's Volcano Jobs."""

from __future__ import annotations

from volcano_py.testing import Cluster

GPU = "nvidia.com/gpu"
CONF = """\
actions: "reclaim, allocate, backfill, preempt"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: resource-strategy-fit
    arguments:
      resourceStrategyFitWeight: 10
      resources:
        cpu:
          type: "LeastAllocated"
          weight: 1
        memory:
          type: "LeastAllocated"
          weight: 1
        nvidia.com/gpu:
          type: "MostAllocated"
          weight: 2
"""
MOST_ALLOCATED_CPU = {
    "volcano.sh/resource-strategy-scoring-type": "MostAllocated",
    "volcano.sh/resource-strategy-weight": '{"cpu": 1}',
}


def _cluster() -> Cluster:
    # busy: 6 of 16 CPUs and 6 of 8 GPUs in use; idle: nothing in use.
    return (
        Cluster()
        .node("busy", cpu="16", memory="64Gi", **{GPU: "8"})
        .node("idle", cpu="16", memory="64Gi", **{GPU: "8"})
        .queue("default")
        .pod_group("running", phase="Running")
        .pod("running-0", group="running", node="busy", cpu="6", memory="8Gi", scalars={GPU: "6"})
    )


def test_cpu_pods_spread_gpu_pods_pack() -> None:
    outcome = (
        _cluster()
        .job("web", cpu="2", memory="4Gi")
        .job("train", cpu="1", memory="2Gi", scalars={GPU: "1"})
        .run(conf=CONF)
    )
    outcome.expect_binds({"default/web-0": "idle", "default/train-0": "busy"})


def test_pod_annotations_override_the_global_strategy() -> None:
    outcome = (
        _cluster()
        .job("packed", cpu="2", memory="4Gi", annotations=MOST_ALLOCATED_CPU)
        .run(conf=CONF)
    )
    outcome.expect_binds({"default/packed-0": "busy"})
