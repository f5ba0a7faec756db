"""User guide ``how_to_use_dra_quota`` (and docs/design/capacity-dra-support.md): the capacity
plugin limits what a queue's pods claim of a DeviceClass with ``deviceclass/<class>`` (devices)
and ``<dim>.deviceclass/<class>`` (consumable capacity) in the queue's ``capability``; a
ResourceClaimTemplate's claims and a direct ResourceClaim both count, a shared claim once;
``status.allocated`` shows what the queue holds.

Where the guide and Volcano disagree (docs/migrating-from-volcano.md), Volcano's decision is
asserted: the guide's ``guarantee: {deviceclass/...}`` is not the Queue CRD's shape
(``guarantee.resource``), the API server refuses it; its direct-claim example's
``spec.shareable`` is no field of resource.k8s.io/v1 (refused too); and two pods that must
start together (``minAvailable: 2``) on one unallocated claim never do, since the second
waits while the first's allocation is in flight (kube-scheduler's rule Volcano runs)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guides.guide_sim import conf_map, node, simulate, task, vcjob, vqueue
from tests.sim.dra_fixtures import (
    claim,
    claim_spec,
    claim_template,
    device_class,
    gpu,
    pod_claims,
    request,
    resource_slice,
)
from tests.sim.roundtrip import dump, simulate_text

CLASS = "gpu.nvidia.com"
GUIDE_CONF = """actions: "enqueue, allocate, backfill, reclaim"
tiers:
- plugins:
  - name: priority
  - name: gang
  - name: conformance
- plugins:
  - name: drf
  - name: predicates
  - name: capacity
    arguments:
      capacity.DynamicResourceAllocationEnable: true
      capacity.DRAConsumableCapacityEnable: true
  - name: nodeorder
"""


def _cluster(nodes: int = 2, gpus_per_node: int = 4) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = [conf_map(GUIDE_CONF), device_class(CLASS)]
    for index in range(1, nodes + 1):
        name = f"gpu-node-{index}"
        objects.append(node(name, cpu="64", memory="256Gi"))
        devices = [gpu(f"gpu-{i}") for i in range(gpus_per_node)]
        objects.append(resource_slice(f"{name}-gpus", devices, driver=CLASS, node=name))
    return objects


def _gpu_team(**extra: Any) -> dict[str, Any]:
    """The guide's "Whole-Card GPU Queue", its guarantee where the Queue CRD has it."""
    return vqueue(
        "gpu-team",
        capability={"cpu": "64", "memory": "256Gi", f"deviceclass/{CLASS}": "8"},
        deserved={f"deviceclass/{CLASS}": "4"},
        guarantee={"resource": {f"deviceclass/{CLASS}": "1"}},
        **extra,
    )


def _template_job(name: str, replicas: int, count: int = 2) -> list[dict[str, Any]]:
    """Option 1: a ResourceClaimTemplate, one claim of ``count`` GPUs per pod."""
    template = claim_template(
        f"{name}-template",
        claim_spec(request(device_class_name=CLASS, count=count, allocationMode="ExactCount")),
    )
    job = vcjob(
        name,
        [task("worker", replicas, **pod_claims(template=f"{name}-template"))],
        minAvailable=1,
        queue="gpu-team",
    )
    return [template, job]


def test_template_claims_count_against_the_queue(tmp_path: Path) -> None:
    """Option 1, then "Observe Queue Usage": two GPUs per pod in status.allocated."""
    report, _, _ = simulate(tmp_path, [*_cluster(), _gpu_team(), *_template_job("gpu-job", 1)])
    assert report["pods"]["default/gpu-job-worker-0"]["node"] is not None
    assert report["queues"]["gpu-team"]["allocated"][f"deviceclass/{CLASS}"] == "2"


def test_capability_caps_the_queue_below_the_cluster(tmp_path: Path) -> None:
    """capability 8 GPUs in a cluster of 12: the fifth two-GPU pod waits for quota, not for
    devices."""
    objects = [*_cluster(nodes=3), _gpu_team(), *_template_job("gpu-job", 5)]
    report, _, _ = simulate(tmp_path, objects)
    placed = [k for k, e in report["pods"].items() if e.get("node")]
    assert len(placed) == 4
    assert report["queues"]["gpu-team"]["allocated"][f"deviceclass/{CLASS}"] == "8"


def test_consumable_capacity_counts_per_device(tmp_path: Path) -> None:
    """The vGPU queue: ``count: 2`` of ``cores: 100`` uses 200 of 800 cores."""
    objects: list[dict[str, Any]] = [
        conf_map(GUIDE_CONF),
        device_class("hami-core-gpu.project-hami.io"),
    ]
    devices = []
    for index in range(4):
        device = gpu(f"gpu-{index}", allowMultipleAllocations=True)
        device["capacity"]["cores"] = {"value": "100"}
        devices.append(device)
    objects += [
        node("vgpu-node", cpu="64", memory="256Gi"),
        resource_slice("vgpu", devices, driver="hami-core-gpu.project-hami.io", node="vgpu-node"),
        vqueue(
            "vgpu-team",
            capability={"cores.deviceclass/hami-core-gpu.project-hami.io": "800"},
            deserved={"cores.deviceclass/hami-core-gpu.project-hami.io": "400"},
        ),
        claim_template(
            "vgpu",
            claim_spec(
                request(
                    device_class_name="hami-core-gpu.project-hami.io",
                    count=2,
                    capacity={"requests": {"cores": "100"}},
                )
            ),
        ),
        vcjob(
            "vgpu-job",
            [task("worker", 1, **pod_claims(template="vgpu"))],
            minAvailable=1,
            queue="vgpu-team",
        ),
    ]
    report, _, _ = simulate(tmp_path, objects)
    allocated = report["queues"]["vgpu-team"]["allocated"]
    assert allocated["deviceclass/hami-core-gpu.project-hami.io"] == "2"
    assert allocated["cores.deviceclass/hami-core-gpu.project-hami.io"] == "200"


def test_a_shared_claim_counts_once(tmp_path: Path) -> None:
    """Option 2 with pods that may start one by one (upstream's e2e does so): both run on
    the claim's devices, the queue holds its two GPUs once."""
    shared = claim("shared-gpu", claim_spec(request(device_class_name=CLASS, count=2)))
    job = vcjob(
        "shared-gpu-job",
        [task("worker", 2, **pod_claims(claim_name="shared-gpu"))],
        minAvailable=1,
        queue="gpu-team",
    )
    report, _, _ = simulate(tmp_path, [*_cluster(), _gpu_team(), shared, job])
    nodes = {e.get("node") for k, e in report["pods"].items() if "shared-gpu-job" in k}
    assert len(nodes) == 1 and None not in nodes
    assert report["queues"]["gpu-team"]["allocated"][f"deviceclass/{CLASS}"] == "2"


def test_a_gang_on_one_unallocated_claim_waits(tmp_path: Path) -> None:
    """The guide's Option 2 as written (``minAvailable: 2``): the second pod finds the claim
    being allocated for the first and waits; the gang never starts."""
    shared = claim("shared-gpu", claim_spec(request(device_class_name=CLASS, count=2)))
    job = vcjob(
        "shared-gpu-job",
        [task("worker", 2, **pod_claims(claim_name="shared-gpu"))],
        minAvailable=2,
        queue="gpu-team",
    )
    report, _, _ = simulate(tmp_path, [*_cluster(), _gpu_team(), shared, job])
    assert not [k for k, e in report["pods"].items() if e.get("node")]
    assert "in the process of being allocated" in str(report["unschedulable"])


def test_the_guides_guarantee_and_shareable_are_refused(tmp_path: Path) -> None:
    queue = vqueue("gpu-team", guarantee={f"deviceclass/{CLASS}": "1"})
    code, _, err = simulate_text(tmp_path, dump([node("n1"), queue]))
    assert code == 2
    assert f'unknown field "spec.guarantee.deviceclass/{CLASS}"' in err
    shareable = claim("shared-gpu", claim_spec(request(device_class_name=CLASS)), shareable=True)
    code, _, err = simulate_text(tmp_path, dump([node("n1"), shareable]))
    assert code == 2
    assert 'unknown field "spec.shareable"' in err
