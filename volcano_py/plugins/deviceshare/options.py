"""The deviceshare arguments, read as upstream's ``enablePredicate`` reads them
(``pkg/scheduler/plugins/deviceshare/deviceshare.go``).

Upstream exits (``klog.Fatal``) on two combinations; here they are refused when the
configuration is loaded (``refused_arguments``), so the scheduler does not start with them and
``simulate`` exits 2, naming the arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from volcano_py.framework.arguments import Arguments

PLUGIN_NAME: Final = "deviceshare"

GPU_SHARING_ENABLE: Final = "deviceshare.GPUSharingEnable"
NODE_LOCK_ENABLE: Final = "deviceshare.NodeLockEnable"
GPU_NUMBER_ENABLE: Final = "deviceshare.GPUNumberEnable"
VGPU_ENABLE: Final = "deviceshare.VGPUEnable"
ASCEND_MINDCLUSTER_VNPU_ENABLE: Final = "deviceshare.AscendMindClusterVNPUEnable"
ASCEND_HAMI_VNPU_ENABLE: Final = "deviceshare.AscendHAMiVNPUEnable"
SCHEDULE_POLICY: Final = "deviceshare.SchedulePolicy"
SCHEDULE_WEIGHT: Final = "deviceshare.ScheduleWeight"
KNOWN_GEOMETRIES_CM_NAME: Final = "deviceshare.KnownGeometriesCMName"
KNOWN_GEOMETRIES_CM_NAMESPACE: Final = "deviceshare.KnownGeometriesCMNamespace"
GPU_EXCLUSIVE_RULES: Final = "deviceshare.GPUExclusiveRules"

DEFAULT_CONFIG_NAME: Final = "volcano-vgpu-device-config"
DEFAULT_CONFIG_NAMESPACE: Final = "kube-system"

BINPACK: Final = "binpack"
SPREAD: Final = "spread"

# What upstream reads and volcano-py does not act on, and why; the conf check names each as
# without effect and the plugin logs the reason once.
UNPORTED: Final[Mapping[str, str]] = {
    NODE_LOCK_ENABLE: (
        "the node lock is an annotation on the Node that HAMi's device plugin clears after"
        " it read the pod's devices; volcano-py does not write it, so binds are not"
        " serialised per node"
    ),
    GPU_EXCLUSIVE_RULES: "GPU exclusivity rules are not ported yet",
}

ARGUMENTS: Final[frozenset[str]] = frozenset(
    {
        GPU_SHARING_ENABLE,
        GPU_NUMBER_ENABLE,
        VGPU_ENABLE,
        ASCEND_HAMI_VNPU_ENABLE,
        ASCEND_MINDCLUSTER_VNPU_ENABLE,
        SCHEDULE_POLICY,
        SCHEDULE_WEIGHT,
        KNOWN_GEOMETRIES_CM_NAME,
        KNOWN_GEOMETRIES_CM_NAMESPACE,
    }
)
UNSUPPORTED_ARGUMENTS: Final[frozenset[str]] = frozenset(UNPORTED)

ERR_SHARE_AND_NUMBER: Final = "can not define true in both gpu sharing and gpu number"
ERR_SHARE_AND_VGPU: Final = "gpu-share and vgpu can't be used together"


@dataclass(frozen=True, slots=True)
class DeviceShareOptions:
    gpu_sharing: bool = False
    gpu_number: bool = False
    vgpu: bool = False
    ascend_hami_vnpu: bool = False
    ascend_mindcluster_vnpu: bool = False
    schedule_policy: str = ""
    schedule_weight: int = 0
    config_name: str = DEFAULT_CONFIG_NAME
    config_namespace: str = DEFAULT_CONFIG_NAMESPACE

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> DeviceShareOptions:
        return cls(
            gpu_sharing=arguments.get_bool(GPU_SHARING_ENABLE, False),
            gpu_number=arguments.get_bool(GPU_NUMBER_ENABLE, False),
            vgpu=arguments.get_bool(VGPU_ENABLE, False),
            ascend_hami_vnpu=arguments.get_bool(ASCEND_HAMI_VNPU_ENABLE, False),
            ascend_mindcluster_vnpu=arguments.get_bool(ASCEND_MINDCLUSTER_VNPU_ENABLE, False),
            schedule_policy=arguments.get_str(SCHEDULE_POLICY, ""),
            schedule_weight=arguments.get_int(SCHEDULE_WEIGHT, 0),
            config_name=arguments.get_str(KNOWN_GEOMETRIES_CM_NAME, DEFAULT_CONFIG_NAME),
            config_namespace=arguments.get_str(
                KNOWN_GEOMETRIES_CM_NAMESPACE, DEFAULT_CONFIG_NAMESPACE
            ),
        )

    @property
    def gpushare(self) -> bool:
        """The GpuShare device is registered with either switch."""
        return self.gpu_sharing or self.gpu_number

    @property
    def config_key(self) -> str:
        return f"{self.config_namespace}/{self.config_name}"

    def conflict(self) -> str | None:
        """Upstream's fatal combinations, in its order; None when the switches agree."""
        if self.gpu_sharing and self.gpu_number:
            return ERR_SHARE_AND_NUMBER
        if self.gpushare and self.vgpu:
            return ERR_SHARE_AND_VGPU
        return None


def refused_arguments(arguments: Mapping[str, Any]) -> str | None:
    """Why Volcano would not start with these arguments (it exits), or None."""
    options = DeviceShareOptions.from_arguments(Arguments(arguments, owner=PLUGIN_NAME))
    conflict = options.conflict()
    if conflict is None:
        return None
    switches = [
        key
        for key, on in (
            (GPU_SHARING_ENABLE, options.gpu_sharing),
            (GPU_NUMBER_ENABLE, options.gpu_number),
            (VGPU_ENABLE, options.vgpu),
        )
        if on
    ]
    return f"{conflict} (true: {', '.join(switches)}; Volcano exits on this)"
