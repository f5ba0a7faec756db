"""resource-strategy-fit plugin (``pkg/scheduler/plugins/resource-strategy-fit``).

Transcribed from upstream:

* ``resource_strategy_fit_test.go``: ``Test_calculateWeight`` (7 cases), ``TestScore`` (17),
  ``Test_mostRequestedScore`` (2), ``Test_leastRequestedScore`` (2),
  ``TestResourceStrategyFitPlugin_OnSessionOpen`` (1), ``TestResourceStrategyFitPlugin`` (2),
  ``TestAllocate`` (2, through the allocate action) and ``Test_findResourceConfigWithPrefix`` (5);
* ``sra_test.go``: ``TestArguments`` and ``TestNode`` (4 cases);
* ``proportional_test.go``: ``Test_checkNodeResourceIsProportional`` (4 cases).

Then argument errors, Hypothesis properties that the vectorised scorers equal the per-node
references, and a scenario through allocate for sra and the proportional predicate.
"""

from __future__ import annotations

import logging
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case, check, run_case
from volcano_py.api.node_matrix import NodeMatrix, ResourceIndex
from volcano_py.api.resource import Resource
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import resource_strategy_fit as rsf
from volcano_py.plugins.resource_strategy_fit import (
    LEAST_ALLOCATED,
    MOST_ALLOCATED,
    Config,
    NotEnoughResources,
    PodStrategy,
    Proportion,
    SraWeight,
    Strategy,
)

GPU = "nvidia.com/gpu"
FOO = "example.com/foo"
T4 = "nvidia.com/t4"
A10 = "nvidia.com/a10"
EPS = 1e-8


def make_session(objects: list[tuple[str, dict[str, Any]]], arguments: dict[str, Any]) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags(
        rsf.PLUGIN_NAME, "enableNodeOrder", "enablePredicate", arguments=arguments
    )
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {rsf.PLUGIN_NAME: rsf.new}, cache)


def scores_by_node(ssn: Session) -> dict[str, dict[str, float]]:
    rows = np.arange(len(ssn.node_list), dtype=np.intp)
    return {
        task.key: dict(
            zip([n.name for n in ssn.node_list], ssn.node_scores(task, rows).tolist(), strict=True)
        )
        for job in ssn.jobs.values()
        for task in job.tasks.values()
    }


def assert_scores(
    actual: dict[str, dict[str, float]], expected: dict[str, dict[str, float]]
) -> None:
    assert set(actual) == set(expected)
    for task, nodes in expected.items():
        for node, score in nodes.items():
            assert actual[task][node] == pytest.approx(score, abs=1e-6), (task, node)


# ---------------------------------------------------------------------- Test_calculateWeight


def _strategies(**entries: tuple[str, int]) -> dict[str, Strategy]:
    return {name: Strategy(kind, weight) for name, (kind, weight) in entries.items()}


@pytest.mark.parametrize(
    ("arguments", "weight", "strategies"),
    [
        pytest.param(
            {
                "resourceStrategyFitWeight": 10,
                "resources": {
                    "cpu": {"type": "MostAllocated", "weight": 1},
                    "memory": {"type": "LeastAllocated", "weight": 2},
                },
            },
            10,
            {"cpu": Strategy(MOST_ALLOCATED, 1), "memory": Strategy(LEAST_ALLOCATED, 2)},
            id="test1",
        ),
        pytest.param(
            {
                "resources": {
                    "cpu": {"type": "MostAllocated", "weight": 1},
                    "memory": {"type": "LeastAllocated", "weight": 2},
                }
            },
            10,
            {"cpu": Strategy(MOST_ALLOCATED, 1), "memory": Strategy(LEAST_ALLOCATED, 2)},
            id="test2",
        ),
        pytest.param(
            {"resourceStrategyFitWeight": 10},
            10,
            {"cpu": Strategy(LEAST_ALLOCATED, 1), "memory": Strategy(LEAST_ALLOCATED, 1)},
            id="test3",
        ),
        pytest.param(
            {
                "ResourceStrategyFitPlusWeight": 10,
                "resources": {
                    "cpu": {"type": "LeastAllocated", "weight": 1},
                    "*": {"type": "MostAllocated", "weight": 2},
                },
            },
            10,
            {"cpu": Strategy(LEAST_ALLOCATED, 1)},
            id="test4",
        ),
        pytest.param(
            {
                "ResourceStrategyFitPlusWeight": 10,
                "resources": {
                    "nvidia.com/gpu/*": {"type": "MostAllocated", "weight": 3},
                    "cloudml.gpu**": {"type": "LeastAllocated", "weight": 2},
                },
            },
            10,
            {"nvidia.com/gpu/*": Strategy(MOST_ALLOCATED, 3)},
            id="test5",
        ),
        pytest.param(
            {
                "ResourceStrategyFitPlusWeight": 10,
                "resources": {
                    "memory": {"type": "LeastAllocated", "weight": 1},
                    "cloudml.*.gpu": {"type": "MostAllocated", "weight": 2},
                    "*.com/gpu": {"type": "MostAllocated", "weight": 3},
                },
            },
            10,
            {"memory": Strategy(LEAST_ALLOCATED, 1)},
            id="test6",
        ),
        pytest.param(
            {
                "ResourceStrategyFitPlusWeight": 10,
                "resources": {
                    "nvidia.com/gpu/*": {"type": "MostAllocated", "weight": 3},
                    "example.com/foo/*": {"type": "LeastAllocated", "weight": 2},
                    "*test*resource*": {"type": "MostAllocated", "weight": 4},
                    "*": {"type": "LeastAllocated", "weight": 1},
                },
            },
            10,
            {
                "nvidia.com/gpu/*": Strategy(MOST_ALLOCATED, 3),
                "example.com/foo/*": Strategy(LEAST_ALLOCATED, 2),
            },
            id="test7",
        ),
    ],
)
def test_calculate_weight_upstream(
    arguments: dict[str, Any], weight: int, strategies: dict[str, Strategy]
) -> None:
    config = Config.from_arguments(Arguments(arguments))
    assert config.weight == weight
    assert config.strategies == strategies


def test_argument_defaults_and_errors(caplog: pytest.LogCaptureFixture) -> None:
    config = Config.from_arguments(Arguments({}))
    assert config == Config()
    assert Config.from_arguments(Arguments({"resourceStrategyFitWeight": -3})).weight == 10
    assert Config.from_arguments(Arguments({"resourceStrategyFitWeight": 0})).weight == 0
    assert Config.from_arguments(
        Arguments({"resources": {"gpu": {"type": "Balanced", "weight": -1}}})
    ).strategies == {"gpu": Strategy(LEAST_ALLOCATED, 1)}
    with caplog.at_level(logging.WARNING):
        bad = Config.from_arguments(
            Arguments(
                {
                    "resourceStrategyFitWeight": "ten",
                    "resources": ["cpu"],
                    "sra": {"enable": "yes"},
                    "proportional": {"enable": True, "resources": 5},
                }
            )
        )
        Config.from_arguments(Arguments({"sra": {"enable": False, "wieght": 1}}))
    assert bad == Config()
    for key in ("resourceStrategyFitWeight", "resources", "sra", "proportional", "sra.wieght"):
        assert key in caplog.text


# ---------------------------------------------------------------------- TestScore


def _least(weight: int, cpu: int, memory: int) -> tuple[int, dict[str, Strategy]]:
    return weight, _strategies(cpu=(LEAST_ALLOCATED, cpu), memory=(LEAST_ALLOCATED, memory))


def _most(weight: int, cpu: int, memory: int) -> tuple[int, dict[str, Strategy]]:
    return weight, _strategies(cpu=(MOST_ALLOCATED, cpu), memory=(MOST_ALLOCATED, memory))


def _mixed(
    weight: int, cpu_type: str, cpu: int, memory_type: str, memory: int
) -> tuple[int, dict[str, Strategy]]:
    return weight, _strategies(cpu=(cpu_type, cpu), memory=(memory_type, memory))


_POD_LEAST = {
    rsf.STRATEGY_ANNOTATION: LEAST_ALLOCATED,
    rsf.STRATEGY_WEIGHT_ANNOTATION: '{"cpu": 2, "memory": 1}',
}


@pytest.mark.parametrize(
    ("task", "annotations", "node", "config", "want"),
    [
        pytest.param((100, 100), {}, (200, 200, 500, 500), _least(10, 1, 1), 400, id="test1"),
        pytest.param((100, 100), {}, (200, 200, 400, 400), _least(10, 1, 1), 250, id="test2"),
        pytest.param((100, 100), {}, (200, 200, 500, 500), _most(10, 1, 1), 600, id="test3"),
        pytest.param((100, 100), {}, (200, 200, 400, 400), _most(10, 1, 1), 750, id="test4"),
        pytest.param(
            (100, 100),
            {},
            (200, 200, 500, 500),
            _mixed(10, LEAST_ALLOCATED, 2, MOST_ALLOCATED, 1),
            466.66666667,
            id="test5",
        ),
        pytest.param(
            (100, 100),
            {},
            (200, 200, 500, 500),
            _mixed(10, LEAST_ALLOCATED, 1, MOST_ALLOCATED, 2),
            533.33333333,
            id="test6",
        ),
        pytest.param(
            (0, 100),
            {},
            (200, 200, 500, 500),
            _mixed(10, LEAST_ALLOCATED, 1, MOST_ALLOCATED, 2),
            600,
            id="test7",
        ),
        pytest.param(
            (100, 100),
            {},
            (200, 200, 0, 400),
            _mixed(10, LEAST_ALLOCATED, 1, MOST_ALLOCATED, 2),
            500,
            id="test8",
        ),
        pytest.param(
            (100, 100),
            {},
            (200, 200, 500, 500),
            (10, _strategies(memory=(MOST_ALLOCATED, 2))),
            600,
            id="test9",
        ),
        pytest.param(
            (100, 100),
            _POD_LEAST,
            (200, 200, 500, 500),
            _least(10, 1, 1),
            400,
            id="pod-level-scoring-least-allocated",
        ),
        pytest.param(
            (100, 100),
            {
                rsf.STRATEGY_ANNOTATION: MOST_ALLOCATED,
                rsf.STRATEGY_WEIGHT_ANNOTATION: '{"cpu": 1, "memory": 2}',
            },
            (200, 200, 500, 500),
            _least(10, 1, 1),
            600,
            id="pod-level-scoring-most-allocated",
        ),
        pytest.param(
            (100, 100),
            {
                rsf.STRATEGY_ANNOTATION: LEAST_ALLOCATED,
                rsf.STRATEGY_WEIGHT_ANNOTATION: "invalid-json",
            },
            (200, 200, 500, 500),
            _least(10, 1, 1),
            0,
            id="pod-level-scoring-invalid-json",
        ),
        pytest.param(
            (100, 100),
            {
                rsf.STRATEGY_ANNOTATION: LEAST_ALLOCATED,
                rsf.STRATEGY_WEIGHT_ANNOTATION: '{"cpu": 2}',
            },
            (200, 200, 500, 500),
            _least(10, 1, 1),
            400,
            id="pod-level-scoring-missing-resource-weight",
        ),
        pytest.param(
            (0, 0), {}, (200, 200, 500, 500), _least(10, 1, 1), 0, id="zero-resources-requested"
        ),
        pytest.param(
            (100, 100), {}, (500, 500, 500, 500), _least(10, 1, 1), 0, id="node-fully-allocated"
        ),
        pytest.param(
            (100, 100),
            {},
            (200, 200, 500, 500),
            _mixed(10, LEAST_ALLOCATED, 3, MOST_ALLOCATED, 1),
            450,
            id="mixed-scoring-strategies",
        ),
        pytest.param(
            (100, 100), {}, (200, 200, 500, 500), _least(20, 5, 5), 800, id="high-weight-scenario"
        ),
    ],
)
def test_score_upstream(
    task: tuple[float, float],
    annotations: dict[str, str],
    node: tuple[float, float, float, float],
    config: tuple[int, dict[str, Strategy]],
    want: float,
) -> None:
    request = Resource(*task)
    used, allocatable = Resource(node[0], node[1]), Resource(node[2], node[3])
    weight, strategies = config
    pod = rsf.pod_strategy(annotations)
    assert rsf.strategy_score(request, allocatable, used, weight, strategies, pod) == (
        pytest.approx(want, abs=EPS)
    )
    # The vectorised scorer agrees on the same node.
    matrix = NodeMatrix(ResourceIndex(("cpu", "memory", "pods")), rows=1)
    matrix.allocatable[0, :2] = node[2], node[3]
    matrix.used[0, :2] = node[0], node[1]
    rows = np.zeros(1, dtype=np.intp)
    vectorised = rsf.strategy_scores(request, matrix, rows, weight, strategies, pod)
    assert float(vectorised[0]) == pytest.approx(want, abs=EPS)


@pytest.mark.parametrize("kind", [MOST_ALLOCATED, LEAST_ALLOCATED])
def test_requested_score_upstream(kind: str) -> None:
    """``Test_mostRequestedScore`` and ``Test_leastRequestedScore``: test1 and test2."""
    assert rsf.requested_score(kind, 0, 0, 0, 0) == 0
    with pytest.raises(NotEnoughResources):
        rsf.requested_score(kind, 1, 2, 2, 1)


def test_on_session_open_upstream() -> None:
    """``TestResourceStrategyFitPlugin_OnSessionOpen``: an empty session opens."""
    ssn = make_session([], {})
    assert ssn.has_hook("batch_node_order") and not ssn.has_hook("predicate_mask")


def test_weights_zero_register_no_node_order() -> None:
    ssn = make_session([], {"resourceStrategyFitWeight": 0})
    assert not ssn.has_hook("batch_node_order")


# ------------------------------------------------ TestResourceStrategyFitPlugin


def _with(requests: dict[str, str], **scalars: str) -> dict[str, str]:
    return {**requests, **scalars}


def _plugin_pods() -> dict[str, dict[str, Any]]:
    base = resource_list("1", "1Gi")
    return {
        "p1": build_pod("c1", "p1", "", "Pending", _with(base, **{FOO: "2"}), "pg1"),
        "p2": build_pod("c1", "p2", "", "Pending", _with(base, **{FOO: "3"}), "pg1"),
        "p3": build_pod(
            "c1", "p3", "", "Pending", _with(resource_list("1", "10Gi"), **{GPU: "2"}), "pg1"
        ),
        "p4": build_pod("c1", "p4", "", "Pending", _with(base, **{GPU: "3"}), "pg1"),
        "p5": build_pod("c1", "p5", "", "Pending", _with(base, **{GPU: "4", FOO: "4"}), "pg1"),
    }


def _plugin_nodes() -> dict[str, dict[str, Any]]:
    def node(name: str, **scalars: str) -> dict[str, Any]:
        return build_node(name, resource_list("4", "4Gi", pods="10", **scalars))

    return {
        "n1": node("n1", **{GPU: "10"}),
        "n2": node("n2", **{GPU: "5"}),
        "n3": node("n3", **{FOO: "10"}),
        "n4": node("n4", **{FOO: "5"}),
        "n5": node("n5", **{GPU: "10", FOO: "5"}),
        # Upstream adds FOO twice (5 then 10): the later value stands.
        "n6": node("n6", **{FOO: "10"}),
    }


def _objects(pods: list[str], nodes: list[str]) -> list[tuple[str, dict[str, Any]]]:
    all_pods, all_nodes = _plugin_pods(), _plugin_nodes()
    return (
        [("Node", all_nodes[n]) for n in nodes]
        + [
            ("Queue", build_queue("c1")),
            ("PodGroup", build_pod_group("pg1", "c1", "c1", 0, None, "")),
        ]
        + [("Pod", all_pods[p]) for p in pods]
    )


@pytest.mark.parametrize(
    ("pods", "nodes", "foo_weight", "expected"),
    [
        pytest.param(
            ["p1", "p2", "p3", "p4"],
            ["n1", "n2", "n3", "n4"],
            1,
            {
                "c1/p1": {"n1": 0, "n2": 0, "n3": 800, "n4": 600},
                "c1/p2": {"n1": 0, "n2": 0, "n3": 700, "n4": 400},
                "c1/p3": {"n1": 200, "n2": 400, "n3": 0, "n4": 0},
                "c1/p4": {"n1": 300, "n2": 600, "n3": 0, "n4": 0},
            },
            id="single job 1",
        ),
        pytest.param(
            ["p5"],
            ["n5", "n6"],
            2,
            {"c1/p5": {"n5": 266.66666666, "n6": 399.99999999}},
            id="single job 2",
        ),
    ],
)
def test_resource_strategy_fit_plugin_upstream(
    pods: list[str], nodes: list[str], foo_weight: int, expected: dict[str, dict[str, float]]
) -> None:
    arguments = {
        "resourceStrategyFitWeight": 10,
        "resources": {
            GPU: {"type": "MostAllocated", "weight": 1},
            FOO: {"type": "LeastAllocated", "weight": foo_weight},
        },
    }
    assert_scores(scores_by_node(make_session(_objects(pods, nodes), arguments)), expected)


# ---------------------------------------------------------------------- TestAllocate


def _allocate_case(name: str, pods: list[dict[str, Any]], expect: dict[str, str]) -> Case:
    def node(node_name: str, kind: str) -> dict[str, Any]:
        scalars = {GPU: "10"} if kind == "gpu" else {}
        return build_node(
            node_name, resource_list("5", "10Gi", pods="10", **scalars), {"nodeResourceType": kind}
        )

    return Case(
        name=name,
        plugins={
            rsf.PLUGIN_NAME: ["enableNodeOrder"],
            "gang": ["enableJobOrder", "enableJobReady", "enableJobPipelined", "enableJobStarving"],
            "drf": ["enablePreemptable", "enableJobOrder"],
            "proportion": ["enableQueueOrder", "enableReclaimable", "enabledAllocatable"],
            "predicates": ["enablePredicate"],
            "nodeorder": ["enableNodeOrder"],
        },
        arguments={
            rsf.PLUGIN_NAME: {
                "resourceStrategyFitWeight": 10,
                "resources": {
                    GPU: {"type": "MostAllocated", "weight": 2},
                    "cpu": {"type": "LeastAllocated", "weight": 1},
                },
            }
        },
        pod_groups=[build_pod_group("pg1", "c1", "c1", 1, None, "Inqueue")],
        pods=pods,
        nodes=[node("n1", "gpu"), node("n2", "gpu"), node("n3", "cpu"), node("n4", "cpu")],
        queues=[build_queue("c1", 1, None)],
        expect_bind_map=expect,
        expect_binds_num=1,
    )


def _worker(name: str, node: str, phase: str, kind: str, **scalars: str) -> dict[str, Any]:
    return build_pod(
        "c1",
        name,
        node,
        phase,
        resource_list("1", "1G", **scalars),
        "pg1",
        {"volcano.sh/task-spec": "worker"},
        {"nodeResourceType": kind},
    )


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(
            _allocate_case(
                "GPU MostAllocated",
                [
                    _worker("p1", "", "Pending", "gpu", **{GPU: "2"}),
                    _worker("p2", "n2", "Running", "gpu", **{GPU: "2"}),
                ],
                {"c1/p1": "n2"},
            ),
            id="GPU MostAllocated",
        ),
        pytest.param(
            _allocate_case(
                "cpu LeastAllocated",
                [_worker("p3", "", "Pending", "cpu"), _worker("p4", "n3", "Running", "cpu")],
                {"c1/p3": "n4"},
            ),
            id="cpu LeastAllocated",
        ),
    ],
)
def test_allocate_upstream(case: Case) -> None:
    for seed in range(3):
        case.seed = seed
        check(case, run_case(case, ["allocate"]))


# ------------------------------------------------ Test_findResourceConfigWithPrefix


@pytest.mark.parametrize(
    ("name", "strategies", "want"),
    [
        pytest.param(
            "nvidia.com/gpu",
            {
                "nvidia.com/gpu": Strategy(MOST_ALLOCATED, 3),
                "nvidia.com/*": Strategy(LEAST_ALLOCATED, 1),
            },
            Strategy(MOST_ALLOCATED, 3),
            id="exact_match_priority",
        ),
        pytest.param(
            "nvidia.com/gpu/v100",
            {
                "nvidia.com/gpu/*": Strategy(MOST_ALLOCATED, 2),
                "nvidia.com/*": Strategy(LEAST_ALLOCATED, 1),
            },
            Strategy(MOST_ALLOCATED, 2),
            id="longest_prefix_match",
        ),
        pytest.param(
            "example.com/foo",
            {"nvidia.com/gpu/*": Strategy(MOST_ALLOCATED, 2)},
            None,
            id="no_match_found",
        ),
        pytest.param("any.resource", {}, None, id="empty_resources_map"),
        pytest.param(
            "cloudml.gpu/tensorflow/v2",
            {
                "cloudml.gpu/tensorflow/*": Strategy(MOST_ALLOCATED, 3),
                "cloudml.gpu/*": Strategy(LEAST_ALLOCATED, 2),
                "cloudml/*": Strategy(MOST_ALLOCATED, 1),
            },
            Strategy(MOST_ALLOCATED, 3),
            id="multiple_valid_wildcards_longest_match",
        ),
    ],
)
def test_find_resource_config_with_prefix_upstream(
    name: str, strategies: dict[str, Strategy], want: Strategy | None
) -> None:
    assert rsf.find_strategy(name, strategies) == want


# ---------------------------------------------------------------------- sra_test.go


def test_sra_arguments_upstream() -> None:
    config = Config.from_arguments(
        Arguments(
            {
                "sra": {
                    "enable": True,
                    "resources": "nvidia.com/t4, nvidia.com/a10",
                    "weight": 3,
                    "resourceWeight": {T4: 1, A10: 2},
                },
                "proportional": {
                    "enable": True,
                    "resources": "nvidia.com/t4, nvidia.com/a10",
                    "resourceProportion": {
                        "nvidia.com/t4.cpu": 3,
                        "nvidia.com/t4.memory": 6,
                        "nvidia.com/a10.cpu": 4,
                        "nvidia.com/a10.memory": 8,
                    },
                },
            }
        )
    )
    assert config.sra == SraWeight(3, {T4: 1, A10: 2})
    assert config.sra.resources_weight_sum == 3
    assert config.proportional == {T4: Proportion(3, 6), A10: Proportion(4, 8)}


def _sra_objects() -> list[tuple[str, dict[str, Any]]]:
    def pod(name: str, cpu: str, memory: str, **scalars: str) -> dict[str, Any]:
        return build_pod("c1", name, "", "Pending", resource_list(cpu, memory, **scalars), "pg1")

    def node(name: str, cpu: str, memory: str, **scalars: str) -> dict[str, Any]:
        return build_node(name, resource_list(cpu, memory, pods="10", **scalars))

    return [
        ("Node", node("n1", "32", "64Gi")),
        ("Node", node("n2", "8", "16Gi", **{T4: "16"})),
        ("Node", node("n3", "8", "16Gi", **{A10: "16"})),
        ("Node", node("n4", "8", "16Gi", **{T4: "8", A10: "16"})),
        ("Queue", build_queue("c1")),
        ("PodGroup", build_pod_group("pg1", "c1", "c1", 0, None, "")),
        ("Pod", pod("p1", "1", "1Gi")),
        ("Pod", pod("p2", "1.5", "0Gi", **{T4: "2"})),
        ("Pod", pod("p3", "2", "4Gi", **{A10: "2"})),
        ("Pod", pod("p4", "3", "4Gi", **{T4: "1", A10: "3"})),
    ]


_SRA_T4_ONLY = {"enable": True, "resources": T4, "weight": 5, "resourceWeight": {T4: 2}}
_FIT_T4 = {
    "resourceStrategyFitWeight": 8,
    "resources": {
        T4: {"type": "MostAllocated", "weight": 3},
        "cpu": {"type": "LeastAllocated", "weight": 1},
    },
}
_FIT_T4_SCORES = {
    "c1/p2": {"n1": 190.625, "n2": 237.5, "n3": 162.5, "n4": 312.5},
    "c1/p4": {"n1": 181.25, "n2": 162.5, "n3": 125, "n4": 200},
}


@pytest.mark.parametrize(
    ("arguments", "expected"),
    [
        pytest.param(
            {
                "resourceStrategyFitWeight": 0,
                "sra": {
                    "enable": True,
                    "resources": "nvidia.com/t4, nvidia.com/a10",
                    "weight": 5,
                    "resourceWeight": {T4: 2, A10: 3},
                },
            },
            {
                "c1/p1": {"n1": 500, "n2": 300, "n3": 200, "n4": 0},
                "c1/p2": {"n1": 0, "n2": 300, "n3": 0, "n4": 0},
                "c1/p3": {"n1": 0, "n2": 0, "n3": 200, "n4": 0},
                "c1/p4": {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
            },
            id="case1: single job score result in multi-GPU resource",
        ),
        pytest.param(
            {"resourceStrategyFitWeight": 0, "sra": _SRA_T4_ONLY},
            {
                "c1/p1": {"n1": 500, "n2": 0, "n3": 500, "n4": 0},
                "c1/p2": {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
                "c1/p3": {"n1": 0, "n2": 0, "n3": 500, "n4": 0},
                "c1/p4": {"n1": 0, "n2": 0, "n3": 0, "n4": 0},
            },
            id="case2: single job score result in single GPU resource",
        ),
        pytest.param(
            {**_FIT_T4, "sra": {**_SRA_T4_ONLY, "weight": 0}},
            {
                "c1/p1": {"n1": 775, "n2": 700, "n3": 700, "n4": 700},
                "c1/p3": {"n1": 750, "n2": 600, "n3": 600, "n4": 600},
                **_FIT_T4_SCORES,
            },
            id="case3: single job score result with sra policy and resourceStrategyFit",
        ),
        pytest.param(
            {**_FIT_T4, "sra": _SRA_T4_ONLY},
            {
                "c1/p1": {"n1": 1275, "n2": 700, "n3": 1200, "n4": 700},
                "c1/p3": {"n1": 750, "n2": 600, "n3": 1100, "n4": 600},
                **_FIT_T4_SCORES,
            },
            id="case4: single job score result with sra policy and resourceStrategyFit",
        ),
    ],
)
def test_sra_node_upstream(
    arguments: dict[str, Any], expected: dict[str, dict[str, float]]
) -> None:
    assert_scores(scores_by_node(make_session(_sra_objects(), arguments)), expected)


# ---------------------------------------------------------------------- proportional_test.go

_G = 1000 * 1000 * 1000
_PROPORTIONAL = {GPU: Proportion(4, 4)}


def _res(cpu: float, gigabytes: float, gpu: float) -> Resource:
    """``api.NewResource(api.BuildResourceListWithGPU(cpu, memory, gpu))``."""
    return Resource(cpu * 1000, gigabytes * _G, {GPU: gpu * 1000})


@pytest.mark.parametrize(
    ("task", "node", "fails"),
    [
        pytest.param(
            _res(4, 4, 0), _res(30, 30, 6), False, id="cpu_task_less_than_reserved_resource"
        ),
        pytest.param(
            _res(10, 10, 0), _res(30, 30, 6), True, id="cpu_task_greater_than_reserved_resource"
        ),
        pytest.param(_res(10, 10, 1), _res(30, 30, 6), False, id="gpu_task_no_proportional_check"),
        pytest.param(
            _res(10, 10, 0), _res(26, 26, 2), False, id="cpu_task_less_than_idle_resource"
        ),
    ],
)
def test_check_node_resource_is_proportional_upstream(
    task: Resource, node: Resource, fails: bool
) -> None:
    reason = rsf.proportional_failure(task, node, frozenset({GPU}), _PROPORTIONAL)
    assert (reason is not None) is fails
    if fails:
        assert reason == f"proportional of resource {GPU} check failed"


# ---------------------------------------------------------------------- vectorised == reference

NAMES = ("cpu", "memory", "pods", GPU, FOO)
AMOUNT = st.sampled_from([0.0, 500.0, 1000.0, 1500.0, 2000.0, 4000.0, 8000.0])


@st.composite
def matrices(draw: st.DrawFn) -> tuple[Resource, NodeMatrix]:
    rows = draw(st.integers(1, 6))
    matrix = NodeMatrix(ResourceIndex(NAMES), rows=rows)
    for row in range(rows):
        for column in range(len(NAMES)):
            capacity = draw(AMOUNT)
            matrix.allocatable[row, column] = capacity
            matrix.used[row, column] = draw(st.sampled_from([0.0, capacity / 2, capacity]))
            matrix.idle[row, column] = capacity - matrix.used[row, column]
    request = Resource(draw(AMOUNT), draw(AMOUNT))
    for name in (GPU, FOO, "example.com/absent"):
        if draw(st.booleans()):
            request.scalar_resources[name] = draw(AMOUNT)
    return request, matrix


@st.composite
def strategy_cases(draw: st.DrawFn) -> tuple[int, dict[str, Strategy], PodStrategy]:
    kinds = st.sampled_from([MOST_ALLOCATED, LEAST_ALLOCATED])
    strategies = {
        name: Strategy(draw(kinds), draw(st.integers(0, 4)))
        for name in ("cpu", "memory", GPU, "example.com/*", "example.com/absent")
        if draw(st.booleans())
    }
    pod = PodStrategy()
    if draw(st.booleans()):
        pod = PodStrategy(
            draw(st.sampled_from([MOST_ALLOCATED, LEAST_ALLOCATED, "Other"])),
            {name: draw(st.integers(0, 3)) for name in ("cpu", GPU) if draw(st.booleans())},
            invalid=draw(st.booleans()),
        )
    return draw(st.integers(0, 12)), strategies, pod


@settings(max_examples=300, deadline=None)
@given(matrices(), strategy_cases())
def test_strategy_scores_equal_reference(
    case: tuple[Resource, NodeMatrix], config: tuple[int, dict[str, Strategy], PodStrategy]
) -> None:
    request, matrix = case
    weight, strategies, pod = config
    rows = np.arange(matrix.size, dtype=np.intp)
    vectorised = rsf.strategy_scores(request, matrix, rows, weight, strategies, pod)
    for row in range(matrix.size):
        allocatable = matrix.index.resource(matrix.allocatable[row])
        used = matrix.index.resource(matrix.used[row])
        reference = rsf.strategy_score(request, allocatable, used, weight, strategies, pod)
        assert vectorised[row] == pytest.approx(reference, rel=1e-12, abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(
    matrices(),
    st.dictionaries(st.sampled_from([GPU, FOO, "example.com/absent"]), st.integers(0, 3)),
    st.integers(0, 5),
)
def test_sra_scores_equal_reference(
    case: tuple[Resource, NodeMatrix], resources: dict[str, int], weight: int
) -> None:
    request, matrix = case
    sra = SraWeight(weight, resources)
    rows = np.arange(matrix.size, dtype=np.intp)
    vectorised = rsf.sra_scores(request, matrix, rows, sra)
    for row in range(matrix.size):
        allocatable = matrix.index.resource(matrix.allocatable[row])
        assert vectorised[row] == pytest.approx(rsf.sra_score(request, allocatable, sra), abs=1e-9)


@settings(max_examples=300, deadline=None)
@given(
    matrices(),
    st.dictionaries(
        st.sampled_from([GPU, FOO]),
        st.builds(
            Proportion, st.sampled_from([0.0, 0.5, 1.0, 4.0]), st.sampled_from([0.0, 1.0, 8.0])
        ),
    ),
    st.data(),
)
def test_proportional_failures_equal_reference(
    case: tuple[Resource, NodeMatrix], proportional: dict[str, Proportion], data: st.DataObject
) -> None:
    request, matrix = case
    for name in proportional:
        request.scalar_resources.pop(name, None)
    declared = {
        name: np.array([data.draw(st.booleans()) for _ in range(matrix.size)], dtype=np.bool_)
        for name in proportional
    }
    failing = rsf.proportional_failures(request, matrix, declared, proportional)
    names = list(proportional)
    for row in range(matrix.size):
        idle = matrix.index.resource(matrix.idle[row])
        defined = frozenset(name for name in proportional if declared[name][row])
        reason = rsf.proportional_failure(request, idle, defined, proportional)
        expected = (
            None
            if failing[row] < 0
            else f"proportional of resource {names[failing[row]]} check failed"
        )
        assert reason == expected


# ---------------------------------------------------------------------- scenario


def test_allocate_keeps_gpu_nodes_for_gpu_work() -> None:
    """Two nodes, one with 4 GPUs. With sra a cpu-only pod goes to the plain node; with the
    proportional predicate (1 GPU keeps 4 cpu) a 6-cpu pod may not land on the GPU node even
    when the plain node is full, while the GPU pod may."""
    objects_nodes = [
        build_node("plain", resource_list("8", "16Gi", pods="10")),
        build_node("gpu", resource_list("20", "64Gi", pods="10", **{GPU: "4"})),
    ]
    plugins = {
        "gang": ["enableJobReady", "enableJobPipelined"],
        "predicates": ["enablePredicate"],
        rsf.PLUGIN_NAME: ["enableNodeOrder", "enablePredicate"],
    }
    sra_case = Case(
        name="sra",
        plugins=plugins,
        arguments={
            rsf.PLUGIN_NAME: {
                "resourceStrategyFitWeight": 0,
                "sra": {"enable": True, "resources": GPU, "weight": 10},
            }
        },
        nodes=objects_nodes,
        queues=[build_queue("q")],
        pod_groups=[build_pod_group("cpu-job", "ns", "q", 1)],
        pods=[build_pod("ns", "cpu-pod", "", "Pending", resource_list("2", "2Gi"), "cpu-job")],
        expect_bind_map={"ns/cpu-pod": "plain"},
    )
    check(sra_case, run_case(sra_case, ["allocate"]))

    proportional_case = Case(
        name="proportional",
        plugins=plugins,
        arguments={
            rsf.PLUGIN_NAME: {
                "proportional": {
                    "enable": True,
                    "resources": GPU,
                    "resourceProportion": {f"{GPU}.cpu": 4, f"{GPU}.memory": 8},
                }
            }
        },
        nodes=objects_nodes,
        queues=[build_queue("q")],
        pod_groups=[
            build_pod_group("filler", "ns", "q", 1, None, "Running"),
            build_pod_group("big-cpu", "ns", "q", 1),
            build_pod_group("gpu-job", "ns", "q", 1),
        ],
        pods=[
            build_pod("ns", "filler", "plain", "Running", resource_list("8", "8Gi"), "filler"),
            # 20 cpu - 6 = 14 < 4 GPUs x 4 cpu: rejected on the GPU node.
            build_pod("ns", "big-cpu", "", "Pending", resource_list("6", "6Gi"), "big-cpu"),
            build_pod(
                "ns", "gpu-pod", "", "Pending", resource_list("6", "6Gi", **{GPU: "1"}), "gpu-job"
            ),
        ],
        expect_bind_map={"ns/gpu-pod": "gpu"},
    )
    outcome = run_case(proportional_case, ["allocate"])
    check(proportional_case, outcome)
    big = outcome.session.jobs["ns/big-cpu"]
    assert "proportional of resource nvidia.com/gpu check failed" in big.fit_error()
