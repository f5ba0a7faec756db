"""The device configuration (``pkg/scheduler/api/devices/config``): the ``device-config.yaml``
key of a ConfigMap (by default ``kube-system/volcano-vgpu-device-config``), shared with HAMi's
device plugin.

Two sections matter here: ``nvidia`` (the vGPU resource names, the MIG geometries of each GPU
model, ``knownMigGeometries``, and ``gpuMemoryFactor``) and ``vnpus`` (HAMi's Ascend
vNPU kinds: resource names, memory, AI cores and the partition templates; either the wrapper
``{hamiVnpuCore: bool, configs: [...]}`` or the legacy bare list). As upstream, a missing
ConfigMap, key or unparsable text means the built-in defaults; a section that is present takes
its fields as written (a field it omits is empty, as Go's YAML decoding leaves it).
Upstream reads the ConfigMap once per process; here each session reads the cached copy, so
an edited ConfigMap takes effect without a restart.
"""

from __future__ import annotations

import functools
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
class MigTemplate:
    """One kind of MIG instance of a geometry (``config.MigTemplate``): ``count`` instances of
    ``memory`` MiB each."""

    name: str
    memory: int
    count: int


@dataclass(frozen=True, slots=True)
class Geometry:
    """A way to partition a GPU (``config.Geometry``): its group name and instances."""

    group: str
    instances: tuple[MigTemplate, ...]


@dataclass(frozen=True, slots=True)
class MigGeometries:
    """``config.AllowedMigGeometries``: the geometries of the GPU models named."""

    models: tuple[str, ...]
    geometries: tuple[Geometry, ...]


@dataclass(frozen=True, slots=True)
class NvidiaConfig:
    resource_count_name: str = VGPU_NUMBER
    resource_memory_name: str = VGPU_MEMORY
    resource_core_name: str = VGPU_CORES
    # Not in upstream's defaults: a memory percentage is only read when a config names it.
    resource_memory_percentage_name: str = ""
    # ``knownMigGeometries``: the MIG partitions of each GPU model (none by default).
    mig_geometries: tuple[MigGeometries, ...] = ()
    # ``gpuMemoryFactor``: a MIG request's memory is matched times this (when above 1).
    gpu_memory_factor: int = 0


DEFAULT_NVIDIA: Final = NvidiaConfig()


def _text(section: Mapping[str, Any], key: str) -> str:
    value = section.get(key)
    return value if isinstance(value, str) else ""


def _mig_template(raw: Any, where: str) -> MigTemplate:
    if not isinstance(raw, Mapping):
        raise _BadField(f"{where}: not a mapping")
    memory = _int_field(raw, "memory", where)
    if memory < 0:
        raise _BadField(f"{where}.memory: {memory} is negative")
    return MigTemplate(_str_field(raw, "name", where), memory, _int_field(raw, "count", where))


def _list_field(section: Mapping[str, Any], key: str, where: str) -> list[Any]:
    value = section.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise _BadField(f"{where}.{key}: not a list")
    return value


def _mig_geometries(section: Mapping[str, Any]) -> tuple[MigGeometries, ...]:
    found = []
    for i, raw in enumerate(_list_field(section, "knownMigGeometries", "nvidia")):
        at = f"nvidia.knownMigGeometries[{i}]"
        if not isinstance(raw, Mapping):
            raise _BadField(f"{at}: not a mapping")
        models = tuple(str(model) for model in _list_field(raw, "models", at))
        geometries = []
        for j, geometry in enumerate(_list_field(raw, "allowedGeometries", at)):
            where = f"{at}.allowedGeometries[{j}]"
            if not isinstance(geometry, Mapping):
                raise _BadField(f"{where}: not a mapping")
            instances = tuple(
                _mig_template(instance, f"{where}.geometries[{k}]")
                for k, instance in enumerate(_list_field(geometry, "geometries", where))
            )
            geometries.append(Geometry(_str_field(geometry, "group", where), instances))
        found.append(MigGeometries(models, tuple(geometries)))
    return tuple(found)


def parse_device_config(text: str, where: str) -> NvidiaConfig:
    """The ``nvidia`` section of a ``device-config.yaml``; the defaults when it cannot be read
    (said once), as upstream falls back when the YAML does not decode into its types."""
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
        return NvidiaConfig("", "", "", "")
    try:
        geometries = _mig_geometries(section)
        factor = _int_field(section, "gpuMemoryFactor", "nvidia")
        if factor < 0:
            raise _BadField(f"nvidia.gpuMemoryFactor: {factor} is negative")
    except _BadField as error:
        warn_once(
            log,
            f"deviceshare: {where}: {CONFIG_FILE_KEY}: {error}; using the default device config",
        )
        return DEFAULT_NVIDIA
    return NvidiaConfig(
        resource_count_name=_text(section, "resourceCountName"),
        resource_memory_name=_text(section, "resourceMemoryName"),
        resource_core_name=_text(section, "resourceCoreName"),
        resource_memory_percentage_name=_text(section, "resourceMemoryPercentageName"),
        mig_geometries=geometries,
        gpu_memory_factor=factor,
    )


@dataclass(frozen=True, slots=True)
class VnpuTemplate:
    """A vNPU partition (``config.Template``): a name and the memory (MiB) it gives."""

    name: str
    memory: int
    ai_core: int = 0
    ai_cpu: int = 0


@dataclass(frozen=True, slots=True)
class VnpuConfig:
    """One Ascend kind (``config.VNPUConfig``); templates sorted by memory, as upstream's
    ``InitDevices`` sorts them."""

    common_word: str
    chip_name: str = ""
    resource_name: str = ""
    resource_memory_name: str = ""
    memory_allocatable: int = 0
    memory_capacity: int = 0
    ai_core: int = 0
    ai_cpu: int = 0
    templates: tuple[VnpuTemplate, ...] = ()


@dataclass(frozen=True, slots=True)
class VnpusConfig:
    """The ``vnpus`` section (``config.VNPUsConfig``)."""

    hami_vnpu_core: bool = False
    configs: tuple[VnpuConfig, ...] = ()


DEFAULT_VNPUS: Final = VnpusConfig(
    False,
    (
        VnpuConfig(
            common_word="Ascend310P",
            chip_name="310P3",
            resource_name="huawei.com/Ascend310P",
            resource_memory_name="huawei.com/Ascend310P-memory",
            memory_allocatable=21527,
            memory_capacity=24576,
            ai_core=8,
            ai_cpu=7,
            templates=(
                VnpuTemplate("vir01", 3072, 1, 1),
                VnpuTemplate("vir02", 6144, 2, 2),
                VnpuTemplate("vir04", 12288, 4, 4),
            ),
        ),
    ),
)


class _BadField(ValueError):
    pass


def _int_field(section: Mapping[str, Any], key: str, where: str) -> int:
    value = section.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int):
        raise _BadField(f"{where}.{key}: {value!r} is not an integer")
    return value


def _str_field(section: Mapping[str, Any], key: str, where: str) -> str:
    value = section.get(key)
    if value is None:
        return ""
    if isinstance(value, (dict, list)):
        raise _BadField(f"{where}.{key}: {value!r} is not a string")
    return str(value)


def _vnpu_entry(entry: Any, where: str) -> VnpuConfig:
    if not isinstance(entry, Mapping):
        raise _BadField(f"{where}: not a mapping")
    raw_templates = entry.get("templates") or []
    if not isinstance(raw_templates, list):
        raise _BadField(f"{where}.templates: not a list")
    templates = []
    for i, raw in enumerate(raw_templates):
        at = f"{where}.templates[{i}]"
        if not isinstance(raw, Mapping):
            raise _BadField(f"{at}: not a mapping")
        templates.append(
            VnpuTemplate(
                _str_field(raw, "name", at),
                _int_field(raw, "memory", at),
                _int_field(raw, "aiCore", at),
                _int_field(raw, "aiCPU", at),
            )
        )
    return VnpuConfig(
        common_word=_str_field(entry, "commonWord", where),
        chip_name=_str_field(entry, "chipName", where),
        resource_name=_str_field(entry, "resourceName", where),
        resource_memory_name=_str_field(entry, "resourceMemoryName", where),
        memory_allocatable=_int_field(entry, "memoryAllocatable", where),
        memory_capacity=_int_field(entry, "memoryCapacity", where),
        ai_core=_int_field(entry, "aiCore", where),
        ai_cpu=_int_field(entry, "aiCPU", where),
        # Stable: equal memories keep their written order (Go's sort.Slice need not).
        templates=tuple(sorted(templates, key=lambda t: t.memory)),
    )


def _vnpus_section(section: Any) -> VnpusConfig:
    if section is None:
        return VnpusConfig()
    if isinstance(section, list):
        # The legacy bare list: hamiVnpuCore is false.
        return VnpusConfig(
            False, tuple(_vnpu_entry(e, f"vnpus[{i}]") for i, e in enumerate(section))
        )
    if not isinstance(section, Mapping):
        raise _BadField("vnpus: neither a mapping nor a list")
    core = section.get("hamiVnpuCore", False)
    if not isinstance(core, bool):
        raise _BadField(f"vnpus.hamiVnpuCore: {core!r} is not a boolean")
    configs = section.get("configs") or []
    if not isinstance(configs, list):
        raise _BadField("vnpus.configs: not a list")
    return VnpusConfig(
        core, tuple(_vnpu_entry(e, f"vnpus.configs[{i}]") for i, e in enumerate(configs))
    )


def parse_vnpus_config(text: str, where: str) -> VnpusConfig:
    """The ``vnpus`` section of a ``device-config.yaml``. Upstream falls back to the whole
    default config when the text does not decode, so here too (said once); a document
    without the section has no Ascend kinds (Go's zero value)."""
    try:
        document = yaml.safe_load(text)
        if document is None:
            document = {}
        if not isinstance(document, Mapping):
            raise _BadField("not a mapping")
        return _vnpus_section(document.get("vnpus"))
    except (yaml.YAMLError, _BadField) as error:
        warn_once(
            log,
            f"deviceshare: {where}: cannot read {CONFIG_FILE_KEY}: {error};"
            " using the default device config",
        )
        return DEFAULT_VNPUS


def vnpus_config(device_configs: Mapping[str, str], key: str) -> VnpusConfig:
    """The ``vnpus`` section of ConfigMap ``key``, or upstream's default (one Ascend310P)."""
    text = device_configs.get(key)
    if text is None:
        return DEFAULT_VNPUS
    return parse_vnpus_config(text, f"ConfigMap {key}")


def nvidia_config(device_configs: Mapping[str, str], key: str) -> NvidiaConfig:
    """The config of ConfigMap ``key`` (``namespace/name``), or upstream's defaults. The same
    text gives the same object from session to session (the vGPU registrations decoded with
    its geometries are kept while it is unchanged)."""
    text = device_configs.get(key)
    if text is None:
        return DEFAULT_NVIDIA
    return _parsed_nvidia_config(text, key)


@functools.lru_cache(maxsize=16)
def _parsed_nvidia_config(text: str, key: str) -> NvidiaConfig:
    return parse_device_config(text, f"ConfigMap {key}")
