"""allocate_test.go TestAllocateWithDRA, through simulate: the allocate action with gang and
predicates only (DRA on, as the test's feature gate), one Inqueue PodGroup of one pod whose
container asks the request ``gpu`` of the claim ``claim1``, one node of 2 CPU / 4Gi / 10 pods,
and one ResourceSlice on it holding ``gpu-1`` of driver ``gpu.example.com``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.guides.guide_sim import bare_pod, conf_map, node, pending_reason, simulate, vqueue
from tests.sim.dra_fixtures import allocated_devices, claim, device_class, resource_slice

CONF = """\
actions: "allocate"
tiers:
- plugins:
  - name: gang
  - name: predicates
    arguments:
      predicate.DynamicResourceAllocationEnable: true
"""


def objects(class_selector: str) -> list[dict[str, Any]]:
    pod = bare_pod(
        "p1",
        "1",
        "1G",
        annotations={"scheduling.k8s.io/group-name": "pg1"},
        resourceClaims=[{"name": "gpu", "resourceClaimName": "claim1"}],
    )
    pod["spec"]["containers"][0]["resources"]["claims"] = [{"name": "gpu", "request": "gpu"}]
    group = {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg1", "namespace": "default"},
        "spec": {"minMember": 1, "queue": "c1"},
        "status": {"phase": "Inqueue"},
    }
    slice_ = resource_slice("n1-slice1", [{"name": "gpu-1"}], node="n1", pool="gpu-worker")
    return [
        conf_map(CONF),
        node("n1", cpu="2", memory="4Gi"),
        vqueue("c1", weight=1),
        device_class("gpu.example.com", class_selector),
        slice_,
        claim("claim1"),
        group,
        pod,
    ]


@pytest.mark.parametrize(
    ("case", "class_selector", "bound"),
    [
        ("Allocate normal resourceClaim successfully", "device.driver == 'gpu.example.com'", True),
        # The attribute does not exist on the device: a CEL runtime error, so no device
        # matches and the pod stays pending (its PodGroup stays Inqueue).
        ("claim cel runtime errors", 'device.attributes["some-driver"].healthy', False),
    ],
)
def test_allocate_with_dra(tmp_path: Path, case: str, class_selector: str, bound: bool) -> None:
    report, final, _ = simulate(tmp_path, objects(class_selector))
    assert report["pods"]["default/p1"]["node"] == ("n1" if bound else None), case
    if bound:
        assert allocated_devices(final) == {"claim1": ["gpu-worker/gpu-1"]}
    else:
        assert allocated_devices(final) == {}
        assert pending_reason(final, "p1")
        group = final[("PodGroup", "default", "pg1")]
        assert group["status"]["phase"] == "Inqueue"
