"""What MindCluster's Ascend components say about a node, read as Volcano's MindCluster vNPU
reads it (``plugins/deviceshare/devices/ascend/310p/vnpu/init_policy.go`` and
``third_party/mindcluster/common/{k8s,util}``).

Sources, chosen by the conf's ``init-params`` configuration (``useClusterInfoManager``,
default true):

* with ClusterD: ConfigMaps ``mindx-dl/cluster-info-device-*`` (data under the ConfigMap's own
  name: a JSON map ``mindx-dl-deviceinfo-<node>`` -> ``{DeviceList, UpdateTime, ...}``) and
  ``mindx-dl/cluster-info-node-cm`` (``mindx-dl-nodeinfo-<node>`` -> ``{NodeStatus, ...}``),
  labelled ``mx-consumer-volcano=true``;
* without: the device plugin's ``kube-system/mindx-dl-deviceinfo-<node>`` (key
  ``DeviceInfoCfg``: ``{DeviceInfo: {DeviceList, UpdateTime}, ...}``) and NodeD's
  ``mindx-dl/mindx-dl-nodeinfo-<node>`` (key ``NodeInfo``: ``{NodeInfo: {NodeStatus}}``),
  labelled ``mx-consumer-cim=true``.

Upstream's informers only see ConfigMaps with those labels; one without is named once and left
out. With ``self-maintain-available-card`` (default true) the available-card list
(``huawei.com/<type>``) is recomputed from the node's ``baseDeviceInfos`` annotation minus the
cards pods on the node hold (their ``huawei.com/<type>`` annotation), the unhealthy and the
recovering ones. The node's annotations, overlaid with the device list (when it carries an
update time) and NodeD's health status (``nodedNodeHealtyStatus``, ``Healthy`` without a
report), are what the vNPU device reads.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from volcano_py.api.task import TaskInfo
from volcano_py.plugins._kube_scheduling.podspec import mapping
from volcano_py.plugins._plugin_helpers import warn_once

log = logging.getLogger(__name__)

HW_PREFIX: Final = "huawei.com/"
ASCEND910: Final = "Ascend910"
ASCEND310P: Final = "Ascend310P"
ASCEND310: Final = "Ascend310"
BASE_DEVICE_INFO: Final = "baseDeviceInfos"
NODED_STATUS: Final = "nodedNodeHealtyStatus"
NODE_HEALTHY: Final = "Healthy"

INIT_PARAMS: Final = "init-params"
USE_CLUSTER_INFO_MANAGER: Final = "useClusterInfoManager"
SELF_MAINTAIN_AVAILABLE_CARD: Final = "self-maintain-available-card"
PRESET_VIRTUAL_DEVICE: Final = "presetVirtualDevice"
GRACE_OVER_TIME: Final = "grace-over-time"

MINDX_NAMESPACE: Final = "mindx-dl"
DEVICE_PLUGIN_NAMESPACE: Final = "kube-system"
DEVICE_INFO_PREFIX: Final = "mindx-dl-deviceinfo-"
NODED_INFO_PREFIX: Final = "mindx-dl-nodeinfo-"
CLUSTER_DEVICE_INFO: Final = "cluster-info-device-"
CLUSTER_NODE_INFO: Final = "cluster-info-node-cm"
DEVICE_INFO_KEY: Final = "DeviceInfoCfg"
NODE_INFO_KEY: Final = "NodeInfo"
CLUSTERD_LABEL: Final = ("mx-consumer-volcano", "true")
DEVICE_PLUGIN_LABEL: Final = ("mx-consumer-cim", "true")

# Past these, upstream skips a pod's card list (``GetActivePodUsedDevFromNode``).
_POD_ANNOTATION_MAX: Final = 1024 * 1024
_MAX_DEVICES: Final = 100
_NAMESPACE_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
_POD_NAME_RE: Final = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")


# ``init-params``' arguments Volcano reads (MindCluster's own scheduler plugin reads more, such
# as ``grace-over-time``: Volcano does not, so the conf check names them as unknown).
INIT_PARAMS_ARGUMENTS: Final = frozenset(
    {USE_CLUSTER_INFO_MANAGER, SELF_MAINTAIN_AVAILABLE_CARD, PRESET_VIRTUAL_DEVICE}
)


@dataclass(frozen=True, slots=True)
class DeclaredConfiguration:
    """A ``configurations`` entry's arguments, in the shape the conf check reads."""

    ARGUMENTS: frozenset[str]
    UNSUPPORTED_ARGUMENTS: frozenset[str] = frozenset()


def _go_bool_text(value: Any) -> str:
    """An ``init-params`` value as upstream's ``map[string]string`` holds it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


@dataclass(frozen=True, slots=True)
class InitParams:
    """``init-params``' switches (``getUseClusterDConfig``, ``getSelfMaintainAvailCard``)."""

    use_cluster_d: bool = True
    self_maintain_available_card: bool = True
    # Read by upstream and never acted on: its vNPUs are always made on demand.
    preset_virtual_device: bool = False

    @classmethod
    def from_arguments(cls, arguments: Mapping[str, Any]) -> InitParams:
        def switch(key: str, default: bool) -> bool:
            if key not in arguments:
                return default
            return _go_bool_text(arguments[key]) == "true"

        preset = switch(PRESET_VIRTUAL_DEVICE, False)
        if preset:
            warn_once(
                log,
                f"deviceshare: {INIT_PARAMS} {PRESET_VIRTUAL_DEVICE}: true (static vNPUs) has"
                " no effect: Volcano's MindCluster vNPU only places dynamic vNPUs",
            )
        return cls(
            switch(USE_CLUSTER_INFO_MANAGER, True),
            switch(SELF_MAINTAIN_AVAILABLE_CARD, True),
            preset,
        )


@dataclass(frozen=True, slots=True)
class NodeDeviceInfo:
    """``NodeDeviceInfoWithID``: the device list (``huawei.com/<type>[-suffix]`` -> cards)."""

    device_list: Mapping[str, str] = field(default_factory=dict)
    update_time: int = 0


def _go_field(entry: Mapping[str, Any], name: str) -> Any:
    """A JSON object's field as Go's decoder finds it: exact name first, then any case."""
    if name in entry:
        return entry[name]
    lowered = name.lower()
    for key, value in entry.items():
        if str(key).lower() == lowered:
            return value
    return None


def _device_info(raw: Any) -> NodeDeviceInfo:
    if not isinstance(raw, Mapping):
        raise ValueError("not a JSON object")
    devices = _go_field(raw, "DeviceList")
    if devices is not None and not isinstance(devices, Mapping):
        raise ValueError("DeviceList is not an object")
    update = _go_field(raw, "UpdateTime")
    if update is not None and (isinstance(update, bool) or not isinstance(update, int)):
        raise ValueError("UpdateTime is not an integer")
    return NodeDeviceInfo(
        {str(k): str(v) for k, v in (devices or {}).items() if isinstance(v, str)},
        int(update or 0),
    )


def _node_status(raw: Any) -> str:
    if not isinstance(raw, Mapping):
        raise ValueError("not a JSON object")
    status = _go_field(raw, "NodeStatus")
    return status if isinstance(status, str) else ""


@dataclass(slots=True)
class ClusterDeviceInfo:
    """Every node's device list and NodeD status from the session's ConfigMaps."""

    devices: dict[str, NodeDeviceInfo] = field(default_factory=dict)
    node_status: dict[str, str] = field(default_factory=dict)


def _labelled(obj: Mapping[str, Any], label: tuple[str, str], where: str) -> bool:
    labels = mapping(mapping(obj.get("metadata")).get("labels"))
    if labels.get(label[0]) == label[1]:
        return True
    warn_once(
        log,
        f"deviceshare: {where} lacks the label {label[0]}={label[1]}: Volcano's MindCluster"
        " informer does not see it; ignored",
    )
    return False


def _json_data(obj: Mapping[str, Any], key: str, where: str) -> Any:
    data = mapping(obj.get("data"))
    if key not in data:
        warn_once(log, f"deviceshare: {where} has no data key {key!r}; ignored")
        return None
    text = data[key]
    if text == "":
        return None
    try:
        return json.loads(str(text))
    except json.JSONDecodeError as error:
        warn_once(log, f"deviceshare: {where} data.{key}: not JSON ({error}); ignored")
        return None


def read_config_maps(
    config_maps: Mapping[str, Mapping[str, Any]], use_cluster_d: bool
) -> ClusterDeviceInfo:
    """The device lists and NodeD statuses the chosen source publishes (``cmmgr.go``)."""
    found = ClusterDeviceInfo()
    for key in sorted(config_maps):
        obj = config_maps[key]
        namespace, _, name = key.partition("/")
        where = f"ConfigMap {key}"
        try:
            if use_cluster_d:
                _read_cluster_d(found, obj, namespace, name, where)
            else:
                _read_device_plugin(found, obj, namespace, name, where)
        except ValueError as error:
            warn_once(log, f"deviceshare: {where}: {error}; ignored")
    return found


def _labelled_document(
    obj: Mapping[str, Any], label: tuple[str, str], key: str, where: str
) -> Mapping[str, Any] | None:
    """The JSON object under ``data.<key>`` of a ConfigMap the informer sees; None when it
    is unlabelled or carries nothing; ValueError when it holds JSON that is not an object."""
    if not _labelled(obj, label, where):
        return None
    document = _json_data(obj, key, where)
    if document is None:
        return None
    if not isinstance(document, Mapping):
        raise ValueError(f"data.{key} is not a JSON object")
    return document


def _read_cluster_d(
    found: ClusterDeviceInfo, obj: Mapping[str, Any], namespace: str, name: str, where: str
) -> None:
    if namespace != MINDX_NAMESPACE:
        return
    if name.startswith(CLUSTER_DEVICE_INFO):
        document = _labelled_document(obj, CLUSTERD_LABEL, name, where)
        for entry, raw in (document or {}).items():
            node = str(entry).removeprefix(DEVICE_INFO_PREFIX)
            found.devices[node] = _device_info(raw)
    elif name == CLUSTER_NODE_INFO:
        document = _labelled_document(obj, CLUSTERD_LABEL, name, where)
        for entry, raw in (document or {}).items():
            found.node_status[str(entry).removeprefix(NODED_INFO_PREFIX)] = _node_status(raw)


def _read_device_plugin(
    found: ClusterDeviceInfo, obj: Mapping[str, Any], namespace: str, name: str, where: str
) -> None:
    if namespace == DEVICE_PLUGIN_NAMESPACE and name.startswith(DEVICE_INFO_PREFIX):
        document = _labelled_document(obj, DEVICE_PLUGIN_LABEL, DEVICE_INFO_KEY, where)
        if document is not None:
            found.devices[name.removeprefix(DEVICE_INFO_PREFIX)] = _device_info(
                _go_field(document, "DeviceInfo") or {}
            )
    elif namespace == MINDX_NAMESPACE and name.startswith(NODED_INFO_PREFIX):
        document = _labelled_document(obj, DEVICE_PLUGIN_LABEL, NODE_INFO_KEY, where)
        if document is not None:
            found.node_status[name.removeprefix(NODED_INFO_PREFIX)] = _node_status(
                _go_field(document, "NodeInfo") or {}
            )


def read_config_maps_cached(
    memo: dict[str, Any], config_maps: Mapping[str, Mapping[str, Any]], use_cluster_d: bool
) -> ClusterDeviceInfo:
    """``read_config_maps``, read again only when a ConfigMap changed (``memo``: kept from
    one session to the next)."""
    objects = tuple(config_maps.items())
    seen = memo.get("read")
    if (
        seen is not None
        and seen[0] == use_cluster_d
        and len(seen[1]) == len(objects)
        and all(k == k2 and v is v2 for (k, v), (k2, v2) in zip(seen[1], objects, strict=True))
    ):
        found: ClusterDeviceInfo = seen[2]
        return found
    found = read_config_maps(config_maps, use_cluster_d)
    memo["read"] = (use_cluster_d, objects, found)
    return found


# ---- the available-card list (third_party/mindcluster/common/util)


def device_type(device_list: Iterable[str]) -> str:
    """``GetDeviceType``: the first key naming a chip family (Ascend910 when none does)."""
    for key in device_list:
        if ASCEND910 in key:
            return ASCEND910
        if ASCEND310P in key:
            return ASCEND310P
        if ASCEND310 in key:
            return ASCEND310
    return ASCEND910


def _listed(device_list: Mapping[str, str], key: str) -> list[str]:
    text = device_list.get(key, "")
    return text.split(",") if text else []


def available_devices(device_list: Mapping[str, str]) -> tuple[str, list[str]]:
    """``GetAvailableDevInfo``."""
    key = HW_PREFIX + device_type(device_list)
    return key, _listed(device_list, key)


def unhealthy_devices(device_list: Mapping[str, str]) -> tuple[str, list[str]]:
    """``GetUnhealthyDevInfo``."""
    key = HW_PREFIX + device_type(device_list) + "-Unhealthy"
    return key, _listed(device_list, key)


def recovering_devices(device_list: Mapping[str, str]) -> tuple[str, list[str]]:
    """``GetRecoveringDevInfo``."""
    key = HW_PREFIX + device_type(device_list) + "-Recovering"
    return key, _listed(device_list, key)


def node_devices_from_annotation(annotations: Mapping[str, Any]) -> list[str]:
    """``GetNodeDevListFromAnno``: the whole cards of the ``baseDeviceInfos`` annotation
    (virtual ones, ``Ascend310P-2c-180-3``, left out); ValueError when absent or not JSON."""
    if BASE_DEVICE_INFO not in annotations:
        raise ValueError(f"node annotation[{BASE_DEVICE_INFO}] does not exist")
    try:
        document = json.loads(str(annotations[BASE_DEVICE_INFO]))
    except json.JSONDecodeError as error:
        raise ValueError("unmarshal node device list failed") from error
    if document is None:
        return []
    if not isinstance(document, Mapping):
        raise ValueError("unmarshal node device list failed")
    return [str(name) for name in document if len(str(name).split("-")) <= 2]


def active_pod_devices(tasks: Iterable[TaskInfo], kind: str) -> list[str]:
    """``GetActivePodUsedDevFromNode``: the cards the node's unfinished pods hold, from their
    ``huawei.com/<kind>`` annotation."""
    used: list[str] = []
    key = HW_PREFIX + kind
    for task in tasks:
        pod = task.pod
        if mapping(pod.get("status")).get("phase") in ("Failed", "Succeeded"):
            continue
        meta = mapping(pod.get("metadata"))
        name, namespace = str(meta.get("name") or ""), str(meta.get("namespace") or "")
        if len(name) > 253 or not _POD_NAME_RE.fullmatch(name):
            continue
        if len(namespace) > 63 or not _NAMESPACE_RE.fullmatch(namespace):
            continue
        text = mapping(meta.get("annotations")).get(key)
        if not isinstance(text, str) or not text or len(text) > _POD_ANNOTATION_MAX:
            continue
        cards = text.split(",")
        if len(cards) > _MAX_DEVICES:
            continue
        used.extend(cards)
    return used


def node_device_info(
    info: NodeDeviceInfo,
    annotations: Mapping[str, Any],
    tasks: Iterable[TaskInfo],
    self_maintain: bool,
    now: int,
) -> NodeDeviceInfo:
    """``initNodeDeviceInfoByCmMgr``: the device list with the available cards recomputed
    when Volcano maintains them. Upstream stops copying the list where the node's card
    annotation is missing (the keys met so far, in Go's map order); here every other key is
    kept."""
    devices = dict(info.device_list)
    update_time = info.update_time
    available_key, _ = available_devices(info.device_list)
    if self_maintain and available_key in devices:
        try:
            node_cards = node_devices_from_annotation(annotations)
        except ValueError as error:
            log.debug("node device list: %s", error)
            devices.pop(available_key)
            return NodeDeviceInfo(devices, update_time)
        kind = device_type(info.device_list)
        held = set(active_pod_devices(tasks, kind))
        held.update(unhealthy_devices(info.device_list)[1])
        held.update(recovering_devices(info.device_list)[1])
        devices[available_key] = ",".join(sorted(set(node_cards) - held))
        # Upstream stamps the list with the wall clock, so that it is applied (a clock that
        # starts at 0, as a test's may, must not keep it out).
        update_time = max(now, 1)
    return NodeDeviceInfo(devices, update_time)


def merged_annotations(
    node_annotations: Mapping[str, Any], info: NodeDeviceInfo, node_status: str
) -> dict[str, str]:
    """``syncAnnotation`` + ``updateNPUNodeDeviceInfos``: the node's annotations, the device
    list over them when it has an update time, and NodeD's health status."""
    merged = {str(k): str(v) for k, v in node_annotations.items()}
    if info.update_time > 0:
        merged.update(info.device_list)
    merged[NODED_STATUS] = node_status or NODE_HEALTHY
    return merged
