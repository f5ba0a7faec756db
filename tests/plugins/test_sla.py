"""sla plugin (``pkg/scheduler/plugins/sla``).

Transcribed from upstream ``sla_test.go``: the three cases of ``TestSlaPlugin`` (job order and
JobEnqueueable under a global waiting time of each shape). Then the rules case by case, and a
scenario through a whole session: an overdue job is admitted past proportion's quota check
while a job without an SLA waits (the decision upstream makes with sla in the tier before
proportion).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.harness import Case
from tests.plugins.clocked import run_case_at
from volcano_py.api.job import JobInfo, PodGroupInfo
from volcano_py.api.types import Vote
from volcano_py.cache.cache import SchedulerCache
from volcano_py.framework.arguments import Arguments
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import SchedulingState, Session, open_session
from volcano_py.plugins import sla
from volcano_py.plugins._plugin_helpers import epoch_seconds

HOUR = 3600.0


def make_session(arguments: dict[str, Any], now: float = 0.0) -> Session:
    option = PluginOption.with_flags(
        "sla", "enableJobOrder", "enableJobEnqueued", "enableJobPipelined", arguments=arguments
    )
    conf = SchedulerConf(actions=[], tiers=[Tier([option])])
    cache = SchedulerCache()
    return open_session(
        cache.snapshot(), conf, {"sla": sla.new}, cache, SchedulingState(clock=lambda: now)
    )


def job(name: str, annotations: dict[str, str] | None = None, created: str = "") -> JobInfo:
    info = JobInfo(uid=f"default/{name}")
    info.set_pod_group(
        PodGroupInfo(
            name=name,
            namespace="default",
            annotations=annotations or {},
            creation_timestamp=created,
        )
    )
    return info


# ---------------------------------------------------------------------- upstream: TestSlaPlugin


@pytest.mark.parametrize(
    ("arguments", "expected_order", "expected_enqueueable"),
    [
        pytest.param({"sla-waiting-time": "3m"}, True, True, id="sla normal placement"),
        pytest.param({"sla-waiting-time": 1}, False, True, id="sla error type placement"),
        pytest.param({}, False, True, id="none placement"),
    ],
)
def test_sla_plugin_upstream(
    arguments: dict[str, Any], expected_order: bool, expected_enqueueable: bool
) -> None:
    """job1 has no waiting time of its own, job2 one hour; both have Go's zero creation time."""
    ssn = make_session(arguments)
    job1 = job("job1")
    job2 = job("job2", {"sla-waiting-time": "1h"})
    assert job2.waiting_time == HOUR
    assert ssn.job_order_fn(job1, job2) is expected_order
    assert ssn.job_enqueueable(job1) is expected_enqueueable


# ---------------------------------------------------------------------- the rules


def test_global_waiting_time_parsing(caplog: pytest.LogCaptureFixture) -> None:
    assert sla.global_waiting_time(Arguments({"sla-waiting-time": "1h2m3s"})) == 3723.0
    with caplog.at_level(logging.WARNING):
        assert sla.global_waiting_time(Arguments({"sla-waiting-time": 1})) is None
        assert sla.global_waiting_time(Arguments({"sla-waiting-time": "soon"})) is None
        assert sla.global_waiting_time(Arguments({"sla-waiting-time": "-1m"})) is None
    assert caplog.text.count("sla-waiting-time") == 3


def test_job_order_earlier_deadline_first() -> None:
    ssn = make_session({})
    early = job("a", {"sla-waiting-time": "10m"}, created="2026-01-01T00:10:00Z")
    late = job("b", {"sla-waiting-time": "1h"}, created="2026-01-01T00:00:00Z")
    none = job("c", created="2025-01-01T00:00:00Z")
    assert ssn.job_compare(early, late) == -1
    assert ssn.job_compare(late, early) == 1
    assert ssn.job_compare(late, none) == -1 and ssn.job_compare(none, late) == 1
    assert ssn.job_compare(none, job("d")) == 0
    same = job("e", {"sla-waiting-time": "20m"}, created="2026-01-01T00:00:00Z")
    assert ssn.job_compare(early, same) == 0


def test_enqueueable_and_pipelined_permit_only_once_overdue() -> None:
    created = "2026-01-01T00:00:00Z"
    start = epoch_seconds(created)
    plugin = sla.SlaPlugin(Arguments({"sla-waiting-time": "30m"}))
    for now, vote in [(start + 29 * 60, Vote.ABSTAIN), (start + 30 * 60, Vote.PERMIT)]:
        ssn = make_session({"sla-waiting-time": "30m"}, now)
        overdue_fn = ssn._hooks["job_enqueueable"][0][0][1]
        pipelined_fn = ssn._hooks["job_pipelined"][0][0][1]
        subject = job("a", created=created)
        assert overdue_fn(subject) == vote
        assert pipelined_fn(subject) == vote
    # The job's own annotation beats the argument.
    assert plugin.job_waiting_time(job("b", {"volcano.sh/sla-waiting-time": "5m"})) == 300.0


# ---------------------------------------------------------------------- scenario


def test_overdue_job_is_admitted_past_the_queue_quota() -> None:
    """Queue q1 may hold 4 cpu and already runs 4. Two jobs wait with minResources 2 cpu:
    "patient" has no SLA and stays Pending (proportion rejects it); "urgent", created an hour
    ago with ``sla-waiting-time: 10m``, is overdue, and sla's Permit in the first tier admits it
    before proportion is asked."""
    created = "2026-01-01T00:00:00Z"
    pg_args: dict[str, Any] = {
        "min_resources": resource_list("2", "2Gi"),
        "creation_timestamp": created,
    }
    case = Case(
        name="sla admits an overdue job",
        plugins=[
            {"sla": ["enableJobOrder", "enableJobEnqueued", "enableJobPipelined"]},
            {"proportion": ["enableQueueOrder", "enableJobEnqueued", "enabledAllocatable"]},
        ],
        nodes=[build_node("n1", resource_list("8", "16Gi", pods="20"))],
        queues=[build_queue("q1", 1, resource_list("4", "8Gi"))],
        pod_groups=[
            build_pod_group(
                "running", "ns", "q1", 1, None, "Running", min_resources=resource_list("4", "4Gi")
            ),
            build_pod_group("patient", "ns", "q1", 1, None, "Pending", **pg_args),
            build_pod_group(
                "urgent",
                "ns",
                "q1",
                1,
                None,
                "Pending",
                annotations={"volcano.sh/sla-waiting-time": "10m"},
                **pg_args,
            ),
        ],
        pods=[build_pod("ns", "r0", "n1", "Running", resource_list("4", "4Gi"), "running")],
    )
    outcome = run_case_at(case, ["enqueue"], epoch_seconds(created) + HOUR)
    phases = {uid: j.pod_group.phase for uid, j in outcome.session.jobs.items() if j.pod_group}
    assert phases == {"ns/running": "Running", "ns/patient": "Pending", "ns/urgent": "Inqueue"}

    # Ten minutes after creation it is not overdue yet: both wait.
    early = run_case_at(case, ["enqueue"], epoch_seconds(created) + 300)
    assert early.session.jobs["ns/urgent"].pod_group.phase == "Pending"  # type: ignore[union-attr]
