"""deviceshare's HAMi Ascend vNPU (``plugins/deviceshare/ascend.py``).

Transcribed from upstream ``pkg/scheduler/api/devices/ascend/hami/device_info_test.go``:
Test_trimMemory (16 cases), Test_fit (8), TestAscendDevicesFilterNodeErrorClassification (3),
TestAscendDevice_GetNodeDevices_HAMiVnpuCore (3), Test_verifyReq (3),
TestAscendDevices_AddResource (8 of 9: the nil-receiver case is Go's alone),
TestHAMiReleaseReturnsSpeculativeAnnotationKeys, TestHAMiReleaseKeepsCommittedAnnotations,
TestCalScore (7). TestAllocateAddsNodeLockAscendWhenEnabled is in tests/operator/test_binder.py
(the binder writes the node lock).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import StatusCode, TaskStatus
from volcano_py.cli.main import main
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.event import Event
from volcano_py.plugins.deviceshare import new
from volcano_py.plugins.deviceshare.ascend import (
    AscendAsk,
    AscendCard,
    AscendDevices,
    AscendNode,
    add_resource,
    ascend_ask,
    cal_score,
    fit,
    node_devices,
    score_node,
    select_devices,
    trim_memory,
    verify_req,
)
from volcano_py.plugins.deviceshare.config import (
    DEFAULT_VNPUS,
    VnpuConfig,
    VnpuTemplate,
    parse_vnpus_config,
)
from volcano_py.plugins.deviceshare.options import BINPACK, SPREAD
from volcano_py.plugins.deviceshare.requests import ContainerDeviceRequest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# device_info_test.go's config_yaml (the vnpus part; the legacy bare-list form).
CONFIG_YAML = """
vnpus:
- chipName: 910A
  commonWord: Ascend910A
  resourceName: huawei.com/Ascend910A
  resourceMemoryName: huawei.com/Ascend910A-memory
  memoryAllocatable: 32768
  memoryCapacity: 32768
  aiCore: 30
  templates:
    - {name: vir02, memory: 2184, aiCore: 2}
    - {name: vir04, memory: 4369, aiCore: 4}
    - {name: vir08, memory: 8738, aiCore: 8}
    - {name: vir16, memory: 17476, aiCore: 16}
- chipName: 910B2
  commonWord: Ascend910B2
  resourceName: huawei.com/Ascend910B2
  resourceMemoryName: huawei.com/Ascend910B2-memory
  memoryAllocatable: 65536
  memoryCapacity: 65536
  aiCore: 24
  aiCPU: 6
  templates:
    - {name: vir03_1c_8g, memory: 8192, aiCore: 3, aiCPU: 1}
    - {name: vir06_1c_16g, memory: 16384, aiCore: 6, aiCPU: 1}
    - {name: vir12_3c_32g, memory: 32768, aiCore: 12, aiCPU: 3}
- chipName: 310P3
  commonWord: Ascend310P
  resourceName: huawei.com/Ascend310P
  resourceMemoryName: huawei.com/Ascend310P-memory
  memoryAllocatable: 21527
  memoryCapacity: 24576
  aiCore: 8
  aiCPU: 7
  templates:
    - {name: vir01, memory: 3072, aiCore: 1, aiCPU: 1}
    - {name: vir02, memory: 6144, aiCore: 2, aiCPU: 2}
    - {name: vir04, memory: 12288, aiCore: 4, aiCPU: 4}
nvidia:
  resourceCountName: volcano.sh/vgpu-number
"""

KINDS = parse_vnpus_config(CONFIG_YAML, "test")
ASCEND310P = KINDS.configs[-1]
# createTestAscendDevice's and createTestAscendAllocateDevice's configs.
ASCEND910 = VnpuConfig(
    "Ascend910",
    resource_name="huawei.com/Ascend910",
    resource_memory_name="huawei.com/Ascend910Memory",
    memory_capacity=32000,
    memory_allocatable=32000,
)
ASCEND910A = VnpuConfig(
    "Ascend910A",
    resource_name="huawei.com/Ascend910A",
    resource_memory_name="huawei.com/Ascend910A-memory",
    memory_capacity=32768,
    memory_allocatable=32768,
)


def test_config_reads_both_vnpus_forms() -> None:
    assert [k.common_word for k in KINDS.configs] == ["Ascend910A", "Ascend910B2", "Ascend310P"]
    assert not KINDS.hami_vnpu_core
    assert ASCEND310P.templates[0] == VnpuTemplate("vir01", 3072, 1, 1)
    wrapped = parse_vnpus_config(
        "vnpus:\n  hamiVnpuCore: true\n  configs:\n  - commonWord: Ascend310P\n", "test"
    )
    assert wrapped.hami_vnpu_core and wrapped.configs[0].common_word == "Ascend310P"
    # No vnpus section: no Ascend kinds (Go's zero value); unreadable: the defaults.
    assert parse_vnpus_config("nvidia: {}\n", "test").configs == ()
    assert parse_vnpus_config("vnpus: [{memoryCapacity: lots}]\n", "test") == DEFAULT_VNPUS


# ---- Test_trimMemory


@pytest.mark.parametrize(
    ("name", "memory", "expected"),
    [
        ("test1", 0, 3072),
        ("test2", 1, 3072),
        ("test3", 100, 3072),
        ("test4", 3071, 3072),
        ("test5", 3072, 3072),
        ("test6", 3073, 6144),
        ("test7", 6143, 6144),
        ("test8", 6144, 6144),
        ("test9", 6144, 6144),
        ("test10", 6145, 12288),
        ("test11", 12288, 12288),
        ("test12", 12289, 21527),
        ("test13", 21527, 21527),
        ("test14", 21528, 21527),
        ("test15", 24576, 21527),
        ("test16", 24577, 0),
    ],
)
def test_trim_memory(name: str, memory: int, expected: int) -> None:
    """Test_trimMemory."""
    assert trim_memory(ASCEND310P, memory)[0] == expected


# ---- Test_fit


def _card(used: int = 0, usedmem: int = 0, usedcores: int = 0) -> AscendCard:
    return AscendCard(
        "68496E64-20E05477-92C31323-6E78030A-BD003019",
        count=7,
        devmem=21527,
        devcore=8,
        used=used,
        usedmem=usedmem,
        usedcores=usedcores,
    )


def _req(
    nums: int, memreq: int, cores: int = 0, kind: str = "Ascend310P"
) -> ContainerDeviceRequest:
    return ContainerDeviceRequest(nums, kind, memreq, 101, cores)


@pytest.mark.parametrize(
    ("name", "request_", "card", "node_hami_core", "hami_core", "expected"),
    [
        ("test1", _req(1, 1024), _card(1, 3072), False, False, True),
        ("test2", _req(1, 21527), _card(1, 3072), False, False, False),
        ("test3", _req(1, 6144), _card(1, 12288), False, False, True),
        ("test4", _req(1, 24576), _card(0, 0), False, False, False),
        ("test5_core", _req(1, 6144, 4), _card(1, 12288, 6), False, False, False),
        (
            "hami_core_mode_should_fail_when_node_not_support_hami_vnpu_core",
            _req(1, 1024, 20),
            _card(),
            False,
            True,
            False,
        ),
        (
            "hami_core_mode_should_fail_when_core_is_insufficient",
            _req(1, 1024, 20),
            _card(usedcores=90),
            True,
            True,
            False,
        ),
        (
            "hami_core_mode_should_pass_when_node_support_hami_vnpu_core",
            _req(1, 1024, 20),
            _card(),
            True,
            True,
            True,
        ),
    ],
)
def test_fit(
    name: str,
    request_: ContainerDeviceRequest,
    card: AscendCard,
    node_hami_core: bool,
    hami_core: bool,
    expected: bool,
) -> None:
    """Test_fit."""
    assert fit(request_, card, ASCEND310P, node_hami_core, hami_core) is expected


# ---- TestAscendDevicesFilterNodeErrorClassification


def _pod(
    limits: dict[str, str], annotations: dict[str, str] | None = None, name: str = "worker"
) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "namespace": "default", "annotations": annotations or {}},
        "spec": {"containers": [{"name": "worker", "resources": {"limits": limits}}]},
    }


def _ask(kind: VnpuConfig, pod: dict[str, Any]) -> AscendAsk:
    return ascend_ask(TaskInfo.from_pod(pod), kind)


def _allocate_card(card_id: str, **usage: int) -> AscendCard:
    """createTestAscendAllocateDevice."""
    return AscendCard(card_id, count=1, devmem=32768, devcore=30, **usage)


@pytest.mark.parametrize(
    ("name", "kind", "cards", "count", "memory", "code"),
    [
        (
            "insufficient device capacity is retryable",
            ASCEND910A,
            [_allocate_card("device-1", used=1, usedmem=32768)],
            "1",
            "32768",
            StatusCode.UNSCHEDULABLE,
        ),
        ("missing device inventory is an error", ASCEND910A, [], "1", "32768", StatusCode.ERROR),
        (
            "invalid multi-device partial memory request is an error",
            VnpuConfig(
                "Ascend910A",
                resource_name="huawei.com/Ascend910A",
                resource_memory_name="huawei.com/Ascend910A-memory",
                memory_capacity=32768,
                memory_allocatable=32768,
                templates=(VnpuTemplate("vir01", 4096, 1),),
            ),
            [_allocate_card("device-1")],
            "2",
            "4096",
            StatusCode.ERROR,
        ),
    ],
)
def test_filter_node_error_classification(
    name: str, kind: VnpuConfig, cards: list[AscendCard], count: str, memory: str, code: StatusCode
) -> None:
    """TestAscendDevicesFilterNodeErrorClassification."""
    node = AscendNode("node-a", False, {c.id: c for c in cards})
    pod = _pod({"huawei.com/Ascend910A": count, "huawei.com/Ascend910A-memory": memory})
    selection = select_devices(node, kind, _ask(kind, pod), BINPACK)
    assert not selection.fits
    assert selection.code == code


# ---- TestAscendDevice_GetNodeDevices_HAMiVnpuCore

REGISTER_910A = "hami.io/node-register-Ascend910A"
ONE_CARD = '[{"id":"dev-1","index":0,"count":1,"devmem":32768,"devcore":30}]'


def _node(annotations: dict[str, str], allocatable: dict[str, str] | None = None) -> dict[str, Any]:
    return {
        "metadata": {"name": "test-node", "annotations": annotations},
        "status": {"allocatable": allocatable or {"huawei.com/Ascend910A": "1"}},
    }


@pytest.mark.parametrize(
    ("name", "annotations", "expected"),
    [
        (
            "node_support_hami_vnpu_core",
            {REGISTER_910A: ONE_CARD, "hami-vnpu-core": "true"},
            True,
        ),
        (
            "node_not_support_hami_vnpu_core",
            {REGISTER_910A: ONE_CARD, "hami-vnpu-core": "false"},
            False,
        ),
        ("node_without_hami_vnpu_core_annotation", {REGISTER_910A: ONE_CARD}, False),
    ],
)
def test_node_devices_hami_vnpu_core(
    name: str, annotations: dict[str, str], expected: bool
) -> None:
    """TestAscendDevice_GetNodeDevices_HAMiVnpuCore."""
    found = node_devices("test-node", _node(annotations), ASCEND910A, False)
    assert found is not None and len(found.cards) == 1
    assert found.hami_core is expected


def test_node_registration_needs_the_allocatable_and_a_card() -> None:
    """NewAscendDevices: no allocatable resource, a zero one, an empty or broken list: none."""
    assert (
        node_devices("n", _node({REGISTER_910A: ONE_CARD}, {"cpu": "1"}), ASCEND910A, False) is None
    )
    zero = {"huawei.com/Ascend910A": "0"}
    assert node_devices("n", _node({REGISTER_910A: ONE_CARD}, zero), ASCEND910A, False) is None
    assert node_devices("n", _node({REGISTER_910A: "[]"}), ASCEND910A, False) is None
    assert node_devices("n", _node({REGISTER_910A: "[{"}), ASCEND910A, False) is None
    assert node_devices("n", _node({REGISTER_910A: '[{"count":"1"}]'}), ASCEND910A, False) is None
    # The config's hamiVnpuCore is the default the node annotation overrides.
    assert node_devices("n", _node({REGISTER_910A: ONE_CARD}), ASCEND910A, True).hami_core  # type: ignore[union-attr]


# ---- Test_verifyReq


@pytest.mark.parametrize(
    ("name", "request_", "passes"),
    [
        ("single_device_with_partial_memory_should_pass", _req(1, 1024, kind="Ascend910B2C"), True),
        (
            "multiple_devices_with_partial_memory_should_fail",
            _req(2, 1024, kind="Ascend910B2C"),
            False,
        ),
        (
            "multiple_devices_with_full_memory_should_pass",
            _req(2, 21527, kind="Ascend910B2C"),
            True,
        ),
    ],
)
def test_verify_req(name: str, request_: ContainerDeviceRequest, passes: bool) -> None:
    """Test_verifyReq."""
    assert (verify_req(request_, ASCEND310P) is None) is passes


# ---- TestAscendDevices_AddResource

ALLOCATED_910 = "hami.io/Ascend910-devices-allocated"


def _test_card(card_id: str, used: int = 0, usedmem: int = 0, usedcores: int = 0) -> AscendCard:
    """createTestAscendDevice(id, 100, 32000, ...)."""
    return AscendCard(
        card_id, count=1, devmem=32000, devcore=100, used=used, usedmem=usedmem, usedcores=usedcores
    )


def _existing() -> AscendCard:
    card = _test_card("device-1", 1, 8000, 25)
    card.pods["existing-pod"] = (8000, 25)
    return card


@pytest.mark.parametrize(
    ("name", "cards", "annotation", "expected", "times"),
    [
        (
            "Successfully add single device resource",
            [_test_card("device-1")],
            "device-1,Ascend910,16000,50",
            {"device-1": (1, 16000, 50)},
            1,
        ),
        (
            "Successfully add multiple device resources",
            [_test_card("device-1"), _test_card("device-2")],
            "device-1,Ascend910,8000,25:device-2,Ascend910,8000,25",
            {"device-1": (1, 8000, 25), "device-2": (1, 8000, 25)},
            1,
        ),
        (
            "Add resource to existing device usage - accumulate",
            [_existing()],
            "device-1,Ascend910,8000,25",
            {"device-1": (2, 16000, 50)},
            1,
        ),
        (
            "Add same pod multiple times - should not duplicate",
            [_test_card("device-1")],
            "device-1,Ascend910,16000,50",
            {"device-1": (1, 16000, 50)},
            2,
        ),
        (
            "Pod has invalid annotation format",
            [_test_card("device-1")],
            "invalid format",
            {"device-1": (0, 0, 0)},
            1,
        ),
        (
            "Pod missing required annotation",
            [_test_card("device-1")],
            None,
            {"device-1": (0, 0, 0)},
            1,
        ),
        (
            "Device not found in devices map",
            [_test_card("device-1")],
            "non-existent-device,Ascend910,16000,50",
            {"device-1": (0, 0, 0)},
            1,
        ),
        (
            "Multiple containers with different devices",
            [_test_card("device-1"), _test_card("device-2"), _test_card("device-3")],
            "device-1,Ascend910,4000,10:device-2,Ascend910,4000,10",
            {"device-1": (1, 4000, 10), "device-2": (1, 4000, 10), "device-3": (0, 0, 0)},
            1,
        ),
    ],
)
def test_add_resource(
    name: str,
    cards: list[AscendCard],
    annotation: str | None,
    expected: dict[str, tuple[int, int, int]],
    times: int,
) -> None:
    """TestAscendDevices_AddResource."""
    node = AscendNode("node1", False, {c.id: c for c in cards})
    annotations = {} if annotation is None else {ALLOCATED_910: annotation}
    for _ in range(times):
        add_resource(node, "ns1/test-pod", annotations, "Ascend910")
    for card_id, usage in expected.items():
        card = node.cards[card_id]
        assert (card.used, card.usedmem, card.usedcores) == usage


def test_add_resource_counts_every_container() -> None:
    """Divergence: upstream decodes the whole annotation as one container, so a card after the
    first ``;`` is not found (its id starts with ``;``); every container's cards count here."""
    node = AscendNode("n", False, {c.id: c for c in (_test_card("a"), _test_card("b"))})
    add_resource(node, "ns/p", {ALLOCATED_910: "a,Ascend910,10,0:;b,Ascend910,20,0:;"}, "Ascend910")
    assert (node.cards["a"].usedmem, node.cards["b"].usedmem) == (10, 20)


# ---- TestCalScore


@pytest.mark.parametrize(
    ("name", "policy", "used", "usedmem", "devmem", "expected"),
    [
        ("spread rewards idle device", SPREAD, 0, 0, 32768, 100),
        ("devmem is zero", SPREAD, 0, 0, 0, 0),
        ("binpack devmem is zero", BINPACK, 0, 0, 0, 0),
        ("spread does not reward shared device", SPREAD, 1, 0, 32768, 0),
        ("binpack rewards full device most", BINPACK, 0, 32768, 32768, 100),
        ("binpack does not reward idle device", BINPACK, 0, 0, 32768, 0),
        ("binpack scales with memory usage", BINPACK, 0, 16384, 32768, 50),
    ],
)
def test_cal_score(
    name: str, policy: str, used: int, usedmem: int, devmem: int, expected: float
) -> None:
    """TestCalScore."""
    assert cal_score(policy, used, usedmem, devmem) == expected


# ---- the session: allocation, release (TestHAMiRelease*), mask and score

NODE_310P = "hami.io/node-register-Ascend310P"


def _node_info(
    name: str, row: int, cards: list[dict[str, Any]], annotations: dict[str, str] | None = None
) -> NodeInfo:
    notes = {NODE_310P: json.dumps(cards), **(annotations or {})}
    node = {
        "metadata": {"name": name, "annotations": notes},
        "status": {"allocatable": {"huawei.com/Ascend310P": str(len(cards))}},
    }
    return NodeInfo(name=name, matrix=NodeMatrix(), row=row, node=node)


def _cards(*ids: str) -> list[dict[str, Any]]:
    return [{"id": i, "count": 7, "devmem": 21527, "devcore": 8} for i in ids]


def _task(limits: dict[str, str], annotations: dict[str, str] | None = None) -> TaskInfo:
    return TaskInfo.from_pod(_pod(limits, annotations))


def test_allocate_writes_upstreams_annotations() -> None:
    """Allocate + CreateAnnotations: the cards in both device annotations, the template in
    ``huawei.com/<commonWord>``, the hami.io bind annotations."""
    devices = AscendDevices([_node_info("n", 0, _cards("npu-0"))], ASCEND310P, False, BINPACK)
    task = _task({"huawei.com/Ascend310P": "1", "huawei.com/Ascend310P-memory": "4000"})
    result = devices.allocate(task, 0, 1700000000, "n")
    assert not isinstance(result, str)
    assert task.pod_annotations == {
        "hami.io/Ascend310P-devices-to-allocate": "npu-0,Ascend310P,6144,0:;",
        "hami.io/Ascend310P-devices-allocated": "npu-0,Ascend310P,6144,0:;",
        "predicate-time": "1700000000",
        "huawei.com/Ascend310P": '[{"UUID":"npu-0","temp":"vir02"}]',
        "hami.io/vgpu-node": "n",
        "hami.io/vgpu-time": "1700000000",
        "hami.io/bind-phase": "allocating",
        "hami.io/bind-time": "1700000000",
    }
    card = devices.nodes[0].cards["npu-0"]
    assert (card.used, card.usedmem) == (1, 6144)
    assert devices.usedmem[0, 0] == 6144


def test_hami_core_mode_writes_memory_and_cores() -> None:
    devices = AscendDevices(
        [_node_info("n", 0, _cards("npu-0"), {"hami-vnpu-core": "true"})], ASCEND310P, False, ""
    )
    task = _task(
        {
            "huawei.com/Ascend310P": "1",
            "huawei.com/Ascend310P-memory": "4000",
            "huawei.com/Ascend310P-core": "30",
        },
        {"huawei.com/vnpu-mode": "hami-core"},
    )
    devices.allocate(task, 0, 5, "n")
    assert (
        task.pod_annotations["hami.io/Ascend310P-devices-allocated"] == "npu-0,Ascend310P,4000,30:;"
    )
    assert (
        task.pod_annotations["huawei.com/Ascend310P"]
        == '[{"UUID":"npu-0","memory":4000,"core":30}]'
    )


def _plugin_with_pod(bind_phase: str) -> tuple[Any, TaskInfo]:
    """hamiPodWithAnnotations on a node holding its card."""
    annotations = {
        "hami.io/vgpu-node": "node-a",
        "hami.io/vgpu-time": "1700000000",
        "hami.io/bind-phase": bind_phase,
        "hami.io/bind-time": "1700000000",
        "predicate-time": "1700000000",
        "hami.io/Ascend310P-devices-to-allocate": "GPU-aaaa,Ascend310P,4096,0",
        "hami.io/Ascend310P-devices-allocated": "GPU-aaaa,Ascend310P,4096,0",
        "huawei.com/Ascend310P": '[{"UUID":"GPU-aaaa","Temp":"vir04"}]',
        "keep-me": "yes",
    }
    task = _task({"huawei.com/Ascend310P": "1"}, annotations)
    task.status = TaskStatus.RUNNING
    info = _node_info("node-a", 0, _cards("GPU-aaaa"))
    info.tasks[task.key] = task
    plugin = new(Arguments({"deviceshare.AscendHAMiVNPUEnable": True}))
    plugin.ascend = [AscendDevices([info], ASCEND310P, False, "")]
    plugin.ascend_words = ("Ascend310P",)
    return plugin, task


def test_release_returns_speculative_annotation_keys() -> None:
    """TestHAMiReleaseReturnsSpeculativeAnnotationKeys: the card goes back and the device and
    bind annotations leave the pod (others stay)."""
    plugin, task = _plugin_with_pod("allocating")
    card = plugin.ascend[0].nodes[0].cards["GPU-aaaa"]
    assert (card.used, card.usedmem) == (1, 4096)
    plugin._deallocate(None, Event(task))
    assert (card.used, card.usedmem, card.pods) == (0, 0, {})
    for key in (
        "hami.io/vgpu-node",
        "hami.io/bind-phase",
        "predicate-time",
        "hami.io/Ascend310P-devices-to-allocate",
        "hami.io/Ascend310P-devices-allocated",
        "huawei.com/Ascend310P",
    ):
        assert key not in task.pod_annotations
    assert task.pod_annotations["keep-me"] == "yes"


def test_release_keeps_committed_annotations() -> None:
    """TestHAMiReleaseKeepsCommittedAnnotations."""
    plugin, task = _plugin_with_pod("success")
    plugin._deallocate(None, Event(task))
    assert task.pod_annotations["hami.io/vgpu-node"] == "node-a"
    assert task.pod_annotations["hami.io/bind-phase"] == "success"


@pytest.mark.parametrize("policy", [BINPACK, SPREAD])
def test_mask_agrees_with_the_scalar_fit(policy: str) -> None:
    """The vectorised mask passes exactly the nodes where the scalar fit succeeds, for a
    single container asking memory; nodes without the kind pass."""
    rng = np.random.default_rng(7)
    nodes = []
    for row in range(40):
        cards = _cards(*(f"c{row}-{i}" for i in range(int(rng.integers(1, 4)))))
        nodes.append(_node_info(f"n{row}", row, cards))
    nodes.append(NodeInfo(name="plain", matrix=NodeMatrix(), row=40, node={"metadata": {}}))
    devices = AscendDevices(nodes, ASCEND310P, False, policy)
    filler = _task({"huawei.com/Ascend310P": "1", "huawei.com/Ascend310P-memory": "12000"})
    for row in range(40):
        for _ in range(int(rng.integers(0, 3))):
            selection = devices.select(filler, row)
            if selection.fits:
                devices.allocate(
                    TaskInfo.from_pod(_pod({"huawei.com/Ascend310P": "1"}, name=f"f{row}-{_}")),
                    row,
                    0,
                    f"n{row}",
                )
    for nums, memory in ((1, "3000"), (2, "21527"), (3, "20000"), (2, "100"), (1, "30000")):
        task = _task({"huawei.com/Ascend310P": str(nums), "huawei.com/Ascend310P-memory": memory})
        mask = devices.mask(task)
        assert mask is not None and not devices.needs_scalar_fit(task)
        for row in range(40):
            assert bool(mask.passed[row]) == devices.select(task, row).fits, (nums, memory, row)
        assert mask.passed[40]
        scores = devices.scores(task, np.arange(41))
        for row in range(40):
            expected = 0.0
            if devices.select(task, row).fits:
                expected = score_node(
                    devices.nodes[row], ASCEND310P, ascend_ask(task, ASCEND310P), policy
                )
            assert scores[row] == pytest.approx(expected)


def test_ascend910_cards_come_from_the_fullest_network() -> None:
    """selectDevicesWithTopology and ScoreNode's NetworkID bonus."""
    kind = KINDS.configs[0]
    cards = [
        {"id": "a", "count": 1, "devmem": 32768, "devcore": 30, "custominfo": {"NetworkID": 1}},
        {"id": "b", "count": 1, "devmem": 32768, "devcore": 30, "custominfo": {"NetworkID": 2}},
        {"id": "c", "count": 1, "devmem": 32768, "devcore": 30, "custominfo": {"NetworkID": 2}},
    ]
    node = {
        "metadata": {"name": "n", "annotations": {REGISTER_910A: json.dumps(cards)}},
        "status": {"allocatable": {"huawei.com/Ascend910A": "3"}},
    }
    devices = AscendDevices([NodeInfo("n", NodeMatrix(), 0, node)], kind, False, "")
    task = _task({"huawei.com/Ascend910A": "2", "huawei.com/Ascend910A-memory": "32768"})
    selection = devices.select(task, 0)
    assert [c.id for c in selection.cards[0]] == ["b", "c"]
    # No policy: only the bonus, 10 x (2 of 2 first cards... one container: 1 of 1).
    assert devices.scores(task, np.arange(1))[0] == 10.0


# ---- simulate, end to end


def test_vnpu_example(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", str(EXAMPLES / "vnpu.yaml")]) == 0
    report: dict[str, Any] = json.loads(capsys.readouterr().out)
    pod = report["pods"]["default/infer"]
    assert pod["node"] == "npu-1"
    notes = pod["annotations"]
    assert notes["hami.io/Ascend310P-devices-allocated"] == "npu-1-a,Ascend310P,6144,0:;"
    assert notes["huawei.com/Ascend310P"] == '[{"UUID":"npu-1-a","temp":"vir02"}]'
    assert notes["hami.io/bind-phase"] == "allocating"
    assert report["pods"]["default/too-big"].get("node") in (None, "")
