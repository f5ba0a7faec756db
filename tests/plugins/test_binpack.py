"""binpack plugin (``pkg/scheduler/plugins/binpack``).

Transcribed from upstream ``binpack_test.go``: ``TestArguments`` and both cases of
``TestNode`` (scores of every task on every node). Then worked arithmetic, and a Hypothesis
property that the vectorised scorer equals the per-node reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py.api.node_matrix import NodeMatrix, ResourceIndex
from volcano_py.api.resource import Resource
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import binpack
from volcano_py.plugins.binpack import BinpackWeights, binpack_score, binpack_scores

GPU = "nvidia.com/gpu"
FOO = "example.com/foo"


def make_session(
    objects: Iterable[tuple[str, Mapping[str, Any]]], arguments: Mapping[str, Any]
) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("binpack", "enableNodeOrder", arguments=arguments)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"binpack": binpack.new}, cache)


def scores_by_node(ssn: Session) -> dict[str, dict[str, float]]:
    rows = np.arange(len(ssn.node_list), dtype=np.intp)
    result: dict[str, dict[str, float]] = {}
    for job in ssn.jobs.values():
        for task in job.tasks.values():
            scores = ssn.node_scores(task, rows)
            result[task.key] = {
                node.name: float(s) for node, s in zip(ssn.node_list, scores, strict=True)
            }
    return result


# ---------------------------------------------------------------------- upstream: TestArguments


def test_arguments_upstream() -> None:
    weights = BinpackWeights.from_arguments(
        Arguments(
            {
                "binpack.weight": 10,
                "binpack.cpu": 5,
                "binpack.memory": 2,
                "binpack.resources": "nvidia.com/gpu, example.com/foo",
                "binpack.resources.nvidia.com/gpu": 7,
                "binpack.resources.example.com/foo": -3,
            }
        )
    )
    assert weights.weight == 10
    assert weights.cpu == 5
    assert weights.memory == 2
    assert weights.resources == {GPU: 7, FOO: 1, "cpu": 5, "memory": 2}


def test_arguments_defaults_and_negative_cpu_memory() -> None:
    assert BinpackWeights.from_arguments(Arguments()) == BinpackWeights()
    weights = BinpackWeights.from_arguments(Arguments({"binpack.cpu": -1, "binpack.memory": -7}))
    assert (weights.cpu, weights.memory) == (1, 1)


def test_weight_zero_registers_nothing() -> None:
    ssn = make_session(
        [("Node", build_node("n1", resource_list("2", "4Gi", pods="10")))], {"binpack.weight": 0}
    )
    assert not ssn.has_hook("batch_node_order") and not ssn.has_hook("node_order")


# ---------------------------------------------------------------------- upstream: TestNode


def _test_node_objects() -> list[tuple[str, dict[str, Any]]]:
    p3_requests = resource_list("2", "10Gi", **{GPU: "2"})
    p4_requests = resource_list("3", "4Gi", **{FOO: "3"})
    n2 = build_node("n2", resource_list("4", "16Gi", pods="10", **{GPU: "4"}))
    n3 = build_node("n3", resource_list("2", "4Gi", pods="10", **{FOO: "16"}))
    return [
        ("Node", build_node("n1", resource_list("2", "4Gi", pods="10"))),
        ("Node", n2),
        ("Node", n3),
        ("Queue", build_queue("c1")),
        ("PodGroup", build_pod_group("pg1", "c1", "c1", 0)),
        ("Pod", build_pod("c1", "p1", "n1", "Pending", resource_list("1", "1Gi"), "pg1")),
        ("Pod", build_pod("c1", "p2", "n3", "Pending", resource_list("1.5", "0Gi"), "pg1")),
        ("Pod", build_pod("c1", "p3", "", "Pending", p3_requests, "pg1")),
        ("Pod", build_pod("c1", "p4", "", "Pending", p4_requests, "pg1")),
    ]


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(
            {
                "binpack.weight": 10,
                "binpack.cpu": 2,
                "binpack.memory": 3,
                "binpack.resources": "nvidia.com/gpu, example.com/foo",
                "binpack.resources.nvidia.com/gpu": 7,
                "binpack.resources.example.com/foo": 8,
            },
            {
                # n3 has used 1.5c by pod p2, idle cpu not enough for p1
                "c1/p1": {"n1": 700, "n2": 137.5, "n3": 0},
                "c1/p2": {"n1": 0, "n2": 375, "n3": 0},
                "c1/p3": {"n1": 0, "n2": 531.25, "n3": 0},
                # required 3c, but node only has 2c
                "c1/p4": {"n1": 0, "n2": 173.076923076, "n3": 0},
            },
            id="single job, weights 10/2/3/7/8",
        ),
        pytest.param(
            {
                "binpack.weight": 1,
                "binpack.cpu": 1,
                "binpack.memory": 1,
                "binpack.resources": "nvidia.com/gpu",
                "binpack.resources.nvidia.com/gpu": 23,
            },
            {
                "c1/p1": {"n1": 75, "n2": 15.625, "n3": 0},
                "c1/p2": {"n1": 0, "n2": 37.5, "n3": 0},
                "c1/p3": {"n1": 0, "n2": 50.5, "n3": 0},
                "c1/p4": {"n1": 0, "n2": 50, "n3": 0},
            },
            id="single job, gpu weight 23",
        ),
    ],
)
def test_node_upstream(arguments: dict[str, Any], expected: dict[str, dict[str, float]]) -> None:
    """``TestNode``: every task (placed or not) scored on every node."""
    ssn = make_session(_test_node_objects(), arguments)
    actual = scores_by_node(ssn)
    for task_key, per_node in expected.items():
        for node_name, score in per_node.items():
            assert actual[task_key][node_name] == pytest.approx(score, abs=1e-8), (
                task_key,
                node_name,
            )


# ---------------------------------------------------------------------- worked arithmetic


def test_worked_example() -> None:
    """Node 8 cpu / 16Gi with 2 cpu / 4Gi used; task 2 cpu / 4Gi, cpu weight 3, memory 1:
    cpu (2+2)/8*3 = 1.5, memory (4+4)/16*1 = 0.5, (1.5+0.5)/4 * 100 = 50."""
    request = Resource.from_list(resource_list("2", "4Gi"))
    allocatable = Resource.from_list(resource_list("8", "16Gi"))
    used = Resource.from_list(resource_list("2", "4Gi"))
    weights = BinpackWeights(cpu=3, resources={"cpu": 3, "memory": 1})
    assert binpack_score(request, allocatable, used, weights) == 50.0


def test_resource_the_node_lacks_counts_weight_but_no_score() -> None:
    """A GPU task on a node without GPUs: the GPU weight still divides (upstream quirk)."""
    request = Resource.from_list(resource_list("1", "1Gi", **{GPU: "1"}))
    allocatable = Resource.from_list(resource_list("2", "2Gi"))
    weights = BinpackWeights(resources={"cpu": 1, "memory": 1, GPU: 2})
    # cpu 0.5 + memory 0.5 + gpu 0 over weights 1 + 1 + 2 -> 0.25 -> 25.
    assert binpack_score(request, allocatable, Resource(), weights) == 25.0


# ---------------------------------------------------------------------- vectorised == reference

NAMES = ("cpu", "memory", "pods", GPU, FOO)


@st.composite
def binpack_cases(draw: st.DrawFn) -> tuple[Resource, NodeMatrix, BinpackWeights]:
    rows = draw(st.integers(1, 6))
    matrix = NodeMatrix(ResourceIndex(NAMES), rows=rows)
    amount = st.sampled_from([0.0, 500.0, 1000.0, 1500.0, 2000.0, 4000.0, 8000.0])
    for row in range(rows):
        for column in range(len(NAMES)):
            capacity = draw(amount)
            matrix.allocatable[row, column] = capacity
            matrix.used[row, column] = draw(st.sampled_from([0.0, capacity / 2, capacity]))
    request = Resource(draw(amount), draw(amount))
    for name in (GPU, FOO, "pods", "example.com/absent"):
        if draw(st.booleans()):
            request.scalar_resources[name] = draw(amount)
    weight = st.integers(0, 5)
    resources = {"cpu": draw(weight), "memory": draw(weight)}
    for name in (GPU, FOO, "example.com/absent"):
        if draw(st.booleans()):
            resources[name] = draw(weight)
    weights = BinpackWeights(
        draw(st.integers(-2, 10)), resources["cpu"], resources["memory"], resources
    )
    return request, matrix, weights


@settings(max_examples=300, deadline=None)
@given(binpack_cases())
def test_vectorised_equals_reference(case: tuple[Resource, NodeMatrix, BinpackWeights]) -> None:
    request, matrix, weights = case
    rows = np.arange(matrix.size, dtype=np.intp)
    vectorised = binpack_scores(request, matrix, rows, weights)
    for row in range(matrix.size):
        allocatable = matrix.index.resource(matrix.allocatable[row])
        used = matrix.index.resource(matrix.used[row])
        assert vectorised[row] == binpack_score(request, allocatable, used, weights)
