"""DRA objects (resource.k8s.io/v1) for simulate tests: device classes, the ResourceSlices a
driver publishes, claims and claim templates."""

from __future__ import annotations

from typing import Any


def device_class(name: str, *selectors: str, driver: str | None = None) -> dict[str, Any]:
    expressions = list(selectors) or [f'device.driver == "{driver or name}"']
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "DeviceClass",
        "metadata": {"name": name},
        "spec": {"selectors": [{"cel": {"expression": e}} for e in expressions]},
    }


def gpu(name: str, model: str = "A100", memory: str = "80Gi", **extra: Any) -> dict[str, Any]:
    return {
        "name": name,
        "attributes": {"model": {"string": model}, "index": {"int": int(name.rsplit("-", 1)[-1])}},
        "capacity": {"memory": {"value": memory}},
        **extra,
    }


def resource_slice(
    name: str,
    devices: list[dict[str, Any]],
    driver: str = "gpu.example.com",
    node: str | None = None,
    pool: str | None = None,
    generation: int = 1,
    slice_count: int = 1,
    **where: Any,
) -> dict[str, Any]:
    spec: dict[str, Any] = {
        "driver": driver,
        "pool": {
            "name": pool or node or name,
            "generation": generation,
            "resourceSliceCount": slice_count,
        },
        "devices": devices,
        **where,
    }
    if node is not None:
        spec["nodeName"] = node
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": spec,
    }


def request(
    name: str = "gpu",
    device_class_name: str = "gpu.example.com",
    count: int | None = None,
    mode: str | None = None,
    selectors: tuple[str, ...] = (),
    **extra: Any,
) -> dict[str, Any]:
    exactly: dict[str, Any] = {"deviceClassName": device_class_name, **extra}
    if count is not None:
        exactly["count"] = count
    if mode is not None:
        exactly["allocationMode"] = mode
    if selectors:
        exactly["selectors"] = [{"cel": {"expression": e}} for e in selectors]
    return {"name": name, "exactly": exactly}


def claim_spec(*requests: dict[str, Any], constraints: list[Any] | None = None) -> dict[str, Any]:
    devices: dict[str, Any] = {"requests": list(requests) or [request()]}
    if constraints:
        devices["constraints"] = constraints
    return {"devices": devices}


def claim(name: str, spec: dict[str, Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {**(spec or claim_spec()), **extra},
    }


def claim_template(name: str, spec: dict[str, Any] | None = None) -> dict[str, Any]:
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"spec": spec or claim_spec()},
    }


def pod_claims(template: str | None = None, claim_name: str | None = None) -> dict[str, Any]:
    """A pod template spec's ``resourceClaims`` (one, named ``gpu``)."""
    entry: dict[str, Any] = {"name": "gpu"}
    if template is not None:
        entry["resourceClaimTemplateName"] = template
    else:
        entry["resourceClaimName"] = claim_name
    return {"resourceClaims": [entry]}


def allocated_devices(objects: dict[tuple[str, str, str], dict[str, Any]]) -> dict[str, list[str]]:
    """claim name -> the devices its allocation holds (``node/pool/device``)."""
    found = {}
    for (kind, _namespace, name), obj in objects.items():
        if kind != "ResourceClaim":
            continue
        allocation = (obj.get("status") or {}).get("allocation")
        if allocation:
            found[name] = [f"{r['pool']}/{r['device']}" for r in allocation["devices"]["results"]]
    return found
