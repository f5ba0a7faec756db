"""`volcano-py controllers` discovers HyperNodes from node labels on the real control plane,
configured as upstream's user guide (how_to_use_hypernode_auto_discovery) configures it: the
``volcano-controller.conf`` key of ``volcano-controller-configmap`` in ``volcano-system``.

Two tors under one spine: four kwok nodes labelled with their tor and spine give two tier-1
HyperNodes of two nodes and one tier-2 HyperNode of the two, labelled with their source, each
with its ``status.nodeCount``; relabelling a node moves it. The controllers run under
deploy/base's rules.
"""

from __future__ import annotations

import contextlib
import secrets
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import test_controllers_process
import test_scheduler_process
from test_scheduler_process import wait_until

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import POOLS, ApiError, ControlPlane, NodePool

pytestmark = pytest.mark.cluster

scheduler_name = test_scheduler_process.scheduler_name
controllers = test_controllers_process.controllers

HYPER_NODES = "/apis/topology.volcano.sh/v1alpha1/hypernodes"
CONFIG_MAPS = "/api/v1/namespaces/volcano-system/configmaps"
SOURCE_LABEL = "volcano.sh/network-topology-source"


@pytest.fixture
def label_keys(control_plane: ControlPlane) -> Iterator[tuple[str, str]]:
    """Label keys of this test only, and the ConfigMap naming them; both removed after."""
    token = secrets.token_hex(3)
    tor, spine = f"test.volcano-py.io/tor-{token}", f"test.volcano-py.io/spine-{token}"
    conf = f"""
networkTopologyDiscovery:
  - source: label
    enabled: true
    config:
      networkTopologyTypes:
        t{token}:
          - nodeLabel: {spine}
          - nodeLabel: {tor}
          - nodeLabel: kubernetes.io/hostname
"""
    with contextlib.suppress(ApiError):
        control_plane.create_namespace("volcano-system")
    control_plane.request("POST", CONFIG_MAPS, {
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "volcano-controller-configmap"},
        "data": {"volcano-controller.conf": conf},
    })  # fmt: skip
    try:
        yield tor, spine
    finally:
        with contextlib.suppress(ApiError):
            control_plane.request("DELETE", f"{CONFIG_MAPS}/volcano-controller-configmap")
        for hyper_node in _discovered(control_plane):
            with contextlib.suppress(ApiError):
                control_plane.request("DELETE", f"{HYPER_NODES}/{hyper_node['metadata']['name']}")


def _discovered(plane: ControlPlane) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = plane.request(
        "GET", HYPER_NODES, params={"labelSelector": f"{SOURCE_LABEL}=label"}
    )["items"]
    return items


def _members(hyper_node: dict[str, Any]) -> list[str]:
    return sorted(m["selector"]["exactMatch"]["name"] for m in hyper_node["spec"]["members"])


def test_label_discovery_builds_and_follows_the_topology(
    label_keys: tuple[str, str],
    controllers: ControllersProcess,
    control_plane: ControlPlane,
    make_nodes: Callable[..., list[str]],
) -> None:
    tor, spine = label_keys
    cpu = POOLS["cpu"]
    nodes = [
        name
        for index in range(2)
        for name in make_nodes(
            NodePool(f"tor{index}", cpu.capacity), 2, labels={tor: f"tor{index}", spine: "s0"}
        )
    ]

    def diagnose() -> str:
        found = {
            hn["metadata"]["name"]: (_members(hn), hn.get("status"))
            for hn in _discovered(control_plane)
        }
        return f"hypernodes: {found}\n{controllers.log(40)}"

    def topology() -> dict[int, list[list[str]]]:
        by_tier: dict[int, list[list[str]]] = {}
        for hn in _discovered(control_plane):
            by_tier.setdefault(hn["spec"]["tier"], []).append(_members(hn))
        return {tier: sorted(groups) for tier, groups in by_tier.items()}

    def built() -> bool:
        shape = topology()
        return shape.get(1) == [nodes[:2], nodes[2:]] and len(shape.get(2, [[]])[0]) == 2

    wait_until("the discovered HyperNodes", built, timeout=60.0, diagnose=diagnose)
    found = {hn["spec"]["tier"]: hn for hn in _discovered(control_plane)}
    assert found[1]["spec"]["tierName"] == tor and found[2]["spec"]["tierName"] == spine
    assert found[1]["metadata"]["name"].startswith("hypernode-t")
    def counted() -> bool:
        return all(
            (hn.get("status") or {}).get("nodeCount") == 2 for hn in _discovered(control_plane)
        )

    wait_until("every HyperNode's nodeCount", counted, timeout=30.0, diagnose=diagnose)

    # nodes[1] moves to tor1: tor0 keeps one node, tor1 has three.
    control_plane.request(
        "PATCH", f"/api/v1/nodes/{nodes[1]}", {"metadata": {"labels": {tor: "tor1"}}},
        content_type="application/strategic-merge-patch+json",
    )  # fmt: skip
    wait_until(
        "the moved node",
        lambda: topology().get(1) == sorted([[nodes[0]], sorted(nodes[1:])]),
        timeout=60.0,
        diagnose=diagnose,
    )
