"""What a pod asks of the shared devices, read from its containers' resources as upstream
reads them (``gpushare/share.go`` getGPUMemoryOfPod / getGPUNumberOfPod,
``devices/util.go`` ExtractResourceRequest, ``vgpu/utils.go`` checkVGPUResourcesInPod).

These depend only on the pod, so the plugin memoises them on the task (``derived_fact``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.api.quantity import QuantityError, parse_quantity, quantity_value
from volcano_py.plugins._kube_scheduling.podspec import containers, mapping
from volcano_py.plugins.deviceshare.config import NvidiaConfig

GPU_MEMORY: Final = "volcano.sh/gpu-memory"
GPU_NUMBER: Final = "volcano.sh/gpu-number"

NVIDIA: Final = "NVIDIA"
# ExtractResourceRequest's "no percentage asked" marker.
NO_PERCENTAGE: Final = 101


def _limits(container: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(mapping(container.get("resources")).get("limits"))


def _requests(container: Mapping[str, Any]) -> Mapping[str, Any]:
    return mapping(mapping(container.get("resources")).get("requests"))


def _value(quantity: Any) -> int:
    """``Quantity.Value()``; an unparsable quantity counts as nothing (the API server
    refuses such pods, so this only guards hand-written input)."""
    if quantity == 0:
        return 0
    if isinstance(quantity, str) and quantity.isdigit():
        # The usual spelling of a card count or MiB amount; skips the exact Decimal parse.
        return int(quantity)
    try:
        return quantity_value(quantity)
    except QuantityError:
        return 0


def _as_int64(quantity: Any) -> int | None:
    """``Quantity.AsInt64()``: the value when it is a whole number, else None."""
    try:
        value = parse_quantity(quantity)
    except QuantityError:
        return None
    if value != value.to_integral_value():
        return None
    return int(value)


def _container_limit(container: Any, resource: str) -> int:
    # Raw watch JSON, walked directly: this runs once per pod, for every pod on a GPU node.
    resources = container.get("resources") if isinstance(container, Mapping) else None
    limits = resources.get("limits") if isinstance(resources, Mapping) else None
    if not isinstance(limits, Mapping) or resource not in limits:
        return 0
    return _value(limits[resource])


def _limit_of(pod: Mapping[str, Any], resource: str) -> int:
    """Containers' limits summed, or the largest init container's, whichever is more."""
    spec = pod.get("spec")
    if not isinstance(spec, Mapping):
        return 0
    main = sum(_container_limit(c, resource) for c in spec.get("containers") or ())
    init = max((_container_limit(c, resource) for c in spec.get("initContainers") or ()), default=0)
    return max(main, init)


def gpu_memory_of_pod(pod: Mapping[str, Any]) -> int:
    """``volcano.sh/gpu-memory`` the pod needs on one card (limits only, as upstream)."""
    return _limit_of(pod, GPU_MEMORY)


def gpu_number_of_pod(pod: Mapping[str, Any]) -> int:
    """Whole cards (``volcano.sh/gpu-number``) the pod needs."""
    return _limit_of(pod, GPU_NUMBER)


@dataclass(frozen=True, slots=True)
class ContainerDeviceRequest:
    """One container's vGPU request (``devices.ContainerDeviceRequest``)."""

    nums: int
    type: str
    memreq: int
    mem_percentage_req: int
    coresreq: int


def _limit_or_request(container: Mapping[str, Any], resource: str) -> Any:
    limits = _limits(container)
    if resource in limits:
        return limits[resource]
    return _requests(container).get(resource)


def _int32(value: int) -> int:
    """Go's ``int32(x)`` conversion (wraps)."""
    return (value + 2**31) % 2**32 - 2**31


def container_device_requests(
    pod: Mapping[str, Any], config: NvidiaConfig, device_type: str = NVIDIA
) -> tuple[ContainerDeviceRequest, ...]:
    """ExtractResourceRequest: one entry per container asking the count or the memory
    resource (limits), init containers not counted."""
    found: list[ContainerDeviceRequest] = []
    count_name, memory_name = config.resource_count_name, config.resource_memory_name
    for container in containers(pod):
        limits = _limits(container)
        if count_name in limits:
            nums = _as_int64(limits[count_name]) or 0
        elif memory_name in limits:
            nums = 1
        else:
            continue
        memreq = 0
        memory = _limit_or_request(container, memory_name)
        if memory is not None:
            memreq = _int32(_as_int64(memory) or 0)
        percentage = NO_PERCENTAGE
        if config.resource_memory_percentage_name:
            asked = _limit_or_request(container, config.resource_memory_percentage_name)
            if asked is not None:
                value = _as_int64(asked)
                if value is not None:
                    percentage = _int32(value)
        if percentage == NO_PERCENTAGE and memreq == 0:
            percentage = 100
        cores = 0
        if config.resource_core_name:
            asked = _limit_or_request(container, config.resource_core_name)
            if asked is not None:
                cores = _int32(_as_int64(asked) or 0)
        found.append(ContainerDeviceRequest(_int32(nums), device_type, memreq, percentage, cores))
    return tuple(found)


def has_vgpu_request(pod: Mapping[str, Any], config: NvidiaConfig) -> bool:
    """checkVGPUResourcesInPod: a container limits the vGPU memory or count resource."""
    names = (config.resource_memory_name, config.resource_count_name)
    return any(name in _limits(c) for c in containers(pod) for name in names)
