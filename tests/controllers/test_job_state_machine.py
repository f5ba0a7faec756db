"""The job state machine, row by row of spec §5.1 "State machine", and the cases of upstream's
``pkg/controllers/job/job_state_test.go`` (named after them)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest
from controller_fixtures import NOW, job, job_pod, pod_group, task

from volcano_py.controllers.job import JobChanges, JobRequest, sync_job
from volcano_py.controllers.job_state import Procedure, plan


def act(
    the_job: dict[str, Any],
    action: str,
    pods: Sequence[dict[str, Any]] = (),
    pg: dict[str, Any] | None = None,
    **request: Any,
) -> JobChanges:
    """Run ``action`` the way a bus Command delivers it."""
    req = JobRequest(event="CommandIssued", action=action, **request)
    return sync_job(the_job, pg, list(pods), req, now=NOW)


def sync(
    the_job: dict[str, Any],
    pods: Sequence[dict[str, Any]] = (),
    pg: dict[str, Any] | None = None,
) -> JobChanges:
    return sync_job(the_job, pg, list(pods), JobRequest(event="OutOfSync"), now=NOW)


def phase_of(changes: JobChanges) -> str:
    assert changes.status is not None
    return str(changes.status["state"]["phase"])


def four_pods(owner: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        job_pod(owner, "worker", 0, "Running"),
        job_pod(owner, "worker", 1, "Pending"),
        job_pod(owner, "worker", 2, "Succeeded"),
        job_pod(owner, "worker", 3, "Failed"),
    ]


# ------------------------------------------------------------------ Pending and Running rows


@pytest.mark.parametrize("phase", ["Pending", "Running"])
def test_row_restart_job_kills_every_pod_and_counts_a_retry(phase: str) -> None:
    """Row "Pending|Running / RestartJob: Kill(None); retryCount++ -> Restarting"."""
    owner = job("job1", task("worker", 4), phase=phase, max_retry=5)
    changes = act(owner, "RestartJob", four_pods(owner), pod_group(owner, "Running"))
    assert phase_of(changes) == "Restarting"
    assert changes.status is not None
    assert changes.status["retryCount"] == 1
    assert changes.status["version"] == 1
    assert changes.status["terminating"] == 4
    assert sorted(changes.delete_pods) == [f"job1-worker-{i}" for i in range(4)]
    assert changes.delete_pod_group
    assert all(
        changes.annotate_pods[p] == {"volcano.sh/controller-out-of-sync": "true"}
        for p in changes.delete_pods
    )


def test_row_restart_job_on_last_retry_keeps_finished_pods() -> None:
    """killJob: at retryCount >= maxRetry - 1 the retain policy becomes Soft."""
    owner = job("job1", task("worker", 4), phase="Running", max_retry=3, status={"retryCount": 2})
    changes = act(owner, "RestartJob", four_pods(owner), pod_group(owner, "Running"))
    assert sorted(changes.delete_pods) == ["job1-worker-0", "job1-worker-1"]
    assert changes.status is not None
    assert changes.status["retryCount"] == 3


@pytest.mark.parametrize("phase", ["Pending", "Running"])
@pytest.mark.parametrize(
    ("action", "request_fields", "killed"),
    [
        ("RestartTask", {"task_name": "ps"}, ["job1-ps-0"]),
        ("RestartPod", {"task_name": "worker", "pod_name": "job1-worker-1"}, ["job1-worker-1"]),
    ],
)
def test_row_targeted_restart_kills_only_the_target(
    phase: str, action: str, request_fields: dict[str, str], killed: list[str]
) -> None:
    """Row "Pending|Running / RestartTask|RestartPod|RestartPartition: kill target;
    retryCount++ -> Restarting" (the PodGroup is kept, the version is not bumped)."""
    owner = job("job1", task("ps", 1), task("worker", 2), phase=phase)
    pods = [
        job_pod(owner, "ps", 0),
        job_pod(owner, "worker", 0),
        job_pod(owner, "worker", 1),
    ]
    changes = act(owner, action, pods, pod_group(owner, "Running"), **request_fields)
    assert changes.delete_pods == killed
    assert phase_of(changes) == "Restarting"
    assert changes.status is not None
    assert changes.status["retryCount"] == 1
    assert "version" not in changes.status
    assert not changes.delete_pod_group


def test_row_restart_partition_kills_the_partition() -> None:
    """Row "RestartPartition": the pods labelled with the request's partition id."""
    owner = job(
        "job1",
        task("worker", 4, partition={"totalPartitions": 2, "partitionSize": 2}),
        phase="Running",
    )
    pods = [
        job_pod(owner, "worker", i, labels={"volcano.sh/partition-id": str(i // 2)})
        for i in range(4)
    ]
    changes = act(
        owner,
        "RestartPartition",
        pods,
        pod_group(owner, "Running"),
        task_name="worker",
        partition_id="1",
    )
    assert changes.delete_pods == ["job1-worker-2", "job1-worker-3"]
    assert phase_of(changes) == "Restarting"


def test_row_restart_partition_without_partition_policy_does_nothing() -> None:
    owner = job("job1", task("worker", 2), phase="Running")
    changes = act(
        owner,
        "RestartPartition",
        [job_pod(owner, "worker", 0)],
        pod_group(owner, "Running"),
        task_name="worker",
        partition_id="0",
    )
    assert changes.delete_pods == []
    assert changes.status is None


@pytest.mark.parametrize("phase", ["Pending", "Running"])
@pytest.mark.parametrize(
    ("action", "next_phase"),
    [("AbortJob", "Aborting"), ("CompleteJob", "Completing"), ("TerminateJob", "Terminating")],
)
def test_row_soft_kills(phase: str, action: str, next_phase: str) -> None:
    """Rows "AbortJob: Kill(Soft) -> Aborting", "CompleteJob -> Completing",
    "TerminateJob -> Terminating": running and pending pods go, finished pods stay."""
    owner = job("job1", task("worker", 4), phase=phase)
    changes = act(owner, action, four_pods(owner), pod_group(owner, "Running"))
    assert phase_of(changes) == next_phase
    assert sorted(changes.delete_pods) == ["job1-worker-0", "job1-worker-1"]
    assert changes.status is not None
    assert changes.status["terminating"] == 2
    assert "retryCount" not in changes.status
    assert changes.delete_pod_group


def test_row_pending_sync_goes_running_once_min_available_run() -> None:
    """Row "Pending / anything else: SyncJob; -> Running if minAvailable <= running +
    succeeded + failed"."""
    owner = job("job1", task("worker", 3), phase="Pending", min_available=2)
    pods = [job_pod(owner, "worker", 0, "Running"), job_pod(owner, "worker", 1, "Succeeded")]
    changes = sync(owner, pods, pod_group(owner, "Running"))
    assert phase_of(changes) == "Running"
    assert [p["metadata"]["name"] for p in changes.create_pods] == ["job1-worker-2"]


def test_row_pending_sync_stays_pending_below_min_available() -> None:
    owner = job("job1", task("worker", 3), phase="Pending")
    changes = sync(owner, [job_pod(owner, "worker", 0, "Running")], pod_group(owner, "Running"))
    assert phase_of(changes) == "Pending"


def _finished(owner: dict[str, Any], succeeded: int, failed: int) -> list[dict[str, Any]]:
    pods = []
    for index in range(succeeded + failed):
        pods.append(job_pod(owner, "worker", index, "Succeeded" if index < succeeded else "Failed"))
    return pods


def test_row_running_all_finished_enough_succeeded_completes() -> None:
    """Row "Running / other: succeeded + failed = total replicas ... succeeded >=
    minAvailable -> Completed"."""
    owner = job("job1", task("worker", 3), phase="Running", min_available=2)
    changes = sync(owner, _finished(owner, 2, 1), pod_group(owner, "Running"))
    assert phase_of(changes) == "Completed"


def test_row_running_all_finished_too_few_succeeded_fails() -> None:
    owner = job("job1", task("worker", 3), phase="Running", min_available=2)
    changes = sync(owner, _finished(owner, 1, 2), pod_group(owner, "Running"))
    assert phase_of(changes) == "Failed"


def test_row_running_task_min_available_not_met_fails() -> None:
    """ "when job.minAvailable >= sum of task minAvailable, any task with explicit minAvailable
    whose succeeded count < it -> Failed"."""
    owner = job(
        "job1",
        task("ps", 1, min_available=1),
        task("worker", 2, min_available=1),
        phase="Running",
        min_available=2,
    )
    pods = [
        job_pod(owner, "ps", 0, "Failed"),
        job_pod(owner, "worker", 0, "Succeeded"),
        job_pod(owner, "worker", 1, "Succeeded"),
    ]
    assert phase_of(sync(owner, pods, pod_group(owner, "Running"))) == "Failed"


def test_row_running_min_success_completes_early() -> None:
    """ "if minSuccess set and succeeded >= minSuccess -> Completed"."""
    owner = job("job1", task("worker", 4), phase="Running", min_available=4, minSuccess=2)
    pods = [
        job_pod(owner, "worker", 0, "Succeeded"),
        job_pod(owner, "worker", 1, "Succeeded"),
        job_pod(owner, "worker", 2, "Running"),
        job_pod(owner, "worker", 3, "Running"),
    ]
    assert phase_of(sync(owner, pods, pod_group(owner, "Running"))) == "Completed"


def test_row_running_min_success_missed_fails() -> None:
    owner = job("job1", task("worker", 3), phase="Running", min_available=1, minSuccess=2)
    assert phase_of(sync(owner, _finished(owner, 1, 2), pod_group(owner, "Running"))) == "Failed"


def test_row_running_back_to_pending_when_too_many_pods_wait() -> None:
    """ "else if pending > total - minAvailable -> Pending"."""
    owner = job("job1", task("worker", 3), phase="Running", min_available=2)
    pods = [
        job_pod(owner, "worker", 0, "Running"),
        job_pod(owner, "worker", 1, "Pending"),
        job_pod(owner, "worker", 2, "Pending"),
    ]
    assert phase_of(sync(owner, pods, pod_group(owner, "Running"))) == "Pending"


def test_row_running_scaled_to_zero_keeps_phase() -> None:
    """ "if total replicas = 0 keep"."""
    owner = job("job1", task("worker", 0), phase="Running", min_available=0)
    changes = sync(owner, [], pod_group(owner, "Running"))
    assert changes.status is None or phase_of(changes) == "Running"


# ------------------------------------------------------------------ Restarting rows


def test_row_restarting_sync_fails_past_max_retry() -> None:
    """Row "Restarting / SyncJob: restart check: retryCount >= maxRetry -> Failed"."""
    owner = job("job1", task("worker", 2), phase="Restarting", status={"retryCount": 3})
    assert phase_of(sync(owner)) == "Failed"


def test_row_restarting_sync_goes_pending_once_pods_are_gone() -> None:
    """ "else if total replicas - terminating >= status.minAvailable -> Pending"."""
    owner = job(
        "job1",
        task("worker", 2),
        phase="Restarting",
        status={"retryCount": 1, "minAvailable": 2},
    )
    changes = sync(owner)
    assert phase_of(changes) == "Pending"
    assert changes.pod_group is not None  # the deleted group is made again


def test_row_restarting_sync_waits_for_terminating_pods() -> None:
    owner = job(
        "job1",
        task("worker", 2),
        phase="Restarting",
        status={"retryCount": 1, "minAvailable": 2},
    )
    pods = [job_pod(owner, "worker", 0, deleting=True)]
    changes = sync(owner, pods, pod_group(owner, "Running"))
    assert changes.status is not None
    assert changes.status["state"]["phase"] == "Restarting"
    assert changes.status["terminating"] == 1


def test_row_restarting_targeted_restart_kills_target_with_restart_check() -> None:
    """Row "Restarting / Restart{Task,Pod,Partition}: kill target with restart check"."""
    owner = job(
        "job1",
        task("worker", 2),
        phase="Restarting",
        status={"retryCount": 1, "minAvailable": 1},
    )
    changes = act(
        owner,
        "RestartPod",
        [job_pod(owner, "worker", 0), job_pod(owner, "worker", 1)],
        pod_group(owner, "Running"),
        task_name="worker",
        pod_name="job1-worker-0",
    )
    assert changes.delete_pods == ["job1-worker-0"]
    assert phase_of(changes) == "Pending"
    assert changes.status is not None
    assert changes.status["retryCount"] == 1  # the restart check does not count a retry


def test_row_restarting_other_action_kills_everything() -> None:
    """Row "Restarting / other: Kill(None) with restart check"."""
    owner = job(
        "job1",
        task("worker", 2),
        phase="Restarting",
        status={"retryCount": 0, "minAvailable": 2},
    )
    pods = [job_pod(owner, "worker", 0, "Succeeded"), job_pod(owner, "worker", 1, "Running")]
    changes = act(owner, "AbortJob", pods, pod_group(owner, "Running"))
    assert sorted(changes.delete_pods) == ["job1-worker-0", "job1-worker-1"]
    assert phase_of(changes) == "Restarting"  # 2 - 2 terminating < minAvailable 2


# ------------------------------------------------------------------ draining rows


@pytest.mark.parametrize("phase", ["Aborting", "Aborted"])
def test_row_resume_restarts(phase: str) -> None:
    """Rows "Aborting|Aborted / ResumeJob: Kill(Soft); retryCount++ -> Restarting"."""
    owner = job("job1", task("worker", 2), phase=phase)
    changes = act(owner, "ResumeJob", [job_pod(owner, "worker", 0, "Succeeded")])
    assert phase_of(changes) == "Restarting"
    assert changes.status is not None
    assert changes.status["retryCount"] == 1
    assert changes.delete_pods == []


@pytest.mark.parametrize(
    ("phase", "drained"),
    [("Aborting", "Aborted"), ("Completing", "Completed"), ("Terminating", "Terminated")],
)
def test_row_draining_phase_ends_when_no_pod_is_alive(phase: str, drained: str) -> None:
    """Rows "Aborting / other -> Aborted when terminating = pending = running = 0",
    "Completing -> Completed", "Terminating -> Terminated"."""
    owner = job("job1", task("worker", 2), phase=phase)
    changes = sync(owner, [job_pod(owner, "worker", 0, "Succeeded")])
    assert phase_of(changes) == drained
    assert changes.delete_pods == []


@pytest.mark.parametrize("phase", ["Aborting", "Completing", "Terminating"])
def test_row_draining_phase_waits_for_live_pods(phase: str) -> None:
    owner = job("job1", task("worker", 2), phase=phase)
    changes = sync(owner, [job_pod(owner, "worker", 0, "Running")])
    assert phase_of(changes) == phase
    assert changes.delete_pods == ["job1-worker-0"]


@pytest.mark.parametrize("phase", ["Aborted", "Completed", "Terminated", "Failed"])
def test_row_finished_phases_only_clean_up(phase: str) -> None:
    """Rows "Aborted / other" and "Completed / Terminated / Failed / any: Kill(Soft), no phase
    change"."""
    owner = job("job1", task("worker", 3), phase=phase)
    pods = [
        job_pod(owner, "worker", 0, "Running"),
        job_pod(owner, "worker", 1, "Succeeded"),
        job_pod(owner, "worker", 2, "Failed"),
    ]
    changes = act(owner, "RestartJob", pods)
    assert changes.delete_pods == ["job1-worker-0"]
    assert phase_of(changes) == phase
    assert changes.status is not None
    assert changes.status["state"].get("lastTransitionTime") is None


def test_unknown_phase_behaves_as_pending() -> None:
    step = plan(job("job1"), "Bogus", "SyncJob")
    assert step.procedure is Procedure.SYNC


def test_transition_stamps_time_and_moves_condition_to_the_end() -> None:
    """appendJobCondition: a re-entered phase's condition moves to the end."""
    conditions = [
        {"status": "Pending", "lastTransitionTime": "t0"},
        {"status": "Running", "lastTransitionTime": "t1"},
    ]
    owner = job(
        "job1",
        task("worker", 2),
        phase="Running",
        min_available=2,
        status={"conditions": conditions},
    )
    pods = [job_pod(owner, "worker", 0, "Pending"), job_pod(owner, "worker", 1, "Pending")]
    changes = sync(owner, pods, pod_group(owner, "Running"))
    assert changes.status is not None
    assert changes.status["state"] == {"phase": "Pending", "lastTransitionTime": NOW}
    assert changes.status["conditions"] == [
        {"status": "Running", "lastTransitionTime": "t1"},
        {"status": "Pending", "lastTransitionTime": NOW},
    ]


def test_kill_records_running_duration() -> None:
    owner = job("job1", task("worker", 1), phase="Running")
    changes = act(owner, "AbortJob", [job_pod(owner, "worker", 0)])
    assert changes.status is not None
    assert changes.status["runningDuration"] == "1m0s"  # created 09:59, killed 10:00


# ------------------------------------------------------------------ job_state_test.go


def _state_case(
    phase: str, status: dict[str, Any], pods: list[tuple[str, str]], **spec: Any
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    tasks = spec.pop("tasks", None) or [task("task1", max(len(pods), 1))]
    owner = job("job1", *tasks, phase=phase, status=status, **spec)
    return owner, [job_pod(owner, t, i, ph) for i, (t, ph) in enumerate(pods)]


def test_upstream_aborted_state_resume_action_case() -> None:
    """TestAbortedState_Execute "AbortedState-ResumeAction case"."""
    owner, pods = _state_case("Aborted", {}, [])
    assert phase_of(act(owner, "ResumeJob", pods)) == "Restarting"


def test_upstream_aborted_state_any_other_action_case() -> None:
    """TestAbortedState_Execute "AbortedState-AnyOtherAction case"."""
    owner, pods = _state_case("Aborted", {}, [])
    changes = act(owner, "RestartJob", pods)
    assert changes.status is not None
    assert changes.status["state"]["phase"] == "Aborted"


def test_upstream_aborting_state_resume_action_case() -> None:
    """TestAbortingState_Execute "AbortedState-ResumeAction case": retry count is counted."""
    owner, pods = _state_case("Aborting", {}, [])
    changes = act(owner, "ResumeJob", pods)
    assert changes.status is not None
    assert changes.status["retryCount"] == 1


@pytest.mark.parametrize(
    ("name", "pods", "expected"),
    [
        ("AbortedState-AnyOtherAction case with pods count equal to 0", [], "Aborted"),
        (
            "AbortedState-AnyOtherAction case with Pods count not equal to 0",
            [("task1", "Pending")],
            "Aborting",
        ),
    ],
)
def test_upstream_aborting_state_any_other_action(
    name: str, pods: list[tuple[str, str]], expected: str
) -> None:
    """TestAbortingState_Execute."""
    owner, pod_objects = _state_case("Aborting", {"pending": len(pods)}, pods)
    assert phase_of(act(owner, "RestartJob", pod_objects)) == expected, name


@pytest.mark.parametrize(
    ("name", "pods", "expected"),
    [
        (
            "CompletingState- With pod count not equal to zero",
            [("task1", "Running"), ("task1", "Running")],
            "Completing",
        ),
        ("CompletingState- With pod count equal to zero", [], "Completed"),
    ],
)
def test_upstream_completing_state(name: str, pods: list[tuple[str, str]], expected: str) -> None:
    """TestCompletingState_Execute."""
    owner, pod_objects = _state_case("Completing", {"running": len(pods)}, pods)
    assert phase_of(act(owner, "ResumeJob", pod_objects)) == expected, name


def test_upstream_finished_state_test_case() -> None:
    """TestFinishedState_Execute "FinishedState Test Case": no error, phase kept."""
    owner, pods = _state_case("Completed", {}, [])
    changes = act(owner, "ResumeJob", pods)
    assert changes.status is not None
    assert changes.status["state"]["phase"] == "Completed"


@pytest.mark.parametrize(
    ("name", "action", "terminating", "expected"),
    [
        (
            "PendingState- RestartJobAction case With terminating pod count equal to zero",
            "RestartJob",
            0,
            "Restarting",
        ),
        (
            "PendingState- RestartJobAction case With terminating pod count not equal to zero",
            "RestartJob",
            2,
            "Restarting",
        ),
        (
            "PendingState- AbortJobAction case With terminating pod count equal to zero",
            "AbortJob",
            0,
            "Aborting",
        ),
        (
            "PendingState- AbortJobAction case With terminating pod count not equal to zero",
            "AbortJob",
            2,
            "Aborting",
        ),
        (
            "PendingState- TerminateJobAction case With terminating pod count not equal to zero",
            "TerminateJob",
            2,
            "Terminating",
        ),
        (
            "PendingState- CompleteJobAction case With terminating pod count equal to zero",
            "CompleteJob",
            0,
            "Completing",
        ),
        (
            "PendingState- CompleteJobAction case With terminating pod count not equal to zero",
            "CompleteJob",
            2,
            "Completing",
        ),
    ],
)
def test_upstream_pending_state_kills(
    name: str, action: str, terminating: int, expected: str
) -> None:
    """TestPendingState_Execute: the kill actions always jump to their phase first."""
    pods = [("task1", "Running")] * terminating
    owner, pod_objects = _state_case("Pending", {"terminating": terminating}, pods)
    assert phase_of(act(owner, action, pod_objects)) == expected, name


@pytest.mark.parametrize(
    ("name", "action", "running", "expected"),
    [
        (
            "PendingState- EnqueueAction case With Min Available equal to running pods",
            "EnqueueJob",
            3,
            "Running",
        ),
        (
            "PendingState- EnqueueAction case With Min Available not equal to running pods",
            "EnqueueJob",
            2,
            "Pending",
        ),
        (
            "PendingState- Default case With Min Available equal to running pods",
            "SyncJob",
            2,
            "Pending",
        ),
    ],
)
def test_upstream_pending_state_sync(name: str, action: str, running: int, expected: str) -> None:
    """TestPendingState_Execute: without a PodGroup the status function sees the recorded
    counts."""
    owner, pod_objects = _state_case(
        "Pending", {"running": running}, [("task1", "Running")] * running, min_available=3
    )
    changes = act(owner, action, pod_objects)
    phase = phase_of(changes) if changes.status else "Pending"
    assert phase == expected, name


@pytest.mark.parametrize(
    ("name", "retry_count", "expected"),
    [
        ("RestartingState- RetryCount is equal to or greater than MaxRetry", 3, "Failed"),
        ("RestartingState- RetryCount is less than MaxRetry", 1, "Pending"),
    ],
)
def test_upstream_restarting_state(name: str, retry_count: int, expected: str) -> None:
    """TestRestartingState_Execute."""
    owner, pods = _state_case(
        "Restarting",
        {"retryCount": retry_count, "minAvailable": 1},
        [],
        tasks=[task("task1", 1), task("task2", 1)],
        min_available=1,
    )
    assert phase_of(act(owner, "RestartJob", pods)) == expected, name


@pytest.mark.parametrize(
    ("name", "action", "expected"),
    [
        ("RunningState- RestartJobAction case and Terminating Pods not equal to 0", "RestartJob",
         "Restarting"),
        ("RunningState- AbortAction case and Terminating Pods equal to 0", "AbortJob",
         "Aborting"),
        ("RunningState- TerminateJobAction case and Terminating Pods not equal to 0",
         "TerminateJob", "Terminating"),
        ("RunningState- CompleteJobAction case and Terminating Pods equal to 0", "CompleteJob",
         "Completing"),
    ],
)  # fmt: skip
def test_upstream_running_state_kills(name: str, action: str, expected: str) -> None:
    """TestRunningState_Execute: the kill actions."""
    owner, pods = _state_case("Running", {}, [("task1", "Running"), ("task1", "Running")])
    assert phase_of(act(owner, action, pods)) == expected, name


@pytest.mark.parametrize(
    ("name", "min_available", "replicas", "pods", "expected"),
    [
        (
            "RunningState- Default case and Total is equal to failed+succeeded",
            0,
            2,
            ["Succeeded", "Succeeded"],
            "Completed",
        ),
        (
            "RunningState- Default case and Total is not equal to failed+succeeded",
            0,
            2,
            ["Succeeded"],
            "Running",
        ),
        (
            "RunningState- Default case and running back to pending When pending equal to total",
            3,
            5,
            ["Pending"] * 5,
            "Pending",
        ),
        (
            "RunningState- Default case and running back to pending When pods status "
            "pending>(total-minAvailable)",
            3,
            5,
            ["Running", "Running", "Pending", "Pending", "Pending"],
            "Pending",
        ),
        (
            "RunningState- Default case and keep running When pods status "
            "pending<=(total-minAvailable)",
            3,
            5,
            ["Running", "Succeeded", "Failed", "Pending", "Pending"],
            "Running",
        ),
    ],
)
def test_upstream_running_state_sync(
    name: str, min_available: int, replicas: int, pods: list[str], expected: str
) -> None:
    """TestRunningState_Execute: the default (sync) cases, with the pods counted (the group
    admitted) so the created missing pods count as pending."""
    owner = job("job1", task("task1", replicas), phase="Running", min_available=min_available)
    pod_objects = [job_pod(owner, "task1", i, p) for i, p in enumerate(pods)]
    changes = sync(owner, pod_objects, pod_group(owner, "Running"))
    phase = phase_of(changes) if changes.status else "Running"
    if name.endswith("Total is not equal to failed+succeeded"):
        # The missing replica is created and counted as pending: 1 > 2 - 0 is false.
        assert [p["metadata"]["name"] for p in changes.create_pods] == ["job1-task1-1"]
    assert phase == expected, name


@pytest.mark.parametrize(
    ("name", "pods", "expected"),
    [
        (
            "TerminatingState- With pod count not equal to zero",
            [("task1", "Running"), ("task1", "Running")],
            "Terminating",
        ),
        ("TerminatingState- With pod count equal to zero", [], "Terminated"),
    ],
)
def test_upstream_terminating_state(name: str, pods: list[tuple[str, str]], expected: str) -> None:
    """TestTerminatingState_Execute."""
    owner, pod_objects = _state_case("Terminating", {"running": len(pods)}, pods)
    assert phase_of(act(owner, "TerminateJob", pod_objects)) == expected, name
