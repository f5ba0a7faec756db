"""cdp plugin (``pkg/scheduler/plugins/cdp``).

Transcribed from upstream ``cdp_test.go``: both cases of
``Test_CooldownTimePlugin_podPreemptStableTime`` and ``TestPreemptableFn``. Then a scenario
through the preempt action: of two low-priority victims, the one still in its cooldown is
spared. (gang is left out of that tier: its own victim choice takes the first candidates that
keep the job at minMember, and an empty intersection with cdp's would decide nothing.)
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import (
    build_node,
    build_pod,
    build_pod_group,
    build_priority_class,
    build_queue,
    resource_list,
)
from tests.harness import Case
from tests.plugins.clocked import run_case_at
from volcano_py.api.task import TaskInfo
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, open_session
from volcano_py.plugins import cdp
from volcano_py.plugins._plugin_helpers import rfc3339

COOLDOWN = "volcano.sh/cooldown-time"
PREEMPTABLE = "volcano.sh/preemptable"
NOW = 1_767_225_600.0  # 2026-01-01T00:00:00Z


def make_pod(
    labels: dict[str, str], annotations: dict[str, str], scheduled_at: float | None
) -> dict[str, Any]:
    """Upstream ``makePod``: Running with a PodScheduled condition when it has a time."""
    annotations = {**annotations, "scheduling.k8s.io/group-name": "test-group"}
    status: dict[str, Any] = {"phase": "Pending", "conditions": []}
    if scheduled_at is not None:
        status = {
            "phase": "Running",
            "conditions": [
                {
                    "type": "PodScheduled",
                    "status": "True",
                    "lastTransitionTime": rfc3339(scheduled_at),
                }
            ],
        }
    return {
        "metadata": {
            "name": "test-pod",
            "namespace": "default",
            "labels": labels,
            "annotations": annotations,
        },
        "spec": {"containers": [{}]},
        "status": status,
    }


# ------------------------------------------------- upstream: podPreemptStableTime


@pytest.mark.parametrize(
    ("value", "expected"),
    [pytest.param("600s", 600.0, id="normal"), pytest.param("600abcde", None, id="not-enabled")],
)
def test_pod_cooldown_time_upstream(value: str, expected: float | None) -> None:
    pod = make_pod({}, {COOLDOWN: value}, NOW - 100)
    assert cdp.pod_cooldown_time(pod) == expected


def test_label_beats_annotation() -> None:
    pod = make_pod({COOLDOWN: "1m"}, {COOLDOWN: "1h"}, NOW)
    assert cdp.pod_cooldown_time(pod) == 60.0
    assert cdp.pod_cooldown_time(make_pod({}, {}, NOW)) is None


# ------------------------------------------------- upstream: TestPreemptableFn


def test_preemptable_fn_upstream() -> None:
    option = PluginOption.with_flags("cdp", "enablePreemptable")
    conf = SchedulerConf(actions=["preempt"], tiers=[Tier([option])])
    cache = SchedulerCache()
    ssn = open_session(
        cache.snapshot(), conf, {"cdp": cdp.new}, cache, SchedulingState(clock=lambda: NOW)
    )
    # task1 is in its cooldown; task2's value does not parse; task3's cooldown is over.
    task1 = TaskInfo.from_pod(make_pod({PREEMPTABLE: "true"}, {COOLDOWN: "600s"}, NOW - 100))
    task2 = TaskInfo.from_pod(make_pod({PREEMPTABLE: "true"}, {COOLDOWN: "600abcde"}, NOW - 100))
    task3 = TaskInfo.from_pod(make_pod({PREEMPTABLE: "true"}, {COOLDOWN: "600s"}, NOW - 800))
    preemptor = TaskInfo.from_pod(make_pod({}, {}, None))
    assert ssn.preemptable(preemptor, [task1, task2, task3]) == [task2, task3]


def test_reclaimable_uses_the_same_filter() -> None:
    option = PluginOption.with_flags("cdp", "enableReclaimable")
    conf = SchedulerConf(actions=["reclaim"], tiers=[Tier([option])])
    cache = SchedulerCache()
    ssn = open_session(
        cache.snapshot(), conf, {"cdp": cdp.new}, cache, SchedulingState(clock=lambda: NOW)
    )
    cooling = TaskInfo.from_pod(make_pod({}, {COOLDOWN: "10m"}, NOW - 60))
    pending = TaskInfo.from_pod(make_pod({}, {COOLDOWN: "10m"}, None))
    reclaimer = TaskInfo.from_pod(make_pod({}, {}, None))
    # A pod that is not Running is never protected.
    assert ssn.reclaimable(reclaimer, [cooling, pending]) == [pending]


# ------------------------------------------------- scenario: preempt


def _preempt_case(first_scheduled: float, second_scheduled: float) -> Case:
    def running(name: str, scheduled: float) -> dict[str, Any]:
        pod = build_pod(
            "c1",
            name,
            "n1",
            "Running",
            resource_list("1", "1G"),
            "pg1",
            annotations={COOLDOWN: "10m", PREEMPTABLE: "true"},
        )
        pod["status"]["conditions"] = [
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": rfc3339(scheduled)}
        ]
        return pod

    return Case(
        name="cdp spares a victim in its cooldown",
        plugins={
            "priority": [
                "enableTaskOrder",
                "enableJobOrder",
                "enablePreemptable",
                "enableJobStarving",
            ],
            "cdp": ["enablePreemptable"],
        },
        configurations={"preempt": {"enableTopologyAwarePreemption": False}},
        priority_classes=[build_priority_class("high", 1000), build_priority_class("low", 10)],
        pod_groups=[
            build_pod_group("pg1", "c1", "q1", 1, None, "Running", priority_class_name="low"),
            build_pod_group("pg2", "c1", "q1", 1, None, "Inqueue", priority_class_name="high"),
        ],
        pods=[
            running("recent", first_scheduled),
            running("settled", second_scheduled),
            build_pod("c1", "preemptor", "", "Pending", resource_list("1", "1G"), "pg2"),
        ],
        nodes=[build_node("n1", resource_list("2", "2G", pods="10"))],
        queues=[build_queue("q1")],
    )


def test_preempt_evicts_only_the_pod_past_its_cooldown() -> None:
    outcome = run_case_at(_preempt_case(NOW - 60, NOW - 3600), ["preempt"], NOW)
    assert outcome.evictor.evicted == ["c1/settled"]


def test_preempt_evicts_nothing_while_every_victim_cools_down() -> None:
    outcome = run_case_at(_preempt_case(NOW - 60, NOW - 120), ["preempt"], NOW)
    assert outcome.evictor.evicted == []
    # Eleven minutes later both are fair game again.
    later = run_case_at(_preempt_case(NOW - 60 - 660, NOW - 120 - 660), ["preempt"], NOW)
    assert len(later.evictor.evicted) == 1
