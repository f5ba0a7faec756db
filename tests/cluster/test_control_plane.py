"""The control plane the live scheduler is tested against: a real kube-apiserver (+ etcd) that
serves our CRDs, accepts a Volcano user's YAML unchanged, and kwok nodes on which a pod bound
through pods/binding starts Running — the exact path the scheduler uses."""

from __future__ import annotations

import ipaddress
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import pytest
import yaml
from kubernetes.client import (
    ApiClient,
    ApiextensionsV1Api,
    CoreV1Api,
    CustomObjectsApi,
    VersionApi,
)
from kubernetes.client.exceptions import ApiException

from e2e.controlplane import (
    POD_CIDR,
    POOL_LABEL,
    SCHEDULER_USER,
    ApiError,
    ControlPlane,
    load_yaml_documents,
)

pytestmark = pytest.mark.cluster

MakeNodes = Callable[..., list[str]]

# Seed 003's Queue, as a user has it (name, comments and all).
QUEUE_YAML = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: Queue
metadata:
  name: test
spec:
  capability:
    cpu: "8"
    memory: 16Gi
  # deserved 字段仅用于 capacity
  deserved:
    cpu: "4"
    memory: 8Gi
  guarantee:
    resource:
      cpu: "2"
      memory: 4Gi
  priority: 100
  reclaimable: true
  # weight 字段仅用于 proportion
  weight: 1
"""

PODGROUP_YAML = """\
apiVersion: scheduling.volcano.sh/v1beta1
kind: PodGroup
metadata:
  name: training
spec:
  minMember: 4
  minResources:
    cpu: "4"
    memory: 8Gi
    nvidia.com/gpu: "4"
  minTaskMember:
    worker: 4
  queue: test
"""


def wait_for(
    what: str, probe: Callable[[], Any], timeout: float = 30.0, interval: float = 0.1
) -> Any:
    """Poll until `probe` returns something truthy; return it."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"timed out after {timeout:.0f}s waiting for {what}")
        time.sleep(interval)


def raw(response: Any) -> Any:
    """The JSON body of a `_preload_content=False` call."""
    return json.loads(response.data)


def is_subset(expected: Any, actual: Any) -> bool:
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key in actual and is_subset(value, actual[key]) for key, value in expected.items()
        )
    return bool(expected == actual)


def test_apiserver_answers_and_authenticates_both_tokens(
    control_plane: ControlPlane, kube: ApiClient
) -> None:
    version = VersionApi(kube).get_code()
    assert version.git_version.startswith("v1.34"), version.git_version
    namespaces = raw(CoreV1Api(kube).list_namespace(_preload_content=False))
    assert {"default", "kube-system"} <= {ns["metadata"]["name"] for ns in namespaces["items"]}

    # The scheduler's token authenticates (403, not 401) but has no rights until RBAC grants.
    with pytest.raises(ApiError) as denied:
        control_plane.request("GET", "/api/v1/pods", token=control_plane.scheduler_token)
    assert denied.value.status == 403
    assert SCHEDULER_USER in denied.value.body
    with pytest.raises(ApiError) as anonymous:
        control_plane.request("GET", "/api/v1/pods", token="not-a-token")
    assert anonymous.value.status == 401


def test_every_process_listens_on_loopback_only(control_plane: ControlPlane) -> None:
    listening = control_plane.listening()
    assert set(listening) == {"etcd", "kube-apiserver", "kwok"}
    assert ("127.0.0.1", control_plane.ports["apiserver"]) in listening["kube-apiserver"]
    assert ("127.0.0.1", control_plane.ports["etcd_client"]) in listening["etcd"]
    for name, addresses in listening.items():
        assert addresses, f"{name} listens nowhere?"
        assert {host for host, _ in addresses} == {"127.0.0.1"}, (name, addresses)


def test_our_crds_are_installed_and_established(
    control_plane: ControlPlane, kube: ApiClient
) -> None:
    assert control_plane.crd_dir is not None
    files = sorted(Path(control_plane.crd_dir).glob("*.y*ml"))
    assert files, f"{control_plane.crd_dir} holds no CRDs (make crds)"
    in_files = {
        doc["metadata"]["name"]
        for path in files
        for doc in load_yaml_documents(path)
        if doc.get("kind") == "CustomResourceDefinition"
    }
    assert {"queues.scheduling.volcano.sh", "podgroups.scheduling.volcano.sh"} <= in_files

    listed = raw(ApiextensionsV1Api(kube).list_custom_resource_definition(_preload_content=False))
    established = {
        crd["metadata"]["name"]
        for crd in listed["items"]
        if any(
            c["type"] == "Established" and c["status"] == "True"
            for c in crd.get("status", {}).get("conditions", [])
        )
    }
    assert in_files <= established, in_files - established


def test_volcano_users_queue_and_podgroup_yaml_apply_unchanged(
    kube: ApiClient, namespace: str
) -> None:
    custom = CustomObjectsApi(kube)
    queue = yaml.safe_load(QUEUE_YAML)
    podgroup = yaml.safe_load(PODGROUP_YAML)
    group, version = "scheduling.volcano.sh", "v1beta1"
    custom.create_cluster_custom_object(group, version, "queues", queue)
    try:
        custom.create_namespaced_custom_object(group, version, namespace, "podgroups", podgroup)

        stored_queue = cast(
            dict[str, Any], custom.get_cluster_custom_object(group, version, "queues", "test")
        )
        stored_pg = cast(
            dict[str, Any],
            custom.get_namespaced_custom_object(group, version, namespace, "podgroups", "training"),
        )
        # Nothing the user wrote was pruned or rewritten (defaults may be added).
        assert is_subset(queue["spec"], stored_queue["spec"]), stored_queue["spec"]
        assert is_subset(podgroup["spec"], stored_pg["spec"]), stored_pg["spec"]

        listed = cast(
            dict[str, Any],
            custom.list_namespaced_custom_object(group, version, namespace, "podgroups"),
        )
        assert [item["metadata"]["name"] for item in listed["items"]] == ["training"]
    finally:
        custom.delete_cluster_custom_object(group, version, "queues", "test")


def test_kwok_nodes_of_each_pool_are_ready_with_their_allocatable(
    kube: ApiClient, make_nodes: MakeNodes
) -> None:
    names = {
        "cpu": make_nodes("cpu", 2),
        "gpu": make_nodes("gpu", 2),
        "npu": make_nodes("npu", 1),
    }
    nodes = raw(CoreV1Api(kube).list_node(label_selector=POOL_LABEL, _preload_content=False))[
        "items"
    ]
    by_name = {node["metadata"]["name"]: node for node in nodes}
    expected_extra: dict[str, dict[str, str]] = {
        "cpu": {},
        "gpu": {"nvidia.com/gpu": "8"},
        "npu": {"huawei.com/Ascend910": "8"},
    }
    for pool, pool_names in names.items():
        for name in pool_names:
            node = by_name[name]
            assert node["metadata"]["labels"][POOL_LABEL] == pool
            assert node["metadata"]["labels"]["kubernetes.io/hostname"] == name
            status = node["status"]
            ready = [c for c in status["conditions"] if c["type"] == "Ready"]
            assert ready and ready[0]["status"] == "True", status["conditions"]
            allocatable = status["allocatable"]
            assert allocatable == status["capacity"]
            assert is_subset(expected_extra[pool], allocatable), allocatable
            assert "nvidia.com/gpu" not in allocatable or pool == "gpu"
            assert "huawei.com/Ascend910" not in allocatable or pool == "npu"
            assert not node["spec"].get("taints"), node["spec"]


def test_pod_bound_through_pods_binding_runs_on_a_kwok_node(
    control_plane: ControlPlane, kube: ApiClient, namespace: str, make_nodes: MakeNodes
) -> None:
    [node] = make_nodes("gpu", 1)
    core = CoreV1Api(kube)
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": "worker-0",
            "annotations": {"scheduling.k8s.io/group-name": "training"},
        },
        "spec": {
            "schedulerName": "volcano",
            "containers": [
                {
                    "name": "main",
                    "image": "busybox",
                    "resources": {
                        "requests": {"cpu": "1", "memory": "1Gi", "nvidia.com/gpu": "1"},
                        "limits": {"nvidia.com/gpu": "1"},
                    },
                }
            ],
        },
    }
    created = raw(core.create_namespaced_pod(namespace, cast(Any, pod), _preload_content=False))
    uid = created["metadata"]["uid"]

    # Nobody else schedules here: without a binding the pod stays Pending and unbound.
    time.sleep(0.5)
    current = raw(core.read_namespaced_pod("worker-0", namespace, _preload_content=False))
    assert current["status"].get("phase") == "Pending"
    assert not current["spec"].get("nodeName")

    binding: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Binding",
        "metadata": {"name": "worker-0", "uid": uid},
        "target": {"apiVersion": "v1", "kind": "Node", "name": node},
    }
    # _preload_content=False: the client cannot deserialize the Status the apiserver answers.
    core.create_namespaced_binding(namespace, cast(Any, binding), _preload_content=False)

    def running() -> dict[str, Any] | None:
        obj = raw(core.read_namespaced_pod("worker-0", namespace, _preload_content=False))
        return obj if obj["status"].get("phase") == "Running" else None

    running_pod = wait_for("the bound pod to be Running", running, timeout=30)
    assert running_pod["spec"]["nodeName"] == node
    assert ipaddress.ip_address(running_pod["status"]["podIP"]) in ipaddress.ip_network(POD_CIDR)
    assert all(c["ready"] for c in running_pod["status"]["containerStatuses"])

    # A second bind of the same pod is a conflict: the scheduler must treat it as "lost".
    with pytest.raises(ApiException) as conflict:
        core.create_namespaced_binding(namespace, cast(Any, binding), _preload_content=False)
    assert conflict.value.status == 409


def test_generic_create_resolves_kinds_through_discovery(
    control_plane: ControlPlane, namespace: str
) -> None:
    # `create` resolves any kind through discovery, as `kubectl apply` would.
    queue = yaml.safe_load(QUEUE_YAML.replace("name: test", "name: helper-queue"))
    control_plane.create(queue)
    try:
        podgroup = control_plane.create(yaml.safe_load(PODGROUP_YAML), namespace)
        assert podgroup["metadata"]["namespace"] == namespace
        path = control_plane.resource_path("scheduling.volcano.sh/v1beta1", "PodGroup", namespace)
        assert path.endswith(f"/namespaces/{namespace}/podgroups")
    finally:
        queues = control_plane.resource_path("scheduling.volcano.sh/v1beta1", "Queue")
        control_plane.request("DELETE", f"{queues}/helper-queue")


def test_a_purged_namespace_is_emptied_and_takes_nothing_new(control_plane: ControlPlane) -> None:
    """``purge_namespace`` marks the namespace Terminating before it deletes the content: a
    controller still running cannot put a pod or a PodGroup back behind it (a straggler would
    ask every later scheduler for a decision, and its events would be refused)."""
    name = f"purged-{time.monotonic_ns() % 10**9}"
    control_plane.create_namespace(name)
    control_plane.create(yaml.safe_load(PODGROUP_YAML), name)
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "left"},
        "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "busybox"}]},
    }
    control_plane.create(pod, name)
    control_plane.purge_namespace(name)
    podgroups = control_plane.resource_path("scheduling.volcano.sh/v1beta1", "PodGroup", name)
    assert control_plane.request("GET", podgroups)["items"] == []
    assert control_plane.request("GET", f"/api/v1/namespaces/{name}/pods")["items"] == []
    namespace = control_plane.request("GET", f"/api/v1/namespaces/{name}")
    assert namespace["status"]["phase"] == "Terminating"
    for manifest in (pod, yaml.safe_load(PODGROUP_YAML)):
        with pytest.raises(ApiError) as refused:
            control_plane.create(manifest, name)
        assert refused.value.status == 403, refused.value
