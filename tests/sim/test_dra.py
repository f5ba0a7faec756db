"""DRA in simulate: kube-scheduler's dynamicresources plugin as Volcano's predicates plugin
runs it (PreFilter, Filter, Reserve, PreBind) and the resourceclaim controller's part.

The allocator's rules follow ``k8s.io/dynamic-resource-allocation/structured`` (its
``allocator_test.go`` cases are the model for the ``test_allocator_*`` ones): devices of a
DeviceClass whose CEL selectors match, a request's own selectors, ``count`` (default 1) or
``allocationMode: All``, ``matchAttribute`` constraints, each device given once, slices per
node / node selector / all nodes, incomplete pools skipped.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guides.guide_sim import node, simulate, task, vcjob
from tests.sim.dra_fixtures import (
    allocated_devices,
    claim,
    claim_spec,
    claim_template,
    device_class,
    gpu,
    pod_claims,
    request,
    resource_slice,
)

GPU_CLASS = device_class("gpu.example.com")


def _job(name: str, replicas: int, template: str = "one-gpu", **spec: Any) -> dict[str, Any]:
    return vcjob(
        name,
        [task("worker", replicas, **pod_claims(template=template))],
        minAvailable=spec.pop("minAvailable", 1),
        **spec,
    )


def _nodes_of(report: dict[str, Any], prefix: str) -> dict[str, str | None]:
    return {
        key: entry.get("node")
        for key, entry in report["pods"].items()
        if key.split("/", 1)[1].startswith(prefix)
    }


def test_pod_runs_only_where_its_device_is(tmp_path: Path) -> None:
    objects = [
        node("n1"),
        node("n2"),
        node("n3"),
        GPU_CLASS,
        resource_slice("n2-gpus", [gpu("gpu-0")], node="n2"),
        claim_template("one-gpu"),
        _job("train", 1),
    ]
    report, final, _ = simulate(tmp_path, objects)
    assert _nodes_of(report, "train-") == {"default/train-worker-0": "n2"}
    assert list(allocated_devices(final).values()) == [["n2/gpu-0"]]
    (made,) = [o for (k, _, _), o in final.items() if k == "ResourceClaim"]
    assert made["metadata"]["ownerReferences"][0]["name"] == "train-worker-0"
    assert made["status"]["reservedFor"][0]["name"] == "train-worker-0"
    # The JSON report's claims (docs/simulate.md, "DRA") and the queue's allocated devices.
    (shown,) = report["resourceClaims"].values()
    assert shown == {
        "allocated": ["gpu.example.com/n2/gpu-0"],
        "node": "n2",
        "reservedFor": ["train-worker-0"],
    }
    assert report["queues"]["default"]["allocated"]["deviceclass/gpu.example.com"] == "1"
    assert made["status"]["allocation"]["nodeSelector"]["nodeSelectorTerms"][0]["matchFields"][0][
        "values"
    ] == ["n2"]


def test_devices_are_never_given_twice(tmp_path: Path) -> None:
    objects = [
        node("n1"),
        node("n2"),
        GPU_CLASS,
        resource_slice("n1-gpus", [gpu("gpu-0"), gpu("gpu-1")], node="n1"),
        resource_slice("n2-gpus", [gpu("gpu-0")], node="n2"),
        claim_template("one-gpu"),
        _job("train", 4),
    ]
    report, final, _ = simulate(tmp_path, objects)
    placed = _nodes_of(report, "train-")
    assert sorted(n for n in placed.values() if n) == ["n1", "n1", "n2"]
    devices = [d for found in allocated_devices(final).values() for d in found]
    assert sorted(devices) == ["n1/gpu-0", "n1/gpu-1", "n2/gpu-0"]
    pending = [key for key, n in placed.items() if n is None]
    assert len(pending) == 1
    assert "cannot allocate all claims" in str(report["unschedulable"])


def test_count_and_selectors(tmp_path: Path) -> None:
    """Two devices of model H100 with 40Gi or more: only n2 has two such."""
    spec = claim_spec(
        request(
            count=2,
            selectors=(
                'device.attributes["gpu.example.com"].model == "H100"',
                'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
            ),
        )
    )
    objects = [
        node("n1"),
        node("n2"),
        GPU_CLASS,
        resource_slice(
            "n1-gpus", [gpu("gpu-0", "H100"), gpu("gpu-1", "H100", memory="20Gi")], node="n1"
        ),
        resource_slice("n2-gpus", [gpu("gpu-0", "H100"), gpu("gpu-1", "H100")], node="n2"),
        claim_template("two-h100", spec),
        _job("train", 1, template="two-h100"),
    ]
    report, final, _ = simulate(tmp_path, objects)
    assert _nodes_of(report, "train-") == {"default/train-worker-0": "n2"}
    assert list(allocated_devices(final).values()) == [["n2/gpu-0", "n2/gpu-1"]]


def test_device_class_selectors_apply(tmp_path: Path) -> None:
    objects = [
        node("n1"),
        node("n2"),
        device_class("a100", 'device.attributes["gpu.example.com"].model == "A100"'),
        resource_slice("n1-gpus", [gpu("gpu-0", "T4")], node="n1"),
        resource_slice("n2-gpus", [gpu("gpu-0", "A100")], node="n2"),
        claim_template("one-gpu", claim_spec(request(device_class_name="a100"))),
        _job("train", 1),
    ]
    report, _, _ = simulate(tmp_path, objects)
    assert _nodes_of(report, "train-") == {"default/train-worker-0": "n2"}


def test_allocation_mode_all_takes_every_matching_device(tmp_path: Path) -> None:
    spec = claim_spec(request(mode="All"))
    objects = [
        node("n1"),
        GPU_CLASS,
        resource_slice("n1-gpus", [gpu("gpu-0"), gpu("gpu-1"), gpu("gpu-2")], node="n1"),
        claim_template("all-gpus", spec),
        _job("train", 2, template="all-gpus"),
    ]
    report, final, _ = simulate(tmp_path, objects)
    assert sorted(allocated_devices(final).values()) == [["n1/gpu-0", "n1/gpu-1", "n1/gpu-2"]]
    assert sorted(str(n) for n in _nodes_of(report, "train-").values()) == ["None", "n1"]


def test_match_attribute_keeps_devices_together(tmp_path: Path) -> None:
    """Two devices with the same ``numa`` attribute: n1 has one per NUMA node, n2 two on one."""

    def numa_gpu(name: str, numa: int) -> dict[str, Any]:
        device = gpu(name)
        device["attributes"]["numa"] = {"int": numa}
        return device

    spec = claim_spec(request(count=2), constraints=[{"matchAttribute": "gpu.example.com/numa"}])
    objects = [
        node("n1"),
        node("n2"),
        GPU_CLASS,
        resource_slice("n1-gpus", [numa_gpu("gpu-0", 0), numa_gpu("gpu-1", 1)], node="n1"),
        resource_slice("n2-gpus", [numa_gpu("gpu-0", 1), numa_gpu("gpu-1", 1)], node="n2"),
        claim_template("pair", spec),
        _job("train", 1, template="pair"),
    ]
    report, _, _ = simulate(tmp_path, objects)
    assert _nodes_of(report, "train-") == {"default/train-worker-0": "n2"}


def test_slice_for_labelled_nodes_and_all_nodes(tmp_path: Path) -> None:
    """A network-attached device reachable from the nodes of rack a (nodeSelector)."""
    selector = {
        "nodeSelectorTerms": [
            {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]}
        ]
    }
    objects = [
        node("n1", labels={"rack": "b"}),
        node("n2", labels={"rack": "a"}),
        GPU_CLASS,
        resource_slice("rack-a", [gpu("gpu-0")], pool="rack-a", nodeSelector=selector),
        claim_template("one-gpu"),
        _job("train", 2),
    ]
    report, final, _ = simulate(tmp_path, objects)
    placed = _nodes_of(report, "train-")
    assert sorted(str(n) for n in placed.values()) == ["None", "n2"]
    (allocation,) = [
        o["status"]["allocation"]
        for (k, _, _), o in final.items()
        if k == "ResourceClaim" and (o.get("status") or {}).get("allocation")
    ]
    assert allocation["nodeSelector"] == selector


def test_incomplete_pool_is_not_used(tmp_path: Path) -> None:
    objects = [
        node("n1"),
        GPU_CLASS,
        resource_slice("n1-a", [gpu("gpu-0")], node="n1", slice_count=2),
        claim_template("one-gpu"),
        _job("train", 1),
    ]
    report, _, _ = simulate(tmp_path, objects)
    assert _nodes_of(report, "train-") == {"default/train-worker-0": None}


def test_shared_claim_is_allocated_once(tmp_path: Path) -> None:
    """Two pods of one ResourceClaim (upstream's e2e "charges a shared ResourceClaim only
    once"): both run where its device is, one allocation reserved for both."""
    objects = [
        node("n1"),
        node("n2"),
        GPU_CLASS,
        resource_slice("n2-gpus", [gpu("gpu-0")], node="n2"),
        claim("shared"),
        vcjob("train", [task("worker", 2, **pod_claims(claim_name="shared"))], minAvailable=1),
    ]
    report, final, _ = simulate(tmp_path, objects)
    assert set(_nodes_of(report, "train-").values()) == {"n2"}
    shared = final[("ResourceClaim", "default", "shared")]
    assert [r["device"] for r in shared["status"]["allocation"]["devices"]["results"]] == ["gpu-0"]
    assert sorted(r["name"] for r in shared["status"]["reservedFor"]) == [
        "train-worker-0",
        "train-worker-1",
    ]


def test_devices_come_back_when_the_pod_ends(tmp_path: Path) -> None:
    """A finished pod leaves its claim; the claim made from its template is deleted and its
    device goes to the next job."""
    first = vcjob(
        "first",
        [
            task(
                "worker",
                1,
                annotations={"volcano-py.sim/run-cycles": "2"},
                **pod_claims(template="one-gpu"),
            )
        ],
        minAvailable=1,
    )
    objects = [
        node("n1"),
        GPU_CLASS,
        resource_slice("n1-gpus", [gpu("gpu-0")], node="n1"),
        claim_template("one-gpu"),
        first,
        _job("second", 1),
    ]
    report, final, _ = simulate(tmp_path, objects, "--until", "1h")
    assert report["pods"]["default/first-worker-0"]["phase"] == "Succeeded"
    assert report["pods"]["default/second-worker-0"]["node"] == "n1"
    claims = {name: o for (k, _, name), o in final.items() if k == "ResourceClaim"}
    assert [name for name in claims if name.startswith("first-")] == []
    assert list(allocated_devices(final).values()) == [["n1/gpu-0"]]


def test_missing_device_class_is_the_reason(tmp_path: Path) -> None:
    objects = [
        node("n1"),
        resource_slice("n1-gpus", [gpu("gpu-0")], node="n1"),
        claim_template("one-gpu"),
        _job("train", 1),
    ]
    report, _, _ = simulate(tmp_path, objects)
    reason = str(report["unschedulable"])
    assert "request gpu: device class gpu.example.com does not exist" in reason


def test_missing_claim_is_the_reason(tmp_path: Path) -> None:
    objects = [
        node("n1"),
        GPU_CLASS,
        vcjob("train", [task("worker", 1, **pod_claims(claim_name="nope"))], minAvailable=1),
    ]
    report, _, _ = simulate(tmp_path, objects)
    reason = str(report["unschedulable"])
    assert 'resourceclaim.resource.k8s.io "nope" not found' in reason


def test_pod_without_claims_is_untouched(tmp_path: Path) -> None:
    objects = [
        node("n1"),
        GPU_CLASS,
        resource_slice("n1-gpus", [gpu("gpu-0")], node="n1"),
        vcjob("plain", [task("worker", 2)], minAvailable=2),
    ]
    report, _, _ = simulate(tmp_path, objects)
    assert set(_nodes_of(report, "plain-").values()) == {"n1"}
