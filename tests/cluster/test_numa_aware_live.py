"""numa-aware on a real API server: the live scheduler watches Numatopology objects (under its
least-privilege RBAC) and places a Guaranteed pod with a topology policy only on the kwok node
whose kubelet policy and CPU layout admit it; a pod no NUMA node can hold waits, saying why."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from live_objects import bare_pod, pending_reason
from test_scheduler_process import (
    GROUP_ANNOTATION,
    SchedulerProcess,
    bound,
    list_pods,
    pod_group_manifest,
    scheduler_name,
    scheduler_rbac,
    start_scheduler,
    wait_until,
)

from e2e.controlplane import ControlPlane

pytestmark = pytest.mark.cluster

# Re-exported fixtures (pytest finds fixtures by the names in a test module).
__all__ = ["scheduler_name", "scheduler_rbac", "start_scheduler"]

MakeNodes = Callable[..., list[str]]
StartScheduler = Callable[..., SchedulerProcess]
MakeNumatopology = Callable[[str, int, str], None]

NUMA_CONF = """\
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
  - name: numa-aware
    arguments:
      weight: 10
"""


def guaranteed_pod(name: str, scheduler: str, cpu: str, policy: str) -> dict[str, Any]:
    """A Guaranteed pod (limits = requests) in a PodGroup of its own name."""
    amounts = {"cpu": cpu, "memory": "1Gi"}
    annotations = {"volcano.sh/numa-topology-policy": policy, GROUP_ANNOTATION: name}
    resources = {"requests": dict(amounts), "limits": dict(amounts)}
    return bare_pod(name, scheduler, resources, annotations=annotations)


def test_guaranteed_pod_goes_only_where_the_policy_admits_it(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: MakeNodes,
    make_numatopology: MakeNumatopology,
    scheduler_name: str,
) -> None:
    small, large, bare = make_nodes("cpu", 3)  # 3 x 32 CPU
    make_numatopology(small, 4, "single-numa-node")  # 4 CPUs per NUMA node
    make_numatopology(large, 8, "single-numa-node")  # 8 CPUs per NUMA node
    scheduler = start_scheduler(conf=NUMA_CONF)
    scheduler.wait_ready()
    # 6 whole CPUs: only the large node has a NUMA node that holds them; the bare node has no
    # Numatopology at all, so a pod with a topology policy may not go there.
    control_plane.create(pod_group_manifest("fits", 1), namespace)
    control_plane.create(guaranteed_pod("fits", scheduler_name, "6", "single-numa-node"), namespace)
    wait_until(
        "the pod bound",
        lambda: bound(list_pods(control_plane, namespace), ["fits"]) == ["fits"],
        diagnose=scheduler.log,
    )
    assert list_pods(control_plane, namespace)["fits"]["spec"]["nodeName"] == large
    # 10 CPUs fit no NUMA node anywhere: the pod waits, and says why.
    control_plane.create(pod_group_manifest("too-big", 1), namespace)
    control_plane.create(
        guaranteed_pod("too-big", scheduler_name, "10", "single-numa-node"), namespace
    )

    def reason() -> str:
        return pending_reason(control_plane, namespace, "too-big")

    wait_until("the unschedulable reason", lambda: "cannot be assigned by numa" in reason())
    time.sleep(1.0)  # several more cycles
    assert bound(list_pods(control_plane, namespace), ["too-big"]) == []
    # The bare node has no Numatopology at all.
    assert "numa info is empty" in reason(), (bare, reason())
    assert scheduler.forbidden() == []
