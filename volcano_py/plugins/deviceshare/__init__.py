"""deviceshare: GPUs shared by memory or by whole cards, HAMi vGPUs and HAMi Ascend vNPUs
(``pkg/scheduler/plugins/deviceshare``, ``pkg/scheduler/api/devices/nvidia/{gpushare,vgpu}``,
``pkg/scheduler/api/devices/ascend/hami``).

Arguments (upstream's names): ``deviceshare.GPUSharingEnable`` (``volcano.sh/gpu-memory`` from
one card), ``deviceshare.GPUNumberEnable`` (whole cards, ``volcano.sh/gpu-number``),
``deviceshare.VGPUEnable`` (HAMi vGPU), ``deviceshare.AscendHAMiVNPUEnable`` (HAMi Ascend
vNPU, one kind per ``vnpus`` entry of the device config), ``deviceshare.SchedulePolicy``
(``binpack`` or ``spread``: which vGPU or vNPU card first, and their score),
``deviceshare.ScheduleWeight`` (the score's weight; no score at 0),
``deviceshare.NodeLockEnable`` (a GPU-share, vGPU or vNPU bind first takes the node's lock
annotation; ``nodelock``),
``deviceshare.GPUExclusiveRules`` (label rules whose vGPU pods never share a card;
``exclusive``),
``deviceshare.KnownGeometriesCMName`` / ``...Namespace`` (the device configuration ConfigMap,
default ``kube-system/volcano-vgpu-device-config``). GPU sharing together with GPU number, or
either with vGPU, is refused as Volcano refuses to start.

Registers a PredicateMaskFn per device kind (vectorised over nodes), for vGPU and vNPU a
TaskPredicateFn (the exact per-card fit on the nodes the mask let through) and, with a weight,
a BatchNodeOrderFn; an EventHandler picks the cards at allocation and writes them into the
pod's bind annotations (``volcano.sh/gpu-index`` + ``volcano.sh/predicate-time``; vGPU's
``volcano.sh/vgpu-ids-new``, ``devices-to-allocate``, ``vgpu-node``, ``vgpu-time``,
``bind-time``, ``bind-phase``; vNPU's ``hami.io/<kind>-devices-allocated``,
``...-devices-to-allocate``, ``huawei.com/<kind>``, ``predicate-time`` and
``hami.io/vgpu-node``, ``vgpu-time``, ``bind-time``, ``bind-phase``; MindCluster vNPU's
``huawei.com/npu-core`` and ``predicate-time``), and takes them back on deallocation.

vGPU nodes registering ``mig`` hand out MIG instances by the config's geometries (``mig``).

``deviceshare.AscendMindClusterVNPUEnable``: MindCluster's Ascend 310P vNPU (dynamic vir*
templates of a chip's AI cores; bind annotations ``huawei.com/npu-core`` and
``predicate-time``; its ``init-params`` configuration entry). With HAMi vNPU on, a registered
kind's memory and ``-core`` resources are left out of resource counting (``ignored``).

Modules: ``options`` (arguments), ``config`` (the device ConfigMap), ``requests`` (what a pod
asks), ``gpushare``, ``vgpu``, ``ascend`` and ``mindcluster`` (one device kind each;
``mindcluster_chips`` and ``mindcluster_info`` its node model and its ConfigMaps), ``nodelock``
(the node lock), ``exclusive`` (GPU exclusivity rules), ``mig`` (MIG instances), ``ignored``
(the resources left out of counting), ``plugin`` (the wiring).
"""

from __future__ import annotations

from volcano_py.plugins.deviceshare.ignored import ignored_resources_rule
from volcano_py.plugins.deviceshare.mindcluster_info import (
    INIT_PARAMS,
    INIT_PARAMS_ARGUMENTS,
    DeclaredConfiguration,
)
from volcano_py.plugins.deviceshare.options import PLUGIN_NAME
from volcano_py.plugins.deviceshare.plugin import (
    ARGUMENTS,
    REFUSED_ARGUMENTS,
    UNSUPPORTED_ARGUMENTS,
    DeviceSharePlugin,
    new,
)

# What the scheduler asks of a plugin module besides ``new``: the device resources its
# configuration makes Volcano leave out of resource counting (see ``ignored``).
IGNORED_RESOURCES_RULE = ignored_resources_rule

# The ``configurations`` entry deviceshare reads (MindCluster vNPU's ``init-params``).
CONFIGURATION_ARGUMENTS = {INIT_PARAMS: DeclaredConfiguration(INIT_PARAMS_ARGUMENTS)}

__all__ = [
    "ARGUMENTS",
    "CONFIGURATION_ARGUMENTS",
    "IGNORED_RESOURCES_RULE",
    "PLUGIN_NAME",
    "REFUSED_ARGUMENTS",
    "UNSUPPORTED_ARGUMENTS",
    "DeviceSharePlugin",
    "new",
]
