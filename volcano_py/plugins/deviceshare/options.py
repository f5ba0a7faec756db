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
from volcano_py.plugins.deviceshare.exclusive import (
    GPU_EXCLUSIVE_RULES,
    ExclusiveRule,
    parse_exclusive_rules,
)

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

DEFAULT_CONFIG_NAME: Final = "volcano-vgpu-device-config"
DEFAULT_CONFIG_NAMESPACE: Final = "kube-system"

BINPACK: Final = "binpack"
SPREAD: Final = "spread"

# What upstream reads and volcano-py does not act on, and why; the conf check names each as
# without effect and the plugin logs the reason once.
UNPORTED: Final[Mapping[str, str]] = {}

ARGUMENTS: Final[frozenset[str]] = frozenset(
    {
        GPU_SHARING_ENABLE,
        NODE_LOCK_ENABLE,
        GPU_NUMBER_ENABLE,
        VGPU_ENABLE,
        ASCEND_HAMI_VNPU_ENABLE,
        ASCEND_MINDCLUSTER_VNPU_ENABLE,
        SCHEDULE_POLICY,
        SCHEDULE_WEIGHT,
        KNOWN_GEOMETRIES_CM_NAME,
        KNOWN_GEOMETRIES_CM_NAMESPACE,
        GPU_EXCLUSIVE_RULES,
    }
)
UNSUPPORTED_ARGUMENTS: Final[frozenset[str]] = frozenset(UNPORTED)

ERR_SHARE_AND_NUMBER: Final = "can not define true in both gpu sharing and gpu number"
ERR_SHARE_AND_VGPU: Final = "gpu-share and vgpu can't be used together"


@dataclass(frozen=True, slots=True)
class DeviceShareOptions:
    gpu_sharing: bool = False
    gpu_number: bool = False
    node_lock: bool = False
    vgpu: bool = False
    ascend_hami_vnpu: bool = False
    ascend_mindcluster_vnpu: bool = False
    schedule_policy: str = ""
    schedule_weight: int = 0
    config_name: str = DEFAULT_CONFIG_NAME
    config_namespace: str = DEFAULT_CONFIG_NAMESPACE
    # GPUExclusiveRules: vGPU pods matching one of these never share a card.
    exclusive_rules: tuple[ExclusiveRule, ...] = ()

    @classmethod
    def from_arguments(cls, arguments: Arguments) -> DeviceShareOptions:
        rules, problems = parse_exclusive_rules(arguments.get(GPU_EXCLUSIVE_RULES))
        for problem in problems:
            arguments.warn(problem)
        return cls(
            gpu_sharing=arguments.get_bool(GPU_SHARING_ENABLE, False),
            gpu_number=arguments.get_bool(GPU_NUMBER_ENABLE, False),
            node_lock=arguments.get_bool(NODE_LOCK_ENABLE, False),
            vgpu=arguments.get_bool(VGPU_ENABLE, False),
            ascend_hami_vnpu=arguments.get_bool(ASCEND_HAMI_VNPU_ENABLE, False),
            ascend_mindcluster_vnpu=arguments.get_bool(ASCEND_MINDCLUSTER_VNPU_ENABLE, False),
            schedule_policy=arguments.get_str(SCHEDULE_POLICY, ""),
            schedule_weight=arguments.get_int(SCHEDULE_WEIGHT, 0),
            config_name=arguments.get_str(KNOWN_GEOMETRIES_CM_NAME, DEFAULT_CONFIG_NAME),
            config_namespace=arguments.get_str(
                KNOWN_GEOMETRIES_CM_NAMESPACE, DEFAULT_CONFIG_NAMESPACE
            ),
            exclusive_rules=rules,
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
    # The switches only: the rules are read (and their problems named) by the plugin.
    switches = {k: v for k, v in arguments.items() if k != GPU_EXCLUSIVE_RULES}
    options = DeviceShareOptions.from_arguments(Arguments(switches, owner=PLUGIN_NAME))
    conflict = options.conflict()
    if conflict is None:
        return None
    named = [
        key
        for key, on in (
            (GPU_SHARING_ENABLE, options.gpu_sharing),
            (GPU_NUMBER_ENABLE, options.gpu_number),
            (VGPU_ENABLE, options.vgpu),
        )
        if on
    ]
    return f"{conflict} (true: {', '.join(named)}; Volcano exits on this)"
