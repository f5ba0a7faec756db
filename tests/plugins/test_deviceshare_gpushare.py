"""deviceshare's GPU sharing (``plugins/deviceshare/gpushare.py``).

Transcribed from upstream ``pkg/scheduler/api/devices/nvidia/gpushare``:
``device_info_test.go`` (TestGetGPUMemoryOfPod, TestGetGPUNumberOfPod,
TestReleaseReturnsRemovedAnnotationKeys) and ``share_test.go``
(TestGetDevicesIdleGPUMemory_OverSubscribedCardReportsZero,
TestPredicateGPUbyMemory_OverSubscribedCardNotOffered). Then the node inventory, and the
vectorised mask against the scalar reference (``card_choice``), by Hypothesis.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.node import NodeInfo
from volcano_py.api.node_matrix import NodeMatrix
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.plugins.deviceshare.gpushare import (
    GPU_INDEX,
    PREDICATE_TIME,
    GpuRequest,
    GpuShareDevices,
    card_choice,
    gpu_index,
    node_cards,
)
from volcano_py.plugins.deviceshare.requests import gpu_memory_of_pod, gpu_number_of_pod

MEMORY = "volcano.sh/gpu-memory"
NUMBER = "volcano.sh/gpu-number"


def _container(resource: str, amount: str) -> dict[str, Any]:
    return {"name": "c", "resources": {"limits": {resource: amount}}}


def _pod(
    name: str,
    containers: list[dict[str, Any]],
    init: list[dict[str, Any]] | None = None,
    *,
    node: str = "",
    annotations: dict[str, str] | None = None,
    phase: str = "Pending",
) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": containers, "schedulerName": "volcano"}
    if init:
        spec["initContainers"] = init
    if node:
        spec["nodeName"] = node
    return {
        "metadata": {
            "name": name,
            "namespace": "ns",
            "uid": name,
            "annotations": annotations or {},
        },
        "spec": spec,
        "status": {"phase": phase},
    }


# ---- TestGetGPUMemoryOfPod / TestGetGPUNumberOfPod (device_info_test.go)


@pytest.mark.parametrize(
    ("resource", "reader"), [(MEMORY, gpu_memory_of_pod), (NUMBER, gpu_number_of_pod)]
)
@pytest.mark.parametrize(
    ("case", "containers", "init", "want"),
    [
        ("GPUs required only in Containers", ["1", "3"], [], 4),
        ("GPUs required both in initContainers and Containers", ["2"], ["1", "3"], 3),
    ],
)
def test_get_gpu_memory_and_number_of_pod(
    resource: str, reader: Any, case: str, containers: list[str], init: list[str], want: int
) -> None:
    pod = _pod(
        "p",
        [_container(resource, amount) for amount in containers],
        [_container(resource, amount) for amount in init],
    )
    assert reader(pod) == want, case


# ---- node inventory (NewGPUDevices)


def _gpu_node(
    name: str, memory: str, number: str, annotations: dict[str, str] | None = None
) -> dict[str, Any]:
    resources = {"cpu": "8", "memory": "8Gi", "pods": "110", MEMORY: memory, NUMBER: number}
    return {
        "metadata": {"name": name, "annotations": annotations or {}},
        "status": {"capacity": dict(resources), "allocatable": dict(resources)},
    }


def test_node_cards_split_the_memory_and_drop_unhealthy_ids() -> None:
    node = _gpu_node("n", "30000", "4", {"volcano.sh/gpu-unhealthy-ids": "1,x,3"})
    assert node_cards(node) == {0: 7500, 2: 7500}


def test_a_node_without_both_resources_or_with_zero_cards_has_no_gpus() -> None:
    assert node_cards(_gpu_node("n", "30000", "0")) is None
    node = _gpu_node("n", "30000", "2")
    del node["status"]["capacity"][NUMBER]
    assert node_cards(node) is None
    assert node_cards(None) is None


def test_gpu_index_parses_the_annotation_and_refuses_garbage() -> None:
    assert gpu_index({GPU_INDEX: "0,2"}) == [0, 2]
    assert gpu_index({GPU_INDEX: "0,a"}) is None
    assert gpu_index({}) is None


# ---- the session accounting


def _devices(
    nodes: list[dict[str, Any]],
    pods: list[dict[str, Any]],
    *,
    sharing: bool = True,
    number: bool = False,
) -> tuple[GpuShareDevices, list[NodeInfo]]:
    matrix = NodeMatrix()
    infos = []
    for row, node in enumerate(nodes):
        info = NodeInfo(name=node["metadata"]["name"], matrix=matrix, row=row, node=node)
        infos.append(info)
    for pod in pods:
        task = TaskInfo.from_pod(pod)
        task.status = TaskStatus.RUNNING
        infos[[n.name for n in infos].index(task.node_name)].tasks[task.key] = task
    return GpuShareDevices(infos, sharing, number), infos


def _task(pod: dict[str, Any]) -> TaskInfo:
    return TaskInfo.from_pod(pod)


def test_over_subscribed_card_reports_zero_and_is_not_offered() -> None:
    """TestGetDevicesIdleGPUMemory_OverSubscribedCardReportsZero and
    TestPredicateGPUbyMemory_OverSubscribedCardNotOffered (share_test.go): a card whose pods
    sum past its memory has nothing free (no unsigned wrap-around)."""
    node = _gpu_node("n1", "1000", "1")
    holder = _pod("p1", [_container(MEMORY, "3000")], node="n1", annotations={GPU_INDEX: "0"})
    devices, _ = _devices([node], [holder])
    assert devices.best_free[0] == 0
    assert (
        card_choice(devices.memory[0], devices.used[0], devices.pods[0], GpuRequest(500, 0)) is None
    )
    mask = devices.mask(_task(_pod("p2", [_container(MEMORY, "500")])))
    assert mask is not None and not mask.passed[0]
    assert mask.reason(0).reason == "GpuShare no enough gpu memory on node n1"


def test_release_returns_the_cards_and_the_annotation_keys() -> None:
    """TestReleaseReturnsRemovedAnnotationKeys (device_info_test.go): releasing a pod takes
    it off its cards (the plugin then drops predicate-time and gpu-index from its bind
    annotations; see test_deviceshare.py)."""
    node = _gpu_node("node-a", "2000", "1")
    holder = _pod(
        "worker-0",
        [_container(MEMORY, "1000")],
        node="node-a",
        annotations={PREDICATE_TIME: "1700000000", GPU_INDEX: "0"},
    )
    devices, _ = _devices([node], [holder])
    assert devices.pods[0, 0] == 1
    assert devices.release("ns/worker-0")
    assert devices.pods[0, 0] == 0 and devices.best_free[0] == 2000


def test_memory_pod_takes_the_lowest_card_with_room() -> None:
    node = _gpu_node("n", "24000", "3")
    holder = _pod("busy", [_container(MEMORY, "5000")], node="n", annotations={GPU_INDEX: "0"})
    devices, _ = _devices([node], [holder])
    task = _task(_pod("new", [_container(MEMORY, "4000")]))
    assert devices.allocate(task, 0) == [1]
    # card 1 has 4000 left now, card 0 3000, card 2 8000.
    assert devices.best_free[0] == 8000


def test_number_pod_takes_idle_cards_and_the_mask_counts_them() -> None:
    node = _gpu_node("n", "24000", "3")
    holder = _pod("busy", [_container(NUMBER, "1")], node="n", annotations={GPU_INDEX: "1"})
    devices, _ = _devices([node], [holder], sharing=False, number=True)
    assert devices.idle[0] == 2
    two = _task(_pod("two", [_container(NUMBER, "2")]))
    three = _task(_pod("three", [_container(NUMBER, "3")]))
    mask = devices.mask(three)
    assert mask is not None and not mask.passed[0]
    assert mask.reason(0).reason == "GpuNumber no enough gpu number on node n"
    assert devices.allocate(two, 0) == [0, 2]
    assert devices.idle[0] == 0


def test_nodes_without_gpus_pass_the_mask_and_pods_without_a_request_get_none() -> None:
    plain = {"metadata": {"name": "cpu"}, "status": {"capacity": {"cpu": "8"}}}
    devices, _ = _devices([plain, _gpu_node("g", "8000", "1")], [])
    mask = devices.mask(_task(_pod("p", [_container(MEMORY, "9000")])))
    assert mask is not None and list(mask.passed) == [True, False]
    assert devices.mask(_task(_pod("q", [{"name": "c"}]))) is None


# ---- vectorised mask == scalar reference


@settings(max_examples=60, deadline=None)
@given(
    nodes=st.lists(
        st.tuples(
            st.integers(1, 4),
            st.lists(st.tuples(st.integers(0, 3), st.integers(0, 9000)), max_size=4),
        ),
        min_size=1,
        max_size=5,
    ),
    memory=st.integers(0, 9000),
    number=st.integers(0, 4),
    sharing=st.booleans(),
)
def test_mask_agrees_with_the_scalar_choice(
    nodes: list[tuple[int, list[tuple[int, int]]]],
    memory: int,
    number: int,
    sharing: bool,
) -> None:
    node_objects, pods = [], []
    for index, (cards, holders) in enumerate(nodes):
        name = f"n{index}"
        node_objects.append(_gpu_node(name, str(cards * 8000), str(cards)))
        for h, (card, amount) in enumerate(holders):
            pods.append(
                _pod(
                    f"{name}-{h}",
                    [_container(MEMORY, str(amount))],
                    node=name,
                    annotations={GPU_INDEX: str(card)},
                )
            )
    devices, _ = _devices(node_objects, pods, sharing=sharing, number=not sharing)
    resource, amount = (MEMORY, memory) if sharing else (NUMBER, number)
    request = GpuRequest(amount, 0) if sharing else GpuRequest(0, amount)
    # Twice: the second time after a placement (the per-node arrays refreshed on its row).
    for attempt in range(2):
        task = _task(_pod(f"new-{attempt}", [_container(resource, str(amount))]))
        mask = devices.mask(task)
        if amount == 0:
            assert mask is None
            return
        assert mask is not None
        fitting = []
        for row in range(len(node_objects)):
            scalar = card_choice(
                devices.memory[row].tolist(),
                devices.used[row].tolist(),
                devices.pods[row].tolist(),
                request,
            )
            assert bool(mask.passed[row]) == (scalar is not None), row
            if scalar is not None:
                fitting.append(row)
        if not fitting:
            return
        assert devices.allocate(task, fitting[0]) is not None
    assert isinstance(devices.best_free, np.ndarray)
