"""Volcano's device and topology user guides live: the scheduler and controllers as processes
against a real API server, kwok nodes advertising what the guides' device plugins and resource
exporter would (``volcano.sh/gpu-memory``/``gpu-number``, vGPU registrations, Numatopology),
the guides' confs and workloads as written (bare pods get their PodGroups from the controllers,
Volcano Jobs their pods). The same scenarios run in ``simulate`` in tests/guides.

* how_to_use_gpu_sharing: two pods of 1024 MiB share card 0; the guide's conf for v1.8.2 and
  earlier (``predicate.GPUSharingEnable``) is retired: the scheduler logs that once at info
  level, fits the memory as a plain resource, and a pod larger than any node says why it waits.
* how_to_use_volcano_vgpu: the hami-core pod's card in its bind annotations; a PodGroup with
  ``vgpu-podgroup-policy: spread`` on two cards; the UUID allowlist.
* how_to_use_numa_aware: the practice (16 CPUs, best-effort) lands on node-2.
* how_to_use_task_topology_plugin: the tasks of a job placed as its annotations ask.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
import test_controllers_process
import test_scheduler_process
from live_objects import KWOK_BASE, annotations_of, bare_pod, node_of, pending_reason, wait_bound
from test_controllers_process import get_job, job_manifest
from test_scheduler_process import SchedulerProcess, wait_until

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import ControlPlane

pytestmark = pytest.mark.cluster

# Fixtures of the scheduler and controllers tests, used here too.
controllers = test_controllers_process.controllers
scheduler_name = test_scheduler_process.scheduler_name
scheduler_rbac = test_scheduler_process.scheduler_rbac
start_scheduler = test_scheduler_process.start_scheduler

StartScheduler = Callable[..., SchedulerProcess]
MakeNode = Callable[..., str]
MakeNumatopology = Callable[[str, int, str], None]

GPU_SHARING_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: deviceshare
    arguments:
      deviceshare.GPUSharingEnable: true
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
OLD_GPU_SHARING_CONF = GPU_SHARING_CONF.replace(
    "  - name: deviceshare\n    arguments:\n      deviceshare.GPUSharingEnable: true\n"
    "  - name: predicates\n",
    "  - name: predicates\n    arguments:\n      predicate.GPUSharingEnable: true\n",
)
VGPU_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.SchedulePolicy: binpack
"""
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
  - name: binpack
  - name: numa-aware
    arguments:
      weight: 10
"""
TASK_TOPOLOGY_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: task-topology
    arguments:
      task-topology.weight: 10
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


def ready(control_plane: ControlPlane, names: list[str]) -> None:
    control_plane.wait_nodes_ready(names)


def device_pod(
    name: str, scheduler: str, limits: dict[str, str], annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    """A guide's bare pod (device limits only, as the guides write them)."""
    return bare_pod(
        name,
        scheduler,
        {"limits": dict(limits)},
        annotations=annotations,
        container="cuda-container",
        image="nvidia/cuda:9.0-devel",
    )


# ---------------------------------------------------------------- how_to_use_gpu_sharing


def gpu_share_node(make_node: MakeNode, role: str) -> str:
    """The guide's node: 8 cards, 89424 MiB in all."""
    capacity = {**KWOK_BASE, "volcano.sh/gpu-memory": "89424", "volcano.sh/gpu-number": "8"}
    return make_node(role, capacity)


def test_gpu_sharing_two_pods_share_card_0(
    controllers: ControllersProcess,
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_node: MakeNode,
    scheduler_name: str,
) -> None:
    node = gpu_share_node(make_node, "gpu")
    ready(control_plane, [node])
    scheduler = start_scheduler(conf=GPU_SHARING_CONF)
    scheduler.wait_ready()
    memory = {"volcano.sh/gpu-memory": "1024"}
    for name in ("gpu-pod1", "gpu-pod2"):
        control_plane.create(device_pod(name, scheduler_name, memory), namespace)
    wait_bound(control_plane, namespace, ["gpu-pod1", "gpu-pod2"], scheduler)
    for name in ("gpu-pod1", "gpu-pod2"):
        assert node_of(control_plane, namespace, name) == node
        annotations = annotations_of(control_plane, namespace, name)
        assert annotations["volcano.sh/gpu-index"] == "0"
        assert annotations["volcano.sh/predicate-time"].isdigit()


def test_gpu_sharing_old_conf_is_retired_and_says_so(
    controllers: ControllersProcess,
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_node: MakeNode,
    scheduler_name: str,
) -> None:
    nodes = [gpu_share_node(make_node, "gpu-a"), gpu_share_node(make_node, "gpu-b")]
    ready(control_plane, nodes)
    scheduler = start_scheduler(conf=OLD_GPU_SHARING_CONF)
    scheduler.wait_ready()
    # 12000 MiB: more than one card, fitted against the node's total as on Volcano.
    control_plane.create(
        device_pod("big", scheduler_name, {"volcano.sh/gpu-memory": "12000"}), namespace
    )
    wait_bound(control_plane, namespace, ["big"], scheduler)
    assert "volcano.sh/gpu-index" not in annotations_of(control_plane, namespace, "big")
    # More than any node: it waits, and its reason names deviceshare's switch.
    control_plane.create(
        device_pod("huge", scheduler_name, {"volcano.sh/gpu-memory": "100000"}), namespace
    )
    wait_until(
        "the unschedulable reason",
        lambda: (
            "deviceshare.GPUSharingEnable is off"
            in pending_reason(control_plane, namespace, "huge")
        ),
        diagnose=lambda: scheduler.log(40),
    )
    reason = pending_reason(control_plane, namespace, "huge")
    assert "Insufficient volcano.sh/gpu-memory (counted as a plain resource" in reason
    assert "predicate.GPUSharingEnable is retired" in reason
    log = scheduler.log(None)
    retired = [line for line in log.splitlines() if "predicate.GPUSharingEnable is retired" in line]
    assert len(retired) == 1, log
    # Info level ("I"), naming what replaces it; no warning mentions it.
    assert " I volcano_py.framework.conf_check: " in retired[0]
    assert "set deviceshare.GPUSharingEnable on the deviceshare plugin" in retired[0]
    assert not [line for line in log.splitlines() if " W " in line and "GPUSharing" in line]


# ---------------------------------------------------------------- how_to_use_volcano_vgpu


def vgpu_node(make_node: MakeNode, role: str, uuids: list[str]) -> str:
    capacity = {
        **KWOK_BASE,
        "volcano.sh/vgpu-number": str(10 * len(uuids)),
        "volcano.sh/vgpu-memory": str(24000 * len(uuids)),
        "volcano.sh/vgpu-cores": str(100 * len(uuids)),
    }
    register = "".join(f"{uuid},10,24000,NVIDIA-Tesla T4,true,hami-core:" for uuid in uuids)
    return make_node(role, capacity, annotations={"volcano.sh/node-vgpu-register": register})


def test_vgpu_hami_core_spread_and_uuid(
    controllers: ControllersProcess,
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_node: MakeNode,
    scheduler_name: str,
) -> None:
    suffix = namespace[-6:]
    first = [f"GPU-a-{suffix}", f"GPU-b-{suffix}"]
    wanted = f"GPU-c-{suffix}"
    nodes = [vgpu_node(make_node, "vgpu-1", first), vgpu_node(make_node, "vgpu-2", [wanted])]
    ready(control_plane, nodes)
    scheduler = start_scheduler(conf=VGPU_CONF)
    scheduler.wait_ready()
    hami = {
        "volcano.sh/vgpu-number": "1",
        "volcano.sh/vgpu-cores": "50",
        "volcano.sh/vgpu-memory": "3000",
    }
    control_plane.create(
        device_pod("hami-pod", scheduler_name, hami, {"volcano.sh/vgpu-mode": "hami-core"}),
        namespace,
    )
    control_plane.create(
        device_pod(
            "pinned",
            scheduler_name,
            {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "3000"},
            {"volcano.sh/vgpu-use-gpuuuid": wanted},
        ),
        namespace,
    )
    # A PodGroup of two whose pods may not share a card.
    job = job_manifest("spread", scheduler_name, replicas=2)
    template = job["spec"]["tasks"][0]["template"]
    template["metadata"] = {"annotations": {"volcano.sh/vgpu-podgroup-policy": "spread"}}
    template["spec"]["nodeSelector"] = {"kubernetes.io/hostname": nodes[0]}
    template["spec"]["containers"][0]["resources"]["limits"] = {
        "volcano.sh/vgpu-number": "1",
        "volcano.sh/vgpu-memory": "2000",
    }
    control_plane.create(job, namespace)
    spread = ["spread-worker-0", "spread-worker-1"]
    wait_bound(control_plane, namespace, ["hami-pod", "pinned", *spread], scheduler)

    def card(name: str) -> str:
        return annotations_of(control_plane, namespace, name)["volcano.sh/vgpu-ids-new"].split(",")[
            0
        ]

    hami_annotations = annotations_of(control_plane, namespace, "hami-pod")
    assert hami_annotations["volcano.sh/vgpu-ids-new"].endswith(",NVIDIA,3000,50:")
    assert hami_annotations["volcano.sh/bind-phase"] == "allocating"
    assert (node_of(control_plane, namespace, "pinned"), card("pinned")) == (nodes[1], wanted)
    assert {card(name) for name in spread} == set(first)
    assert get_job(control_plane, namespace, "spread")["spec"]["minAvailable"] == 2


# ---------------------------------------------------------------- how_to_use_numa_aware


def test_numa_aware_practice_lands_on_node_2(
    controllers: ControllersProcess,
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_node: MakeNode,
    make_numatopology: MakeNumatopology,
    scheduler_name: str,
) -> None:
    nodes = [
        make_node("node-1", {**KWOK_BASE, "cpu": "24"}),
        make_node("node-2", {**KWOK_BASE, "cpu": "40"}),
    ]
    ready(control_plane, nodes)
    make_numatopology(nodes[0], 12, "best-effort")
    make_numatopology(nodes[1], 20, "best-effort")
    scheduler = start_scheduler(conf=NUMA_CONF)
    scheduler.wait_ready()
    job = job_manifest("vj-test", scheduler_name, replicas=1)
    job["spec"]["tasks"][0].update(name="test", topologyPolicy="best-effort")
    job["spec"]["tasks"][0]["template"]["spec"]["containers"][0]["resources"] = {
        "limits": {"cpu": "16", "memory": "100Mi"}
    }
    control_plane.create(job, namespace)
    wait_bound(control_plane, namespace, ["vj-test-test-0"], scheduler)
    assert node_of(control_plane, namespace, "vj-test-test-0") == nodes[1]
    annotations = annotations_of(control_plane, namespace, "vj-test-test-0")
    assert annotations["volcano.sh/numa-topology-policy"] == "best-effort"


# ---------------------------------------------------------------- task-topology


def test_task_topology_annotations_place_the_tasks(
    controllers: ControllersProcess,
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    make_node: MakeNode,
    scheduler_name: str,
) -> None:
    nodes = [make_node(f"tt-{i}", {**KWOK_BASE, "cpu": "16"}) for i in range(4)]
    ready(control_plane, nodes)
    scheduler = start_scheduler(conf=TASK_TOPOLOGY_CONF)
    scheduler.wait_ready()
    job = job_manifest("tf", scheduler_name, replicas=1)
    worker = job["spec"]["tasks"][0]
    tasks = [{**worker, "name": name, "replicas": replicas} for name, replicas in (
        ("ps", 2), ("worker", 2), ("chief", 1), ("evaluator", 1)
    )]  # fmt: skip
    job["spec"].update(tasks=tasks, minAvailable=6)
    job["metadata"]["annotations"] = {
        "volcano.sh/task-topology-affinity": "ps,worker;ps,evaluator",
        "volcano.sh/task-topology-anti-affinity": "ps;worker,chief;chief,evaluator",
        "volcano.sh/task-topology-task-order": "ps,worker,chief,evaluator",
    }
    control_plane.create(job, namespace)
    names = ["tf-ps-0", "tf-ps-1", "tf-worker-0", "tf-worker-1", "tf-chief-0", "tf-evaluator-0"]
    wait_bound(control_plane, namespace, names, scheduler)
    where = {name: node_of(control_plane, namespace, name) for name in names}
    ps = {where["tf-ps-0"], where["tf-ps-1"]}
    workers = {where["tf-worker-0"], where["tf-worker-1"]}
    assert len(ps) == 2
    assert workers <= ps and where["tf-evaluator-0"] in ps
    assert where["tf-chief-0"] not in workers and where["tf-chief-0"] != where["tf-evaluator-0"]
