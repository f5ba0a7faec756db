"""rescheduling plugin (``pkg/scheduler/plugins/rescheduling``).

Upstream has no ``*_test.go`` for this plugin, so there is nothing to transcribe; these tests
pin the behaviour read from ``rescheduling.go``, ``low_node_utilization.go``,
``node_utilization_util.go`` and ``rescheduling_util.go``: argument parsing, the interval,
the grouping into low and high nodes, the victim order and the stop condition, and a whole
scheduler cycle where ``shuffle`` evicts what the strategy names.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py.api.node_usage import NodeUsage
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import NullIO, SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, open_session
from volcano_py.plugins import rescheduling
from volcano_py.plugins.rescheduling import ReschedulingConfig, Strategy
from volcano_py.plugins.rescheduling.low_node_utilization import (
    LowNodeUtilizationConf,
    pod_qos,
)
from volcano_py.scheduler.cycle import run_cycle
from volcano_py.scheduler.registry import PluginRegistry

GI = 1024**3


def config(arguments: Mapping[str, Any]) -> ReschedulingConfig:
    return ReschedulingConfig.from_arguments(Arguments(arguments, owner="rescheduling"))


# ---------------------------------------------------------------------- arguments


def test_defaults() -> None:
    default = config({})
    assert default.interval == 300
    assert default.metrics_period == "5m"
    assert default.strategies == [Strategy("lowNodeUtilization")]


def test_arguments_are_read() -> None:
    parsed = config(
        {
            "interval": "90s",
            "metricsPeriod": "10m",
            "strategies": [{"name": "lowNodeUtilization", "params": {"thresholds": {"cpu": 20}}}],
        }
    )
    assert parsed.interval == 90
    assert parsed.metrics_period == "10m"
    assert parsed.strategies == [Strategy("lowNodeUtilization", {"thresholds": {"cpu": 20}})]


def test_bad_interval_falls_back_to_five_minutes(caplog: pytest.LogCaptureFixture) -> None:
    assert config({"interval": "soon"}).interval == 300
    assert config({"interval": 30}).interval == 300
    assert "interval" in caplog.text


def test_a_period_the_source_does_not_collect_is_reported(
    caplog: pytest.LogCaptureFixture,
) -> None:
    config({"metricsPeriod": "1h"})
    assert "metricsPeriod 1h is not collected" in caplog.text


def test_unknown_strategy_is_reported_and_does_nothing(caplog: pytest.LogCaptureFixture) -> None:
    parsed = config({"strategies": [{"name": "highNodeUtilization"}]})
    assert parsed.strategies == [Strategy("highNodeUtilization")]
    assert "unknown strategy 'highNodeUtilization'" in caplog.text


def test_low_node_utilization_params() -> None:
    messages: list[str] = []
    conf = LowNodeUtilizationConf.parse(
        {
            "thresholds": {"cpu": 20, "memory": 30, "pod": 5},
            "targetThresholds": {"cpu": 70, "memory": 7.5},
            "nodeFit": False,
        },
        messages.append,
    )
    assert conf.thresholds == {"cpu": 20, "memory": 30, "pods": 100, "pod": 5}
    assert conf.target_thresholds == {"cpu": 70, "memory": 100, "pods": 100}
    assert any("nodeFit has no effect" in m for m in messages)
    assert any("targetThresholds.memory must be an integer" in m for m in messages)


def test_arguments_constant() -> None:
    assert {"interval", "metricsPeriod", "strategies"} == rescheduling.ARGUMENTS


@pytest.mark.parametrize(
    ("resources", "expected"),
    [
        ({}, "BestEffort"),
        ({"requests": {"cpu": "1"}}, "Burstable"),
        ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
        (
            {"requests": {"cpu": "1", "memory": "1Gi"}, "limits": {"cpu": "2", "memory": "1Gi"}},
            "Burstable",
        ),
    ],
)
def test_pod_qos(resources: dict[str, Any], expected: str) -> None:
    pod = {"spec": {"containers": [{"name": "c", "resources": resources}]}}
    assert pod_qos(pod) == expected


# ---------------------------------------------------------------------- a whole cycle


class RecordingEvictor(NullIO):
    def __init__(self) -> None:
        self.evicted: list[str] = []

    def evict(self, task: TaskInfo, reason: str) -> None:
        self.evicted.append(f"{task.key}:{reason}")


def running(name: str, node: str, cpu: str, priority: int | None = None) -> dict[str, Any]:
    return build_pod(
        "c1", name, node, "Running", resource_list(cpu, "1Gi"), "pg1", priority=priority
    )


ARGUMENTS = {
    "interval": "1s",
    "metricsPeriod": "10m",
    "strategies": [
        {
            "name": "lowNodeUtilization",
            "params": {
                "thresholds": {"cpu": 20, "memory": 20},
                "targetThresholds": {"cpu": 60, "memory": 60},
            },
        }
    ],
}


def cluster(evictor: RecordingEvictor) -> SchedulerCache:
    cache = SchedulerCache(evictor=evictor)
    objects: list[tuple[str, Mapping[str, Any]]] = [
        ("Queue", build_queue("q1", 1)),
        ("PodGroup", build_pod_group("pg1", "c1", "q1", 1, phase="Running")),
        *(
            ("Node", build_node(n, resource_list("10", "10Gi", pods="20")))
            for n in ("n1", "n2", "n3")
        ),
        ("Pod", running("urgent", "n1", "2", priority=100)),
        ("Pod", running("routine", "n1", "2", priority=1)),
        ("Pod", running("unprioritised", "n1", "2")),
        ("Pod", running("elsewhere", "n3", "2")),
    ]
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    cache.set_node_usage(
        {
            "n1": NodeUsage.measured(0, 90, 50),  # high: cpu over the 60% target
            "n2": NodeUsage.measured(0, 10, 10),  # low: under 20% in both
            "n3": NodeUsage.measured(0, 50, 50),  # neither
        }
    )
    return cache


def test_shuffle_evicts_from_the_busy_node_lowest_priority_first_while_it_is_over_target() -> None:
    """n2 has room for 5 CPUs below its target. From n1 (90% CPU) go first the pod without
    priority, then priority 1: n1 is then at 50%, under the 60% target, so the priority-100
    pod stays. Nothing on n3 (neither low nor high) is touched."""
    evictor = RecordingEvictor()
    cache = cluster(evictor)
    conf = SchedulerConf(
        actions=["shuffle"],
        tiers=[
            Tier([PluginOption.with_flags("rescheduling", "enabledVictim", arguments=ARGUMENTS)])
        ],
    )
    now = [100.0]
    state = SchedulingState(clock=lambda: now[0])
    run_cycle(cache, conf, PluginRegistry(), state)
    assert evictor.evicted == []  # the first session only starts the interval
    now[0] += 2
    run_cycle(cache, conf, PluginRegistry(), state)
    assert evictor.evicted == ["c1/unprioritised:shuffle", "c1/routine:shuffle"]
    now[0] += 0.5
    evictor.evicted.clear()
    ssn = open_session(cache.snapshot(), conf, PluginRegistry(), cache, state)
    assert not ssn.has_hook("victim_tasks")  # within the interval: nothing registered


def test_no_victims_when_every_node_is_low_or_none_is_high() -> None:
    evictor = RecordingEvictor()
    cache = cluster(evictor)
    cache.set_node_usage({"n1": NodeUsage.measured(0, 50, 50)})  # nobody over the target
    conf = SchedulerConf(
        actions=["shuffle"],
        tiers=[
            Tier([PluginOption.with_flags("rescheduling", "enabledVictim", arguments=ARGUMENTS)])
        ],
    )
    now = [0.0]
    state = SchedulingState(clock=lambda: now[0])
    for _ in range(3):
        now[0] += 5
        run_cycle(cache, conf, PluginRegistry(), state)
    assert evictor.evicted == []


def test_the_default_metrics_period_reads_zero_usage_and_evicts_nothing() -> None:
    evictor = RecordingEvictor()
    cache = cluster(evictor)
    arguments = {**ARGUMENTS, "metricsPeriod": "5m"}
    conf = SchedulerConf(
        actions=["shuffle"],
        tiers=[
            Tier([PluginOption.with_flags("rescheduling", "enabledVictim", arguments=arguments)])
        ],
    )
    now = [0.0]
    state = SchedulingState(clock=lambda: now[0])
    for _ in range(3):
        now[0] += 5
        run_cycle(cache, conf, PluginRegistry(), state)
    assert evictor.evicted == []


def test_memory_room_runs_out_first() -> None:
    """With a 20% memory target the low node has 0.5Gi of memory room: one 1Gi victim uses
    it up, and eviction stops on every node."""
    evictor = RecordingEvictor()
    cache = cluster(evictor)
    cache.set_node_usage({"n2": NodeUsage.measured(0, 10, 15)})
    arguments = {
        **ARGUMENTS,
        "strategies": [
            {
                "name": "lowNodeUtilization",
                "params": {
                    "thresholds": {"cpu": 20, "memory": 20},
                    "targetThresholds": {"cpu": 60, "memory": 20},
                },
            }
        ],
    }
    conf = SchedulerConf(
        actions=["shuffle"],
        tiers=[
            Tier([PluginOption.with_flags("rescheduling", "enabledVictim", arguments=arguments)])
        ],
    )
    now = [0.0]
    state = SchedulingState(clock=lambda: now[0])
    for _ in range(2):
        now[0] += 5
        run_cycle(cache, conf, PluginRegistry(), state)
    # n2 memory room: 20% - 15% of 10Gi = 0.5Gi; after the first 1Gi victim it is negative.
    assert evictor.evicted == ["c1/unprioritised:shuffle"]
