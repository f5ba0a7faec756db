"""vGPU MIG mode (``plugins/deviceshare/mig.py`` and its use in ``vgpu.py``).

Transcribed from upstream ``pkg/scheduler/api/devices/nvidia/vgpu/mig_test.go``: TestFindMatch
(7), TestAddAndSubMigUsed (4), TestMIGFactory_TryAddPod_WithMemoryFactor (2),
TestMIGFactory_AddPod_WithMemoryFactor (2), TestMIGFactory_SubPod_WithMemoryFactor (2); and
the ``knownMigGeometries`` part of ``config/config_test.go`` TestParseDeviceConfig.
``TryAddPod`` is the per-card step of the fit here (``fit`` on a one-card MIG node, then
``hold``), ``AddPod``/``SubPod`` the accounting of a running pod's annotation.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.plugins.deviceshare_helpers import (
    check_vectorised_fit,
    example_with,
    limits_pod,
    simulate,
    write_input,
)
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.plugins.deviceshare.config import (
    Geometry,
    MigGeometries,
    MigTemplate,
    NvidiaConfig,
    parse_device_config,
)
from volcano_py.plugins.deviceshare.mig import (
    NO_GROUP,
    InstanceUsage,
    MigUsage,
    add_mig_used,
    decode_mig_id,
    find_match,
    sub_mig_used,
)
from volcano_py.plugins.deviceshare.options import BINPACK, SPREAD
from volcano_py.plugins.deviceshare.requests import container_device_requests
from volcano_py.plugins.deviceshare.vgpu import (
    ASSIGNED_IDS,
    MIG,
    VgpuCard,
    VgpuDevices,
    VgpuNode,
    decode_node_devices,
    fit,
    hold,
)


def usage(group: int, *entries: tuple[str, int, list[int]]) -> MigUsage:
    return MigUsage(group, {name: InstanceUsage(memory, used) for name, memory, used in entries})


def geometry(group: str, *instances: tuple[str, int, int]) -> Geometry:
    return Geometry(group, tuple(MigTemplate(*instance) for instance in instances))


@pytest.mark.parametrize(
    ("name", "uuid", "request_memory", "in_use", "geometries", "want"),
    [
        (
            "Match 1g.10gb and available",
            "gpu-1234",
            10,
            usage(0, ("1g.10gb", 10240, [])),
            [geometry("default", ("1g.10gb", 10240, 2))],
            ("gpu-1234[default-0]", 10240),
        ),
        (
            "No match due to memory too high",
            "gpu-1234",
            20000,
            usage(0, ("1g.10gb", 10, [])),
            [geometry("default", ("1g.10gb", 10, 1))],
            None,
        ),
        ("Empty geometry list", "gpu-1234", 10, usage(0), [Geometry("", ())], None),
        (
            "No matching MIG template in geometry",
            "gpu-0002",
            20,
            usage(0, ("1g.10gb", 10, [])),
            [geometry("default", ("2g.20gb", 20, 1))],
            None,
        ),
        (
            "MIG instance already in use",
            "gpu-1234",
            10,
            usage(0, ("1g.10gb", 10, [0])),
            [geometry("default", ("1g.10gb", 10, 1))],
            None,
        ),
        (
            "Multiple templates, pick first matching and available",
            "gpu-1234",
            20,
            usage(NO_GROUP),
            [geometry("group1", ("1g.10gb", 10, 1)), geometry("group2", ("2g.20gb", 24, 1))],
            ("gpu-1234[group2-0]", 24),
        ),
        (
            "Request memory smaller than template, still match",
            "gpu-0005",
            5,
            usage(0, ("1g.10gb", 10, [])),
            [geometry("default", ("1g.10gb", 10, 1))],
            ("gpu-0005[default-0]", 10),
        ),
    ],
)
def test_find_match(
    name: str,
    uuid: str,
    request_memory: int,
    in_use: MigUsage,
    geometries: list[Geometry],
    want: tuple[str, int] | None,
) -> None:
    """TestFindMatch."""
    assert find_match(uuid, request_memory, in_use, geometries) == want


@pytest.mark.parametrize(
    ("name", "geometries", "group", "position", "memory", "slot"),
    [
        ("Add then Sub with valid position", [geometry("group-a", ("1g.10gb", 10240, 2))],
         "group-a", 1, 10240, 1),
        ("Add twice same instance, then sub once", [geometry("group-b", ("2g.20gb", 20480, 3))],
         "group-b", 1, 20480, 1),
        ("Sub from unused slot returns 0", [geometry("group-c", ("3g.30gb", 30720, 1))],
         "group-c", 0, 30720, 0),
        ("Invalid group name should return 0", [geometry("group-d", ("1g.10gb", 10240, 1))],
         "nonexistent-group", 0, 0, None),
    ],
)  # fmt: skip
def test_add_and_sub_mig_used(
    name: str,
    geometries: list[Geometry],
    group: str,
    position: int,
    memory: int,
    slot: int | None,
) -> None:
    """TestAddAndSubMigUsed: the position is taken and given back; the usage is empty
    after."""
    in_use = MigUsage()
    assert add_mig_used(in_use, geometries, group, position) == memory
    if slot is not None:
        assert any(slot in entry.used for entry in in_use.instances.values())
    assert sub_mig_used(in_use, geometries, group, position) == memory
    assert in_use.instances == {} and in_use.group == NO_GROUP


GROUP1 = (geometry("group1", ("1g.10gb", 10240, 2), ("2g.20gb", 20480, 1)),)


def mig_node(geometries: tuple[Geometry, ...] = GROUP1, memory: int = 40960) -> VgpuNode:
    card = VgpuCard(0, "gpu-1234", 10, memory, "NVIDIA-A100", True, geometries=geometries)
    return VgpuNode("node-1", MIG, {0: card})


def vgpu_pod(
    name: str, memory: int, cores: int, annotations: dict[str, str] | None = None
) -> TaskInfo:
    limits = {
        "volcano.sh/vgpu-number": "1",
        "volcano.sh/vgpu-memory": str(memory),
        "volcano.sh/vgpu-cores": str(cores),
    }
    pod = {
        "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
        "spec": {"containers": [{"name": "c", "resources": {"limits": limits}}]},
    }
    return TaskInfo.from_pod(pod)


def config(factor: int) -> NvidiaConfig:
    return NvidiaConfig(
        mig_geometries=(MigGeometries(("A100",), GROUP1),), gpu_memory_factor=factor
    )


@pytest.mark.parametrize(
    ("name", "factor", "request_memory", "core", "instance_memory", "device_memory"),
    [
        ("MemoryFactor=1, request 10MB matches 1g.10gb", 1, 10, 50, 10240, 10240),
        ("MemoryFactor=2, request 6GB matches 1g.10gb", 2, 6144, 50, 20480, 10240),
    ],
)
def test_mig_factory_try_add_pod_with_memory_factor(
    name: str, factor: int, request_memory: int, core: int, instance_memory: int,
    device_memory: int,
) -> None:  # fmt: skip
    """TestMIGFactory_TryAddPod_WithMemoryFactor: the request (times the factor) gets the
    smallest instance of group1 that holds it; the card counts the instance's memory divided
    by the factor."""
    node = mig_node()
    task = vgpu_pod("p", request_memory, core)
    requests = container_device_requests(task.pod, config(factor))
    result = fit(task, node, requests, "", memory_factor=factor)
    assert result.fits
    device = result.devices[0][0]
    assert decode_mig_id(device.uuid) is not None
    assert decode_mig_id(device.uuid)[0] == "group1"  # type: ignore[index]
    assert (device.usedmem, device.usedcores) == (request_memory, core)
    hold(node, task.key, "", result.devices, factor)
    card = node.cards[0]
    taken = next(iter(card.mig.instances.values()))
    assert taken.memory == instance_memory
    assert (card.used_num, card.used_mem, card.used_core) == (1, device_memory, core)


def _node_object(
    mode: str = "mig", card_type: str = "NVIDIA-A100", cards: int = 1
) -> dict[str, Any]:
    register = "".join(f"gpu-{i}234,10,40960,{card_type},true,{mode}:" for i in range(1, cards + 1))
    resources = {
        "volcano.sh/vgpu-number": "10",
        "volcano.sh/vgpu-memory": "40960",
        "volcano.sh/vgpu-cores": "100",
    }
    return {
        "metadata": {"name": "node-1", "annotations": {"volcano.sh/node-vgpu-register": register}},
        "status": {"allocatable": resources, "capacity": resources},
    }


def _running(name: str, ids: str) -> TaskInfo:
    task = vgpu_pod(name, 0, 50, {ASSIGNED_IDS: ids})
    task.status = TaskStatus.RUNNING
    return task


@pytest.mark.parametrize(
    ("name", "factor", "request_memory", "used_memory"),
    [
        ("AddPod with MemoryFactor=1, request 10MB matches 1g.10gb", 1, 10, 10240),
        ("AddPod with MemoryFactor=2, request 6GB matches 1g.10gb", 2, 6144, 5120),
    ],
)
def test_mig_factory_add_and_sub_pod_with_memory_factor(
    name: str, factor: int, request_memory: int, used_memory: int
) -> None:
    """TestMIGFactory_AddPod_WithMemoryFactor and TestMIGFactory_SubPod_WithMemoryFactor: a
    running pod's ``gpu-1234[group1-0]`` counts the instance's memory divided by the factor,
    and giving it back leaves the card empty."""
    info = NodeInfo(name="node-1", matrix=NodeMatrix(), row=0, node=_node_object())
    pod = _running("pod-1", f"gpu-1234[group1-0],NVIDIA,{request_memory},50:")
    info.tasks[pod.key] = pod
    devices = VgpuDevices([info], config(factor), "")
    card = devices.nodes[0].cards[0]
    assert (card.used_num, card.used_mem, card.used_core) == (1, used_memory, 50)
    assert card.pods[pod.key][:2] == (used_memory, 50)
    assert list(card.mig.instances) == ["1g.10gb"]
    devices.release(pod.key)
    assert (card.used_num, card.used_mem, card.used_core) == (0, 0, 0)
    assert card.pods == {} and card.mig.instances == {}


A100_CONFIG = """nvidia:
  resourceCountName: volcano.sh/vgpu-number
  resourceMemoryName: volcano.sh/vgpu-memory
  resourceMemoryPercentageName: volcano.sh/vgpu-memory-percentage
  resourceCoreName: volcano.sh/vgpu-cores
  gpuMemoryFactor: 1
  knownMigGeometries:
  - models: [ "A30" ]
    allowedGeometries:
      - group: group1
        geometries:
        - name: 1g.6gb
          memory: 6144
          count: 4
      - group: group2
        geometries:
        - name: 2g.12gb
          memory: 12288
          count: 2
  - models: [ "A100-SXM4-80GB", "A100-80GB-PCIe", "A100-PCIE-80GB"]
    allowedGeometries:
      - group: "group1"
        geometries:
        - name: 1g.10gb
          memory: 10240
          count: 7
      - group: "group2"
        geometries:
        - name: 2g.20gb
          memory: 20480
          count: 3
        - name: 1g.10gb
          memory: 10240
          count: 1
"""


def test_parse_device_config_geometries() -> None:
    """TestParseDeviceConfig (config_test.go), its knownMigGeometries and gpuMemoryFactor."""
    parsed = parse_device_config(A100_CONFIG, "test")
    assert parsed.gpu_memory_factor == 1
    assert parsed.mig_geometries == (
        MigGeometries(
            ("A30",),
            (geometry("group1", ("1g.6gb", 6144, 4)), geometry("group2", ("2g.12gb", 12288, 2))),
        ),
        MigGeometries(
            ("A100-SXM4-80GB", "A100-80GB-PCIe", "A100-PCIE-80GB"),
            (
                geometry("group1", ("1g.10gb", 10240, 7)),
                geometry("group2", ("2g.20gb", 20480, 3), ("1g.10gb", 10240, 1)),
            ),
        ),
    )


def test_a_bad_geometry_falls_back_to_the_defaults(caplog: pytest.LogCaptureFixture) -> None:
    text = A100_CONFIG.replace("memory: 6144", "memory: lots")
    with caplog.at_level("WARNING"):
        parsed = parse_device_config(text, "test-bad")
    assert parsed.mig_geometries == () and parsed.resource_count_name == "volcano.sh/vgpu-number"
    assert "memory: 'lots' is not an integer" in caplog.text


def test_decode_node_devices_in_mig_mode(caplog: pytest.LogCaptureFixture) -> None:
    """``decodeNodeDevices``: a mig card of a known model keeps its geometries; an unknown
    model falls back to hami-core (said)."""
    known = (MigGeometries(("A100",), GROUP1),)
    node = decode_node_devices("n", "gpu-a,10,40960,NVIDIA-A100,true,mig:", known)
    assert node is not None and node.mode == MIG and node.cards[0].geometries == GROUP1
    with caplog.at_level("WARNING"):
        other = decode_node_devices("n2", "gpu-a,10,40960,NVIDIA-H100,true,mig:", known)
    assert other is not None and other.mode == "hami-core"
    assert "no MIG geometry" in caplog.text


def test_pods_of_one_session_get_distinct_instances() -> None:
    """Two pods placed in one session get two instances (upstream records an instance only
    at the next session, and would give both the same)."""
    info = NodeInfo(name="node-1", matrix=NodeMatrix(), row=0, node=_node_object())
    devices = VgpuDevices([info], config(1), BINPACK)
    first = devices.allocate(vgpu_pod("a", 5000, 0), 0)
    second = devices.allocate(vgpu_pod("b", 5000, 0), 0)
    assert first.fits and second.fits
    assert first.devices[0][0].uuid == "gpu-1234[group1-0]"
    assert second.devices[0][0].uuid == "gpu-1234[group1-1]"
    # Then the 2g.20gb is not offered: upstream's pick only offers the names in use.
    third = devices.allocate(vgpu_pod("c", 5000, 0), 0)
    assert not third.fits


def test_mode_annotation_picks_the_nodes() -> None:
    matrix = NodeMatrix()
    mig = NodeInfo(name="node-1", matrix=matrix, row=0, node=_node_object())
    core_object = _node_object(mode="hami-core")
    core_object["metadata"]["name"] = "node-2"
    core = NodeInfo(name="node-2", matrix=matrix, row=1, node=core_object)
    devices = VgpuDevices([mig, core], config(1), "")
    for mode, passed in (
        ("mig", [True, False]),
        ("hami-core", [False, True]),
        ("x", [False, False]),
    ):
        mask = devices.mask(vgpu_pod(f"p-{mode}", 1000, 0, {"volcano.sh/vgpu-mode": mode}))
        assert mask is not None and mask.passed.tolist() == passed


# ---- vectorised mask and score == the scalar fit, MIG nodes among hami-core ones


@settings(max_examples=50, deadline=None)
@given(
    nodes=st.lists(
        st.tuples(
            st.sampled_from(["mig", "hami-core"]),
            st.integers(1, 3),
            st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3)), max_size=3),
        ),
        min_size=1,
        max_size=4,
    ),
    memory=st.sampled_from([0, 5000, 10240, 15000, 30000]),
    nums=st.integers(1, 2),
    factor=st.sampled_from([0, 2]),
    policy=st.sampled_from([BINPACK, SPREAD, ""]),
)
def test_vectorised_mask_and_score_agree_with_the_scalar_fit(
    nodes: list[tuple[str, int, list[tuple[int, int]]]],
    memory: int,
    nums: int,
    factor: int,
    policy: str,
) -> None:
    positions = ["group1-0", "group1-1", "group1-2", "group1-3"]
    infos = []
    matrix = NodeMatrix()
    for row, (mode, cards, holders) in enumerate(nodes):
        name = f"n{row}"
        obj = _node_object(mode=mode, cards=cards)
        obj["metadata"]["name"] = name
        info = NodeInfo(name=name, matrix=matrix, row=row, node=obj)
        for h, (card, position) in enumerate(holders):
            uuid = f"gpu-{card % cards + 1}234"
            device = f"{uuid}[{positions[position]}]" if mode == "mig" else uuid
            holder = _running(f"{name}-{h}", f"{device},NVIDIA,1000,10:")
            info.tasks[holder.key] = holder
        infos.append(info)
    devices = VgpuDevices(infos, config(factor), policy)
    asking = vgpu_pod("x", memory, 10).pod
    asking["spec"]["containers"][0]["resources"]["limits"]["volcano.sh/vgpu-number"] = str(nums)
    check_vectorised_fit(
        devices,
        len(infos),
        lambda attempt: TaskInfo.from_pod(
            {**asking, "metadata": {"name": f"new-{attempt}", "namespace": "default"}}
        ),
    )


# ---- simulate: the geometries ConfigMap from the input


def test_simulate_hands_out_mig_instances(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    documents = example_with(
        "vgpu.yaml",
        {
            "deviceshare.KnownGeometriesCMName": "gpu-config",
            "deviceshare.KnownGeometriesCMNamespace": "gpus",
        },
    )
    documents = [d for d in documents if d["kind"] != "Pod"]
    documents.append(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "gpu-config", "namespace": "gpus"},
            "data": {"device-config.yaml": A100_CONFIG},
        }
    )
    for doc in documents:
        if doc["kind"] == "Node" and doc["metadata"]["name"] == "gpu-2":
            doc["metadata"]["annotations"]["volcano.sh/node-vgpu-register"] = (
                "GPU-c,10,81920,NVIDIA-A100-SXM4-80GB,true,mig:"
            )
    limits = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "15000"}
    for name in ("mig-0", "mig-1"):
        documents.append(limits_pod(name, limits, annotations={"volcano.sh/vgpu-mode": "mig"}))
    report = simulate(capsys, write_input(tmp_path, documents))
    ids = sorted(
        report["pods"][f"default/{name}"]["annotations"]["volcano.sh/vgpu-ids-new"]
        for name in ("mig-0", "mig-1")
    )
    # 15000 MiB: the 2g.20gb instances of group2 (group1's 1g.10gb is too small).
    assert ids == ["GPU-c[group2-0],NVIDIA,15000,0:", "GPU-c[group2-1],NVIDIA,15000,0:"]
    assert {report["pods"][f"default/{n}"]["node"] for n in ("mig-0", "mig-1")} == {"gpu-2"}
