"""The simulated kubelet's pod status and the API server's uid/resourceVersion stamps."""

from __future__ import annotations

import ipaddress
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from volcano_py.api.qos import qos_class
from volcano_py.sim.identity import Identities, derived_uid
from volcano_py.sim.kubelet import PodNetwork, SimKubelet, _dotted


def _pod(containers: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "p", "namespace": "default", "uid": "u-1"},
        "spec": {"containers": containers, **spec},
        "status": {"phase": "Pending"},
    }


def _container(requests: dict[str, str] | None = None, limits: dict[str, str] | None = None):
    resources: dict[str, Any] = {}
    if requests is not None:
        resources["requests"] = requests
    if limits is not None:
        resources["limits"] = limits
    return {"name": "c", "image": "busybox", "resources": resources}


@pytest.mark.parametrize(
    ("containers", "expected"),
    [
        # Cases after Kubernetes' pkg/apis/core/helper/qos TestGetPodQOS.
        ([_container()], "BestEffort"),
        ([_container(limits={"cpu": "1", "memory": "1Gi"})], "Guaranteed"),
        ([_container({"cpu": "1", "memory": "1Gi"}, {"cpu": "1", "memory": "1Gi"})], "Guaranteed"),
        ([_container({"cpu": "500m"}, {"cpu": "1", "memory": "1Gi"})], "Burstable"),
        ([_container({"cpu": "1"})], "Burstable"),
        ([_container(limits={"cpu": "1"})], "Burstable"),
        (
            [_container(limits={"cpu": "1", "memory": "1Gi"}), _container({"cpu": "1"})],
            "Burstable",
        ),
        ([_container({"nvidia.com/gpu": "1"}, {"nvidia.com/gpu": "1"})], "BestEffort"),
    ],
)
def test_qos_class(containers: list[dict[str, Any]], expected: str) -> None:
    assert qos_class(_pod(containers)) == expected


def _node(name: str, **extra: Any) -> dict[str, Any]:
    node: dict[str, Any] = {"metadata": {"name": name}, "spec": {}, "status": {}}
    if "pod_cidr" in extra:
        node["spec"]["podCIDR"] = extra["pod_cidr"]
    if "internal_ip" in extra:
        node["status"]["addresses"] = [{"type": "InternalIP", "address": extra["internal_ip"]}]
    return node


def test_pod_ips_come_from_the_nodes_pod_cidr_skipping_taken_ones() -> None:
    network = PodNetwork()
    held = _pod([_container()], nodeName="a")
    held["status"]["podIP"] = "10.9.0.2"
    network.prime([_node("a", pod_cidr="10.9.0.0/24", internal_ip="192.0.2.7")], [held])
    pod = _pod([_container()], nodeName="a")
    assert network.pod_ip("a", pod) == "10.9.0.3"
    assert network.pod_ip("a", pod) == "10.9.0.4"
    assert network.host_ip("a") == "192.0.2.7"
    assert network.pod_ip("a", _pod([_container()], nodeName="a", hostNetwork=True)) == (
        "192.0.2.7"
    )


def test_pod_ips_without_cidr_are_a_slash_24_per_node_by_name() -> None:
    network = PodNetwork()
    network.prime([_node("b"), _node("a")], [])
    assert network.pod_ip("a", _pod([_container()])) == "10.244.0.2"
    assert network.pod_ip("b", _pod([_container()])) == "10.244.1.2"
    assert network.host_ip("b") == "172.18.0.3"
    assert network.pod_ip("unknown", _pod([_container()])) is None


def test_small_cidr_goes_round() -> None:
    network = PodNetwork()
    network.prime([_node("a", pod_cidr="10.1.0.0/29")], [])
    pod = _pod([_container()])
    got = [network.pod_ip("a", pod) for _ in range(6)]
    # .2 to .6 (5 addresses), then round again.
    assert got == ["10.1.0.2", "10.1.0.3", "10.1.0.4", "10.1.0.5", "10.1.0.6", "10.1.0.2"]


def test_running_then_succeeded_keeps_start_and_container_id() -> None:
    kubelet = SimKubelet(seed=3)
    kubelet.network.prime([_node("a")], [])
    pod = _pod(
        [_container({"cpu": "1"})],
        nodeName="a",
        initContainers=[{"name": "init", "image": "busybox"}],
    )
    pod["status"] = kubelet.status(pod, "Running", "2026-01-01T00:00:03Z")
    running = pod["status"]
    assert running["startTime"] == "2026-01-01T00:00:03Z"
    assert running["initContainerStatuses"][0]["state"]["terminated"]["reason"] == "Completed"
    container_id = running["containerStatuses"][0]["containerID"]
    done = kubelet.status(pod, "Failed", "2026-01-01T00:00:09Z", exit_code=2, reason="Error")
    (status,) = done["containerStatuses"]
    assert status["containerID"] == container_id
    assert status["state"]["terminated"] == {
        "containerID": container_id,
        "exitCode": 2,
        "finishedAt": "2026-01-01T00:00:09Z",
        "reason": "Error",
        "startedAt": "2026-01-01T00:00:03Z",
    }
    assert done["podIP"] == running["podIP"] and done["startTime"] == running["startTime"]
    conditions = {c["type"]: c for c in done["conditions"]}
    assert conditions["Initialized"]["lastTransitionTime"] == "2026-01-01T00:00:03Z"
    assert conditions["Ready"]["lastTransitionTime"] == "2026-01-01T00:00:09Z"
    assert conditions["Ready"]["status"] == "False"


def test_uids_are_uuids_from_seed_and_key() -> None:
    one = derived_uid(1, "Pod", "default/p", "2026-01-01T00:00:00Z", 0)
    assert len(one) == 36 and one[14] == "4"
    assert one == derived_uid(1, "Pod", "default/p", "2026-01-01T00:00:00Z", 0)
    assert one != derived_uid(2, "Pod", "default/p", "2026-01-01T00:00:00Z", 0)
    identities = Identities(seed=1)
    first = identities.new_uid("Pod", "default/p", "t")
    assert identities.new_uid("Pod", "default/p", "t") != first  # recreated at the same moment


def test_resource_versions_continue_above_the_given_ones() -> None:
    identities = Identities()
    assert identities.given_version("41") == "41"
    assert identities.given_version("abc") is None
    assert identities.next_version() == "42"


@given(st.integers(min_value=0, max_value=2**32 - 1))
def test_dotted_writes_an_address_as_ipaddress_does(address: int) -> None:
    """The pod-address formatter skips building ``IPv4Address``; the text must not change."""
    assert _dotted(address) == str(ipaddress.IPv4Address(address))
