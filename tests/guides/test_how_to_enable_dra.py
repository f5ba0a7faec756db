"""User guide ``how_to_enable_dra``: with a DRA driver's devices published (ResourceSlices) and
a DeviceClass, a pod that claims a device is scheduled only where the claim can be
allocated, and the claim records the allocation.

The guide's scheduler conf sets ``predicate.DynamicResourceAllocationEnable: true``; Volcano
v1.13+ no longer reads it (DRA follows the DynamicResourceAllocation feature gate, on and
locked in the Kubernetes release Volcano builds with): the same placement happens without it.
Its optional step, ``DRAPrioritizedList``: with ``firstAvailable`` alternatives the node that
satisfies an earlier one is preferred (kube-scheduler's DRA score)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.guides.guide_sim import conf_map, node, simulate, task, vcjob
from tests.sim.dra_fixtures import (
    allocated_devices,
    claim_spec,
    claim_template,
    device_class,
    gpu,
    pod_claims,
    resource_slice,
)

GUIDE_CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: drf
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
  - name: proportion
  - name: nodeorder
  - name: binpack
"""
WITHOUT_ARGUMENT = GUIDE_CONF.replace(
    "    arguments:\n      predicate.DynamicResourceAllocationEnable: true\n", ""
)


def _cluster() -> list[dict[str, Any]]:
    return [
        node("worker-1"),
        node("worker-2"),
        device_class("gpu.example.com"),
        resource_slice("worker-2-gpu", [gpu("gpu-0"), gpu("gpu-1")], node="worker-2"),
        claim_template("single-gpu"),
        vcjob(
            "dra-job",
            [task("worker", 2, **pod_claims(template="single-gpu"))],
            minAvailable=2,
        ),
    ]


@pytest.mark.parametrize("conf", [GUIDE_CONF, WITHOUT_ARGUMENT], ids=["guide", "no-argument"])
def test_claiming_pods_land_where_the_devices_are(tmp_path: Path, conf: str) -> None:
    report, objects, _ = simulate(tmp_path, [conf_map(conf), *_cluster()])
    assert {key: entry["node"] for key, entry in report["pods"].items()} == {
        "default/dra-job-worker-0": "worker-2",
        "default/dra-job-worker-1": "worker-2",
    }
    assert sorted(d for found in allocated_devices(objects).values() for d in found) == [
        "worker-2/gpu-0",
        "worker-2/gpu-1",
    ]


def test_prioritized_list_prefers_the_first_alternative(tmp_path: Path) -> None:
    """DRAPrioritizedList: an H100 if there is one, else a T4; both nodes can serve the
    claim, the one with the H100 wins."""
    spec = claim_spec(
        {
            "name": "gpu",
            "firstAvailable": [
                {
                    "name": "h100",
                    "deviceClassName": "gpu.example.com",
                    "selectors": [
                        {
                            "cel": {
                                "expression": 'device.attributes["gpu.example.com"].model == "H100"'
                            }
                        }
                    ],
                },
                {"name": "any", "deviceClassName": "gpu.example.com"},
            ],
        }
    )
    conf = """actions: "enqueue, allocate"
tiers:
- plugins:
  - name: gang
  - name: predicates
"""
    objects = [
        conf_map(conf),
        node("worker-1"),
        node("worker-2"),
        device_class("gpu.example.com"),
        resource_slice("worker-1-gpu", [gpu("gpu-0", "T4")], node="worker-1"),
        resource_slice("worker-2-gpu", [gpu("gpu-0", "H100")], node="worker-2"),
        claim_template("best-gpu", spec),
        vcjob("pick", [task("worker", 1, **pod_claims(template="best-gpu"))], minAvailable=1),
    ]
    report, final, _ = simulate(tmp_path, objects)
    assert report["pods"]["default/pick-worker-0"]["node"] == "worker-2"
    (allocation,) = [
        o["status"]["allocation"] for (kind, _, _), o in final.items() if kind == "ResourceClaim"
    ]
    assert allocation["devices"]["results"][0]["request"] == "gpu/h100"
