"""Choosing the action: lifecycle policies (upstream ``TestApplyPolicies`` in
``job_controller_util_test.go``) and what the chosen action then does."""

from __future__ import annotations

from typing import Any

import pytest
from controller_fixtures import NOW, job, job_pod, pod_group, task

from volcano_py.controllers.job import (
    DelayedAction,
    JobRequest,
    apply_policies,
    delayed_action_cancelled,
    delayed_action_superseded,
    job_request_for_pod_change,
    sync_job,
)


def _job(policies: list[dict[str, Any]] | None = None, **kwargs: Any) -> dict[str, Any]:
    return job("job1", task("task1", 6, policies=policies), **kwargs)


# ------------------------------------------------------------------ TestApplyPolicies


def test_upstream_action_is_not_empty() -> None:
    """ "Test Apply policies where Action is not empty"."""
    decision = apply_policies(_job(), JobRequest(event="", action="EnqueueJob"))
    assert decision.action == "EnqueueJob"


@pytest.mark.parametrize("event", ["OutOfSync", "PodRunning", "CommandIssued"])
def test_upstream_internal_events_sync(event: str) -> None:
    """ "... where event is OutOfSync" / "... where event is PodRunning"."""
    owner = _job(policies=[{"event": "*", "action": "AbortJob"}])
    assert apply_policies(owner, JobRequest(event=event, task_name="task1")).action == "SyncJob"


def test_upstream_job_uid_inconsistent() -> None:
    """ "... where job uid is inconsistent, ignore the existing policy action in the job and
    execute syncjob"."""
    owner = job(
        "job1",
        task("task1", 6, policies=[{"event": "PodEvicted", "action": "TerminateJob"}]),
        uid="job1-uid-10001",
    )
    request = JobRequest(event="PodEvicted", task_name="task1", job_uid="job1-uid-10000")
    assert apply_policies(owner, request).action == "SyncJob"


def test_upstream_version_is_outdated() -> None:
    """ "... where version is outdated": events of pods from before the last kill sync."""
    owner = _job(policies=[{"event": "PodEvicted", "action": "RestartJob"}], status={"version": 2})
    request = JobRequest(event="PodEvicted", task_name="task1", job_version=1)
    assert apply_policies(owner, request).action == "SyncJob"


def test_upstream_overriding_job_level_policies_with_exitcode() -> None:
    """ "... where overriding job level policies and with exitcode": a request without an
    exit code matches no exit-code policy."""
    owner = job(
        "job1",
        task("task1", 6, policies=[{"exitCode": 3, "action": "AbortJob"}]),
        policies=[{"event": "PodFailed", "action": "RestartJob"}],
    )
    assert apply_policies(owner, JobRequest(event="", task_name="task1")).action == "SyncJob"


def test_upstream_overriding_job_level_policies_without_exitcode() -> None:
    """ "... where overriding job level policies and without exitcode": the task's policy wins
    over the job's."""
    owner = job(
        "job1",
        task("task1", 6, policies=[{"event": "PodFailed", "action": "RestartTask"}]),
        policies=[{"event": "PodFailed", "action": "AbortJob"}],
    )
    request = JobRequest(event="PodFailed", task_name="task1")
    assert apply_policies(owner, request).action == "RestartTask"


def test_upstream_job_level_policies() -> None:
    """ "Test Apply policies with job level policies"."""
    owner = job("job1", task("task1", 6), policies=[{"event": "PodFailed", "action": "AbortJob"}])
    assert apply_policies(owner, JobRequest(event="PodFailed")).action == "AbortJob"


def test_upstream_pod_pending_with_timeout() -> None:
    """ "... the event is PodPending with timeout": the action is delayed by the timeout."""
    owner = job(
        "job1",
        task("task1", 6),
        policies=[{"event": "PodPending", "action": "RestartPod", "timeout": "10s"}],
    )
    decision = apply_policies(owner, JobRequest(event="PodPending"))
    assert decision.action == "RestartPod"
    assert decision.delay_seconds == 10


def test_upstream_pod_pending_without_timeout() -> None:
    """ "... the event is PodPending without timeout": PodPending needs a timeout to match."""
    owner = job(
        "job1", task("task1", 6), policies=[{"event": "PodPending", "action": "RestartPod"}]
    )
    assert apply_policies(owner, JobRequest(event="PodPending")).action == "SyncJob"


def test_upstream_job_level_policies_with_exitcode() -> None:
    """ "... with job level policies with exitcode"."""
    owner = job("job1", task("task1", 6), policies=[{"exitCode": 5, "action": "AbortJob"}])
    assert apply_policies(owner, JobRequest(event="PodFailed", exit_code=5)).action == "AbortJob"
    assert apply_policies(owner, JobRequest(event="PodFailed", exit_code=6)).action == "SyncJob"


# ------------------------------------------------------------------ policies end to end


def test_pod_evicted_restarts_the_job() -> None:
    """PodEvicted -> RestartJob: a deleted pod of the job restarts the whole job."""
    owner = job(
        "job1",
        task("worker", 2),
        phase="Running",
        policies=[{"event": "PodEvicted", "action": "RestartJob"}],
    )
    pods = [job_pod(owner, "worker", 0), job_pod(owner, "worker", 1)]
    request = job_request_for_pod_change(owner, pods[0], None)
    assert request is not None
    assert request.event == "PodEvicted"
    changes = sync_job(owner, pod_group(owner, "Running"), pods[1:], request, now=NOW)
    assert changes.status is not None
    assert changes.status["state"]["phase"] == "Restarting"
    assert changes.delete_pods == ["job1-worker-1"]
    assert ("Normal", "ExecuteAction", "Start to execute action RestartJob ") in changes.events


def test_pod_failed_with_exit_code_matches_exit_code_policy() -> None:
    owner = job(
        "job1",
        task("worker", 2, policies=[{"exitCode": 137, "action": "RestartTask"}]),
        phase="Running",
    )
    old = job_pod(owner, "worker", 0, "Running", resource_version="1")
    new = job_pod(owner, "worker", 0, "Failed", exit_code=137, resource_version="2")
    request = job_request_for_pod_change(owner, old, new)
    assert request is not None
    assert (request.event, request.exit_code) == ("PodFailed", 137)
    changes = sync_job(owner, pod_group(owner, "Running"), [new], request, now=NOW)
    assert changes.delete_pods == ["job1-worker-0"]
    assert changes.status is not None
    assert changes.status["state"]["phase"] == "Restarting"


def test_any_event_policy_matches_every_external_event() -> None:
    owner = job("job1", task("worker", 2), policies=[{"event": "*", "action": "TerminateJob"}])
    for event in ("PodFailed", "PodEvicted", "TaskCompleted", "Unknown"):
        assert apply_policies(owner, JobRequest(event=event)).action == "TerminateJob"
    # A PodPending event still needs a timeout, even under "*".
    assert apply_policies(owner, JobRequest(event="PodPending")).action == "SyncJob"


def test_events_list_and_event_are_both_read() -> None:
    owner = job(
        "job1",
        task("worker", 2),
        policies=[{"events": ["PodFailed", "TaskFailed"], "action": "AbortJob"}],
    )
    assert apply_policies(owner, JobRequest(event="TaskFailed")).action == "AbortJob"


def test_first_matching_policy_wins() -> None:
    owner = job(
        "job1",
        task("worker", 2),
        policies=[
            {"event": "PodFailed", "action": "RestartJob"},
            {"event": "PodFailed", "action": "AbortJob"},
        ],
    )
    assert apply_policies(owner, JobRequest(event="PodFailed")).action == "RestartJob"


# ------------------------------------------------------------------ delayed actions


def test_timeout_policy_delays_the_action() -> None:
    owner = job(
        "job1",
        task("worker", 2),
        phase="Running",
        policies=[{"event": "PodPending", "action": "RestartPod", "timeout": "1m30s"}],
    )
    request = JobRequest(
        event="PodPending", task_name="worker", pod_name="job1-worker-0", pod_uid="p0"
    )
    changes = sync_job(owner, pod_group(owner, "Running"), [], request, now=NOW)
    assert changes.delayed_action is not None
    assert changes.delayed_action.action == "RestartPod"
    assert changes.delayed_action.delay_seconds == 90
    assert changes.events == [("Normal", "ExecuteAction", "Execute action RestartPod after 1m30s")]
    assert not changes.writes_anything

    # When the timer fires, the delayed request carries its action.
    pods = [job_pod(owner, "worker", 0, "Pending"), job_pod(owner, "worker", 1)]
    fired = sync_job(
        owner, pod_group(owner, "Running"), pods, changes.delayed_action.request, now=NOW
    )
    assert fired.delete_pods == ["job1-worker-0"]


def test_delayed_pending_action_cancelled_when_the_pod_leaves_pending() -> None:
    delayed = DelayedAction(
        "RestartPod",
        10,
        JobRequest(event="PodPending", action="RestartPod", pod_name="p", pod_uid="u1"),
    )
    assert delayed_action_cancelled(
        delayed, JobRequest(event="PodRunning", pod_name="p", pod_uid="u1")
    )
    # A new pod of the same name (recreated) does not cancel the old pod's timer.
    assert not delayed_action_cancelled(
        delayed, JobRequest(event="PodRunning", pod_name="p", pod_uid="u2")
    )
    assert not delayed_action_cancelled(delayed, JobRequest(event="PodPending", pod_name="p"))


def test_delayed_failure_action_cancelled_when_the_pod_runs_again() -> None:
    delayed = DelayedAction(
        "RestartJob", 10, JobRequest(event="PodFailed", action="RestartJob", pod_name="p")
    )
    assert delayed_action_cancelled(delayed, JobRequest(event="PodRunning", pod_name="p"))
    assert not delayed_action_cancelled(delayed, JobRequest(event="PodEvicted", pod_name="p"))


def test_executed_action_supersedes_delayed_actions_of_the_same_scope() -> None:
    job_level = DelayedAction("AbortJob", 5, JobRequest(event="PodFailed", pod_name="a"))
    pod_level = DelayedAction("RestartPod", 5, JobRequest(event="PodPending", pod_name="b"))
    executed = JobRequest(event="PodFailed", pod_name="c")
    assert delayed_action_superseded(job_level, "RestartJob", executed)
    assert not delayed_action_superseded(pod_level, "RestartJob", executed)
    assert delayed_action_superseded(pod_level, "RestartPod", JobRequest(event="", pod_name="b"))
    assert not delayed_action_superseded(job_level, "SyncJob", executed)
