"""overcommit plugin (``pkg/scheduler/plugins/overcommit``).

Transcribes upstream ``overcommit_test.go`` ``TestOvercommitPlugin`` (all four cases) and adds
the accounting it does not cover: node usage, Running jobs, the event on rejection.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingEventRecorder
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import Session, open_session
from volcano_py.plugins import overcommit

N1 = build_node("n1", resource_list("2", "4Gi"))
N2 = build_node("n2", resource_list("4", "16Gi"))
HUGE = resource_list("20000m", "20G")
NORMAL = resource_list("2000m", "2G")
SMALL = resource_list("200m", "0.5G")


def make_session(
    objects: Iterable[tuple[str, Mapping[str, Any]]],
    arguments: Mapping[str, Any] | None = None,
    recorder: RecordingEventRecorder | None = None,
) -> Session:
    cache = SchedulerCache(recorder=recorder or RecordingEventRecorder())
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    option = PluginOption.with_flags("overcommit", "enableJobEnqueued", arguments=arguments)
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    return open_session(cache.snapshot(), conf, {"overcommit": overcommit.new}, cache)


@pytest.mark.parametrize(
    ("case", "pod_group", "queue", "factor", "expected"),
    [
        (
            "overCommitFactor is more than 0",
            build_pod_group("pg1", "test-namespace", "c1", 2, min_resources=NORMAL),
            build_queue("c1", 1),
            1.2,
            True,
        ),
        (
            "overCommitFactor is less than 0",
            build_pod_group("pg1", "test-namespace", "c1", 2, min_resources=NORMAL),
            build_queue("c1", 1),
            0.8,
            True,
        ),
        (
            "when the required resources of pg are too large",
            build_pod_group("pg2", "test-namespace", "c1", 2, min_resources=HUGE),
            build_queue("c1", 1),
            1.2,
            False,
        ),
        (
            "when pg does not fill MinResources",
            build_pod_group("pg2", "test-namespace", "c1", 2),
            build_queue("c1", 1, SMALL),
            1.2,
            True,
        ),
    ],
)
def test_overcommit_plugin(
    case: str,
    pod_group: dict[str, Any],
    queue: dict[str, Any],
    factor: float,
    expected: bool,
) -> None:
    """Upstream ``TestOvercommitPlugin``: every job is marked enqueued, then asked again."""
    ssn = make_session(
        [("Node", N1), ("Node", N2), ("Queue", queue), ("PodGroup", pod_group)],
        {"overcommit-factor": factor},
    )
    assert ssn.jobs, case
    for job in ssn.jobs.values():
        ssn.job_enqueued(job)
        assert ssn.job_enqueueable(job) is expected, case


def plugin_of(ssn: Session) -> overcommit.OvercommitPlugin:
    plugin = ssn.plugins["overcommit"]
    assert isinstance(plugin, overcommit.OvercommitPlugin)
    return plugin


@pytest.mark.parametrize(
    ("arguments", "factor"),
    [(None, 1.2), ({"overcommit-factor": 0.8}, 1.2), ({"overcommit-factor": 2}, 2.0)],
)
def test_factor_argument(arguments: dict[str, Any] | None, factor: float) -> None:
    ssn = make_session([("Node", N1)], arguments)
    plugin = plugin_of(ssn)
    assert plugin.overcommit_factor == factor
    assert plugin.idle.milli_cpu == pytest.approx(2000 * factor)


def test_idle_subtracts_node_usage_and_inqueue_counts_running_jobs() -> None:
    objects = [
        ("Node", build_node("n1", resource_list("10", "10G"))),
        ("Queue", build_queue("q1")),
        # Inqueue: the full minResources counts even though one task already runs.
        ("PodGroup", build_pod_group("inq", "ns", "q1", 2, min_resources=resource_list("4", "4G"))),
        ("Pod", build_pod("ns", "inq-0", "n1", "Running", resource_list("1", "1G"), "inq")),
        # Running with its gang placed: only the part of minResources not yet held.
        (
            "PodGroup",
            build_pod_group(
                "run", "ns", "q1", 1, phase="Running", min_resources=resource_list("3", "1G")
            ),
        ),
        ("Pod", build_pod("ns", "run-0", "n1", "Running", resource_list("2", "2G"), "run")),
        # Running but below minMember: reserves nothing more.
        (
            "PodGroup",
            build_pod_group(
                "short", "ns", "q1", 2, phase="Running", min_resources=resource_list("5", "5G")
            ),
        ),
        ("Pod", build_pod("ns", "short-0", "n1", "Running", resource_list("1", "1G"), "short")),
    ]
    plugin = plugin_of(make_session(objects, {"overcommit-factor": 1.0}))
    assert plugin.idle.milli_cpu == pytest.approx(10000 - 4000)
    assert plugin.idle.memory == pytest.approx(10e9 - 4e9)
    assert plugin.inqueue.milli_cpu == pytest.approx(4000 + 1000)
    assert plugin.inqueue.memory == pytest.approx(4e9 + 0)


def test_rejection_records_an_event() -> None:
    recorder = RecordingEventRecorder()
    objects = [
        ("Node", build_node("n1", resource_list("2", "2G"))),
        ("Queue", build_queue("q1")),
        (
            "PodGroup",
            build_pod_group(
                "big", "ns", "q1", 1, phase="Pending", min_resources=resource_list("3", "1G")
            ),
        ),
    ]
    ssn = make_session(objects, recorder=recorder)
    assert not ssn.job_enqueueable(ssn.jobs["ns/big"])
    assert recorder.events == [
        (
            "PodGroup",
            "ns",
            "big",
            "Normal",
            "Unschedulable",
            "resource in cluster is overused: overused cpu",
        )
    ]


def test_flag_gates_both_hooks() -> None:
    cache = SchedulerCache()
    for kind, obj in [
        ("Node", build_node("n1", resource_list("1", "1G"))),
        ("Queue", build_queue("q1")),
        ("PodGroup", build_pod_group("big", "ns", "q1", 1, min_resources=resource_list("9"))),
    ]:
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(actions=[], tiers=[Tier([PluginOption.with_flags("overcommit")])])
    ssn = open_session(cache.snapshot(), conf, {"overcommit": overcommit.new}, cache)
    assert ssn.job_enqueueable(ssn.jobs["ns/big"])
