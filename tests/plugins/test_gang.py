"""gang plugin (``pkg/scheduler/plugins/gang``).

Upstream ``gang_test.go`` has one table, ``TestShouldSkipUnschedulableForReleasing``,
transcribed below. The rest of gang's upstream coverage runs through actions (allocate,
preempt, reclaim tests) and is transcribed with them; here each registered function is
checked by calling the session dispatchers directly.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from volcano_py import metrics
from volcano_py.api.job import JobInfo
from volcano_py.api.resource import Resource
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus, Vote
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingStatusUpdater
from volcano_py.framework.conf import PluginOption, SchedulerConf, Tier
from volcano_py.framework.session import (
    SchedulingState,
    Session,
    close_session,
    open_session,
)
from volcano_py.plugins import gang
from volcano_py.plugins._plugin_helpers import rfc3339

ALL_FLAGS = (
    "enableJobOrder",
    "enableJobReady",
    "enableJobPipelined",
    "enablePreemptable",
    "enableReclaimable",
    "enableJobStarving",
)


def make_session(
    objects: Iterable[tuple[str, Mapping[str, Any]]],
    *flags: str,
    now: float = 0.0,
) -> tuple[Session, SchedulerCache]:
    """A session over ``objects`` (kind, raw object) with gang alone in one tier."""
    cache = SchedulerCache(status_updater=RecordingStatusUpdater())
    for kind, obj in objects:
        cache.apply_event(kind, "ADDED", obj)
    conf = SchedulerConf(actions=[], tiers=[Tier([PluginOption.with_flags("gang", *flags)])])
    state = SchedulingState(clock=lambda: now)
    ssn = open_session(cache.snapshot(), conf, {"gang": gang.new}, cache, state)
    return ssn, cache


def node(name: str, cpu: str = "4", memory: str = "4G") -> tuple[str, dict[str, Any]]:
    return "Node", build_node(name, resource_list(cpu, memory, pods="10"))


def queue(name: str = "q1") -> tuple[str, dict[str, Any]]:
    return "Queue", build_queue(name)


def pod_group(name: str, min_member: int, **kwargs: Any) -> tuple[str, dict[str, Any]]:
    return "PodGroup", build_pod_group(name, "ns1", "q1", min_member, **kwargs)


def pod(
    name: str,
    group: str,
    phase: str = "Pending",
    node_name: str = "",
    cpu: str = "1",
    **kwargs: Any,
) -> tuple[str, dict[str, Any]]:
    return "Pod", build_pod(
        "ns1", name, node_name, phase, resource_list(cpu, "1G"), group, **kwargs
    )


def bare_task(uid: str, status: TaskStatus, node_name: str) -> TaskInfo:
    return TaskInfo(
        uid=uid,
        job="job-1",
        name=uid,
        namespace="ns",
        pod={},
        resreq=Resource(),
        init_resreq=Resource(),
        status=status,
        node_name=node_name,
    )


# ----------------------------------------------------------------------- upstream gang_test.go


@pytest.mark.parametrize(
    ("case", "minimum", "tasks", "expected"),
    [
        (
            "partial termination",
            2,
            [
                ("running", TaskStatus.RUNNING, "node-1"),
                ("releasing", TaskStatus.RELEASING, "node-2"),
            ],
            True,
        ),
        (
            "pending replacement still needs condition",
            2,
            [
                ("running", TaskStatus.RUNNING, "node-1"),
                ("releasing", TaskStatus.RELEASING, "node-2"),
                ("replacement", TaskStatus.PENDING, ""),
            ],
            False,
        ),
        (
            "pipelined replacement still needs condition",
            2,
            [
                ("running", TaskStatus.RUNNING, "node-1"),
                ("releasing", TaskStatus.RELEASING, "node-2"),
                ("replacement", TaskStatus.PIPELINED, "node-3"),
            ],
            False,
        ),
        (
            "never scheduled releasing task is not counted",
            1,
            [("releasing", TaskStatus.RELEASING, "")],
            False,
        ),
        (
            "scheduled tasks below minAvailable",
            3,
            [
                ("running", TaskStatus.RUNNING, "node-1"),
                ("releasing", TaskStatus.RELEASING, "node-2"),
            ],
            False,
        ),
    ],
)
def test_should_skip_unschedulable_for_releasing(
    case: str, minimum: int, tasks: list[tuple[str, TaskStatus, str]], expected: bool
) -> None:
    """Upstream ``TestShouldSkipUnschedulableForReleasing``."""
    job = JobInfo(uid="job-1", min_available=minimum)
    for uid, status, node_name in tasks:
        job.add_task(bare_task(uid, status, node_name))
    assert gang.skip_unschedulable_for_releasing(job) is expected, case


# ----------------------------------------------------------------------- JobValidFn


def test_job_valid_not_enough_tasks() -> None:
    ssn, _ = make_session(
        [
            node("n1"),
            queue(),
            pod_group("pg1", 3),
            pod("p1", "pg1"),
            pod("p2", "pg1"),
            pod("p3", "pg1", phase="Failed"),
        ]
    )
    result = ssn.job_valid(ssn.jobs["ns1/pg1"])
    assert result is not None
    assert not result.passed
    assert result.reason == "NotEnoughTasks"
    assert result.message == "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"


def test_job_valid_not_enough_pods_of_task() -> None:
    # Role "ps" wants 2 valid pods and has one; the job-level minimum is met.
    ps = {"volcano.sh/task-spec": "ps"}
    worker = {"volcano.sh/task-spec": "worker"}
    ssn, _ = make_session(
        [
            node("n1"),
            queue(),
            pod_group("pg1", 3, min_task_member={"ps": 2, "worker": 1}),
            pod("ps-0", "pg1", annotations=ps),
            pod("ps-1", "pg1", phase="Failed", annotations=ps),
            pod("w-0", "pg1", annotations=worker),
            pod("w-1", "pg1", annotations=worker),
        ]
    )
    result = ssn.job_valid(ssn.jobs["ns1/pg1"])
    assert result is not None
    assert (result.passed, result.reason, result.message) == (
        False,
        "NotEnoughPodsOfTask",
        "Not enough valid pods of each task for gang-scheduling",
    )


def test_job_valid_passes() -> None:
    ssn, _ = make_session(
        [node("n1"), queue(), pod_group("pg1", 2), pod("p1", "pg1"), pod("p2", "pg1")]
    )
    assert ssn.job_valid(ssn.jobs["ns1/pg1"]) is None


# ----------------------------------------------------------------------- preemptable/reclaimable


def victim_cluster() -> list[tuple[str, dict[str, Any]]]:
    return [
        node("n1", cpu="8"),
        queue(),
        pod_group("victims", 2),
        pod("v1", "victims", "Running", "n1"),
        pod("v2", "victims", "Running", "n1"),
        pod("v3", "victims", "Running", "n1"),
        pod_group("small", 1),
        pod("s1", "small", "Running", "n1"),
        pod_group("preemptor", 1),
        pod("x", "preemptor"),
    ]


@pytest.mark.parametrize("flag", ["enablePreemptable", "enableReclaimable"])
def test_victims_keep_min_available(flag: str) -> None:
    """A job gives up tasks only down to its minAvailable, counting from its ready tasks."""
    ssn, _ = make_session(victim_cluster(), flag)
    jobs = ssn.jobs
    preemptor = jobs["ns1/preemptor"].tasks["ns1-x"]
    candidates = [
        *sorted(jobs["ns1/victims"].tasks.values(), key=lambda t: t.name),
        jobs["ns1/small"].tasks["ns1-s1"],
    ]
    dispatch = ssn.preemptable if flag == "enablePreemptable" else ssn.reclaimable
    victims = dispatch(preemptor, candidates)
    # victims: 3 ready, min 2 -> only the first candidate; small: 1 ready, min 1 -> none.
    assert [t.name for t in victims] == ["v1"]


def test_victims_of_unknown_job_are_skipped() -> None:
    ssn, _ = make_session(victim_cluster(), "enablePreemptable")
    preemptor = ssn.jobs["ns1/preemptor"].tasks["ns1-x"]
    orphan = preemptor.clone()
    orphan.job = "ns1/deleted"
    victim = ssn.jobs["ns1/victims"].tasks["ns1-v1"]
    assert ssn.preemptable(preemptor, [orphan, victim]) == [victim]


# ----------------------------------------------------------------------- order / ready / pipelined


def test_job_order_puts_unready_jobs_first() -> None:
    ssn, _ = make_session(
        [
            node("n1"),
            queue(),
            pod_group("ready", 1, creation_timestamp="2024-01-01T00:00:00Z"),
            pod("r1", "ready", "Running", "n1"),
            pod_group("unready", 1, creation_timestamp="2024-01-02T00:00:00Z"),
            pod("u1", "unready"),
        ],
        "enableJobOrder",
    )
    ready, unready = ssn.jobs["ns1/ready"], ssn.jobs["ns1/unready"]
    assert gang.job_order(ready, unready) == 1
    assert gang.job_order(unready, ready) == -1
    assert gang.job_order(ready, ready) == 0
    assert gang.job_order(unready, unready) == 0
    # The plugin's answer beats the creation-time fallback.
    assert ssn.job_order_fn(unready, ready)
    assert not ssn.job_order_fn(ready, unready)


def test_job_ready_pipelined_starving() -> None:
    ssn, _ = make_session(
        [
            node("n1"),
            queue(),
            pod_group("pg1", 2),
            pod("p1", "pg1", "Running", "n1"),
            pod("p2", "pg1"),
            pod("p3", "pg1"),
        ],
        *ALL_FLAGS,
    )
    job = ssn.jobs["ns1/pg1"]
    assert not ssn.job_ready(job)
    assert not ssn.job_pipelined(job)
    assert gang.job_pipelined(job) is Vote.REJECT
    assert ssn.job_starving(job)

    statement = ssn.statement()
    statement.pipeline(job.tasks["ns1-p2"], "n1", eviction_occurred=False)
    assert not ssn.job_ready(job)
    assert gang.job_pipelined(job) is Vote.PERMIT
    assert ssn.job_pipelined(job)
    assert not ssn.job_starving(job)
    statement.discard()

    statement.allocate(job.tasks["ns1-p2"], ssn.nodes["n1"])
    assert ssn.job_ready(job)
    assert ssn.job_pipelined(job)
    assert not ssn.job_starving(job)


def test_job_ready_checks_per_role_minimum() -> None:
    ps = {"volcano.sh/task-spec": "ps"}
    worker = {"volcano.sh/task-spec": "worker"}
    ssn, _ = make_session(
        [
            node("n1"),
            queue(),
            pod_group("pg1", 2, min_task_member={"ps": 1, "worker": 1}),
            pod("w-0", "pg1", "Running", "n1", annotations=worker),
            pod("w-1", "pg1", "Running", "n1", annotations=worker),
            pod("ps-0", "pg1", annotations=ps),
        ],
        "enableJobReady",
        "enableJobPipelined",
    )
    job = ssn.jobs["ns1/pg1"]
    # Two tasks placed meet minAvailable, but role ps has none.
    assert job.is_ready()
    assert not ssn.job_ready(job)
    assert not ssn.job_pipelined(job)


def test_flags_gate_registration() -> None:
    ssn, _ = make_session([node("n1"), queue(), pod_group("pg1", 2), pod("p1", "pg1")])
    job = ssn.jobs["ns1/pg1"]
    # No flags: only JobValidFn (which has no flag) is registered.
    assert ssn.job_ready(job)
    assert ssn.job_pipelined(job)
    assert not ssn.job_starving(job)
    assert ssn.job_valid(job) is not None


# ----------------------------------------------------------------------- OnSessionClose


def test_close_sets_unschedulable_condition() -> None:
    ssn, cache = make_session(
        [
            node("n1"),
            queue(),
            pod_group("pg1", 3),
            pod("p1", "pg1", "Running", "n1"),
            pod("p2", "pg1"),
            pod("p3", "pg1"),
        ],
        now=1_700_000_000.0,
    )
    job = ssn.jobs["ns1/pg1"]
    expected_message = f"2/3 tasks in gang unschedulable: {job.fit_error()}"
    close_session(ssn)
    assert job.pod_group is not None
    assert job.pod_group.conditions == [
        {
            "type": "Unschedulable",
            "status": "True",
            "lastTransitionTime": "2023-11-14T22:13:20Z",
            "transitionID": ssn.uid,
            "reason": "NotEnoughResources",
            "message": expected_message,
        }
    ]
    # The condition carries this session's transitionID, so the PodGroup's phase is derived
    # as unschedulable and the status is written.
    updater = cache.status_updater
    assert isinstance(updater, RecordingStatusUpdater)
    assert "ns1/pg1" in updater.pod_groups


def test_close_counts_tasks_whose_allocation_was_undone() -> None:
    ssn, _ = make_session(
        [
            node("n1"),
            queue(),
            pod_group("pg1", 3),
            pod("p1", "pg1"),
            pod("p2", "pg1"),
            pod("p3", "pg1"),
        ],
    )
    job = ssn.jobs["ns1/pg1"]
    statement = ssn.statement()
    statement.allocate(job.tasks["ns1-p1"], ssn.nodes["n1"])
    statement.discard()
    close_session(ssn)
    assert job.pod_group is not None
    message = job.pod_group.conditions[0]["message"]
    assert message.startswith("2/3 tasks in gang unschedulable: ")


def test_close_sets_scheduled_condition_replacing_same_type() -> None:
    old = {"type": "Scheduled", "status": "True", "reason": "old", "transitionID": "x"}
    other = {"type": "Unschedulable", "status": "True", "reason": "NotEnoughResources"}
    group = build_pod_group("pg1", "ns1", "q1", 1)
    group["status"]["conditions"] = [other, old]
    ssn, _ = make_session(
        [node("n1"), queue(), ("PodGroup", group), pod("p1", "pg1", "Running", "n1")],
        now=86400.0,
    )
    job = ssn.jobs["ns1/pg1"]
    close_session(ssn)
    assert job.pod_group is not None
    assert job.pod_group.conditions == [
        other,
        {
            "type": "Scheduled",
            "status": "True",
            "lastTransitionTime": "1970-01-02T00:00:00Z",
            "transitionID": ssn.uid,
            "reason": "tasks in gang are ready to be scheduled",
            "message": "",
        },
    ]


def test_close_skips_jobs_without_tasks_and_releasing_only_shortfall() -> None:
    ssn, _ = make_session(
        [
            node("n1"),
            queue(),
            pod_group("empty", 1),
            pod_group("releasing", 2),
            pod("r1", "releasing", "Running", "n1"),
            pod("r2", "releasing", "Running", "n1"),
            pod_group("short", 2),
            pod("s1", "short", "Running", "n1"),
        ],
    )
    releasing, short = ssn.jobs["ns1/releasing"], ssn.jobs["ns1/short"]
    statement = ssn.statement()
    statement.evict(releasing.tasks["ns1-r1"], "test")
    statement.evict(short.tasks["ns1-s1"], "test")
    close_session(ssn)
    empty = ssn.jobs["ns1/empty"].pod_group
    assert empty is not None
    assert empty.conditions == []
    # Running + releasing-on-node = 2 >= minAvailable: only pods on their way out, no condition.
    assert releasing.pod_group is not None
    assert releasing.pod_group.conditions == []
    # One releasing task < minAvailable 2: the gang really is short.
    assert short.pod_group is not None
    assert [c["type"] for c in short.pod_group.conditions] == ["Unschedulable"]


def test_rfc3339() -> None:
    assert rfc3339(0.0) == "1970-01-01T00:00:00Z"
    assert rfc3339(1_700_000_000.9) == "2023-11-14T22:13:20Z"


def test_close_updates_unschedulable_metrics() -> None:
    ssn, _ = make_session(
        [
            node("n1"),
            queue(),
            pod_group("metric-short", 2),
            pod("m1", "metric-short"),
            pod("m2", "metric-short"),
            pod_group("metric-ready", 1),
            pod("m3", "metric-ready", "Running", "n1"),
        ],
    )
    retries = metrics.REGISTRY.get_sample_value(
        "volcano_job_retry_counts", {"job_id": "metric-short"}
    )
    close_session(ssn)
    sample = metrics.REGISTRY.get_sample_value
    assert sample("volcano_unschedule_task_count", {"job_id": "metric-short"}) == 2
    assert sample("volcano_unschedule_task_count", {"job_id": "metric-ready"}) == 0
    assert sample("volcano_unschedule_job_count") == 1
    after = sample("volcano_job_retry_counts", {"job_id": "metric-short"})
    assert after == (retries or 0) + 1
