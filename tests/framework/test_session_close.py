"""close_session: PodGroup phases and status write-back, queue ``status.allocated``
(``framework/session.go`` ``getPodGroupPhase``/``jobStatus``/``updateQueueStatus``,
``framework/job_updater.go``; spec §2.4).

Upstream ``session_test.go`` ``TestGetPodGroupPhase`` is transcribed (all seven cases). The
other ``session_test.go`` tests (network-topology normalisation) are not here: that code is
not part of ``framework/session.py``.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import build_node, build_pod, build_pod_group, build_queue, resource_list
from tests.framework.fake_plugins import PluginSpec, cache_of, open_fake_session
from volcano_py.api.job import (
    PG_COMPLETED,
    PG_INQUEUE,
    PG_PENDING,
    PG_RUNNING,
    PG_UNKNOWN,
    JobInfo,
    PodGroupInfo,
)
from volcano_py.api.task import TaskInfo
from volcano_py.api.types import TaskStatus
from volcano_py.cache.cache import SchedulerCache
from volcano_py.cache.interfaces import RecordingEventRecorder, RecordingStatusUpdater
from volcano_py.framework.session import Session, close_session, pod_group_phase

T1 = "2024-01-01T00:00:00Z"
T2 = "2024-06-01T00:00:00Z"


# ---------------------------------------------------------------------------- getPodGroupPhase


def phase_job(min_member: int, phase: str, *tasks: tuple[str, TaskStatus, str]) -> JobInfo:
    job = JobInfo(uid="test-job")
    for name, status, node in tasks:
        task = TaskInfo.from_pod(build_pod("ns", name, "", "Pending", {}, "test-job"))
        task.status = status
        task.node_name = node
        job.add_task(task)
    job.pod_group = PodGroupInfo(
        name="test-job", namespace="ns", min_member=min_member, phase=phase
    )
    return job


@pytest.mark.parametrize(
    ("job", "unschedulable", "expected"),
    [
        (phase_job(1, PG_RUNNING, ("task-1", TaskStatus.RELEASING, "node-1")), False, PG_RUNNING),
        (
            phase_job(
                2,
                PG_RUNNING,
                ("task-1", TaskStatus.RUNNING, "node-1"),
                ("task-2", TaskStatus.RELEASING, "node-2"),
            ),
            False,
            PG_RUNNING,
        ),
        (
            phase_job(
                2,
                PG_RUNNING,
                ("task-1", TaskStatus.RELEASING, "node-1"),
                ("task-2", TaskStatus.RELEASING, "node-2"),
            ),
            False,
            PG_RUNNING,
        ),
        (
            phase_job(
                2,
                PG_PENDING,
                ("task-1", TaskStatus.RELEASING, ""),
                ("task-2", TaskStatus.PENDING, ""),
            ),
            False,
            PG_PENDING,
        ),
        (
            phase_job(
                2,
                PG_RUNNING,
                ("task-1", TaskStatus.SUCCEEDED, "node-1"),
                ("task-2", TaskStatus.SUCCEEDED, "node-2"),
            ),
            False,
            PG_COMPLETED,
        ),
        (phase_job(2, PG_RUNNING, ("task-1", TaskStatus.RELEASING, "node-1")), False, PG_PENDING),
        (
            phase_job(
                2,
                PG_RUNNING,
                ("task-1", TaskStatus.RUNNING, "node-1"),
                ("task-2", TaskStatus.PENDING, ""),
            ),
            True,
            PG_UNKNOWN,
        ),
    ],
    ids=[
        "single pod terminating keeps Running",
        "multi pod partial terminating keeps Running",
        "all pods terminating keeps Running",
        "never-scheduled pending pod deleted stays Pending",
        "all scheduled tasks completed",
        "scheduled releasing tasks below minMember fall to Pending",
        "running and unschedulable is Unknown",
    ],
)
def test_get_pod_group_phase_upstream(job, unschedulable, expected):
    assert pod_group_phase(job, unschedulable) == expected


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        (PG_INQUEUE, PG_INQUEUE),
        (PG_PENDING, PG_PENDING),
        ("", PG_PENDING),
        (PG_RUNNING, PG_PENDING),
    ],
)
def test_phase_below_min_member_keeps_inqueue_else_pending(phase, expected):
    job = phase_job(2, phase, ("t", TaskStatus.PENDING, ""))
    assert pod_group_phase(job, False) == expected


def test_unschedulable_without_running_tasks_is_not_unknown():
    job = phase_job(1, PG_INQUEUE, ("t", TaskStatus.PENDING, ""))
    assert pod_group_phase(job, True) == PG_INQUEUE


def test_failed_and_succeeded_mixed_is_completed():
    job = phase_job(
        2, PG_RUNNING, ("a", TaskStatus.FAILED, "n1"), ("b", TaskStatus.SUCCEEDED, "n1")
    )
    assert pod_group_phase(job, False) == PG_COMPLETED


# ---------------------------------------------------------------------------- closing a session


class World:
    """A cache (the real sink) with recording I/O, and a session over its snapshot."""

    def __init__(self, objects: list[tuple[str, dict[str, Any]]]) -> None:
        self.status = RecordingStatusUpdater()
        self.recorder = RecordingEventRecorder()
        self.cache: SchedulerCache = cache_of(
            objects, status_updater=self.status, recorder=self.recorder
        )

    def session(self, tiers: list[list[PluginSpec]] | None = None) -> Session:
        return open_fake_session(tiers or [], self.cache.snapshot(), self.cache)

    def run(self, tiers: list[list[PluginSpec]] | None = None) -> Session:
        ssn = self.session(tiers)
        close_session(ssn)
        return ssn

    def pg_events(self) -> list[tuple[str, str, str]]:
        return [(e[3], e[4], e[5]) for e in self.recorder.events if e[0] == "PodGroup"]


def base(*extra: tuple[str, dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("Node", build_node("n1", resource_list("8", "16Gi", pods="20"))),
        ("Queue", build_queue("q1")),
        *extra,
    ]


def pg(min_member: int, phase: str, **status: Any) -> tuple[str, dict[str, Any]]:
    obj = build_pod_group("pg1", "ns1", "q1", min_member, phase=phase)
    obj["status"].update(status)
    return "PodGroup", obj


def pod(name: str, phase: str, node: str = "") -> tuple[str, dict[str, Any]]:
    return "Pod", build_pod("ns1", name, node, phase, resource_list("1", "1Gi"), "pg1")


def closer(fn: Any) -> list[list[PluginSpec]]:
    return [[PluginSpec("closer", on_close=fn)]]


@pytest.mark.parametrize("phase", [PG_PENDING, PG_INQUEUE])
def test_waiting_pod_group_keeps_phase_is_not_written_and_warns(phase):
    world = World(base(pg(1, phase), pod("p1", "Pending")))
    ssn = world.run()
    assert ssn.jobs["ns1/pg1"].pod_group.phase == phase
    assert world.status.pod_groups == {}
    ((kind, reason, message),) = world.pg_events()
    assert (kind, reason) == ("Warning", "Unschedulable")
    assert message.startswith("1/1 tasks in gang unschedulable: pod group is not ready")
    # the pending pod gets its PodScheduled condition
    condition, nominated = world.status.pod_conditions["ns1/p1"]
    assert (condition["type"], condition["status"], condition["reason"]) == (
        "PodScheduled",
        "False",
        "Unschedulable",
    )
    assert nominated == ""


def test_inqueue_becomes_running_is_written_with_a_scheduled_event():
    world = World(base(pg(1, PG_INQUEUE), pod("p1", "Running", "n1")))
    world.run()
    assert world.status.pod_groups == {"ns1/pg1": {"phase": PG_RUNNING, "running": 1}}
    assert world.pg_events() == [("Normal", "Scheduled", "pod group is ready")]
    assert world.cache.jobs["ns1/pg1"].pod_group.phase == PG_RUNNING
    assert world.cache.jobs["ns1/pg1"].pod_group.running == 1


def test_unchanged_running_pod_group_is_not_written_and_not_announced():
    world = World(base(pg(1, PG_RUNNING, running=1), pod("p1", "Running", "n1")))
    world.run()
    assert world.status.pod_groups == {}
    assert world.pg_events() == []


def test_second_session_writes_nothing_new():
    world = World(base(pg(1, PG_INQUEUE), pod("p1", "Running", "n1")))
    world.run()
    world.status.pod_groups.clear()
    world.run()
    assert world.status.pod_groups == {}


def test_completed_pod_group():
    world = World(
        base(pg(2, PG_RUNNING, running=2), pod("a", "Succeeded", "n1"), pod("b", "Succeeded", "n1"))
    )
    world.run()
    assert world.status.pod_groups == {"ns1/pg1": {"phase": PG_COMPLETED, "succeeded": 2}}


def test_running_below_min_member_falls_back_to_pending():
    world = World(
        base(pg(2, PG_RUNNING, running=1), pod("a", "Running", "n1"), pod("b", "Pending"))
    )
    world.run()
    assert world.status.pod_groups["ns1/pg1"]["phase"] == PG_PENDING


def unschedulable_condition(
    transition_id: str, when: str = T1, reason: str = "NotEnoughResources"
) -> dict[str, Any]:
    return {
        "type": "Unschedulable",
        "status": "True",
        "transitionID": transition_id,
        "lastTransitionTime": when,
        "reason": reason,
        "message": "1/2 tasks in gang unschedulable",
    }


def test_unschedulable_in_this_session_with_running_tasks_is_unknown():
    world = World(
        base(pg(2, PG_RUNNING, running=1), pod("a", "Running", "n1"), pod("b", "Pending"))
    )

    def set_condition(ssn: Session) -> None:
        ssn.jobs["ns1/pg1"].pod_group.conditions = [unschedulable_condition(ssn.uid)]

    world.run(closer(set_condition))
    written = world.status.pod_groups["ns1/pg1"]
    assert written["phase"] == PG_UNKNOWN
    assert written["conditions"][0]["type"] == "Unschedulable"
    assert world.pg_events()[0][:2] == ("Warning", "Unschedulable")


def test_unschedulable_condition_of_an_earlier_session_is_not_unknown():
    condition = unschedulable_condition("old-session")
    world = World(
        base(pg(1, PG_RUNNING, running=1, conditions=[condition]), pod("a", "Running", "n1"))
    )
    ssn = world.run()
    assert ssn.jobs["ns1/pg1"].pod_group.phase == PG_RUNNING
    assert world.status.pod_groups == {}


def test_condition_change_detection_ignores_transition_time_and_id():
    condition = unschedulable_condition("old-session", when=T1)
    world = World(
        base(pg(1, PG_RUNNING, running=1, conditions=[condition]), pod("a", "Running", "n1"))
    )

    def refresh(ssn: Session) -> None:
        refreshed = unschedulable_condition("another-session", when=T2)
        ssn.jobs["ns1/pg1"].pod_group.conditions = [refreshed]

    world.run(closer(refresh))
    assert world.status.pod_groups == {}


@pytest.mark.parametrize(
    "change",
    [
        lambda conditions: conditions[0].update(reason="Other"),
        lambda conditions: conditions[0].update(message="changed"),
        lambda conditions: conditions[0].update(status="False"),
        lambda conditions: conditions.append({"type": "Scheduled", "status": "True"}),
        lambda conditions: conditions.clear(),
    ],
    ids=["reason", "message", "status", "added", "removed"],
)
def test_condition_change_detection_sees_real_changes(change):
    condition = unschedulable_condition("old-session")
    world = World(
        base(pg(1, PG_RUNNING, running=1, conditions=[condition]), pod("a", "Running", "n1"))
    )
    world.run(closer(lambda ssn: change(ssn.jobs["ns1/pg1"].pod_group.conditions)))
    assert "ns1/pg1" in world.status.pod_groups


def test_counts_are_part_of_the_status():
    world = World(
        base(pg(1, PG_RUNNING, running=2), pod("a", "Running", "n1"), pod("b", "Failed", "n1"))
    )
    world.run()
    assert world.status.pod_groups == {"ns1/pg1": {"phase": PG_RUNNING, "running": 1, "failed": 1}}


def test_every_plugin_is_closed_once():
    closed: list[str] = []
    world = World(base())
    world.run(
        [
            [PluginSpec("a", on_close=lambda ssn: closed.append("a"))],
            [PluginSpec("b", on_close=lambda ssn: closed.append("b"))],
        ]
    )
    assert sorted(closed) == ["a", "b"]


def test_pod_condition_not_rewritten_when_unchanged():
    world = World(base(pg(1, PG_INQUEUE), pod("p1", "Pending")))
    world.run()
    condition, _ = world.status.pod_conditions["ns1/p1"]
    # the API server now has it: a pod event brings it back into the cache
    obj = build_pod("ns1", "p1", "", "Pending", resource_list("1", "1Gi"), "pg1")
    obj["status"]["conditions"] = [dict(condition, lastTransitionTime=T1)]
    world.cache.apply_event("Pod", "MODIFIED", obj)
    world.status.pod_conditions.clear()
    world.run()
    assert world.status.pod_conditions == {}


# ---------------------------------------------------------------------------- queue status


def queue_job(
    name: str, queue: str, cpu: str, phase: str = "Running"
) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("PodGroup", build_pod_group(name, "ns1", queue, 1, phase=PG_RUNNING)),
        ("Pod", build_pod("ns1", f"{name}-0", "n1", phase, resource_list(cpu, "1Gi"), name)),
    ]


def allocated_cpu(world: World) -> dict[str, str]:
    return {name: status["cpu"] for name, status in world.status.queues.items()}


def test_queue_allocated_counts_allocated_statuses_only():
    objects = [
        ("Node", build_node("n1", resource_list("16", "32Gi", pods="20"))),
        ("Queue", build_queue("q1")),
        ("Queue", build_queue("idle")),
        ("PodGroup", build_pod_group("pg1", "ns1", "q1", 1, phase=PG_RUNNING)),
        ("Pod", build_pod("ns1", "running", "n1", "Running", resource_list("1", "1Gi"), "pg1")),
        # Pending with a node: Bound
        ("Pod", build_pod("ns1", "bound", "n1", "Pending", resource_list("2", "1Gi"), "pg1")),
        ("Pod", build_pod("ns1", "pending", "", "Pending", resource_list("4", "1Gi"), "pg1")),
        ("Pod", build_pod("ns1", "done", "n1", "Succeeded", resource_list("8", "1Gi"), "pg1")),
    ]
    world = World(objects)
    world.run()
    assert world.status.queues["q1"] == {"cpu": "3", "memory": "2Gi", "pods": "2"}
    assert world.status.queues["idle"] == {"cpu": "0", "memory": "0"}
    assert world.cache.queues["q1"].allocated_status == {"cpu": "3", "memory": "2Gi", "pods": "2"}


def test_queue_allocated_includes_tasks_allocated_in_the_session():
    world = World(base(pg(1, PG_INQUEUE), pod("p1", "Pending")))
    ssn = world.session()
    task = next(iter(ssn.jobs["ns1/pg1"].tasks.values()))
    ssn.statement().allocate(task, ssn.nodes["n1"])
    close_session(ssn)
    assert world.status.queues["q1"]["cpu"] == "1"


def test_queue_allocated_written_only_when_changed():
    world = World(base(*queue_job("pg1", "q1", "1")))
    world.run()
    assert allocated_cpu(world) == {"q1": "1"}
    world.status.queues.clear()
    world.run()
    assert world.status.queues == {}


def test_queue_allocated_equal_status_from_the_api_is_not_rewritten():
    queue = build_queue("q1")
    queue["status"]["allocated"] = {"cpu": "1", "memory": "1Gi", "pods": "1"}
    world = World(
        [
            ("Node", build_node("n1", resource_list("8", "16Gi", pods="20"))),
            ("Queue", queue),
            *queue_job("pg1", "q1", "1"),
        ]
    )
    world.run()
    assert world.status.queues == {}


def test_queue_allocated_compares_quantities_semantically():
    queue = build_queue("q1")
    queue["status"]["allocated"] = {"cpu": "1000m", "memory": "1024Mi", "pods": "1"}
    world = World(
        [
            ("Node", build_node("n1", resource_list("8", "16Gi", pods="20"))),
            ("Queue", queue),
            *queue_job("pg1", "q1", "1"),
        ]
    )
    world.run()
    assert world.status.queues == {}


def test_queue_allocated_rolls_up_to_ancestors_when_root_exists():
    objects = [
        ("Node", build_node("n1", resource_list("16", "32Gi", pods="20"))),
        ("Queue", build_queue("root")),
        ("Queue", build_queue("eng", parent="root")),
        ("Queue", build_queue("dev", parent="eng")),
        ("Queue", build_queue("ops")),  # no parent: under root
        *queue_job("pg-dev", "dev", "1"),
        *queue_job("pg-ops", "ops", "2"),
        *queue_job("pg-eng", "eng", "4"),
    ]
    world = World(objects)
    world.run()
    assert allocated_cpu(world) == {"root": "7", "eng": "5", "dev": "1", "ops": "2"}


def test_queue_allocated_not_rolled_up_without_root():
    objects = [
        ("Node", build_node("n1", resource_list("16", "32Gi", pods="20"))),
        ("Queue", build_queue("eng")),
        ("Queue", build_queue("dev", parent="eng")),
        *queue_job("pg-dev", "dev", "1"),
    ]
    world = World(objects)
    world.run()
    assert allocated_cpu(world) == {"eng": "0", "dev": "1"}
