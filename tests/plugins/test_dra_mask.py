"""The DRA Filter (a vectorised mask of free-device counts per node, then, for claims the
counts cannot decide, the exact search per node) agrees with its scalar reference
(``feasible_scalar``: the devices the node reaches, found one by one, then the same search)
on random clusters: nodes with labels, node-local slices, slices for a label selector or for
all nodes, devices of two models, some taken by allocated claims, and claims of one or two
requests with counts, ``All``, selectors and a ``matchAttribute`` constraint. And the
``dynamicresources.filterTimeoutSeconds`` argument."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.api.dra_cel import compile_selector
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, close_session, open_session
from volcano_py.plugins.predicates.dra import DynamicResources
from volcano_py.plugins.predicates.plugin import PredicatesPlugin
from volcano_py.scheduler.registry import default_registry

# Compile once before Hypothesis runs: cel-python raises the recursion limit when its
# environment is made, which Hypothesis reports when it happens inside a test.
compile_selector("true")

DRIVER = "gpu.example.com"
MODEL = f'device.attributes["{DRIVER}"].model == "A"'


def _device(name: str, model: str, numa: int) -> dict[str, Any]:
    return {
        "name": name,
        "attributes": {"model": {"string": model}, "numa": {"int": numa}},
    }


@st.composite
def clusters(draw: st.DrawFn) -> dict[str, Any]:
    nodes = draw(st.integers(1, 5))
    racks = [draw(st.sampled_from(["a", "b"])) for _ in range(nodes)]
    slices: list[dict[str, Any]] = []
    for index in range(nodes):
        count = draw(st.integers(0, 3))
        devices = [
            _device(f"d{i}", draw(st.sampled_from("AB")), draw(st.integers(0, 1)))
            for i in range(count)
        ]
        if devices:
            slices.append({"nodeName": f"n{index}", "pool": f"n{index}", "devices": devices})
    if draw(st.booleans()):
        slices.append(
            {
                "nodeSelector": {
                    "nodeSelectorTerms": [
                        {"matchExpressions": [{"key": "rack", "operator": "In", "values": ["a"]}]}
                    ]
                },
                "pool": "rack-a",
                "devices": [_device("r0", "A", 0)],
            }
        )
    if draw(st.booleans()):
        slices.append({"allNodes": True, "pool": "shared", "devices": [_device("s0", "B", 1)]})
    requests = []
    for index in range(draw(st.integers(1, 2))):
        mode = draw(st.sampled_from(["ExactCount", "All"]))
        exactly: dict[str, Any] = {"deviceClassName": DRIVER, "allocationMode": mode}
        if mode == "ExactCount":
            exactly["count"] = draw(st.integers(1, 3))
        if draw(st.booleans()):
            exactly["selectors"] = [{"cel": {"expression": MODEL}}]
        requests.append({"name": f"r{index}", "exactly": exactly})
    constraints = [{"matchAttribute": f"{DRIVER}/numa"}] if draw(st.booleans()) else []
    taken = draw(st.lists(st.sampled_from(["d0", "d1", "r0"]), max_size=2, unique=True))
    return {
        "racks": racks,
        "slices": slices,
        "requests": requests,
        "constraints": constraints,
        "taken": taken,
    }


def _events(cluster: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = []
    for index, rack in enumerate(cluster["racks"]):
        name = f"n{index}"
        allocatable = {"cpu": "8", "memory": "8Gi", "pods": "110"}
        events.append(
            (
                "Node",
                {
                    "metadata": {"name": name, "labels": {"rack": rack}},
                    "status": {
                        "allocatable": allocatable,
                        "capacity": allocatable,
                        "conditions": [{"type": "Ready", "status": "True"}],
                    },
                },
            )
        )
    events.append(
        (
            "DeviceClass",
            {
                "metadata": {"name": DRIVER},
                "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]},
            },
        )
    )
    results = []
    for position, spec in enumerate(cluster["slices"]):
        pool = spec.pop("pool")
        body = {
            "driver": DRIVER,
            "pool": {"name": pool, "generation": 1, "resourceSliceCount": 1},
            **spec,
        }
        events.append(("ResourceSlice", {"metadata": {"name": f"s{position}"}, "spec": body}))
        for device in spec["devices"]:
            if device["name"] in cluster["taken"]:
                results.append(
                    {"request": "x", "driver": DRIVER, "pool": pool, "device": device["name"]}
                )
    if results:
        events.append(
            (
                "ResourceClaim",
                {
                    "metadata": {"name": "other", "namespace": "default", "uid": "other"},
                    "spec": {"devices": {"requests": []}},
                    "status": {
                        "allocation": {"devices": {"results": results}},
                        "reservedFor": [{"resource": "pods", "name": "x", "uid": "x"}],
                    },
                },
            )
        )
    devices: dict[str, Any] = {"requests": cluster["requests"]}
    if cluster["constraints"]:
        devices["constraints"] = cluster["constraints"]
    events.append(
        (
            "ResourceClaim",
            {
                "metadata": {"name": "mine", "namespace": "default", "uid": "mine"},
                "spec": {"devices": devices},
            },
        )
    )
    events.append(("Queue", {"metadata": {"name": "default"}, "spec": {"weight": 1}}))
    events.append(
        (
            "PodGroup",
            {
                "metadata": {"name": "pg", "namespace": "default", "uid": "pg"},
                "spec": {"minMember": 1, "queue": "default"},
                "status": {"phase": "Inqueue"},
            },
        )
    )
    events.append(
        (
            "Pod",
            {
                "metadata": {
                    "name": "p",
                    "namespace": "default",
                    "uid": "p",
                    "annotations": {"scheduling.k8s.io/group-name": "pg"},
                },
                "spec": {
                    "schedulerName": "volcano",
                    "resourceClaims": [{"name": "gpu", "resourceClaimName": "mine"}],
                    "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                },
                "status": {"phase": "Pending"},
            },
        )
    )
    return events


@settings(max_examples=60, deadline=None)
@given(clusters())
def test_mask_agrees_with_the_scalar_reference(cluster: dict[str, Any]) -> None:
    cache = SchedulerCache()
    for kind, obj in _events(cluster):
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(actions=[], tiers=[Tier([PluginOption.with_flags("predicates")])])
    ssn = open_session(cache.snapshot(), conf, default_registry(), cache, SchedulingState())
    try:
        dra = DynamicResources(ssn, "predicates", 0.0, {})
        (task,) = [t for job in ssn.jobs.values() for t in job.tasks.values()]
        assert isinstance(task, TaskInfo)
        mask = dra.mask(task)
        assert mask is not None
        search = dra.task_predicate(task)
        for node in ssn.node_list:
            vectorised = bool(mask.passed[node.row]) and (
                search is None or search(task, node) is None
            )
            assert vectorised == dra.feasible_scalar(task, node.row), node.name
    finally:
        close_session(ssn)


@pytest.mark.parametrize(
    ("arguments", "gates", "timeout"),
    [
        ({}, {}, 10.0),
        ({"dynamicresources.filterTimeoutSeconds": 3}, {}, 3.0),
        ({"dynamicresources.filterTimeoutSeconds": 0}, {}, 0.0),
        ({"dynamicresources.filterTimeoutSeconds": -1}, {}, 10.0),
        ({"dynamicresources.filterTimeoutSeconds": 3}, {"DRASchedulerFilterTimeout": False}, 0.0),
    ],
)
def test_filter_timeout_argument(
    arguments: dict[str, Any], gates: dict[str, bool], timeout: float
) -> None:
    """helper.go's setUpDynamicResourcesArgs: whole seconds, a negative value keeps the
    default (10 s); the DRASchedulerFilterTimeout gate off means no timeout."""
    cluster = {"racks": ["a"], "slices": [], "requests": [], "constraints": [], "taken": []}
    cache = SchedulerCache()
    for kind, obj in _events(cluster):
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(actions=[], tiers=[Tier([PluginOption.with_flags("predicates")])])
    state = SchedulingState(kube_feature_gates={"DynamicResourceAllocation": True, **gates})
    ssn = open_session(cache.snapshot(), conf, default_registry(), cache, state)
    try:
        plugin = PredicatesPlugin(Arguments(arguments))
        found = plugin._dynamic_resources(ssn)
        assert found is not None
        assert found.allocator.timeout == timeout
    finally:
        close_session(ssn)
