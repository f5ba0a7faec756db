"""The device configuration (``pkg/scheduler/api/devices/config``): the ``device-config.yaml``
key of a ConfigMap (by default ``kube-system/volcano-vgpu-device-config``), shared with HAMi's
device plugin.

Only its ``nvidia`` section matters here (the vGPU resource names). As upstream, a missing
ConfigMap, key or unparsable text means the built-in defaults; a section that is present takes
its fields as written (a field it omits is empty, as Go's YAML decoding leaves it).
Upstream reads the ConfigMap once per process; here each session reads the cached copy, so
an edited ConfigMap takes effect without a restart.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

import yaml

from volcano_py.plugins._plugin_helpers import warn_once

log = logging.getLogger(__name__)

CONFIG_FILE_KEY: Final = "device-config.yaml"

VGPU_MEMORY: Final = "volcano.sh/vgpu-memory"
VGPU_MEMORY_PERCENTAGE: Final = "volcano.sh/vgpu-memory-percentage"
VGPU_CORES: Final = "volcano.sh/vgpu-cores"
VGPU_NUMBER: Final = "volcano.sh/vgpu-number"


@dataclass(frozen=True, slots=True)
class NvidiaConfig:
    resource_count_name: str = VGPU_NUMBER
    resource_memory_name: str = VGPU_MEMORY
    resource_core_name: str = VGPU_CORES
    # Not in upstream's defaults: a memory percentage is only read when a config names it.
    resource_memory_percentage_name: str = ""
    # MIG geometries (``knownMigGeometries``): whether any are configured (MIG is not ported).
    has_mig_geometries: bool = False


DEFAULT_NVIDIA: Final = NvidiaConfig()


def _text(section: Mapping[str, Any], key: str) -> str:
    value = section.get(key)
    return value if isinstance(value, str) else ""


def parse_device_config(text: str, where: str) -> NvidiaConfig:
    """The ``nvidia`` section of a ``device-config.yaml``; the defaults when it cannot be read
    (said once)."""
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as error:
        warn_once(
            log,
            f"deviceshare: {where}: cannot parse {CONFIG_FILE_KEY}: {error};"
            " using the default device config",
        )
        return DEFAULT_NVIDIA
    if document is None:
        document = {}
    if not isinstance(document, Mapping):
        warn_once(
            log,
            f"deviceshare: {where}: {CONFIG_FILE_KEY} is not a mapping;"
            " using the default device config",
        )
        return DEFAULT_NVIDIA
    section = document.get("nvidia")
    if not isinstance(section, Mapping):
        # Go decodes a missing section to its zero value: no resource names at all.
        return NvidiaConfig("", "", "", "", False)
    return NvidiaConfig(
        resource_count_name=_text(section, "resourceCountName"),
        resource_memory_name=_text(section, "resourceMemoryName"),
        resource_core_name=_text(section, "resourceCoreName"),
        resource_memory_percentage_name=_text(section, "resourceMemoryPercentageName"),
        has_mig_geometries=bool(section.get("knownMigGeometries")),
    )


def nvidia_config(device_configs: Mapping[str, str], key: str) -> NvidiaConfig:
    """The config of ConfigMap ``key`` (``namespace/name``), or upstream's defaults."""
    text = device_configs.get(key)
    if text is None:
        return DEFAULT_NVIDIA
    return parse_device_config(text, f"ConfigMap {key}")
