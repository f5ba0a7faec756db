"""deviceshare's HAMi vGPU (``plugins/deviceshare/vgpu.py``).

Transcribed from upstream ``pkg/scheduler/api/devices/nvidia/vgpu``: ``device_info_test.go``
(TestGetGPUMemoryOfPod, TestAddResource, TestAddResourceSetsPodGroupKey),
``utils_test.go`` (TestCheckGPUtype, TestCheckGPUUUID, TestGPUUUIDConstraints,
TestGetPodGroupKey, TestDeviceHasPodFromSameGroup,
TestSortedDeviceIndicesByPolicy_PicksExpectedDevice, TestGPUScore,
TestBinpackStacksSequentialPods, TestDecodeContainerDevicesRejectsInvalidUsage),
``hamicore_test.go`` (TestHAMICoreFactory_AddPod, ..._AddPodDistinctUIDsAccumulate,
..._SubPodRemovesEntry), ``spread_integration_test.go`` (TestSpreadPreventsCoLocation,
TestBinpackAllowsCoLocation, TestSpreadDifferentGroupsCanShare, TestSpreadWithNoRoomFails,
TestMixedAnnotations) and ``plugins/deviceshare/deviceshare_test.go`` (TestVgpuScore,
Test_FilterNode).
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.plugins.deviceshare_helpers import check_vectorised_fit
from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.plugins.deviceshare.config import DEFAULT_NVIDIA
from volcano_py.plugins.deviceshare.options import BINPACK, SPREAD
from volcano_py.plugins.deviceshare.requests import container_device_requests
from volcano_py.plugins.deviceshare.vgpu import (
    ASSIGNED_IDS,
    GPU_IN_USE,
    GPU_NO_USE,
    NO_USE_UUID,
    PODGROUP_POLICY,
    USE_UUID,
    UsedDevice,
    UuidFilter,
    VgpuCard,
    VgpuDevices,
    VgpuNode,
    add_resource,
    card_score,
    decode_node_devices,
    decode_pod_devices,
    fit,
    gpu_type_allowed,
    hold,
    pod_group_key,
)

GROUP = "scheduling.k8s.io/group-name"
VOLCANO_GROUP = "scheduling.volcano.sh/group-name"


def make_node(cards: int, memory: int, sharing: int, name: str = "node-1") -> VgpuNode:
    """``makeGPUDevices``: UUIDs GPU-0000A, GPU-0000B, ..."""
    return VgpuNode(
        name,
        "hami-core",
        {
            i: VgpuCard(i, "GPU-0000" + chr(ord("A") + i), sharing, memory, "NVIDIA", True)
            for i in range(cards)
        },
    )


def make_pod(
    name: str,
    memory: int,
    *,
    spread: bool = False,
    group: str = "",
    limits: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> TaskInfo:
    """``makeVGPUPod``: 1 card, ``memory`` MiB, 25 cores."""
    notes = dict(annotations or {})
    if spread:
        notes[PODGROUP_POLICY] = "spread"
    if group:
        notes[GROUP] = group
    resources = limits or {
        "volcano.sh/vgpu-number": "1",
        "volcano.sh/vgpu-memory": str(memory),
        "volcano.sh/vgpu-cores": "25",
    }
    pod: dict[str, Any] = {
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": "uid-" + name,
            "annotations": notes,
        },
        "spec": {"containers": [{"name": "gpu-worker", "resources": {"limits": resources}}]},
    }
    return TaskInfo.from_pod(pod)


def requests_of(task: TaskInfo) -> Any:
    return container_device_requests(task.pod, DEFAULT_NVIDIA)


def allocate(node: VgpuNode, task: TaskInfo, policy: str = BINPACK) -> str | None:
    """``simulateAllocate``: fit, then record the pod on its cards; the first card's UUID."""
    result = fit(task, node, requests_of(task), policy)
    if not result.fits:
        return None
    hold(node, task.key, pod_group_key(task), result.devices)
    return result.devices[0][0].uuid


# ---- device_info_test.go


def test_get_gpu_memory_of_pod() -> None:
    """TestGetGPUMemoryOfPod / "GPUs required only in Containers"."""
    task = make_pod(
        "p",
        0,
        limits={"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "3000"},
    )
    pod = dict(task.pod)
    pod["spec"] = {
        "containers": [
            {
                "resources": {
                    "limits": {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "3000"}
                }
            },
            {
                "resources": {
                    "limits": {"volcano.sh/vgpu-number": "3", "volcano.sh/vgpu-memory": "5000"}
                }
            },
        ]
    }
    got = container_device_requests(pod, DEFAULT_NVIDIA)
    assert (got[0].nums, got[0].memreq, got[1].nums, got[1].memreq) == (1, 3000, 3, 5000)


@pytest.mark.parametrize(
    ("case", "annotations", "added"),
    [
        ("Pod assigned to known GPU UUID", {ASSIGNED_IDS: "GPU-1234,NVIDIA,16384,0"}, True),
        ("Pod assigned to unknown GPU UUID", {ASSIGNED_IDS: "GPU-5678,NVIDIA,16384,0"}, False),
        ("Pod without AssignedIDsAnnotations", {}, False),
    ],
)
def test_add_resource(case: str, annotations: dict[str, str], added: bool) -> None:
    """TestAddResource."""
    node = VgpuNode("n", "hami-core", {0: VgpuCard(0, "GPU-1234", 10, 0, "NVIDIA", True)})
    add_resource(node, "default/test-pod", "", annotations)
    assert ("default/test-pod" in node.cards[0].pods) is added, case


def test_add_resource_sets_pod_group_key() -> None:
    """TestAddResourceSetsPodGroupKey."""
    node = VgpuNode("n", "hami-core", {0: VgpuCard(0, "GPU-1234", 10, 0, "NVIDIA", True)})
    task = make_pod("p", 4096, group="my-job-pg")
    add_resource(node, task.key, pod_group_key(task), {ASSIGNED_IDS: "GPU-1234,NVIDIA,4096,0"})
    assert node.cards[0].pods[task.key][2] == "default/my-job-pg"


# ---- utils_test.go


@pytest.mark.parametrize(
    ("case", "annotations", "want"),
    [
        ("Single GPUInUse value matches", {GPU_IN_USE: "NVIDIA"}, True),
        ("GPUInUse mixed case matches", {GPU_IN_USE: "nvidia"}, True),
        ("Multiple GPUInUse values, one matches", {GPU_IN_USE: "AMD,NVIDIA,INTEL"}, True),
        ("Multiple GPUInUse values, none matches", {GPU_IN_USE: "AMD,INTEL,MLU"}, False),
        ("Single GPUNoUse value matches", {GPU_NO_USE: "NVIDIA"}, False),
        ("GPUNoUse mixed case matches", {GPU_NO_USE: "nvidia"}, False),
        ("Multiple GPUNoUse values, one matches", {GPU_NO_USE: "AMD,NVIDIA,INTEL"}, False),
        ("Multiple GPUNoUse values, none matches", {GPU_NO_USE: "AMD,INTEL,MLU"}, True),
        ("Empty annotations map", {}, True),
    ],
)
def test_check_gpu_type(case: str, annotations: dict[str, str], want: bool) -> None:
    """TestCheckGPUtype (the "Nil annotations map" case is the empty one here)."""
    assert gpu_type_allowed(annotations, "NVIDIA") is want, case


@pytest.mark.parametrize(
    ("case", "annotations", "uuid", "want"),
    [
        ("no constraint", {}, "GPU-0", True),
        ("empty allowlist is ignored", {USE_UUID: "  "}, "GPU-0", True),
        ("separator-only allowlist is ignored", {USE_UUID: ", ,"}, "GPU-0", True),
        ("allowlist exact match", {USE_UUID: "GPU-0, GPU-1"}, "GPU-1", True),
        ("allowlist ignores empty entries", {USE_UUID: "GPU-0,, GPU-1,"}, "GPU-1", True),
        ("allowlist rejects partial match", {USE_UUID: "GPU-10"}, "GPU-1", False),
        ("allowlist rejects empty device UUID", {USE_UUID: "GPU-0,"}, "", False),
        ("denylist rejects match", {NO_USE_UUID: "GPU-0, GPU-1"}, "GPU-1", False),
        ("denylist constraint rejects empty device UUID", {NO_USE_UUID: "GPU-0,"}, "", False),
        ("denylist wins over allowlist", {USE_UUID: "GPU-1", NO_USE_UUID: "GPU-1"}, "GPU-1", False),
    ],
)
def test_check_gpu_uuid(case: str, annotations: dict[str, str], uuid: str, want: bool) -> None:
    """TestCheckGPUUUID."""
    assert UuidFilter.of(annotations).matches(uuid) is want, case


@pytest.mark.parametrize(
    ("case", "annotations", "uuid", "error"),
    [
        ("allowlist selects requested GPU", {USE_UUID: "GPU-0000A"}, "GPU-0000A", ""),
        ("denylist excludes GPU", {NO_USE_UUID: "GPU-0000B"}, "GPU-0000A", ""),
        ("unknown allowed UUID is unschedulable", {USE_UUID: "GPU-unknown"}, "", USE_UUID),
        ("denylist excludes all GPUs", {NO_USE_UUID: "GPU-0000A,GPU-0000B"}, "", NO_USE_UUID),
    ],
)
def test_gpu_uuid_constraints(
    case: str, annotations: dict[str, str], uuid: str, error: str
) -> None:
    """TestGPUUUIDConstraints."""
    node = make_node(2, 16384, 4)
    task = make_pod("worker", 4096, annotations=annotations)
    result = fit(task, node, requests_of(task), "")
    assert result.fits is (not error), case
    if error:
        assert error in result.error
    else:
        assert result.devices[0][0].uuid == uuid


@pytest.mark.parametrize(
    ("case", "annotations", "namespace", "want"),
    [
        ("nil annotations", {}, "ns", ""),
        ("scheduling.k8s.io/group-name", {GROUP: "my-pg"}, "default", "default/my-pg"),
        (
            "scheduling.volcano.sh/group-name (Volcano API)",
            {VOLCANO_GROUP: "job-pg"},
            "ns1",
            "ns1/job-pg",
        ),
        (
            "k8s annotation takes precedence over volcano",
            {GROUP: "k8s-pg", VOLCANO_GROUP: "volcano-pg"},
            "ns",
            "ns/k8s-pg",
        ),
    ],
)
def test_get_pod_group_key(
    case: str, annotations: dict[str, str], namespace: str, want: str
) -> None:
    """TestGetPodGroupKey (the "nil pod" case has no counterpart: a task always has a pod)."""
    task = TaskInfo.from_pod(
        {"metadata": {"name": "pod", "namespace": namespace, "annotations": annotations}}
    )
    assert pod_group_key(task) == want, case


@pytest.mark.parametrize(
    ("case", "pods", "group", "blocked"),
    [
        ("empty currentKey", {"uid1": (1000, 0, "ns/pg")}, "", False),
        ("no pod from same group", {"uid1": (1000, 0, "ns/other")}, "ns/my-pg", False),
        ("same group with non-zero usage", {"uid1": (1000, 50, "ns/my-pg")}, "ns/my-pg", True),
        ("same group but zero usage (released)", {"uid1": (0, 0, "ns/my-pg")}, "ns/my-pg", False),
        ("empty PodMap", {}, "ns/pg", False),
    ],
)
def test_device_has_pod_from_same_group(
    case: str, pods: dict[str, tuple[int, int, str]], group: str, blocked: bool
) -> None:
    """TestDeviceHasPodFromSameGroup, through the fit: a spread pod of ``group`` skips the
    only card when (and only when) a pod of its group uses it."""
    node = make_node(1, 16384, 10)
    node.cards[0].pods.update(pods)
    namespace, _, name = group.partition("/")
    task = make_pod("w", 1024, spread=True, group=name)
    if namespace:
        task.namespace = namespace
    assert fit(task, node, requests_of(task), "").fits is (not blocked), case


@pytest.mark.parametrize(
    ("case", "cards", "busy", "policy", "want"),
    [
        ("binpack picks busier device", 2, True, BINPACK, 0),
        ("spread picks idle device over shared one", 2, True, SPREAD, 1),
        ("unset policy preserves legacy descending-index order", 3, False, "", 2),
    ],
)
def test_sorted_device_indices_by_policy_picks_expected_device(
    case: str, cards: int, busy: bool, policy: str, want: int
) -> None:
    """TestSortedDeviceIndicesByPolicy_PicksExpectedDevice."""
    node = make_node(cards, 16384, 4)
    if busy:
        node.cards[0].used_mem, node.cards[0].used_num = 4096, 1
    task = make_pod("worker", 4096)
    result = fit(task, node, requests_of(task), policy)
    assert result.devices[0][0].uuid == node.cards[want].uuid, case


@pytest.mark.parametrize(
    ("case", "policy", "used", "want"),
    [
        ("spread rewards idle GPU", SPREAD, (0, 0), 100.0),
        ("spread does not reward shared GPU", SPREAD, (1, 4096), 0.0),
        ("spread does not reward full GPU", SPREAD, (4, 16384), 0.0),
        ("binpack rewards full GPU most", BINPACK, (4, 16384), 100.0),
        ("binpack does not reward idle GPU", BINPACK, (0, 0), 0.0),
        ("unset policy returns zero", "", (1, 4096), 0.0),
    ],
)
def test_gpu_score(case: str, policy: str, used: tuple[int, int], want: float) -> None:
    """TestGPUScore."""
    card = VgpuCard(0, "GPU-0", 4, 16384, "NVIDIA", True)
    assert card_score(policy, card, [used[0], used[1], 0]) == want, case


def test_binpack_stacks_sequential_pods() -> None:
    """TestBinpackStacksSequentialPods."""
    node = make_node(3, 16384, 4)
    uuids = [allocate(node, make_pod(f"worker-{n}", 4096)) for n in "abc"]
    assert uuids[0] is not None and uuids[0] == uuids[1] == uuids[2]


@pytest.mark.parametrize(
    ("case", "text", "want"),
    [
        ("valid entry", "GPU-0,NVIDIA,4096,30:", [UsedDevice("GPU-0", "NVIDIA", 4096, 30)]),
        ("negative memory is skipped", "GPU-0,NVIDIA,-5,30:", []),
        ("negative cores is skipped", "GPU-0,NVIDIA,4096,-1:", []),
        ("non-numeric usage is skipped", "GPU-0,NVIDIA,abc,30:", []),
        ("entry with missing fields is skipped", "GPU-0,NVIDIA:", []),
        (
            "valid entry kept when mixed with invalid",
            "GPU-0,NVIDIA,-5,30:GPU-1,NVIDIA,2048,10:",
            [UsedDevice("GPU-1", "NVIDIA", 2048, 10)],
        ),
    ],
)
def test_decode_container_devices_rejects_invalid_usage(
    case: str, text: str, want: list[UsedDevice]
) -> None:
    """TestDecodeContainerDevicesRejectsInvalidUsage."""
    assert decode_pod_devices(text) == (tuple(want),), case


# ---- hamicore_test.go (AddPod = add_resource from annotations, SubPod = release)


def _ids(uuid: str, memory: int = 1000, cores: int = 25) -> dict[str, str]:
    return {ASSIGNED_IDS: f"{uuid},NVIDIA,{memory},{cores}:"}


def test_hami_core_add_pod_fresh_and_duplicate() -> None:
    """TestHAMICoreFactory_AddPod: a fresh add counts; adding the same pod again does not."""
    node = VgpuNode("n", "hami-core", {0: VgpuCard(0, "GPU-0", 4, 16384, "NVIDIA", True)})
    for _ in range(2):
        add_resource(node, "pod-a", "", _ids("GPU-0"))
        card = node.cards[0]
        assert (card.used_num, card.used_mem, card.used_core) == (1, 1000, 25)


def test_hami_core_add_pod_distinct_uids_accumulate() -> None:
    """TestHAMICoreFactory_AddPodDistinctUIDsAccumulate."""
    node = VgpuNode("n", "hami-core", {0: VgpuCard(0, "GPU-0", 4, 16384, "NVIDIA", True)})
    for uid in ("pod-a", "pod-b", "pod-c"):
        add_resource(node, uid, "", _ids("GPU-0"))
    card = node.cards[0]
    assert (card.used_num, card.used_mem, card.used_core) == (3, 3000, 75)


# ---- spread_integration_test.go


def test_spread_prevents_co_location() -> None:
    """TestSpreadPreventsCoLocation."""
    node = make_node(2, 16384, 4)
    first = allocate(node, make_pod("worker-0", 4096, spread=True, group="job-1"))
    second = allocate(node, make_pod("worker-1", 4096, spread=True, group="job-1"))
    assert first is not None and second is not None and first != second


def test_binpack_allows_co_location() -> None:
    """TestBinpackAllowsCoLocation."""
    node = make_node(2, 16384, 4)
    assert allocate(node, make_pod("worker-0", 4096, group="job-1")) is not None
    assert allocate(node, make_pod("worker-1", 4096, group="job-1")) is not None


def test_spread_different_groups_can_share() -> None:
    """TestSpreadDifferentGroupsCanShare."""
    node = make_node(1, 16384, 4)
    first = allocate(node, make_pod("worker-0", 4096, spread=True, group="job-1"))
    second = allocate(node, make_pod("worker-1", 4096, spread=True, group="job-2"))
    assert first is not None and first == second


def test_spread_with_no_room_fails() -> None:
    """TestSpreadWithNoRoomFails."""
    node = make_node(1, 16384, 4)
    assert allocate(node, make_pod("worker-0", 4096, spread=True, group="job-1")) is not None
    assert allocate(node, make_pod("worker-1", 4096, spread=True, group="job-1")) is None


def test_mixed_annotations() -> None:
    """TestMixedAnnotations."""
    node = make_node(2, 16384, 4)
    assert allocate(node, make_pod("worker-0", 4096, spread=True, group="job-1")) is not None
    assert allocate(node, make_pod("worker-1", 4096, group="job-1")) is not None


# ---- plugins/deviceshare/deviceshare_test.go


def test_vgpu_score() -> None:
    """TestVgpuScore: binpack scores a card by its memory in use after the pod; spread (the
    score counts the card after the pod's own use, as upstream's does) scores at most 100."""
    node = VgpuNode("node1", "hami-core", {0: VgpuCard(0, "GPU-0", 10, 30000, "NVIDIA", True)})
    node.cards[0].used_num, node.cards[0].used_mem = 1, 3000
    limits = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1000"}
    task = make_pod("p3", 0, limits=limits)
    result = fit(task, node, requests_of(task), BINPACK)
    assert result.fits
    assert result.score == pytest.approx(4000 * 100 / 30000)
    idle = VgpuNode("node2", "hami-core", {0: VgpuCard(0, "GPU-0", 10, 30000, "NVIDIA", True)})
    result = fit(make_pod("p4", 0, limits=limits), idle, requests_of(task), SPREAD)
    assert result.fits and result.score <= 100


def test_filter_node() -> None:
    """Test_FilterNode / "case0, should allocated 3 card with diff memory for pod"."""
    node = VgpuNode(
        "node1",
        "hami-core",
        {
            0: VgpuCard(0, "", 10, 30000, "NVIDIA", True),
            1: VgpuCard(1, "", 10, 20000, "NVIDIA", True),
            2: VgpuCard(2, "", 10, 30000, "NVIDIA", True),
        },
    )
    limits = {"volcano.sh/vgpu-number": "3", "volcano.sh/vgpu-cores": "100"}
    task = make_pod("p1", 0, limits=limits)
    assert fit(task, node, requests_of(task), BINPACK).fits


# ---- registration


def test_decode_node_devices() -> None:
    node = decode_node_devices(
        "n", "GPU-a,10,24000,NVIDIA-T4,true,hami-core:GPU-b,5,16000,NVIDIA-A10,false,hami-core:"
    )
    assert node is not None
    assert [(c.id, c.uuid, c.number, c.memory, c.type, c.health) for c in node.cards.values()] == [
        (0, "GPU-a", 10, 24000, "NVIDIA-T4", True),
        (1, "GPU-b", 5, 16000, "NVIDIA-A10", False),
    ]
    assert decode_node_devices("n", "GPU-a,10,24000") is None
    assert decode_node_devices("n", "GPU-a,10,24000,NVIDIA:") is None


# ---- vectorised mask and score == the scalar fit


def _vgpu_node_object(name: str, cards: list[tuple[int, int, str]]) -> dict[str, Any]:
    register = "".join(
        f"GPU-{name}-{i},{number},{memory},{kind},true,hami-core:"
        for i, (number, memory, kind) in enumerate(cards)
    )
    resources = {
        "volcano.sh/vgpu-number": "10",
        "volcano.sh/vgpu-memory": "10",
        "volcano.sh/vgpu-cores": "10",
    }
    return {
        "metadata": {"name": name, "annotations": {"volcano.sh/node-vgpu-register": register}},
        "status": {"allocatable": resources, "capacity": resources},
    }


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(
        st.tuples(
            st.lists(
                st.tuples(
                    st.integers(0, 3),
                    st.sampled_from([8000, 16000]),
                    st.sampled_from(["NVIDIA-T4", "MLU-370"]),
                ),
                min_size=1,
                max_size=4,
            ),
            st.lists(
                st.tuples(st.integers(0, 3), st.integers(0, 9000), st.integers(0, 100)), max_size=4
            ),
        ),
        min_size=1,
        max_size=4,
    ),
    nums=st.integers(0, 3),
    memory=st.integers(0, 9000),
    cores=st.sampled_from([0, 30, 100]),
    policy=st.sampled_from([BINPACK, SPREAD, ""]),
)
def test_vectorised_mask_and_score_agree_with_the_scalar_fit(
    nodes: list[tuple[list[tuple[int, int, str]], list[tuple[int, int, int]]]],
    nums: int,
    memory: int,
    cores: int,
    policy: str,
) -> None:
    infos = []
    matrix = NodeMatrix()
    for row, (cards, holders) in enumerate(nodes):
        name = f"n{row}"
        info = NodeInfo(name=name, matrix=matrix, row=row, node=_vgpu_node_object(name, cards))
        for h, (card, used, used_cores) in enumerate(holders):
            pod = {
                "metadata": {
                    "name": f"{name}-{h}",
                    "namespace": "default",
                    "annotations": {
                        ASSIGNED_IDS: f"GPU-{name}-{card % len(cards)},NVIDIA,{used},{used_cores}:"
                    },
                },
                "spec": {"nodeName": name, "containers": []},
            }
            task = TaskInfo.from_pod(pod)
            task.status = TaskStatus.RUNNING
            info.tasks[task.key] = task
        infos.append(info)
    devices = VgpuDevices(infos, DEFAULT_NVIDIA, policy)
    limits = {
        "volcano.sh/vgpu-number": str(nums),
        "volcano.sh/vgpu-memory": str(memory),
        "volcano.sh/vgpu-cores": str(cores),
    }

    def new_pod(attempt: int) -> TaskInfo:
        task = make_pod(f"new-{attempt}", 0, limits=limits)
        assert not devices.needs_scalar_fit(task)
        return task

    check_vectorised_fit(devices, len(infos), new_pod)
