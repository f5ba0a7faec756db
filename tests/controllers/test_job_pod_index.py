"""JobPodIndex: a job's pods filed by task as pod events come, in step with a scan of the
same pods, and the controller's answers the same from the index as from a list of pods."""

from __future__ import annotations

import copy
from typing import Any

from controller_fixtures import NOW, job, job_pod, task
from hypothesis import given, settings
from hypothesis import strategies as st

from volcano_py.controllers.job import (
    JobChanges,
    JobPodIndex,
    JobRequest,
    _pods_by_task,
    job_request_for_pod_change,
    only_events,
    sync_depends_only_on_state,
    sync_job,
)
from volcano_py.controllers.job_pod_index import TaskTally

OWNER = job("job1", task("worker", 3, max_retry=3), task("ps", 1))


def _key(pod: dict[str, Any]) -> str:
    return f"{pod['metadata']['namespace']}/{pod['metadata']['name']}"


def _index(*pods: dict[str, Any]) -> JobPodIndex:
    index = JobPodIndex()
    for pod in pods:
        index.update(_key(pod), pod)
    return index


def _scan_by_task(pods: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {task: dict(named) for task, named in _pods_by_task(OWNER, pods).items()}


def test_add_update_delete_keep_tasks_and_tallies() -> None:
    first = job_pod(OWNER, "worker", 0, "Running", restarts=1)
    second = job_pod(OWNER, "worker", 1, "Succeeded")
    ps = job_pod(OWNER, "ps", 0, "Pending", restarts=2)
    index = _index(first, second, ps)
    pods = index.of_job("default/job1")
    assert set(pods.by_task) == {"worker", "ps"}
    assert pods.tally("worker") == TaskTally(succeeded=1, live_restarts=1)
    assert pods.tally("ps") == TaskTally(succeeded=0, live_restarts=2)

    # An update replaces the pod's share: the running one succeeded.
    done = job_pod(OWNER, "worker", 0, "Succeeded", restarts=1)
    index.update(_key(done), done)
    assert pods.tally("worker") == TaskTally(succeeded=2, live_restarts=0)
    assert pods.by_task["worker"]["job1-worker-0"] is done

    index.update(_key(second), None)
    assert pods.tally("worker") == TaskTally(succeeded=1, live_restarts=0)
    assert set(pods.by_task["worker"]) == {"job1-worker-0"}
    assert [p["metadata"]["name"] for p in pods.pods()] == ["job1-ps-0", "job1-worker-0"]

    index.update(_key(done), None)
    index.update(_key(ps), None)
    assert index.job_keys() == []
    assert index.of_job("default/job1").pods() == []


def test_pod_that_changes_job_moves_between_jobs() -> None:
    other = job("job2", task("worker", 1), uid="uid-2")
    pod = job_pod(OWNER, "worker", 0)
    index = _index(pod)
    moved = copy.deepcopy(pod)
    for where in ("labels", "annotations"):
        moved["metadata"][where]["volcano.sh/job-name"] = "job2"
    moved["metadata"]["ownerReferences"] = job_pod(other, "worker", 0)["metadata"][
        "ownerReferences"
    ]
    index.update(_key(moved), moved)
    assert index.job_keys() == ["default/job2"]
    assert index.of_job("default/job2").tally("worker").live_restarts == 0


def test_pods_without_version_or_task_are_not_the_controllers() -> None:
    pod = job_pod(OWNER, "worker", 0)
    unversioned = job_pod(OWNER, "worker", 1)
    del unversioned["metadata"]["annotations"]["volcano.sh/job-version"]
    no_task = job_pod(OWNER, "worker", 2)
    del no_task["metadata"]["annotations"]["volcano.sh/task-spec"]
    index = _index(pod, unversioned, no_task)
    pods = index.of_job("default/job1")
    assert len(pods.pods()) == 3
    view = {task: dict(named) for task, named in pods.versioned_by_task().items()}
    assert view == _scan_by_task([pod, unversioned, no_task])
    index.update(_key(unversioned), None)
    assert pods.versioned_by_task() is pods.by_task


_PHASES = ("Pending", "Running", "Succeeded", "Failed")


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["worker", "ps"]),
            st.integers(0, 3),
            st.sampled_from((*_PHASES, "gone")),
            st.integers(0, 3),
        ),
        max_size=30,
    )
)
def test_index_agrees_with_a_scan_after_any_events(
    events: list[tuple[str, int, str, int]],
) -> None:
    """After any sequence of adds, updates and deletes, the index files exactly what a scan
    of the surviving pods files, and its tallies are those of the scan."""
    index = JobPodIndex()
    alive: dict[str, dict[str, Any]] = {}
    for task_name, replica, phase, restarts in events:
        pod = job_pod(OWNER, task_name, replica, "Running", restarts=restarts)
        key = _key(pod)
        if phase == "gone":
            alive.pop(key, None)
            index.update(key, None)
            continue
        pod["status"]["phase"] = phase
        alive[key] = pod
        index.update(key, pod)
    pods = index.of_job("default/job1")
    survivors = list(alive.values())
    view = {task: dict(named) for task, named in pods.versioned_by_task().items()}
    assert view == _scan_by_task(survivors)
    for task_name in ("worker", "ps"):
        of_task = [
            p
            for p in survivors
            if p["metadata"]["annotations"]["volcano.sh/task-spec"] == task_name
        ]
        assert pods.tally(task_name) == TaskTally.of_pods(of_task)


def test_sync_job_from_the_index_equals_sync_job_from_a_list() -> None:
    pods = [
        job_pod(OWNER, "worker", 0, "Running"),
        job_pod(OWNER, "worker", 1, "Succeeded"),
        job_pod(OWNER, "worker", 5, "Running"),  # past the replicas: scaled down
        job_pod(OWNER, "ps", 0, "Pending", out_of_sync=True),
    ]
    pod_group = {
        "metadata": {"name": "job1-uid-1", "namespace": "default"},
        "status": {"phase": "Running"},
    }
    running = job("job1", task("worker", 3, max_retry=3), task("ps", 1), phase="Running")
    for request in (
        JobRequest(event="OutOfSync"),
        JobRequest(event="PodEvicted", task_name="worker"),
    ):
        from_list = sync_job(running, pod_group, pods, request, now=NOW)
        from_index = sync_job(
            running, pod_group, _index(*pods).of_job("default/job1"), request, now=NOW
        )
        assert from_index == from_list


def test_pod_change_requests_from_the_index_equal_those_from_a_list() -> None:
    """TaskCompleted and TaskFailed (upstream ``jobCache.TaskCompleted/TaskFailed``) read the
    index's tallies; the answers are those of the scan."""
    cases = [
        # every worker succeeded -> TaskCompleted
        (
            [("worker", 1, "Succeeded", 0), ("worker", 2, "Succeeded", 0)],
            ("Running", 0),
            ("Succeeded", 0),
        ),
        # restarts reach maxRetry 3 over the live pods -> TaskFailed
        (
            [("worker", 1, "Running", 1), ("worker", 2, "Pending", 1)],
            ("Running", 0),
            ("Running", 1),
        ),
        # restarts of a finished pod do not count
        ([("worker", 1, "Failed", 5)], ("Running", 0), ("Running", 1)),
    ]
    for others, (old_phase, old_restarts), (new_phase, new_restarts) in cases:
        other_pods = [job_pod(OWNER, t, i, p, restarts=r) for t, i, p, r in others]
        old = job_pod(OWNER, "worker", 0, old_phase, restarts=old_restarts, resource_version="1")
        new = job_pod(OWNER, "worker", 0, new_phase, restarts=new_restarts, resource_version="2")
        from_list = job_request_for_pod_change(OWNER, old, new, pods=other_pods)
        index = _index(*other_pods, new)
        from_index = job_request_for_pod_change(
            OWNER, old, copy.deepcopy(new), pods=index.of_job("default/job1")
        )
        assert from_index == from_list
        assert from_list is not None and from_list.event in (
            "TaskCompleted",
            "TaskFailed",
            "OutOfSync",
        )


def test_only_plain_sync_requests_depend_only_on_state() -> None:
    restarting = job(
        "job1", task("worker", 2), policies=[{"event": "PodEvicted", "action": "RestartJob"}]
    )
    assert sync_depends_only_on_state(restarting, JobRequest(event="OutOfSync"))
    assert sync_depends_only_on_state(restarting, JobRequest(event="PodRunning"))
    assert not sync_depends_only_on_state(restarting, JobRequest(event="PodEvicted"))
    assert not sync_depends_only_on_state(
        restarting, JobRequest(event="CommandIssued", action="SyncJob")
    )
    delayed = job(
        "job1",
        task("worker", 2),
        policies=[{"event": "PodEvicted", "action": "RestartJob", "timeout": "10s"}],
    )
    assert not sync_depends_only_on_state(delayed, JobRequest(event="PodEvicted"))


def test_only_events_means_no_write() -> None:
    assert only_events(JobChanges(events=[("Normal", "x", "y")]))
    assert not only_events(JobChanges(status={"state": {}}))
    assert not only_events(JobChanges(create_pods=[{}]))
    assert not only_events(JobChanges(delete_pod_group=True))
