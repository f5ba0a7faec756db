"""deviceshare's MindCluster Ascend 310P vNPU (``plugins/deviceshare/mindcluster*.py``).

Transcribed from upstream (the vNPU package itself has no tests upstream; these are the tests of
the MindCluster code it runs on):

* ``third_party/mindcluster/common/util/util_test.go``: TestVResourceAdd (2 cases),
  TestVResourceSub (1), TestVResourceBeGreater (3), TestGetDeviceType (4),
  TestGetNodeDevListFromAnno (3), TestGetActivePodUsedDevFromNode (6), TestGetAvailableDevInfo,
  TestGetUnhealthyDevInfo, TestGetRecoveringDevInfo, TestIsNPUTask (2 of 3: a nil task is Go's
  alone);
* ``third_party/mindcluster/common/k8s/cmmgr_test.go``: TestInitNodeDeviceInfoByCmMgr (5),
  TestUpdateConfigMap's "03 ... device info and operator is add" and "05 ... noded info and
  operator is add", TestUpdateConfigMapCluster's "03 obj is cluster device info add test" and
  "06 obj is cluster noded info add test";
* ``third_party/mindcluster/common/k8s/configmap_test.go``: TestInformerConfigmapFilter (3 of
  4: "not a ConfigMap" cannot happen here);
* ``pkg/scheduler/api/node_info_test.go``: TestNodeInfo_AddPod with
  ``AscendMindClusterVNPUEnable`` (2 cases: pods without a vNPU request leave the device as it
  was);
* ``docs/user-guide/how_to_use_vnpu.md``: the table "Effect of DVPP and Level Configurations"
  (12 rows).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event
from volcano_py.plugins.deviceshare import mindcluster, new
from volcano_py.plugins.deviceshare.mindcluster import MindClusterDevices, build_devices
from volcano_py.plugins.deviceshare.mindcluster_chips import (
    VResource,
    can_downgrade,
    downgrade,
    filter_node,
    template_for,
    vnpu_ask,
)
from volcano_py.plugins.deviceshare.mindcluster_info import (
    InitParams,
    NodeDeviceInfo,
    active_pod_devices,
    available_devices,
    device_type,
    node_device_info,
    node_devices_from_annotation,
    read_config_maps,
    recovering_devices,
    unhealthy_devices,
)

# ---- util_test.go


@pytest.mark.parametrize(
    ("name", "base", "added", "expected"),
    [
        ("01-Add return aicore=1 and aicpu=1", VResource(0, 0), VResource(1, 1), VResource(1, 1)),
        ("02-Add return aicore=2 and aicpu=2", VResource(1, 1), VResource(1, 1), VResource(2, 2)),
    ],
)
def test_vresource_add(name: str, base: VResource, added: VResource, expected: VResource) -> None:
    """TestVResourceAdd."""
    assert base.add(added) == expected


def test_vresource_sub() -> None:
    """TestVResourceSub: 01-Sub return aicore=1 and aicpu=1."""
    assert VResource(1, 1).sub(VResource(1, 1)) == VResource(0, 0)


@pytest.mark.parametrize(
    ("name", "left", "right", "expected"),
    [
        ("01-BeGreater return true when res less than vr", VResource(0, 0), VResource(1, 1), False),
        ("02-BeGreater ... res greater than vr", VResource(1, 1), VResource(0, 0), True),
        ("03-BeGreater return true when res equal to vr", VResource(1, 1), VResource(1, 1), True),
    ],
)
def test_vresource_be_greater(name: str, left: VResource, right: VResource, expected: bool) -> None:
    """TestVResourceBeGreater."""
    assert left.be_greater(right) is expected


@pytest.mark.parametrize(
    ("name", "devices", "expected"),
    [
        ("01 device type is Ascend910", {"huawei.com/Ascend910": "Ascend910-0"}, "Ascend910"),
        ("02 device type is Ascend310", {"huawei.com/Ascend310": "Ascend310-0"}, "Ascend310"),
        ("03 device type is Ascend310P", {"huawei.com/Ascend310P": "Ascend310P-0"}, "Ascend310P"),
        ("04 device type is invalid", {"invalid key": "Ascend910-0"}, "Ascend910"),
    ],
)
def test_device_type(name: str, devices: dict[str, str], expected: str) -> None:
    """TestGetDeviceType."""
    assert device_type(devices) == expected


BASE_DEVICES = {
    name: {"IP": f"192.168.1.{i}", "SuperDeviceID": 0}
    for i, name in enumerate(["Ascend910-0", "Ascend910-1", "Ascend910-2", "Ascend910-2c-180-3"])
}


def test_node_devices_from_annotation() -> None:
    """TestGetNodeDevListFromAnno: virtual cards left out; absent; not JSON."""
    found = node_devices_from_annotation({"baseDeviceInfos": json.dumps(BASE_DEVICES)})
    assert sorted(found) == ["Ascend910-0", "Ascend910-1", "Ascend910-2"]
    with pytest.raises(ValueError, match=r"node annotation\[baseDeviceInfos\] does not exist"):
        node_devices_from_annotation({})
    with pytest.raises(ValueError, match="unmarshal node device list failed"):
        node_devices_from_annotation({"baseDeviceInfos": "{not json"})


def _pod_task(
    name: str,
    namespace: str = "default",
    annotations: dict[str, str] | None = None,
    phase: str = "Running",
    labels: dict[str, str] | None = None,
    containers: list[dict[str, Any]] | None = None,
    node: str = "",
) -> TaskInfo:
    pod = {
        "metadata": {
            "name": name,
            "namespace": namespace,
            "uid": f"uid-{namespace}-{name}",
            "annotations": annotations or {},
            "labels": labels or {},
        },
        "spec": {"containers": containers or [], "nodeName": node},
        "status": {"phase": phase},
    }
    return TaskInfo.from_pod(pod)


POD1 = _pod_task("pod1", annotations={"huawei.com/Ascend910": "Ascend910-0"})
POD2 = _pod_task("pod2", annotations={"huawei.com/Ascend910": "Ascend910-2"})
SUCCESS_POD = _pod_task("pod2", annotations={"huawei.com/Ascend910": "Ascend910-2"}, phase="Failed")
INVALID_NAME_POD = _pod_task("???", annotations={"huawei.com/Ascend910": "Ascend910-0"})
INVALID_NS_POD = _pod_task("pod1", "???", annotations={"huawei.com/Ascend910": "Ascend910-0"})
NO_ANNOTATION_POD = _pod_task("pod1")
EMPTY_ANNOTATION_POD = _pod_task("pod1", annotations={"huawei.com/Ascend910": ""})


@pytest.mark.parametrize(
    ("name", "tasks", "expected"),
    [
        ("01 ... success", [POD1, POD2], ["Ascend910-0", "Ascend910-2"]),
        ("02 ... success, pod success", [POD1, SUCCESS_POD], ["Ascend910-0"]),
        ("03 ... pod name and namespace is invalid", [INVALID_NAME_POD, INVALID_NS_POD], []),
        ("04 ... annotation does not exist", [POD1, NO_ANNOTATION_POD], ["Ascend910-0"]),
        ("05 ... annotation does not exist", [POD1, NO_ANNOTATION_POD], ["Ascend910-0"]),
        ("06 ... annotation does not exist", [POD1, EMPTY_ANNOTATION_POD], ["Ascend910-0"]),
    ],
)
def test_active_pod_devices(name: str, tasks: list[TaskInfo], expected: list[str]) -> None:
    """TestGetActivePodUsedDevFromNode."""
    assert sorted(active_pod_devices(tasks, "Ascend910")) == expected


AVAILABLE_910 = "Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7"


def fake_device_list() -> dict[str, str]:
    """util_test.go's FakeDeviceList."""
    return {
        "huawei.com/Ascend910": AVAILABLE_910,
        "huawei.com/Ascend910-NetworkUnhealthy": "Ascend910-1",
        "huawei.com/Ascend910-Unhealthy": "Ascend910-0",
        "huawei.com/Ascend910-Recovering": "Ascend910-0",
    }


def test_available_unhealthy_and_recovering_devices() -> None:
    """TestGetAvailableDevInfo, TestGetUnhealthyDevInfo, TestGetRecoveringDevInfo."""
    assert available_devices(fake_device_list()) == (
        "huawei.com/Ascend910",
        AVAILABLE_910.split(","),
    )
    assert unhealthy_devices(fake_device_list()) == (
        "huawei.com/Ascend910-Unhealthy",
        ["Ascend910-0"],
    )
    assert recovering_devices(fake_device_list()) == (
        "huawei.com/Ascend910-Recovering",
        ["Ascend910-0"],
    )


# ---- cmmgr_test.go

CARDS_910 = [f"Ascend910-{i}" for i in range(8)]


def _held(cards: list[str], name: str) -> TaskInfo:
    return _pod_task(name, annotations={"huawei.com/Ascend910": ",".join(cards)})


@pytest.mark.parametrize(
    ("name", "self_maintain", "first", "second", "expected"),
    [
        (
            "01 the card used by the pod are consecutive",
            True,
            CARDS_910[0:3],
            CARDS_910[3:6],
            "Ascend910-6,Ascend910-7",
        ),
        (
            "02 the card used by the pod are out of order",
            True,
            ["Ascend910-5", "Ascend910-1"],
            ["Ascend910-4", "Ascend910-3"],
            "Ascend910-0,Ascend910-2,Ascend910-6,Ascend910-7",
        ),
        (
            "03 the card used by the pod are duplicated",
            True,
            ["Ascend910-5", "Ascend910-1"],
            ["Ascend910-4", "Ascend910-4"],
            "Ascend910-0,Ascend910-2,Ascend910-3,Ascend910-6,Ascend910-7",
        ),
        (
            "04 the card used by the pod is empty",
            True,
            ["Ascend910-5", "Ascend910-7", "Ascend910-1"],
            [],
            "Ascend910-0,Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-6",
        ),
        (
            "05 selfMaintainAvailCard is false",
            False,
            CARDS_910[0:3],
            CARDS_910[3:6],
            ",".join(CARDS_910),
        ),
    ],
)
def test_node_device_info(
    name: str, self_maintain: bool, first: list[str], second: list[str], expected: str
) -> None:
    """TestInitNodeDeviceInfoByCmMgr (cmmgr_test's FakeDeviceList: all eight cards
    available, none unhealthy)."""
    devices = {
        "huawei.com/Ascend910": ",".join(CARDS_910),
        "huawei.com/Ascend910-NetworkUnhealthy": "",
        "huawei.com/Ascend910-Unhealthy": "",
    }
    info = NodeDeviceInfo(devices, 1700000003)
    base = {"baseDeviceInfos": json.dumps({card: {"IP": ""} for card in CARDS_910})}
    tasks = [_held(first, "task1"), _held(second, "task2")]
    got = node_device_info(info, base, tasks, self_maintain, 1700000009)
    assert got.device_list["huawei.com/Ascend910"] == expected


def _config_map(
    namespace: str, name: str, data: dict[str, str], labels: dict[str, str]
) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
        "data": data,
    }


def test_update_config_map_from_the_device_plugin_and_noded() -> None:
    """TestUpdateConfigMap "03 ... device info and operator is add" and "05 ... noded info and
    operator is add": the device plugin's and NodeD's ConfigMaps, read without ClusterD."""
    device_info = _config_map(
        "kube-system",
        "mindx-dl-deviceinfo-node0",
        {
            "DeviceInfoCfg": json.dumps(
                {"DeviceInfo": {"DeviceList": fake_device_list(), "UpdateTime": 5}}
            )
        },
        {"mx-consumer-cim": "true"},
    )
    node_info = _config_map(
        "mindx-dl",
        "mindx-dl-nodeinfo-node0",
        {"NodeInfo": json.dumps({"NodeInfo": {"NodeStatus": "PreSeparate"}})},
        {"mx-consumer-cim": "true"},
    )
    cache = SchedulerCache()
    cache.apply_event("ConfigMap", "ADDED", device_info)
    cache.apply_event("ConfigMap", "ADDED", node_info)
    found = read_config_maps(cache.mindcluster_config_maps, use_cluster_d=False)
    assert found.devices["node0"] == NodeDeviceInfo(fake_device_list(), 5)
    assert found.node_status == {"node0": "PreSeparate"}
    # Read with ClusterD, they are not the source.
    assert read_config_maps(cache.mindcluster_config_maps, use_cluster_d=True).devices == {}
    cache.apply_event("ConfigMap", "DELETED", device_info)
    assert read_config_maps(cache.mindcluster_config_maps, use_cluster_d=False).devices == {}


def test_update_config_map_cluster() -> None:
    """TestUpdateConfigMapCluster "03 obj is cluster device info add test" and "06 obj is
    cluster noded info add test"; unlabelled ones are not seen."""
    devices = {"mindx-dl-deviceinfo-node0": {"DeviceList": fake_device_list(), "UpdateTime": 7}}
    statuses = {"mindx-dl-nodeinfo-node0": {"NodeStatus": "Healthy"}}
    config_maps = {
        "mindx-dl/cluster-info-device-0": _config_map(
            "mindx-dl",
            "cluster-info-device-0",
            {"cluster-info-device-0": json.dumps(devices)},
            {"mx-consumer-volcano": "true"},
        ),
        "mindx-dl/cluster-info-node-cm": _config_map(
            "mindx-dl",
            "cluster-info-node-cm",
            {"cluster-info-node-cm": json.dumps(statuses)},
            {"mx-consumer-volcano": "true"},
        ),
    }
    found = read_config_maps(config_maps, use_cluster_d=True)
    assert found.devices == {"node0": NodeDeviceInfo(fake_device_list(), 7)}
    assert found.node_status == {"node0": "Healthy"}
    unlabelled = {
        key: {**obj, "metadata": {**obj["metadata"], "labels": {}}}
        for key, obj in config_maps.items()
    }
    assert read_config_maps(unlabelled, use_cluster_d=True).devices == {}


@pytest.mark.parametrize(
    ("name", "namespace", "config_map", "kept"),
    [
        ("02-InformerConfigmapFilter not device info and node info", "default", "other", False),
        ("03-InformerConfigmapFilter device info", "kube-system", "mindx-dl-deviceinfo-n", True),
        ("04-InformerConfigmapFilter node info", "mindx-dl", "mindx-dl-nodeinfo-n", True),
    ],
)
def test_informer_config_map_filter(name: str, namespace: str, config_map: str, kept: bool) -> None:
    """TestInformerConfigmapFilter: the cache keeps MindCluster's ConfigMaps only."""
    cache = SchedulerCache()
    cache.apply_event("ConfigMap", "ADDED", _config_map(namespace, config_map, {}, {}))
    assert (f"{namespace}/{config_map}" in cache.mindcluster_config_maps) is kept


def test_is_npu_task() -> None:
    """TestIsNPUTask "01 ... npu resource available" and "02 ... no npu resource": only a
    pod asking a ``huawei.com/`` resource has its chips counted."""
    npu = _pod_task(
        "p",
        containers=[{"name": "c", "resources": {"requests": {"huawei.com/Ascend910": "8"}}}],
    )
    assert any("huawei.com/" in name for name in npu.resreq.scalar_resources)
    assert not any("huawei.com/" in name for name in _pod_task("q").resreq.scalar_resources)


# ---- the guide's template table


@pytest.mark.parametrize(
    ("cores", "dvpp", "level", "downgraded", "expected"),
    [
        (1, "null", "low", False, "vir01"),
        (1, "null", "high", False, "vir01"),
        (2, "null", "low", False, "vir02_1c"),
        (2, "null", "high", False, "vir02"),
        (2, "null", "high", True, "vir02_1c"),
        (4, "yes", "low", False, "vir04_4c_dvpp"),
        (4, "no", "low", False, "vir04_3c_ndvpp"),
        (4, "null", "low", False, "vir04_3c"),
        (4, "yes", "high", False, "vir04_4c_dvpp"),
        (4, "no", "high", False, "vir04_3c_ndvpp"),
        (4, "null", "high", False, "vir04"),
        (4, "null", "high", True, "vir04_3c"),
    ],
)
def test_guide_template_table(
    cores: int, dvpp: str, level: str, downgraded: bool, expected: str
) -> None:
    """how_to_use_vnpu.md, "Effect of DVPP and Level Configurations"."""
    from volcano_py.plugins.deviceshare.mindcluster_chips import TEMPLATE_BY_RESOURCE, TEMPLATES

    request = TEMPLATES[template_for(cores, level, dvpp)]
    if downgraded:
        assert can_downgrade(request)
        request = downgrade(request)
    assert TEMPLATE_BY_RESOURCE[request] == expected
    if dvpp == "yes":
        assert not can_downgrade(request)


# ---- a session's devices

LABELS = {
    "accelerator": "huawei-Ascend310P",
    "servertype": "Ascend310P-8",
    "node.kubernetes.io/npu.chip.name": "310P3",
}


def _node(name: str, chips: int, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    notes = {"huawei.com/Ascend310P": ",".join(f"Ascend310P-{i}" for i in range(chips))}
    resources = {
        "cpu": "64",
        "memory": "256Gi",
        "pods": "110",
        "huawei.com/npu-core": str(8 * chips),
    }
    return {
        "metadata": {
            "name": name,
            "labels": dict(LABELS),
            "annotations": {**notes, **(annotations or {})},
        },
        "status": {"allocatable": resources, "capacity": dict(resources)},
    }


def vnpu_task(
    name: str,
    cores: int,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    node: str = "",
) -> TaskInfo:
    resources = {"huawei.com/npu-core": str(cores)}
    task = _pod_task(
        name,
        annotations=annotations,
        labels={"ring-controller.atlas": "ascend-310P", **(labels or {})},
        containers=[{"name": "c", "resources": {"requests": resources, "limits": resources}}],
        node=node,
    )
    task.status = TaskStatus.RUNNING if node else TaskStatus.PENDING
    return task


def _session(
    nodes: list[dict[str, Any]],
    running: dict[str, list[TaskInfo]] | None = None,
    config_maps: dict[str, Any] | None = None,
) -> tuple[MindClusterDevices, list[NodeInfo]]:
    matrix = NodeMatrix()
    infos = []
    for obj in nodes:
        info = NodeInfo(name=obj["metadata"]["name"], matrix=matrix, row=matrix.add_row())
        info.set_node(obj)
        for task in (running or {}).get(info.name, []):
            info.add_task(task)
        infos.append(info)
    return build_devices(infos, matrix, config_maps or {}, InitParams(), 1700000000), infos


def test_pods_without_a_vnpu_request_leave_the_device_as_it_was() -> None:
    """TestNodeInfo_AddPod with AscendMindClusterVNPUEnable: "add 2 running non-owner pod" and
    "add 1 unknown pod and pod memory req > idle"."""
    plain = [_pod_task("p1", node="n"), _pod_task("p2", node="n", phase="Unknown")]
    devices, _ = _session([_node("n", 2)], {"n": plain})
    node = devices.nodes[0]
    assert node.valid and not node.templates and not devices.holders
    assert all(chip.free == VResource(8, 7, "yes") for chip in node.chips.values())


def test_a_node_needs_its_labels_and_chip_list() -> None:
    missing = _node("n", 2)
    del missing["metadata"]["labels"]["servertype"]
    no_chips = _node("m", 2)
    del no_chips["metadata"]["annotations"]["huawei.com/Ascend310P"]
    devices, _ = _session([missing, no_chips, _node("ok", 2)])
    assert [devices.nodes[row].valid for row in range(3)] == [False, False, True]
    assert devices.nodes[2].total == VResource(16, 14, "no")
    task = vnpu_task("p", 2)
    mask = devices.mask(task)
    assert mask is not None and list(mask.passed) == [False, False, True]
    assert "no node label <servertype>" not in str(mask.reason(0))
    assert "invalid VNode" in str(mask.reason(0))


def test_whole_chips_and_templates_are_written_and_given_back() -> None:
    devices, _ = _session([_node("n", 2)])
    whole = vnpu_task("whole", 8)
    assert devices.allocate(whole, 0, 42) == ""
    assert whole.pod_annotations["huawei.com/npu-core"] == "0"
    assert whole.pod_annotations["predicate-time"] == "42"
    node = devices.nodes[0]
    assert node.chips[0].free.aicore == 0 and node.templates == {"": {"default/whole"}}
    # A template pod does not share a node whose pods hold whole chips.
    mask = devices.mask(vnpu_task("seg", 2))
    assert mask is not None and not mask.passed[0]
    assert devices.release("default/whole")
    assert node.chips[0].free == VResource(8, 7, "null") and not node.templates
    seg = vnpu_task("seg", 2)
    assert devices.allocate(seg, 0, 43) == ""
    assert seg.pod_annotations["huawei.com/npu-core"] == "0-vir02_1c"
    assert node.chips[0].free.aicore == 6 and node.chips[0].segment


def test_running_pods_count_on_their_chips() -> None:
    """A pod's ``huawei.com/npu-core`` annotation says what it holds; without
    ``huawei.com/AscendReal`` its chip is unstable and takes no other template pod."""
    stable = vnpu_task(
        "a",
        4,
        annotations={"huawei.com/npu-core": "1-vir04_3c", "huawei.com/AscendReal": "x_0"},
        node="n",
    )
    devices, _ = _session([_node("n", 2)], {"n": [stable]})
    node = devices.nodes[0]
    assert node.chips[1].free == VResource(4, 4, "null") and node.chips[1].segment
    assert node.templates == {"vir04_3c": {"default/a"}}
    # The next vir04_3c pod goes to the least free chip that fits: chip 1.
    task = vnpu_task("b", 4)
    mask = devices.mask(task)
    assert mask is not None and mask.passed[0]
    devices.allocate(task, 0, 1)
    assert task.pod_annotations["huawei.com/npu-core"] == "1-vir04_3c"
    unstable = vnpu_task("a", 4, annotations={"huawei.com/npu-core": "1-vir04_3c"}, node="n")
    devices, _ = _session([_node("n", 2)], {"n": [unstable]})
    task = vnpu_task("b", 4)
    devices.allocate(task, 0, 1)
    assert task.pod_annotations["huawei.com/npu-core"] == "0-vir04_3c"


def test_high_pods_are_downgraded_where_no_chip_gives_their_template() -> None:
    """vir04 (4 cores, 4 AI CPUs) does not fit a chip with 3 AI CPUs left (a releasing pod
    still holds vir04 there, and holds no template any more): downgraded to vir04_3c on that
    node, and scored after the nodes it was not downgraded on."""
    held = vnpu_task(
        "a",
        4,
        annotations={"huawei.com/npu-core": "0-vir04", "huawei.com/AscendReal": "r"},
        node="tight",
    )
    held.status = TaskStatus.RELEASING
    devices, _ = _session([_node("tight", 1), _node("roomy", 1)], {"tight": [held]})
    assert devices.nodes[0].chips[0].free.aicpu == 3 and not devices.nodes[0].templates
    task = vnpu_task("b", 4, {"vnpu-level": "high"})
    mask = devices.mask(task)
    assert mask is not None and list(mask.passed) == [True, True]
    assert list(devices.downgraded["default/b"]) == [True, False]
    scores = devices.scores(task, np.array([0, 1]))
    # tight has the fewer idle cores: 8 for it (downgraded), 16 for roomy.
    assert list(scores) == [8.0, 16.0]
    devices.allocate(task, 0, 1)
    assert task.pod_annotations["huawei.com/npu-core"] == "0-vir04_3c"


def test_pre_separate_and_idle_cores() -> None:
    """NodeD's status (ClusterD's node-info ConfigMap) over the node's own annotation."""
    statuses = {
        "mindx-dl-nodeinfo-sick": {"NodeStatus": "PreSeparate"},
        "mindx-dl-nodeinfo-well": {"NodeStatus": "Healthy"},
    }
    node_cm = _config_map(
        "mindx-dl",
        "cluster-info-node-cm",
        {"cluster-info-node-cm": json.dumps(statuses)},
        {"mx-consumer-volcano": "true"},
    )
    well = _node("well", 2, {"nodedNodeHealtyStatus": "PreSeparate"})
    devices, _ = _session(
        [_node("sick", 2), well], config_maps={"mindx-dl/cluster-info-node-cm": node_cm}
    )
    mask = devices.mask(vnpu_task("p", 1))
    assert mask is not None and list(mask.passed) == [False, True]
    assert "PreSeparate" in str(mask.reason(0))
    mask = devices.mask(vnpu_task("big", 24))
    assert mask is not None and not mask.passed.any()
    assert "node not meet task request huawei.com/npu-core:24" in str(mask.reason(1))


def test_eviction_gives_the_chip_back_and_undo_restores_it() -> None:
    running = vnpu_task(
        "a",
        2,
        annotations={"huawei.com/npu-core": "0-vir02_1c", "huawei.com/AscendReal": "r"},
        node="n",
    )
    devices, _ = _session([_node("n", 1)], {"n": [running]})
    plugin = new(Arguments({"deviceshare.AscendMindClusterVNPUEnable": True}))
    plugin.mindcluster = devices
    plugin._deallocate(None, Event(running))
    chip = devices.nodes[0].chips[0]
    assert chip.free.aicore == 8 and not devices.nodes[0].templates
    # The pod keeps the annotations it was bound with.
    assert running.pod_annotations["huawei.com/npu-core"] == "0-vir02_1c"
    devices.restore(running, 0)
    assert chip.free.aicore == 6


def test_release_removes_the_speculative_annotations() -> None:
    devices, _ = _session([_node("n", 1)])
    plugin = new(Arguments({"deviceshare.AscendMindClusterVNPUEnable": True}))
    plugin.mindcluster = devices
    task = vnpu_task("p", 1)
    devices.allocate(task, 0, 1)
    plugin._deallocate(None, Event(task))
    assert "huawei.com/npu-core" not in task.pod_annotations
    assert "predicate-time" not in task.pod_annotations


# ---- the vectorised filter against the scalar one


@st.composite
def scenarios(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, list[TaskInfo]], TaskInfo]:
    nodes, running = [], {}
    templates = [
        "vir01",
        "vir02",
        "vir02_1c",
        "vir04",
        "vir04_3c",
        "vir04_3c_ndvpp",
        "vir04_4c_dvpp",
    ]
    for i in range(draw(st.integers(1, 6))):
        name = f"n{i}"
        chips = draw(st.integers(1, 4))
        status = draw(st.sampled_from(["", "PreSeparate", "Healthy"]))
        obj = _node(name, chips, {"nodedNodeHealtyStatus": status} if status else None)
        if draw(st.booleans()):
            obj["metadata"]["labels"]["servertype"] = draw(
                st.sampled_from(["Ascend310P-8", "bad", "Ascend310P-3"])
            )
        nodes.append(obj)
        pods = []
        for j in range(draw(st.integers(0, 3))):
            chip = draw(st.integers(0, chips - 1))
            whole = draw(st.integers(0, 5)) == 0
            allocation = str(chip) if whole else f"{chip}-{draw(st.sampled_from(templates))}"
            notes = {"huawei.com/npu-core": allocation}
            if draw(st.booleans()):
                notes["huawei.com/AscendReal"] = (
                    f"Ascend310P-x-{draw(st.integers(0, 4))}_{draw(st.integers(0, 4))}"
                )
            pods.append(vnpu_task(f"r{i}-{j}", 8 if whole else 2, annotations=notes, node=name))
        running[name] = pods
    labels = {}
    level = draw(st.sampled_from(["", "low", "high", "odd"]))
    if level:
        labels["vnpu-level"] = level
    dvpp = draw(st.sampled_from(["", "yes", "no", "null", "maybe"]))
    if dvpp:
        labels["vnpu-dvpp"] = dvpp
    task = vnpu_task("asking", draw(st.sampled_from([1, 2, 3, 4, 8, 16])), labels)
    return nodes, running, task


@settings(max_examples=200, deadline=None)
@given(scenarios())
def test_mask_agrees_with_filter_node(
    scenario: tuple[list[dict[str, Any]], dict[str, list[TaskInfo]], TaskInfo],
) -> None:
    nodes, running, task = scenario
    devices, _ = _session(nodes, running)
    scalar_rows = mindcluster._SCALAR_ROWS
    try:
        _check_placements(devices, task)
        # The changed rows read by the array operations too.
        mindcluster._SCALAR_ROWS = 0
        devices, _ = _session(nodes, running)
        _check_placements(devices, task)
    finally:
        mindcluster._SCALAR_ROWS = scalar_rows


def _check_placements(devices: MindClusterDevices, task: TaskInfo) -> None:
    for step in range(3):
        # The same ask again after each placement: the mask is then read again only on the
        # rows the placement changed.
        asking = vnpu_task(f"asking-{step}", vnpu_ask(task).cores, task.pod["metadata"]["labels"])
        mask = devices.mask(asking)
        assert mask is not None
        idle = devices.idle_cores()
        for row, node in devices.nodes.items():
            why, downgraded = filter_node(node, vnpu_ask(asking), asking.name, float(idle[row]))
            assert bool(mask.passed[row]) == (why == ""), (step, row, why)
            if why == "":
                assert bool(devices.downgraded[asking.key][row]) == downgraded
        passing = [int(r) for r in np.flatnonzero(mask.passed)]
        if not passing:
            return
        devices.allocate(asking, passing[0], step)


def test_init_params_is_a_known_configuration(caplog: pytest.LogCaptureFixture) -> None:
    """``init-params``: the switches Volcano reads (strings or booleans, as its string map
    holds them); ``grace-over-time``, which only MindCluster's own plugin reads, is named."""
    from volcano_py.framework.conf_check import load_conf
    from volcano_py.scheduler.registry import PluginRegistry

    warnings: list[str] = []
    conf = load_conf(
        "actions: allocate\ntiers:\n- plugins:\n  - name: deviceshare\n"
        "configurations:\n- name: init-params\n  arguments: {grace-over-time: '900',"
        " presetVirtualDevice: 'false', useClusterInfoManager: false}\n",
        PluginRegistry(),
        emit=warnings.append,
    )
    assert warnings == [
        "volcano-scheduler.conf: configurations (name 'init-params'): unknown configuration"
        " argument 'grace-over-time'; ignored"
    ]
    params = InitParams.from_arguments(conf.configurations["init-params"])
    assert params == InitParams(use_cluster_d=False, self_maintain_available_card=True)
    with caplog.at_level("WARNING"):
        assert InitParams.from_arguments({"presetVirtualDevice": "true"}).preset_virtual_device
    assert "presetVirtualDevice: true (static vNPUs) has no effect" in caplog.text


def test_a_node_unchanged_since_the_last_session_is_not_built_again() -> None:
    """The node kept from one session is shared until a session changes it (then copied),
    and built again once its pods change."""
    running = vnpu_task(
        "a",
        2,
        annotations={"huawei.com/npu-core": "0-vir02_1c", "huawei.com/AscendReal": "r"},
        node="n",
    )
    matrix = NodeMatrix()
    info = NodeInfo(name="n", matrix=matrix, row=matrix.add_row())
    info.set_node(_node("n", 2))
    info.add_task(running)
    memo: dict[str, Any] = {}
    first = build_devices([info], matrix, {}, InitParams(), 1, memo)
    second = build_devices([info], matrix, {}, InitParams(), 2, memo)
    assert second.nodes[0] is first.nodes[0]
    task = vnpu_task("b", 2)
    assert second.allocate(task, 0, 3) == ""
    # The session changed its own copy, not the kept node.
    assert second.nodes[0] is not first.nodes[0]
    assert first.nodes[0].chips[0].free.aicore == 6
    assert second.nodes[0].chips[0].free.aicore == 4
    third = build_devices([info], matrix, {}, InitParams(), 4, memo)
    assert third.nodes[0] is first.nodes[0] and third.nodes[0].chips[0].free.aicore == 6
    # A pod that changes (a new object) builds the node again.
    info.remove_task(running)
    moved = vnpu_task(
        "a",
        2,
        annotations={"huawei.com/npu-core": "1-vir02_1c", "huawei.com/AscendReal": "r"},
        node="n",
    )
    info.add_task(moved)
    fourth = build_devices([info], matrix, {}, InitParams(), 5, memo)
    assert fourth.nodes[0] is not first.nodes[0]
    assert fourth.nodes[0].chips[0].free.aicore == 8 and fourth.nodes[0].chips[1].free.aicore == 6
