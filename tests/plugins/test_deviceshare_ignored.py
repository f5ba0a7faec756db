"""Device resources Volcano leaves out of ordinary resource counting (``GetIgnoredDevices``,
``IgnoredDevicesList``): HAMi Ascend vNPU's memory and ``-core`` resources, once a node
registers the kind, are not in pods' requests, nodes' allocatable, PodGroups' minResources nor
queues' quotas (``NewResource``), nor reserved by ``GetInqueueResource``.

Transcribed from upstream ``pkg/scheduler/api/shared_device_pool_test.go``:
Test_ignoredDevicesList_Set_BasicUsage (3 cases; "possible way to clear" is "nothing appended":
the list only ever grows where upstream fills it). The other cases of that file test Go's
locking.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import pytest

from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import parse_conf
from volcano_py.plugins._plugin_helpers import inqueue_resource
from volcano_py.plugins.deviceshare.ignored import HamiIgnoredResources, ignored_resources_rule
from volcano_py.scheduler.device_resources import ignored_resources_rule as conf_rule
from volcano_py.scheduler.device_resources import snapshot_for

MEMORY = "huawei.com/Ascend310P-memory"
CORE = "huawei.com/Ascend310P-core"
COUNT = "huawei.com/Ascend310P"


class FixedRule:
    def __init__(self, names: list[list[str]]) -> None:
        self.names = names
        self.calls = 0

    def __call__(
        self, node: Mapping[str, Any], device_configs: Mapping[str, str]
    ) -> frozenset[str]:
        found = self.names[self.calls % len(self.names)] if self.names else []
        self.calls += 1
        return frozenset(n for n in found if n)


@pytest.mark.parametrize(
    ("name", "lists", "expected"),
    [
        (
            "set several values to ignoredDevicesList",
            [
                [
                    "volcano.sh/vgpu-memory",
                    "volcano.sh/vgpu-memory-percentage",
                    "volcano.sh/vgpu-cores",
                ]
            ],
            {
                "volcano.sh/vgpu-memory",
                "volcano.sh/vgpu-memory-percentage",
                "volcano.sh/vgpu-cores",
            },
        ),
        (
            "set several lists of values to ignoredDevicesList atomically",
            [
                ["volcano.sh/vgpu-memory"],
                ["volcano.sh/vgpu-memory-percentage", "volcano.sh/vgpu-cores", ""],
            ],
            {
                "volcano.sh/vgpu-memory",
                "volcano.sh/vgpu-memory-percentage",
                "volcano.sh/vgpu-cores",
            },
        ),
        ("possible way to clear ignoredDevicesList", [], set()),
    ],
)
def test_ignored_list_gathers_every_nodes_names(
    name: str, lists: list[list[str]], expected: set[str]
) -> None:
    """Test_ignoredDevicesList_Set_BasicUsage: the names of every node, once each, "" never."""
    cache = SchedulerCache()
    for i in range(max(len(lists), 1)):
        cache.apply_event("Node", "ADDED", _node(f"n{i}", registered=False))
    cache.set_ignored_resources_rule(FixedRule(lists))
    assert cache.ignored_resources == expected


def _node(name: str, registered: bool = True, advertised: bool = False) -> dict[str, Any]:
    allocatable = {"cpu": "8", "memory": "16Gi", "pods": "110", COUNT: "2"}
    if advertised:
        allocatable.update({MEMORY: "43054", CORE: "200"})
    cards = [{"id": f"{name}-{i}", "count": 7, "devmem": 21527, "devcore": 8} for i in range(2)]
    annotations = {"hami.io/node-register-Ascend310P": json.dumps(cards)} if registered else {}
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name, "annotations": annotations},
        "status": {"allocatable": allocatable, "capacity": dict(allocatable)},
    }


def _pod(name: str, group: str = "") -> dict[str, Any]:
    limits = {COUNT: "1", MEMORY: "4096", CORE: "50"}
    annotations = {"scheduling.k8s.io/group-name": group} if group else {}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": "default", "uid": name, "annotations": annotations},
        "spec": {
            "schedulerName": "volcano",
            "containers": [{"name": "c", "resources": {"limits": limits, "requests": limits}}],
        },
        "status": {"phase": "Pending"},
    }


def _pod_group() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "PodGroup",
        "metadata": {"name": "pg", "namespace": "default"},
        "spec": {"minMember": 1, "queue": "q", "minResources": {COUNT: "1", MEMORY: "4096"}},
    }


def _queue() -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.volcano.sh/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "q"},
        "spec": {"weight": 1, "capability": {"cpu": "4", MEMORY: "8192", COUNT: "4"}},
    }


HAMI = {"deviceshare.AscendHAMiVNPUEnable": True}


@pytest.mark.parametrize("node_first", [True, False])
def test_registered_kind_is_left_out_of_every_count(node_first: bool) -> None:
    """Whether the node or the pods arrive first, the memory and core resources are out of
    the pod's request, the node's allocatable, the PodGroup's minResources and the queue's
    capability; the card count stays."""
    cache = SchedulerCache()
    objects = [("Queue", _queue()), ("PodGroup", _pod_group()), ("Pod", _pod("p", "pg"))]
    node = ("Node", _node("npu"))
    for kind, obj in [node, *objects] if node_first else [*objects, node]:
        cache.apply_event(kind, "ADDED", obj)
    cache.set_ignored_resources_rule(ignored_resources_rule(HAMI))
    assert cache.ignored_resources == {MEMORY, CORE}
    task = cache.tasks["default/p"]
    assert set(task.resreq.scalar_resources) == {COUNT, "pods"}
    assert set(cache.nodes["npu"].allocatable.scalar_resources) == {COUNT, "pods"}
    job = cache.jobs["default/pg"]
    assert set(job.min_resources().scalar_resources) == {COUNT}
    assert job.total_request.get(MEMORY) == job.total_request.get(CORE) == 0
    assert job.total_request.get(COUNT) == 1000
    capability = cache.queues["q"].capability
    assert capability is not None and set(capability.scalar_resources) == {COUNT}
    # GetInqueueResource reserves no ignored name.
    assert MEMORY not in inqueue_resource(job, job.allocated).scalar_resources


def test_nothing_is_left_out_without_a_registered_node_or_the_switch() -> None:
    """GetIgnoredDevices is [""] for a node without cards of the kind; without
    AscendHAMiVNPUEnable no device lists anything."""
    cache = SchedulerCache()
    cache.apply_event("Node", "ADDED", _node("bare", registered=False))
    cache.apply_event("Pod", "ADDED", _pod("p"))
    cache.set_ignored_resources_rule(ignored_resources_rule(HAMI))
    assert cache.ignored_resources == frozenset()
    assert MEMORY in cache.tasks["default/p"].resreq.scalar_resources
    assert ignored_resources_rule({"deviceshare.VGPUEnable": True}) is None
    # A node registering later brings the names then.
    cache.apply_event("Node", "ADDED", _node("npu"))
    assert cache.ignored_resources == {MEMORY, CORE}
    assert MEMORY not in cache.tasks["default/p"].resreq.scalar_resources


def test_the_conf_gives_the_rule_before_each_snapshot() -> None:
    conf = parse_conf(
        "actions: allocate\ntiers:\n- plugins:\n  - name: deviceshare\n    arguments:\n"
        "      deviceshare.AscendHAMiVNPUEnable: true\n",
        ["allocate"],
    )
    assert conf_rule(conf) == HamiIgnoredResources("kube-system/volcano-vgpu-device-config")
    cache = SchedulerCache()
    cache.apply_event("Node", "ADDED", _node("npu"))
    cache.apply_event("Pod", "ADDED", _pod("p"))
    snapshot = snapshot_for(cache, conf)
    assert cache.ignored_resources == {MEMORY, CORE}
    node = snapshot.nodes["npu"]
    assert MEMORY not in node.allocatable.scalar_resources
