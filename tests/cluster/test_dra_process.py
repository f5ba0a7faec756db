"""DRA against a real API server (1.34, resource.k8s.io/v1) with kwok nodes: a pod whose
ResourceClaimTemplate asks for a device lands only on the node whose ResourceSlice has one,
and the scheduler writes the claim's allocation and ``reservedFor`` before binding (the
dynamicresources PreBind), under its least-privilege RBAC.

No kube-controller-manager runs here: the test makes the pod's claim from the template and
names it in the pod's status, as the resourceclaim controller does."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from live_objects import KWOK_BASE, bare_pod, node_of, wait_bound
from test_scheduler_process import (
    GROUP_ANNOTATION,
    SchedulerProcess,
    pod_group_manifest,
    scheduler_name,
    scheduler_rbac,
    start_scheduler,
)

from e2e.controlplane import ControlPlane

pytestmark = pytest.mark.cluster

__all__ = ["scheduler_name", "scheduler_rbac", "start_scheduler"]

StartScheduler = Callable[..., SchedulerProcess]
MakeNode = Callable[..., str]

CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
"""
DRA = "/apis/resource.k8s.io/v1"


def _claim_spec(driver: str) -> dict[str, Any]:
    return {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": driver}}]}}


def test_pod_with_a_claim_template_lands_where_the_device_is(
    start_scheduler: StartScheduler,
    control_plane: ControlPlane,
    namespace: str,
    scheduler_name: str,
    make_node: MakeNode,
    delete_afterwards: Callable[[str], None],
) -> None:
    suffix = namespace[-6:]
    plain, with_gpu = make_node("dra-plain", KWOK_BASE), make_node("dra-gpu", KWOK_BASE)
    driver = f"gpu-{suffix}.example.com"
    control_plane.wait_nodes_ready([plain, with_gpu])
    control_plane.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "DeviceClass",
            "metadata": {"name": driver},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]},
        }
    )
    delete_afterwards(f"{DRA}/deviceclasses/{driver}")
    control_plane.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": f"{with_gpu}-gpus"},
            "spec": {
                "driver": driver,
                "nodeName": with_gpu,
                "pool": {"name": with_gpu, "generation": 1, "resourceSliceCount": 1},
                "devices": [{"name": "gpu-0", "attributes": {"model": {"string": "A100"}}}],
            },
        }
    )
    delete_afterwards(f"{DRA}/resourceslices/{with_gpu}-gpus")
    control_plane.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "one-gpu"},
            "spec": {"spec": _claim_spec(driver)},
        },
        namespace,
    )
    scheduler = start_scheduler(conf=CONF)
    scheduler.wait_ready()
    control_plane.create(pod_group_manifest("trainer", 1), namespace)
    pod = control_plane.create(
        bare_pod(
            "trainer",
            scheduler_name,
            {"requests": {"cpu": "1"}, "claims": [{"name": "gpu"}]},
            annotations={GROUP_ANNOTATION: "trainer"},
            resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}],
        ),
        namespace,
    )
    # The resourceclaim controller's part.
    control_plane.create(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaim",
            "metadata": {
                "name": "trainer-gpu-abcde",
                "ownerReferences": [
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "name": "trainer",
                        "uid": pod["metadata"]["uid"],
                        "controller": True,
                        "blockOwnerDeletion": True,
                    }
                ],
            },
            "spec": _claim_spec(driver),
        },
        namespace,
    )
    control_plane.request(
        "PATCH",
        f"/api/v1/namespaces/{namespace}/pods/trainer/status",
        {
            "status": {
                "resourceClaimStatuses": [{"name": "gpu", "resourceClaimName": "trainer-gpu-abcde"}]
            }
        },
        content_type="application/merge-patch+json",
    )
    wait_bound(control_plane, namespace, ["trainer"], scheduler, timeout=30.0)
    assert node_of(control_plane, namespace, "trainer") == with_gpu
    claim = control_plane.request(
        "GET", f"{DRA}/namespaces/{namespace}/resourceclaims/trainer-gpu-abcde"
    )
    results = claim["status"]["allocation"]["devices"]["results"]
    assert [(r["driver"], r["pool"], r["device"]) for r in results] == [(driver, with_gpu, "gpu-0")]
    assert [r["name"] for r in claim["status"]["reservedFor"]] == ["trainer"]
