"""The requests watch events produce for the job controller (spec §5.1 "Event sources";
upstream ``job_controller_handler_test.go``: ``TestAddPodFunc``, ``TestUpdatePodFunc``,
``TestDeletePodFunc``, ``TestUpdatePodGroupFunc``, ``TestAddCommandFunc``,
``TestUpdateJobFunc``, whose checks there are on the controller cache; here on the request)."""

from __future__ import annotations

from typing import Any

import pytest
from controller_fixtures import job, job_pod, pod_group, task

from volcano_py.controllers.job import (
    JobRequest,
    job_request_for_command,
    job_request_for_job_change,
    job_request_for_pod_change,
    job_request_for_pod_group_change,
)

OWNER = job("job1", task("worker", 2, max_retry=3), phase="Running")


def _pod(phase: str, rv: str, **kwargs: Any) -> dict[str, Any]:
    return job_pod(OWNER, "worker", 0, phase, resource_version=rv, **kwargs)


# ------------------------------------------------------------------ add


def test_upstream_add_pod_success_case() -> None:
    """TestAddPodFunc "AddPod Success case": a new pod of the job is PodPending."""
    request = job_request_for_pod_change(OWNER, None, _pod("Pending", "1"))
    assert request == JobRequest(
        event="PodPending",
        task_name="worker",
        pod_name="job1-worker-0",
        job_version=0,
        job_uid="uid-1",
        pod_uid="pod-job1-worker-0",
    )


def test_upstream_add_pod_success_when_pod_is_terminating() -> None:
    """TestAddPodFunc "AddPod Success when pod is terminating": still a request."""
    request = job_request_for_pod_change(OWNER, None, _pod("Running", "1", deleting=True))
    assert request is not None
    assert request.event == "PodPending"


def test_add_out_of_sync_pod_is_out_of_sync() -> None:
    request = job_request_for_pod_change(OWNER, None, _pod("Pending", "1", out_of_sync=True))
    assert request is not None
    assert request.event == "OutOfSync"


def test_pods_not_controlled_by_a_volcano_job_are_ignored() -> None:
    pod = _pod("Pending", "1")
    pod["metadata"]["ownerReferences"][0]["apiVersion"] = "batch/v1"
    assert job_request_for_pod_change(OWNER, None, pod) is None
    pod = _pod("Pending", "1")
    del pod["metadata"]["annotations"]["volcano.sh/job-version"]
    assert job_request_for_pod_change(OWNER, None, pod) is None
    pod = _pod("Pending", "1")
    pod["metadata"]["annotations"]["volcano.sh/job-version"] = "x"
    assert job_request_for_pod_change(OWNER, None, pod) is None


# ------------------------------------------------------------------ update


def test_upstream_update_pod_success_case() -> None:
    """TestUpdatePodFunc "UpdatePod Success case": Pending -> Running is PodRunning."""
    request = job_request_for_pod_change(OWNER, _pod("Pending", "1"), _pod("Running", "2"))
    assert request is not None
    assert request.event == "PodRunning"


def test_upstream_update_pod_failed_case() -> None:
    """TestUpdatePodFunc "UpdatePod Failed case": -> Failed is PodFailed with the first
    container's exit code."""
    request = job_request_for_pod_change(
        OWNER, _pod("Running", "1"), _pod("Failed", "2", exit_code=3)
    )
    assert request is not None
    assert (request.event, request.exit_code) == ("PodFailed", 3)


def test_upstream_update_pod_keeps_terminating_pod() -> None:
    """TestUpdatePodFunc "UpdatePod keeps terminating pod in cache"."""
    request = job_request_for_pod_change(
        OWNER, _pod("Running", "1"), _pod("Running", "2", deleting=True)
    )
    assert request is not None
    assert request.event == "OutOfSync"


def test_update_with_same_resource_version_is_dropped() -> None:
    assert job_request_for_pod_change(OWNER, _pod("Pending", "7"), _pod("Running", "7")) is None


def test_update_without_phase_change_is_out_of_sync() -> None:
    request = job_request_for_pod_change(OWNER, _pod("Running", "1"), _pod("Running", "2"))
    assert request is not None
    assert request.event == "OutOfSync"


def test_back_to_pending_is_pod_pending() -> None:
    request = job_request_for_pod_change(OWNER, _pod("Running", "1"), _pod("Pending", "2"))
    assert request is not None
    assert request.event == "PodPending"


def test_task_completed_when_every_replica_succeeded() -> None:
    others = [job_pod(OWNER, "worker", 1, "Succeeded")]
    old, new = _pod("Running", "1"), _pod("Succeeded", "2")
    request = job_request_for_pod_change(OWNER, old, new, pods=others)
    assert request is not None
    assert request.event == "TaskCompleted"
    # One replica still running: not yet.
    others = [job_pod(OWNER, "worker", 1, "Running")]
    request = job_request_for_pod_change(OWNER, old, new, pods=others)
    assert request is not None
    assert request.event == "OutOfSync"


def test_task_failed_when_restarts_reach_max_retry() -> None:
    old = _pod("Running", "1", restarts=1)
    new = _pod("Running", "2", restarts=2)
    others = [job_pod(OWNER, "worker", 1, "Running", restarts=1)]
    request = job_request_for_pod_change(OWNER, old, new, pods=others)
    assert request is not None
    assert request.event == "TaskFailed"
    # A phase transition outranks it.
    request = job_request_for_pod_change(OWNER, _pod("Pending", "1"), new, pods=others)
    assert request is not None
    assert request.event == "PodRunning"


def test_task_failed_never_with_unlimited_retry() -> None:
    owner = job("job1", task("worker", 1, max_retry=-1))
    old = job_pod(owner, "worker", 0, resource_version="1")
    new = job_pod(owner, "worker", 0, restarts=100, resource_version="2")
    request = job_request_for_pod_change(owner, old, new)
    assert request is not None
    assert request.event == "OutOfSync"


# ------------------------------------------------------------------ delete


def test_upstream_delete_pod_success_case() -> None:
    """TestDeletePodFunc "DeletePod success case": a deleted pod is PodEvicted."""
    request = job_request_for_pod_change(OWNER, _pod("Running", "1"), None)
    assert request is not None
    assert request.event == "PodEvicted"


def test_delete_of_pod_the_controller_killed_is_out_of_sync() -> None:
    request = job_request_for_pod_change(OWNER, _pod("Running", "1", out_of_sync=True), None)
    assert request is not None
    assert request.event == "OutOfSync"


def test_partition_id_is_carried() -> None:
    pod = _pod("Running", "1")
    pod["metadata"]["labels"]["volcano.sh/partition-id"] = "2"
    request = job_request_for_pod_change(OWNER, pod, None)
    assert request is not None
    assert request.partition_id == "2"


# ------------------------------------------------------------------ podgroup, command, job


@pytest.mark.parametrize(
    ("old_phase", "new_phase", "event"),
    [("Pending", "Inqueue", ""), ("Running", "Unknown", "Unknown"), ("Running", "Running", None)],
)
def test_upstream_update_pod_group(old_phase: str, new_phase: str, event: str | None) -> None:
    """TestUpdatePodGroupFunc: a phase change enqueues the job; Unknown carries its event."""
    request = job_request_for_pod_group_change(
        pod_group(OWNER, old_phase), pod_group(OWNER, new_phase)
    )
    if event is None:
        assert request is None
    else:
        assert request == JobRequest(event=event)


def test_upstream_add_command_success_case() -> None:
    """TestAddCommandFunc "AddCommand Success Case": a command targeting a Job."""
    command = {
        "apiVersion": "bus.volcano.sh/v1alpha1",
        "kind": "Command",
        "metadata": {"name": "c1", "namespace": "default"},
        "action": "AbortJob",
        "target": {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": "job1"},
    }
    assert job_request_for_command(command) == JobRequest(event="CommandIssued", action="AbortJob")


def test_command_for_a_queue_is_not_the_job_controllers() -> None:
    command = {
        "action": "CloseQueue",
        "target": {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "Queue", "name": "q"},
    }
    assert job_request_for_command(command) is None


def test_upstream_add_job() -> None:
    """TestJobAddFunc "AddJob Success": OutOfSync."""
    assert job_request_for_job_change(None, OWNER) == JobRequest(event="OutOfSync")


def test_upstream_update_job() -> None:
    """TestUpdateJobFunc: a spec or phase change syncs; a status-only change does not."""
    old = job("job1", task("worker", 2), phase="Running")
    old["metadata"]["resourceVersion"] = "1"
    new = job("job1", task("worker", 3), phase="Running")
    new["metadata"]["resourceVersion"] = "2"
    assert job_request_for_job_change(old, new) == JobRequest(event="OutOfSync")
    same_spec = job("job1", task("worker", 2), phase="Running", status={"running": 2})
    same_spec["metadata"]["resourceVersion"] = "3"
    assert job_request_for_job_change(old, same_spec) is None
    unchanged = dict(old)
    assert job_request_for_job_change(old, unchanged) is None
