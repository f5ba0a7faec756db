"""The device resources Volcano leaves out of ordinary resource counting
(``Devices.GetIgnoredDevices``, gathered in ``IgnoredDevicesList`` by ``setNodeOthersResource``).

Of deviceshare's device kinds only HAMi's Ascend vNPU names any: once a node registers a kind
(``ascend.node_devices``), the kind's memory resource and ``<resourceName>-core`` are dropped
from every pod's request, node's allocatable, PodGroup's ``minResources`` and queue's quota, so
they are checked by the device's own fit alone. GpuShare's and MindCluster vNPU's lists are
``[""]`` (nothing) and vGPU's is empty. The cache applies the rule (``set_ignored_resources_rule``);
the scheduler builds it from the conf (``ignored_resources_rule``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from volcano_py.framework.arguments import Arguments
from volcano_py.plugins.deviceshare.ascend import ignored_resources, node_devices
from volcano_py.plugins.deviceshare.config import VnpusConfig, vnpus_config
from volcano_py.plugins.deviceshare.options import PLUGIN_NAME, DeviceShareOptions

# The last device configuration text read, per ConfigMap key: nodes are read against it often.
_PARSED: dict[str, tuple[str | None, VnpusConfig]] = {}


def _kinds(device_configs: Mapping[str, str], key: str) -> VnpusConfig:
    text = device_configs.get(key)
    cached = _PARSED.get(key)
    if cached is not None and cached[0] == text:
        return cached[1]
    parsed = vnpus_config(device_configs, key)
    _PARSED[key] = (text, parsed)
    return parsed


@dataclass(frozen=True, slots=True)
class HamiIgnoredResources:
    """The rule for one device configuration (``namespace/name``): a node's ignored resources
    are those of the HAMi Ascend kinds it registers."""

    config_key: str

    def __call__(
        self, node: Mapping[str, Any], device_configs: Mapping[str, str]
    ) -> frozenset[str]:
        names: set[str] = set()
        name = str((node.get("metadata") or {}).get("name", ""))
        for kind in _kinds(device_configs, self.config_key).configs:
            if node_devices(name, node, kind, False) is not None:
                names.update(n for n in ignored_resources(kind) if n)
        return frozenset(names)


def ignored_resources_rule(arguments: Mapping[str, Any]) -> HamiIgnoredResources | None:
    """The rule of a deviceshare entry's arguments: with ``AscendHAMiVNPUEnable`` only."""
    options = DeviceShareOptions.from_arguments(Arguments(arguments, owner=PLUGIN_NAME))
    if not options.ascend_hami_vnpu:
        return None
    return HamiIgnoredResources(options.config_key)
