"""deviceshare against a real API server with kwok nodes: a GPU-share pod lands on the node
whose single card fits (not the one with more free memory in total), a vGPU pod on the card
its UUID annotation names, the cards reach the pods as the Binding's annotations, and with
deviceshare.NodeLockEnable the bind writes the node lock and a held lock keeps the next pod
off the node, its pending reason naming the lock, until it is removed (as the device plugin
removes it)."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import pytest
from live_objects import KWOK_BASE, annotations_of, bare_pod, node_of, pending_reason, wait_bound
from test_scheduler_process import (
    GROUP_ANNOTATION,
    SchedulerProcess,
    pod_group_manifest,
    scheduler_name,
    scheduler_rbac,
    start_scheduler,
    wait_until,
)

from e2e.controlplane import ControlPlane

pytestmark = pytest.mark.cluster

__all__ = ["scheduler_name", "scheduler_rbac", "start_scheduler"]

StartScheduler = Callable[..., SchedulerProcess]
MakeNode = Callable[..., str]

GPU_SHARE_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.GPUSharingEnable: true
"""
VGPU_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.SchedulePolicy: binpack
      deviceshare.ScheduleWeight: 10
"""
GPU_INDEX = "volcano.sh/gpu-index"
NODE_LOCK_CONF = GPU_SHARE_CONF + "      deviceshare.NodeLockEnable: true\n"


def gpu_pod(
    name: str,
    scheduler: str,
    limits: dict[str, str],
    *,
    node: str = "",
    annotations: dict[str, str] | None = None,
) -> dict[str, Any]:
    placed = {"nodeName": node} if node else {}
    resources = {"requests": {"cpu": "1"}, "limits": dict(limits)}
    return bare_pod(name, scheduler, resources, annotations=annotations, **placed)


def create_scheduled_pod(
    plane: ControlPlane,
    namespace: str,
    name: str,
    scheduler: str,
    limits: dict[str, str],
    annotations: dict[str, str] | None = None,
) -> None:
    """A pod for the scheduler, in a PodGroup of its own (no controllers run here)."""
    plane.create(pod_group_manifest(name, 1), namespace)
    notes = {GROUP_ANNOTATION: name, **(annotations or {})}
    plane.create(gpu_pod(name, scheduler, limits, annotations=notes), namespace)


def test_gpu_share_pod_lands_where_one_card_fits(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    scheduler_name: str,
    make_node: MakeNode,
) -> None:
    gpu = "volcano.sh/gpu-memory"
    # roomy: 4 cards of 8000, 4000 used on each (16000 free in total, 4000 per card);
    # fitting: 2 cards of 8000, card 0 holds 5000.
    roomy = make_node("gpu-roomy", {**KWOK_BASE, gpu: "32000", "volcano.sh/gpu-number": "4"})
    fitting = make_node("gpu-fit", {**KWOK_BASE, gpu: "16000", "volcano.sh/gpu-number": "2"})
    control_plane.wait_nodes_ready([roomy, fitting])
    held = (("filler", "4000", roomy, "0,1,2,3"), ("busy", "5000", fitting, "0"))
    for name, memory, node, cards in held:
        placed = gpu_pod(
            name, scheduler_name, {gpu: memory}, node=node, annotations={GPU_INDEX: cards}
        )
        control_plane.create(placed, namespace)
    scheduler = start_scheduler(conf=GPU_SHARE_CONF)
    scheduler.wait_ready()
    create_scheduled_pod(control_plane, namespace, "share", scheduler_name, {gpu: "6000"})
    wait_bound(control_plane, namespace, ["share"], scheduler, timeout=30.0)
    assert node_of(control_plane, namespace, "share") == fitting
    annotations = annotations_of(control_plane, namespace, "share")
    assert annotations[GPU_INDEX] == "1"
    assert annotations["volcano.sh/predicate-time"].isdigit()


def test_vgpu_pod_gets_its_card_in_the_bind_annotations(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    scheduler_name: str,
    make_node: MakeNode,
) -> None:
    suffix = namespace[-6:]
    vgpu = {
        "volcano.sh/vgpu-number": "20",
        "volcano.sh/vgpu-memory": "48000",
        "volcano.sh/vgpu-cores": "200",
    }
    nodes = []
    for role in ("vgpu-a", "vgpu-b"):
        register = "".join(
            f"GPU-{role}-{suffix}-{card},10,24000,NVIDIA-Tesla T4,true,hami-core:"
            for card in (0, 1)
        )
        nodes.append(
            make_node(
                role,
                {**KWOK_BASE, **vgpu},
                annotations={"volcano.sh/node-vgpu-register": register},
            )
        )
    control_plane.wait_nodes_ready(nodes)
    scheduler = start_scheduler(conf=VGPU_CONF)
    scheduler.wait_ready()
    wanted = f"GPU-{nodes[1]}-1"
    create_scheduled_pod(
        control_plane,
        namespace,
        "pinned",
        scheduler_name,
        {
            "volcano.sh/vgpu-number": "1",
            "volcano.sh/vgpu-memory": "8000",
            "volcano.sh/vgpu-cores": "30",
        },
        {"volcano.sh/vgpu-use-gpuuuid": wanted},
    )
    wait_bound(control_plane, namespace, ["pinned"], scheduler, timeout=30.0)
    assert node_of(control_plane, namespace, "pinned") == nodes[1]
    annotations = annotations_of(control_plane, namespace, "pinned")
    assert annotations["volcano.sh/vgpu-ids-new"] == f"{wanted},NVIDIA,8000,30:"
    assert annotations["volcano.sh/devices-to-allocate"] == f"{wanted},NVIDIA,8000,30:"
    assert annotations["volcano.sh/vgpu-node"] == nodes[1]
    assert annotations["volcano.sh/bind-phase"] == "allocating"
    assert annotations["volcano.sh/vgpu-time"].isdigit()


def test_node_lock_is_written_and_honoured(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    scheduler_name: str,
    make_node: MakeNode,
) -> None:
    gpu = "volcano.sh/gpu-memory"
    node = make_node("gpu-lock", {**KWOK_BASE, gpu: "16000", "volcano.sh/gpu-number": "2"})
    path = f"/api/v1/nodes/{node}"

    def lock() -> str | None:
        found = control_plane.request("GET", path)["metadata"].get("annotations") or {}
        return found.get("gpu")

    control_plane.wait_nodes_ready([node])
    scheduler = start_scheduler(conf=NODE_LOCK_CONF)
    scheduler.wait_ready()
    create_scheduled_pod(control_plane, namespace, "first", scheduler_name, {gpu: "1000"})
    wait_bound(control_plane, namespace, ["first"], scheduler, timeout=30.0)
    value = lock()
    assert value is not None and value.endswith("Z")
    create_scheduled_pod(control_plane, namespace, "second", scheduler_name, {gpu: "1000"})
    # Held: several cycles pass and the second pod stays off the node.
    time.sleep(5)
    assert node_of(control_plane, namespace, "second") == ""
    # And says why: Volcano's allocation error, then which lock holds since when.
    wait_until(
        "the second pod's pending reason",
        lambda: (
            "lock annotation 'gpu' on node" in pending_reason(control_plane, namespace, "second")
        ),
        diagnose=lambda: scheduler.log(40),
    )
    reason = pending_reason(control_plane, namespace, "second")
    assert reason.startswith(
        f"node {node} locked for lockname gpushare node {node} has been locked within 5"
        " minutes (lock annotation 'gpu' on node"
    ), reason
    # The device plugin's release: the lock annotation removed.
    control_plane.request(
        "PATCH",
        path,
        {"metadata": {"annotations": {"gpu": None}}},
        content_type="application/merge-patch+json",
    )
    wait_bound(control_plane, namespace, ["second"], scheduler, timeout=30.0)
    assert lock() is not None


MIG_CONFIG = """nvidia:
  resourceCountName: volcano.sh/vgpu-number
  resourceMemoryName: volcano.sh/vgpu-memory
  resourceCoreName: volcano.sh/vgpu-cores
  knownMigGeometries:
  - models: ["A100-SXM4-80GB"]
    allowedGeometries:
    - group: group1
      geometries:
      - {name: 1g.10gb, memory: 10240, count: 7}
    - group: group2
      geometries:
      - {name: 2g.20gb, memory: 20480, count: 3}
      - {name: 1g.10gb, memory: 10240, count: 1}
"""


def test_vgpu_mig_instance_from_the_geometries_config_map(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    scheduler_name: str,
    make_node: MakeNode,
) -> None:
    """The geometries ConfigMap named by KnownGeometriesCM* is read from the API; a pod on a
    node registering mig gets a MIG instance in its bind annotations."""
    control_plane.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "gpu-geometries"},
            "data": {"device-config.yaml": MIG_CONFIG},
        },
        namespace,
    )
    vgpu = {
        "volcano.sh/vgpu-number": "10",
        "volcano.sh/vgpu-memory": "81920",
        "volcano.sh/vgpu-cores": "100",
    }
    register = "GPU-mig-0,10,81920,NVIDIA-A100-SXM4-80GB,true,mig:"
    node = make_node(
        "mig", {**KWOK_BASE, **vgpu}, annotations={"volcano.sh/node-vgpu-register": register}
    )
    conf = VGPU_CONF + (
        "      deviceshare.KnownGeometriesCMName: gpu-geometries\n"
        f"      deviceshare.KnownGeometriesCMNamespace: {namespace}\n"
    )
    control_plane.wait_nodes_ready([node])
    scheduler = start_scheduler(conf=conf)
    scheduler.wait_ready()
    create_scheduled_pod(
        control_plane,
        namespace,
        "mig",
        scheduler_name,
        {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "15000"},
        {"volcano.sh/vgpu-mode": "mig"},
    )
    wait_bound(control_plane, namespace, ["mig"], scheduler, timeout=30.0)
    annotations = annotations_of(control_plane, namespace, "mig")
    assert annotations["volcano.sh/vgpu-ids-new"] == "GPU-mig-0[group2-0],NVIDIA,15000,0:"
