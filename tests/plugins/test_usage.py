"""usage plugin (``pkg/scheduler/plugins/usage``).

Transcribed from upstream ``usage_test.go`` (``TestUsageEstimatorConfig``,
``TestUsageConfigKeepsDefaultForGenericStringValues``,
``TestUsageConfigParsesBestEffortResourceValues``,
``TestUsageThresholdsKeepDefaultWhenOutOfRange``, ``TestUsageWeightsKeepDefaultWhenNegative``,
``TestUsage_predicateFn`` (5 cases), ``TestUsage_nodeOrderFn`` (2 cases),
``TestUsage_prioritizeNodesDoesNotDoubleCountNodeOrder``, ``TestShouldAddToShadowCache``
(8 cases)), ``estimator_test.go`` (every table) and ``shadow_cache_test.go`` (every test).
Then: the vectorised scores equal the scalar rule (Hypothesis), and whole sessions where the
shadow of a pod just placed steers the next one elsewhere.

Upstream sets ``node.ResourceUsage`` after the session opened; here node usage goes into the
cache before, as the metrics collector puts it there, and the session's clock is fixed.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py.api.node_usage import NEVER, NODE_METRICS_PERIOD, NodeUsage
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import StatusCode, TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, Session, close_session, open_session
from volcano_py.plugins import usage
from volcano_py.plugins.usage import (
    NODE_USAGE_CPU_EXTEND,
    NODE_USAGE_MEMORY_EXTEND,
    UsagePlugin,
    should_add_to_shadow_cache,
)
from volcano_py.plugins.usage.estimator import (
    calc_applied_risk_factor,
    calc_composite_utilization,
    calc_load_composite_percentage,
    calc_node_score,
    composite_utilization_rows,
    estimate_best_effort_resource,
    estimate_pod_resource,
    node_scores_rows,
    pod_request_limit,
)
from volcano_py.plugins.usage.shadow_cache import ShadowLoadCache
from volcano_py.scheduler.cycle import run_cycle
from volcano_py.scheduler.registry import PluginRegistry, new_action

NOW = 1_800_000_000.0
MI = 1024 * 1024
GI = 1024 * MI


def plugin(arguments: Mapping[str, Any]) -> UsagePlugin:
    return usage.new(Arguments(arguments, owner="usage"))


# ---------------------------------------------------------------------- configuration


def test_estimator_config_upstream() -> None:
    """``TestUsageEstimatorConfig``: defaults, configured values, invalid values."""
    default = plugin({}).config
    assert default.request_ratio == pytest.approx(0.7)
    assert default.burst_ratio == pytest.approx(0.0)
    assert default.risk_threshold == pytest.approx(0.6)
    assert default.risk_factor == pytest.approx(1.2)
    assert default.be_cpu == pytest.approx(250)
    assert default.be_memory == pytest.approx(200 * MI)

    configured = plugin(
        {
            "estimator": {
                "request_ratio": 0.8,
                "burst_ratio": 0.3,
                "risk_threshold": 0.75,
                "risk_factor": 1.5,
                "be_cpu": "500m",
                "be_mem": "300Mi",
            }
        }
    ).config
    assert configured.request_ratio == pytest.approx(0.8)
    assert configured.burst_ratio == pytest.approx(0.3)
    assert configured.risk_threshold == pytest.approx(0.75)
    assert configured.risk_factor == pytest.approx(1.5)
    assert configured.be_cpu == pytest.approx(500)
    assert configured.be_memory == pytest.approx(300 * MI)

    invalid = plugin(
        {
            "estimator": {
                "request_ratio": 1.5,
                "burst_ratio": -0.1,
                "risk_threshold": 2.0,
                "risk_factor": 0.5,
                "be_cpu": "-1",
                "be_mem": "bad",
            }
        }
    ).config
    assert invalid.request_ratio == pytest.approx(0.7)
    assert invalid.burst_ratio == pytest.approx(0.0)
    assert invalid.risk_threshold == pytest.approx(0.6)
    assert invalid.risk_factor == pytest.approx(1.2)
    assert invalid.be_cpu == pytest.approx(250)
    assert invalid.be_memory == pytest.approx(200 * MI)


def test_config_keeps_default_for_generic_string_values_upstream() -> None:
    """``TestUsageConfigKeepsDefaultForGenericStringValues``."""
    config = plugin(
        {
            "usage.weight": "7",
            "cpu.weight": "2",
            "memory.weight": "3",
            "thresholds": {"cpu": "85", "mem": "75"},
            "estimator": {
                "request_ratio": "0.8",
                "burst_ratio": "0.3",
                "risk_threshold": "0.75",
                "risk_factor": "1.5",
                "be_cpu": "500m",
                "be_mem": "300Mi",
            },
        }
    ).config
    assert (config.usage_weight, config.cpu_weight, config.memory_weight) == (5, 1, 1)
    assert (config.cpu_thresholds, config.mem_thresholds) == (80, 80)
    assert config.request_ratio == pytest.approx(0.7)
    assert config.burst_ratio == pytest.approx(0.0)
    assert config.risk_threshold == pytest.approx(0.6)
    assert config.risk_factor == pytest.approx(1.2)
    assert config.be_cpu == pytest.approx(500)
    assert config.be_memory == pytest.approx(300 * MI)


def test_config_parses_best_effort_resource_values_upstream() -> None:
    """``TestUsageConfigParsesBestEffortResourceValues``: strings are quantities, integers
    milli-CPU and MiB."""
    strings = plugin({"estimator": {"be_cpu": "500m", "be_mem": "300Mi"}}).config
    assert (strings.be_cpu, strings.be_memory) == (500, 300 * MI)
    numbers = plugin({"estimator": {"be_cpu": 500, "be_mem": 200}}).config
    assert (numbers.be_cpu, numbers.be_memory) == (500, 200 * MI)


def test_thresholds_keep_default_when_out_of_range_upstream() -> None:
    """``TestUsageThresholdsKeepDefaultWhenOutOfRange``."""
    config = plugin({"thresholds": {"cpu": -1, "mem": 101}}).config
    assert (config.cpu_thresholds, config.mem_thresholds) == (80, 80)


def test_weights_keep_default_when_negative_upstream() -> None:
    """``TestUsageWeightsKeepDefaultWhenNegative``."""
    config = plugin({"usage.weight": -1, "cpu.weight": -1, "memory.weight": -1}).config
    assert (config.usage_weight, config.cpu_weight, config.memory_weight) == (5, 1, 1)


def test_section_of_wrong_type_is_ignored_with_a_warning(caplog: pytest.LogCaptureFixture) -> None:
    config = plugin({"thresholds": "cpu=10", "estimator": {"bogus": 1}}).config
    assert config.cpu_thresholds == 80
    assert "thresholds must be a map" in caplog.text
    assert "estimator.bogus" in caplog.text


def test_arguments_constant_names_every_key_read() -> None:
    assert {
        "usage.weight",
        "cpu.weight",
        "memory.weight",
        "thresholds",
        "estimator",
    } == usage.ARGUMENTS


# ---------------------------------------------------------------------- sessions


def usage_at(cpu: float, memory: float, at: float) -> NodeUsage:
    return NodeUsage.measured(at, cpu, memory)


def make_session(
    objects: Iterable[tuple[str, Mapping[str, Any]]],
    node_usage: Mapping[str, NodeUsage],
    arguments: Mapping[str, Any],
    *flags: str,
    metrics: Mapping[str, str] | None = None,
) -> Session:
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    cache.set_node_usage(node_usage)
    option = PluginOption.with_flags("usage", *flags, arguments=arguments)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])], metrics=dict(metrics or {}))
    state = SchedulingState(clock=lambda: NOW)
    return open_session(cache.snapshot(), conf, {"usage": usage.new}, cache, state)


def four_cpu_node(name: str) -> dict[str, Any]:
    return build_node(name, resource_list("4", "8Gi", pods="10"))


def pending_pod(name: str) -> dict[str, Any]:
    return build_pod("c1", name, "", "Pending", resource_list("1", "1Gi"), "pg1")


COMMON: list[tuple[str, Mapping[str, Any]]] = [
    ("PodGroup", build_pod_group("pg1", "c1", "q1", 0)),
    ("Queue", build_queue("q1", 1)),
]
DEFAULT_ARGUMENTS: dict[str, Any] = {
    "usage.weight": 5,
    "cpu.weight": 1,
    "memory.weight": 1,
    "thresholds": {"cpu": 80, "mem": 80},
}
PREDICATE_USAGE = {
    "n1": usage_at(81, 60, NOW),
    "n2": usage_at(60, 81, NOW),
    "n3": usage_at(80, 79, NOW),
    "n4": usage_at(90, 81, NOW - 6 * 60),
    "n5": NodeUsage(NEVER, {NODE_METRICS_PERIOD: 90}, {NODE_METRICS_PERIOD: 81}),
}


@pytest.mark.parametrize(
    ("case", "node", "expected"),
    [
        (
            "The node cannot be scheduled, because of the CPU load of the node exceeds the "
            "upper limit.",
            "n1",
            NODE_USAGE_CPU_EXTEND,
        ),
        (
            "The node cannot be scheduled, because of the memory load of the node exceeds the "
            "upper limit.",
            "n2",
            NODE_USAGE_MEMORY_EXTEND,
        ),
        (
            "The node can be scheduled, because of the CPU usage and memory usage do not "
            "exceed the upper limit.",
            "n3",
            None,
        ),
        (
            "The node can be scheduled, because of the metrics are not updated in the latest 5 "
            "minutes, and the usage function is invalid.",
            "n4",
            None,
        ),
        (
            "The node can be scheduled, because of the metric time is in the initial state, and "
            "the usage function is invalid.",
            "n5",
            None,
        ),
    ],
)
def test_predicate_upstream(case: str, node: str, expected: str | None) -> None:
    """``TestUsage_predicateFn``."""
    objects = [*COMMON, ("Pod", pending_pod("p1")), ("Pod", pending_pod("p2"))]
    objects.append(("Node", four_cpu_node(node)))
    ssn = make_session(objects, PREDICATE_USAGE, DEFAULT_ARGUMENTS, "enablePredicate")
    for job in ssn.jobs.values():
        for task in job.tasks.values():
            statuses = ssn.predicate_fn(task, ssn.nodes[node])
            if expected is None:
                assert statuses == (), case
            else:
                assert [(s.code, s.reason, s.plugin) for s in statuses] == [
                    (StatusCode.UNSCHEDULABLE_AND_UNRESOLVABLE, expected, "usage")
                ], case


def test_predicate_flag_off_registers_nothing() -> None:
    objects = [*COMMON, ("Pod", pending_pod("p1")), ("Node", four_cpu_node("n1"))]
    ssn = make_session(objects, PREDICATE_USAGE, DEFAULT_ARGUMENTS)
    assert not ssn.has_hook("predicate_mask")


ORDER_USAGE = {
    "n1": usage_at(30, 50, NOW),
    "n2": usage_at(60, 50, NOW),
    "n3": usage_at(60, 80, NOW),
    "n4": usage_at(10, 20, NOW - 6 * 60),
    "n5": NodeUsage(),
}


def scores(ssn: Session) -> dict[str, dict[str, float]]:
    rows = np.arange(len(ssn.node_list), dtype=np.intp)
    result = {}
    for job in ssn.jobs.values():
        for task in job.tasks.values():
            values = ssn.node_scores(task, rows)
            result[task.key] = {
                n.name: float(v) for n, v in zip(ssn.node_list, values, strict=True)
            }
    return result


@pytest.mark.parametrize(
    ("case", "weights", "expected"),
    [
        (
            "Node scoring in the default weight configuration scenario.",
            (5, 1, 1),
            {"n1": 300, "n2": 225, "n3": 150, "n4": 0, "n5": 0},
        ),
        (
            "Node scoring gives priority to memory resources",
            (5, 2, 8),
            {"n1": 270, "n2": 240, "n3": 120, "n4": 0, "n5": 0},
        ),
    ],
)
def test_node_order_upstream(
    case: str, weights: tuple[int, int, int], expected: dict[str, float]
) -> None:
    """``TestUsage_nodeOrderFn``."""
    objects = [*COMMON, ("Pod", pending_pod("p1"))]
    objects += [("Node", four_cpu_node(f"n{i}")) for i in range(1, 6)]
    arguments = {
        "usage.weight": weights[0],
        "cpu.weight": weights[1],
        "memory.weight": weights[2],
        "thresholds": {"cpu": 80, "mem": 80},
    }
    ssn = make_session(objects, ORDER_USAGE, arguments, "enableNodeOrder")
    got = scores(ssn)["c1/p1"]
    assert got == pytest.approx(expected), case


def test_prioritize_nodes_does_not_double_count_node_order_upstream() -> None:
    """``TestUsage_prioritizeNodesDoesNotDoubleCountNodeOrder``: the score is counted once."""
    objects = [*COMMON, ("Pod", pending_pod("p1"))]
    objects += [("Node", four_cpu_node("n1")), ("Node", four_cpu_node("n2"))]
    node_usage = {"n1": usage_at(30, 50, NOW), "n2": usage_at(60, 50, NOW)}
    arguments = {"usage.weight": 5, "cpu.weight": 1, "memory.weight": 1}
    ssn = make_session(objects, node_usage, arguments, "enableNodeOrder")
    assert scores(ssn)["c1/p1"] == pytest.approx({"n1": 300, "n2": 225})


def task_with(status: TaskStatus, node: str = "", start: str | None = None) -> TaskInfo:
    pod = build_pod("ns", "t", node, "Pending", {}, "")
    if start is not None:
        pod["status"]["startTime"] = start
    task = TaskInfo.from_pod(pod)
    task.status = status
    task.node_name = node
    return task


RECENT = "2027-01-15T07:59:00Z"  # one minute before NOW
OLD = "2027-01-15T07:50:00Z"  # ten minutes before NOW


@pytest.mark.parametrize(
    ("case", "task", "expected"),
    [
        ("pending without node is not tracked", task_with(TaskStatus.PENDING), False),
        (
            "pending with node is not treated as allocated",
            task_with(TaskStatus.PENDING, "node1"),
            False,
        ),
        ("allocated task is tracked", task_with(TaskStatus.ALLOCATED, "node1"), True),
        ("binding task is tracked", task_with(TaskStatus.BINDING, "node1"), True),
        ("bound task is tracked", task_with(TaskStatus.BOUND, "node1"), True),
        ("recent running task is tracked", task_with(TaskStatus.RUNNING, "node1", RECENT), True),
        ("old running task is not tracked", task_with(TaskStatus.RUNNING, "node1", OLD), False),
        ("completed task is not tracked", task_with(TaskStatus.SUCCEEDED, "node1"), False),
    ],
)
def test_should_add_to_shadow_cache_upstream(case: str, task: TaskInfo, expected: bool) -> None:
    """``TestShouldAddToShadowCache`` (metrics delay 5 minutes)."""
    assert should_add_to_shadow_cache(task, 5 * 60.0, NOW) is expected, case


def test_running_task_without_start_time_is_tracked() -> None:
    assert should_add_to_shadow_cache(task_with(TaskStatus.RUNNING, "node1"), 30.0, NOW)


# ---------------------------------------------------------------------- estimator_test.go


@pytest.mark.parametrize(
    ("case", "cpu", "mem", "cpu_weight", "mem_weight", "expected"),
    [
        ("equal weights", 0.4, 0.6, 1, 1, 0.5),
        ("cpu weight dominant", 0.8, 0.2, 3, 1, 0.65),
        ("zero weights", 0.8, 0.2, 0, 0, 0),
    ],
)
def test_calc_load_composite_percentage_upstream(
    case: str, cpu: float, mem: float, cpu_weight: int, mem_weight: int, expected: float
) -> None:
    """``TestCalcLoadCompositePercentage``."""
    assert calc_load_composite_percentage(cpu, mem, cpu_weight, mem_weight) == pytest.approx(
        expected
    ), case


@pytest.mark.parametrize(
    ("case", "load", "threshold", "factor", "expected"),
    [
        ("below threshold", 0.59, 0.6, 1.2, 1.0),
        ("at threshold", 0.6, 0.6, 1.2, 1.2),
        ("above threshold", 0.9, 0.6, 1.2, 1.2),
        ("risk factor lower than one is ignored", 0.9, 0.6, 0.8, 1.0),
    ],
)
def test_calc_applied_risk_factor_upstream(
    case: str, load: float, threshold: float, factor: float, expected: float
) -> None:
    """``TestCalcAppliedRiskFactor``."""
    assert calc_applied_risk_factor(load, threshold, factor) == pytest.approx(expected), case


@pytest.mark.parametrize(
    ("case", "requested", "limit", "request_weight", "burst_weight", "risk", "expected"),
    [
        ("default weights estimate request", 500, 2000, 1.0, 0.0, 1.0, 500),
        ("zero weights estimate zero", 500, 2000, 0.0, 0.0, 1.0, 0),
        ("request and burst weights cover full limit", 500, 2000, 1.0, 1.0, 1.0, 2000),
        ("custom burst weight", 500, 2000, 0.5, 0.2, 1.0, 550),
        ("risk factor applies and clamps to limit", 500, 600, 1.0, 0.0, 1.2, 600),
        ("missing limit uses request as effective limit", 500, 0, 1.0, 1.0, 1.2, 500),
    ],
)
def test_estimate_pod_resource_upstream(
    case: str,
    requested: float,
    limit: float,
    request_weight: float,
    burst_weight: float,
    risk: float,
    expected: float,
) -> None:
    """``TestEstimatePodResource``."""
    got = estimate_pod_resource(requested, limit, request_weight, burst_weight, risk)
    assert got == pytest.approx(expected), case


@pytest.mark.parametrize(
    ("case", "configured", "risk", "expected"),
    [
        ("base configured value", 250, 1.0, 250),
        ("risk factor applies", 250, 1.2, 300),
        ("negative configured value is clamped to zero", -1, 1.2, 0),
    ],
)
def test_estimate_best_effort_resource_upstream(
    case: str, configured: float, risk: float, expected: float
) -> None:
    """``TestEstimateBestEffortResource``."""
    assert estimate_best_effort_resource(configured, risk) == pytest.approx(expected), case


@pytest.mark.parametrize(
    ("case", "real", "shadow", "capacity", "expected"),
    [
        ("no shadow load, 50% real", 50, 0, 8000, 0.5),
        ("50% real + shadow brings to 75%", 50, 2000, 8000, 0.75),
        ("overflow clamped to 1.0", 80, 5000, 8000, 1.0),
        ("zero capacity returns 0", 50, 1000, 0, 0),
        ("zero everything", 0, 0, 8000, 0),
        ("100% real load, no shadow", 100, 0, 8000, 1.0),
    ],
)
def test_calc_composite_utilization_upstream(
    case: str, real: float, shadow: float, capacity: float, expected: float
) -> None:
    """``TestCalcCompositeUtilization``, and the vectorised twin on the same row."""
    assert calc_composite_utilization(real, shadow, capacity) == pytest.approx(expected), case
    rows = composite_utilization_rows(
        np.array([real], float), np.array([shadow], float), np.array([capacity], float)
    )
    assert float(rows[0]) == pytest.approx(expected), case


@pytest.mark.parametrize(
    ("case", "cpu", "mem", "cpu_weight", "mem_weight", "usage_weight", "expected"),
    [
        ("zero utilization - max score with usageWeight=1", 0, 0, 1, 1, 1, 100),
        ("full utilization - zero score", 1.0, 1.0, 1, 1, 1, 0),
        ("50% utilization both - score 250 with usageWeight=5", 0.5, 0.5, 1, 1, 5, 250),
        ("cpu 30%, mem 50%, equal weights, usageWeight=5", 0.3, 0.5, 1, 1, 5, 300),
        ("cpu 60%, mem 50%, cpu weight=2, mem weight=8, usageWeight=5", 0.6, 0.5, 2, 8, 5, 240),
        ("zero weights returns 0", 0.5, 0.5, 0, 0, 5, 0),
    ],
)
def test_calc_node_score_upstream(
    case: str,
    cpu: float,
    mem: float,
    cpu_weight: int,
    mem_weight: int,
    usage_weight: int,
    expected: float,
) -> None:
    """``TestCalcNodeScore``, and the vectorised twin."""
    got = calc_node_score(cpu, mem, cpu_weight, mem_weight, usage_weight)
    assert got == pytest.approx(expected), case
    rows = node_scores_rows(np.array([cpu]), np.array([mem]), cpu_weight, mem_weight, usage_weight)
    assert float(rows[0]) == pytest.approx(expected), case


def container(requests: dict[str, str], limits: dict[str, str], **extra: Any) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if requests:
        resources["requests"] = requests
    if limits:
        resources["limits"] = limits
    return {"name": "c", "resources": resources, **extra}


@pytest.mark.parametrize(
    ("case", "spec", "expected"),
    [
        (
            "single container with cpu and memory request and limit",
            {
                "containers": [
                    container({"cpu": "500m", "memory": "1Gi"}, {"cpu": "1000m", "memory": "2Gi"})
                ]
            },
            (500, 1000, GI, 2 * GI),
        ),
        (
            "multiple containers - requests/limits summed",
            {
                "containers": [
                    container({"cpu": "200m", "memory": "1Gi"}, {"cpu": "500m", "memory": "2Gi"}),
                    container({"cpu": "300m", "memory": "2Gi"}, {"cpu": "700m", "memory": "3Gi"}),
                ]
            },
            (500, 1200, 3 * GI, 5 * GI),
        ),
        (
            "init container takes max",
            {
                "initContainers": [
                    container({"cpu": "2000m", "memory": "4Gi"}, {"cpu": "3000m", "memory": "5Gi"})
                ],
                "containers": [
                    container({"cpu": "500m", "memory": "1Gi"}, {"cpu": "1000m", "memory": "2Gi"})
                ],
            },
            (2000, 3000, 4 * GI, 5 * GI),
        ),
        (
            "restartable init container is added as sidecar",
            {
                "initContainers": [
                    container(
                        {"cpu": "1000m", "memory": "1Gi"},
                        {"cpu": "2000m", "memory": "2Gi"},
                        restartPolicy="Always",
                    )
                ],
                "containers": [
                    container({"cpu": "1000m", "memory": "2Gi"}, {"cpu": "2000m", "memory": "3Gi"})
                ],
            },
            (2000, 4000, 3 * GI, 5 * GI),
        ),
        ("no resources specified (BestEffort)", {"containers": [container({}, {})]}, (0, 0, 0, 0)),
    ],
)
def test_get_pod_resource_request_limit_upstream(
    case: str, spec: dict[str, Any], expected: tuple[float, float, float, float]
) -> None:
    """``TestGetPodResourceRequestLimit``."""
    pod = {"metadata": {"name": "p", "namespace": "ns"}, "spec": spec}
    task = TaskInfo.from_pod(pod)
    assert pod_request_limit(pod, task.resreq) == pytest.approx(expected), case


# ---------------------------------------------------------------------- shadow_cache_test.go


def test_new_shadow_load_cache_upstream() -> None:
    """``TestNewShadowLoadCache``."""
    assert ShadowLoadCache().is_clean()


def test_shadow_add_estimate_upstream() -> None:
    """``TestShadowLoadCache_AddEstimate``."""
    cache = ShadowLoadCache()
    cache.add_estimate("node1", "task1", 1000, 2048)
    assert cache.get_node_est("node1") == pytest.approx((1000, 2048))
    cache.add_estimate("node1", "task2", 500, 1024)
    assert cache.get_node_est("node1") == pytest.approx((1500, 3072))
    cache.add_estimate("node1", "task3", 800, 1600)
    assert cache.get_node_est("node1") == pytest.approx((2300, 4672))
    first, third = cache.get_snapshot("task1"), cache.get_snapshot("task3")
    assert first is not None and (first.cpu_millis, first.mem_bytes) == (1000, 2048)
    assert third is not None and (third.cpu_millis, third.mem_bytes) == (800, 1600)


def test_shadow_add_estimate_update_existing_task_upstream() -> None:
    """``TestShadowLoadCache_AddEstimate_UpdateExistingTask``: a task moves node."""
    cache = ShadowLoadCache()
    cache.add_estimate("node1", "task1", 1000, 2048)
    cache.add_estimate("node2", "task1", 500, 1024)
    assert cache.get_node_est("node1") == pytest.approx((0, 0))
    assert cache.get_node_est("node2") == pytest.approx((500, 1024))
    cache.sub_estimate_by_snapshot("task1")
    assert cache.get_node_est("node2") == pytest.approx((0, 0))


def test_shadow_sub_estimate_by_snapshot_upstream() -> None:
    """``TestShadowLoadCache_SubEstimateBySnapshot``."""
    cache = ShadowLoadCache()
    cache.add_estimate("node1", "task1", 1000, 2048)
    cache.add_estimate("node1", "task2", 500, 1024)
    cache.sub_estimate_by_snapshot("task2")
    assert cache.get_node_est("node1") == pytest.approx((1000, 2048))
    cache.sub_estimate_by_snapshot("task1")
    assert cache.get_node_est("node1") == (0, 0)
    assert cache.get_snapshot("task1") is None


def test_shadow_sub_estimate_by_snapshot_non_existent_upstream() -> None:
    """``TestShadowLoadCache_SubEstimateBySnapshot_NonExistent``."""
    cache = ShadowLoadCache()
    cache.add_estimate("node1", "task1", 100, 200)
    cache.sub_estimate_by_snapshot("nonexistent")
    assert cache.get_node_est("node1") == pytest.approx((100, 200))


def test_shadow_snapshot_consistency_upstream() -> None:
    """``TestShadowLoadCache_SnapshotConsistency``."""
    cache = ShadowLoadCache()
    cache.add_estimate("node1", "pod1", 800, 1600)
    cache.add_estimate("node1", "pod2", 960, 1920)
    cache.add_estimate("node1", "pod3", 1152, 2304)
    assert cache.get_node_est("node1") == pytest.approx((2912, 5824))
    cache.sub_estimate_by_snapshot("pod3")
    assert cache.get_node_est("node1") == pytest.approx((1760, 3520))
    cache.sub_estimate_by_snapshot("pod1")
    assert cache.get_node_est("node1")[0] == pytest.approx(960)
    cache.sub_estimate_by_snapshot("pod2")
    assert cache.get_node_est("node1") == (0, 0)


def test_shadow_multiple_nodes_upstream() -> None:
    """``TestShadowLoadCache_MultipleNodes``."""
    cache = ShadowLoadCache()
    cache.add_estimate("node1", "t1", 1000, 2000)
    cache.add_estimate("node2", "t2", 3000, 4000)
    cache.add_estimate("node3", "t3", 500, 800)
    assert cache.get_node_est("node1") == pytest.approx((1000, 2000))
    assert cache.get_node_est("node2") == pytest.approx((3000, 4000))
    assert cache.get_node_est("node3") == pytest.approx((500, 800))


def test_shadow_get_node_est_non_existent_node_upstream() -> None:
    """``TestShadowLoadCache_GetNodeEst_NonExistentNode``."""
    assert ShadowLoadCache().get_node_est("nonexistent") == (0, 0)


def test_shadow_reset_upstream() -> None:
    """``TestShadowLoadCache_Reset``."""
    cache = ShadowLoadCache()
    cache.add_estimate("node1", "t1", 1000, 2000)
    cache.add_estimate("node2", "t2", 3000, 4000)
    assert not cache.is_clean()
    cache.reset()
    assert cache.is_clean()
    assert cache.get_node_est("node1") == (0, 0)
    assert cache.get_snapshot("t1") is None


def test_shadow_reset_reuses_maps_upstream() -> None:
    """``TestShadowLoadCache_ResetReusesMaps``: the storage survives a reset."""
    cache = ShadowLoadCache()
    cache.add_estimate("node1", "t1", 1000, 2000)
    cpu_before, snapshots_before = cache.rows(np.array([0], dtype=np.intp)), cache.pod_snapshots
    cache.reset()
    assert cache.pod_snapshots is snapshots_before
    assert cache.get_node_est("node1") == (0, 0)
    assert cpu_before[0][0] == 1000  # the copy handed out earlier is unaffected


def test_shadow_is_clean_upstream() -> None:
    """``TestShadowLoadCache_IsClean``."""
    cache = ShadowLoadCache()
    assert cache.is_clean()
    cache.add_estimate("node1", "t1", 100, 200)
    assert not cache.is_clean()


def test_shadow_mixed_adds_and_subtractions_upstream() -> None:
    """``TestShadowLoadCache_ConcurrentAccess``: a session is single-threaded here, so the same
    interleaving of adds, subtractions of unknown tasks and reads runs in one thread; the
    estimate never goes negative."""
    cache = ShadowLoadCache()
    for index in range(100):
        if index % 2 == 0:
            cache.add_estimate("node1", f"task-{index}", 10, 20)
        else:
            cache.sub_estimate_by_snapshot(f"task-{index}")
        cache.get_node_est("node1")
        cache.is_clean()
    assert cache.get_node_est("node1")[0] == pytest.approx(500)


def test_shadow_allocate_deallocate_exact_match_upstream() -> None:
    """``TestShadowLoadCache_AllocateDeallocateExactMatch``."""
    cache = ShadowLoadCache()
    cache.add_estimate("node1", "task-a", 1234.5678, 9876543.21)
    cache.add_estimate("node1", "task-b", 567.89, 1234567.89)
    cache.sub_estimate_by_snapshot("task-a")
    cache.sub_estimate_by_snapshot("task-b")
    assert cache.get_node_est("node1") == pytest.approx((0, 0), abs=1e-6)


# ---------------------------------------------------------------------- vectorised == scalar


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.floats(0, 100),
            st.floats(0, 100),
            st.floats(0, 8000),
            st.floats(0, 16 * GI),
            st.booleans(),
        ),
        min_size=1,
        max_size=6,
    ),
    st.integers(0, 5),
    st.integers(0, 5),
    st.integers(0, 10),
)
def test_batch_scores_equal_the_scalar_rule(
    nodes: list[tuple[float, float, float, float, bool]],
    cpu_weight: int,
    memory_weight: int,
    usage_weight: int,
) -> None:
    objects = [("Node", four_cpu_node(f"n{i}")) for i in range(len(nodes))]
    node_usage = {
        f"n{i}": usage_at(cpu, mem, NOW if fresh else NOW - 400)
        for i, (cpu, mem, _, _, fresh) in enumerate(nodes)
    }
    arguments = {
        "usage.weight": usage_weight,
        "cpu.weight": cpu_weight,
        "memory.weight": memory_weight,
    }
    ssn = make_session(objects, node_usage, arguments, "enableNodeOrder")
    instance = ssn.plugins["usage"]
    assert isinstance(instance, UsagePlugin)
    for i, (_, _, shadow_cpu, shadow_mem, _) in enumerate(nodes):
        instance.shadow.add_estimate(f"n{i}", f"t{i}", shadow_cpu, shadow_mem)
    instance.rescore()
    rows = np.arange(len(nodes), dtype=np.intp)
    task = TaskInfo.from_pod(pending_pod("p"))
    batch = instance._batch_node_order(task, rows)
    for row in rows:
        assert float(batch[row]) == pytest.approx(instance.node_score(int(row)), abs=1e-9)


# ---------------------------------------------------------------------- whole sessions


def test_shadow_of_a_placed_pod_steers_the_next_one() -> None:
    """Two 3-CPU pods, two idle-looking nodes of 4 CPUs, one slightly busier. The first pod
    goes to the quieter node; its shadow (70% of its request) makes that node the busier one,
    so the second goes to the other node. Without the shadow both would score the same
    node first."""
    objects: list[tuple[str, Mapping[str, Any]]] = [
        ("Queue", build_queue("q1", 1)),
        ("PodGroup", build_pod_group("pg1", "c1", "q1", 1)),
        ("Node", build_node("quiet", resource_list("8", "16Gi", pods="10"))),
        ("Node", build_node("busy", resource_list("8", "16Gi", pods="10"))),
    ]
    objects += [
        ("Pod", build_pod("c1", f"p{i}", "", "Pending", resource_list("3", "1Gi"), "pg1"))
        for i in range(2)
    ]
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    cache.set_node_usage({"quiet": usage_at(10, 10, NOW), "busy": usage_at(20, 10, NOW)})
    option = PluginOption.with_flags("usage", "enablePredicate", "enableNodeOrder", arguments={})
    gang = PluginOption.with_flags("gang", "enableJobReady", "enableJobPipelined")
    conf = SchedulerConf(actions=["allocate"], tiers=[Tier([gang, option])])
    run_cycle(cache, conf, PluginRegistry(), SchedulingState(clock=lambda: NOW))
    placed = {task.name: task.node_name for task in cache.tasks.values()}
    assert sorted(placed.values()) == ["busy", "quiet"]


def test_overloaded_node_is_never_chosen_and_the_reason_is_reported() -> None:
    objects: list[tuple[str, Mapping[str, Any]]] = [
        ("Queue", build_queue("q1", 1)),
        ("PodGroup", build_pod_group("pg1", "c1", "q1", 1)),
        ("Node", build_node("hot", resource_list("8", "16Gi", pods="10"))),
        ("Pod", build_pod("c1", "p0", "", "Pending", resource_list("1", "1Gi"), "pg1")),
    ]
    cache = SchedulerCache()
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    cache.set_node_usage({"hot": usage_at(95, 10, NOW)})
    conf = SchedulerConf(
        actions=["allocate"],
        tiers=[Tier([PluginOption.with_flags("usage", "enablePredicate", "enableNodeOrder")])],
    )
    state = SchedulingState(clock=lambda: NOW)
    ssn = open_session(cache.snapshot(), conf, {"usage": usage.new}, cache, state)
    new_action("allocate").execute(ssn)
    job = ssn.jobs["c1/pg1"]
    assert NODE_USAGE_CPU_EXTEND in job.fit_error()
    close_session(ssn)
    assert cache.tasks["c1/p0"].node_name == ""


def test_scores_kept_per_row_match_a_full_rescore_after_allocations_and_rollbacks() -> None:
    objects = [*COMMON, ("Pod", pending_pod("p1")), ("Pod", pending_pod("p2"))]
    objects += [("Node", four_cpu_node(f"n{i}")) for i in range(1, 4)]
    node_usage = {f"n{i}": usage_at(10 * i, 20 * i, NOW) for i in range(1, 4)}
    ssn = make_session(objects, node_usage, {}, "enableNodeOrder")
    instance = ssn.plugins["usage"]
    assert isinstance(instance, UsagePlugin)
    rows = np.arange(3, dtype=np.intp)
    first, second = sorted(ssn.jobs["c1/pg1"].tasks.values(), key=lambda t: t.name)
    statement = ssn.statement()
    statement.allocate(first, ssn.nodes["n1"])
    statement.allocate(second, ssn.nodes["n1"])
    kept = instance._batch_node_order(first, rows).copy()
    instance.rescore()
    assert kept == pytest.approx(instance._batch_node_order(first, rows))
    assert kept[0] == pytest.approx(293.75)  # 425 without the shadow of 2 x 70% of 1 CPU, 1Gi
    statement.discard()
    kept = instance._batch_node_order(first, rows).copy()
    instance.rescore()
    assert kept == pytest.approx(instance._batch_node_order(first, rows))
    assert instance.shadow.is_clean()
