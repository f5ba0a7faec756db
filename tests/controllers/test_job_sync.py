"""The job controller's procedures: syncing pods (creation gated on the PodGroup, dependsOn,
scale down, out-of-sync pods) and killing pods (upstream ``TestSyncJobFunc``,
``TestIsDependsOnPodsReady``, ``TestKillJobFunc``, ``TestPodsToKill``,
``TestKillPodsPodGroupDeletion``, ``TestAppendJobCondition`` in
``job_controller_actions_test.go``)."""

from __future__ import annotations

from typing import Any

import pytest
from controller_fixtures import NOW, job, job_pod, pod_group, queue, task

from volcano_py.controllers.job import JobChanges, JobRequest, sync_job
from volcano_py.controllers.job_actions import JobRun, Target, dependencies_met, kill_pods
from volcano_py.controllers.job_plugins import build_plugins
from volcano_py.controllers.job_podgroup import build_pod_group
from volcano_py.controllers.job_state import RETAIN_NONE
from volcano_py.controllers.job_status import JobStatus

UID = "e7f18111-1cec-11ea-b688-fa163ec79500"
SYNC = JobRequest(event="OutOfSync")


def sync(
    owner: dict[str, Any], pods: list[dict[str, Any]], pg: dict[str, Any] | None
) -> JobChanges:
    return sync_job(owner, pg, pods, SYNC, now=NOW)


def created(changes: JobChanges) -> list[str]:
    return [p["metadata"]["name"] for p in changes.create_pods]


# ------------------------------------------------------------------ the lifecycle of a job


def test_first_sync_initiates_and_creates_only_the_pod_group() -> None:
    owner = job("job1", task("worker", 2), uid=UID)
    changes = sync(owner, [], None)
    assert changes.status == {
        "state": {"phase": "Pending", "lastTransitionTime": NOW},
        "minAvailable": 2,
        "conditions": [{"status": "Pending", "lastTransitionTime": NOW}],
    }
    assert changes.pod_group is not None
    assert changes.pod_group["metadata"]["name"] == f"job1-{UID}"
    assert changes.create_pods == []


@pytest.mark.parametrize("phase", ["", "Pending"])
def test_no_pods_while_the_pod_group_is_not_admitted(phase: str) -> None:
    """Spec §5.1 syncJob 3: PodGroup phase "" or Pending -> no pods are created."""
    owner = job("job1", task("worker", 2), uid=UID, phase="Pending")
    current = build_pod_group(owner)
    if phase:
        current["status"] = {"phase": phase}
    changes = sync(owner, [], current)
    assert changes.create_pods == []
    assert changes.pod_group is None  # unchanged spec: nothing to write
    assert changes.status is None


@pytest.mark.parametrize("phase", ["Inqueue", "Running", "Unknown", "Completed"])
def test_pods_created_once_the_pod_group_is_admitted(phase: str) -> None:
    owner = job("job1", task("ps", 1), task("worker", 2), uid=UID, phase="Pending")
    changes = sync(owner, [], pod_group(owner, phase))
    assert created(changes) == ["job1-ps-0", "job1-worker-0", "job1-worker-1"]
    assert changes.status is not None
    assert changes.status["pending"] == 3
    assert changes.status["taskStatusCount"] == {
        "ps": {"phase": {"Pending": 1}},
        "worker": {"phase": {"Pending": 2}},
    }


def test_existing_pods_are_counted_not_recreated() -> None:
    owner = job("job1", task("worker", 3), uid=UID, phase="Running")
    pods = [
        job_pod(owner, "worker", 0, "Running"),
        job_pod(owner, "worker", 1, "Succeeded"),
        job_pod(owner, "worker", 2, "Unknown"),
    ]
    changes = sync(owner, pods, pod_group(owner, "Running"))
    assert changes.create_pods == []
    assert changes.status is not None
    assert (changes.status["running"], changes.status["succeeded"], changes.status["unknown"]) == (
        1,
        1,
        1,
    )
    assert changes.status["taskStatusCount"]["worker"]["phase"] == {
        "Running": 1,
        "Succeeded": 1,
        "Unknown": 1,
    }


def test_a_second_identical_sync_changes_nothing() -> None:
    owner = job("job1", task("worker", 2), uid=UID, phase="Running")
    pods = [job_pod(owner, "worker", 0), job_pod(owner, "worker", 1)]
    first = sync(owner, pods, pod_group(owner, "Running"))
    owner["status"] = first.status
    second = sync(owner, pods, pod_group(owner, "Running"))
    assert not second.writes_anything


def test_scale_down_deletes_pods_past_replicas() -> None:
    owner = job("job1", task("worker", 1), uid=UID, phase="Running", min_available=1)
    pods = [job_pod(owner, "worker", i) for i in range(3)]
    changes = sync(owner, pods, pod_group(owner, "Running"))
    assert changes.delete_pods == ["job1-worker-1", "job1-worker-2"]
    assert changes.status is not None
    assert (changes.status["running"], changes.status["terminating"]) == (1, 2)


def test_scale_up_updates_the_pod_group_and_creates_pods() -> None:
    owner = job("job1", task("worker", 3), uid=UID, phase="Running", min_available=3)
    pods = [job_pod(owner, "worker", i) for i in range(2)]
    pg = pod_group(owner, "Running")
    pg["spec"]["minMember"] = 2
    changes = sync(owner, pods, pg)
    assert changes.pod_group is not None
    assert changes.pod_group["spec"]["minMember"] == 3
    assert created(changes) == ["job1-worker-2"]


def test_out_of_sync_pods_are_deleted_and_terminating_ones_counted() -> None:
    owner = job("job1", task("worker", 3), uid=UID, phase="Running")
    pods = [
        job_pod(owner, "worker", 0, out_of_sync=True),
        job_pod(owner, "worker", 1, deleting=True),
        job_pod(owner, "worker", 2),
    ]
    changes = sync(owner, pods, pod_group(owner, "Running"))
    assert changes.delete_pods == ["job1-worker-0"]
    assert changes.status is not None
    # The out-of-sync pod is counted by phase and again as terminating (as upstream).
    assert (changes.status["running"], changes.status["terminating"]) == (2, 2)


def test_pods_of_other_jobs_are_ignored() -> None:
    owner = job("job1", task("worker", 1), uid=UID, phase="Running")
    other = job("job2", task("worker", 1), uid="other")
    changes = sync(owner, [job_pod(other, "worker", 0)], pod_group(owner, "Running"))
    assert created(changes) == ["job1-worker-0"]
    assert changes.delete_pods == []


def test_forwarding_queue_marks_job_and_pods() -> None:
    owner = job("job1", task("worker", 1), uid=UID, phase="Pending", queue="fwd")
    target = queue("fwd")
    target["spec"]["extendClusters"] = [{"name": "c1"}]
    changes = sync_job(owner, pod_group(owner, "Inqueue"), [], SYNC, now=NOW, queue=target)
    assert changes.job_annotations == {"volcano.sh/job-forwarding": "true"}
    assert changes.create_pods[0]["metadata"]["labels"]["volcano.sh/job-forwarding"] == "true"


def test_unknown_plugin_stops_the_step_with_a_warning() -> None:
    owner = job("job1", task("worker", 1), uid=UID, plugins={"nope": []})
    changes = sync(owner, [], None)
    assert changes.events == [("Warning", "PluginError", "failed to get plugin nope")]
    assert not changes.writes_anything


def test_deleted_job_is_left_alone() -> None:
    owner = job("job1", task("worker", 1), uid=UID, phase="Running")
    owner["metadata"]["deletionTimestamp"] = NOW
    assert not sync(owner, [], pod_group(owner, "Running")).writes_anything
    changes = sync_job(
        owner, None, [], JobRequest(event="CommandIssued", action="AbortJob"), now=NOW
    )
    assert not changes.writes_anything


def test_command_records_command_issued_event() -> None:
    owner = job("job1", task("worker", 1), uid=UID, phase="Running")
    changes = sync_job(
        owner, None, [], JobRequest(event="CommandIssued", action="AbortJob"), now=NOW
    )
    assert changes.events[:2] == [
        (
            "Normal",
            "CommandIssued",
            "Start to execute command AbortJob, and clean it up to make sure executed not more "
            "than once.",
        ),
        ("Normal", "ExecuteAction", "Start to execute action AbortJob "),
    ]


def test_input_objects_are_not_mutated() -> None:
    owner = job("job1", task("worker", 2), uid=UID, phase="Running", plugins={"svc": []})
    pods = [job_pod(owner, "worker", 0)]
    pg = pod_group(owner, "Running")
    snapshot = repr((owner, pods, pg))
    sync(owner, pods, pg)
    sync_job(owner, pg, pods, JobRequest(event="CommandIssued", action="RestartJob"), now=NOW)
    assert repr((owner, pods, pg)) == snapshot


# ------------------------------------------------------------------ TestSyncJobFunc


def test_upstream_sync_job_success_case() -> None:
    """TestSyncJobFunc "SyncJob success Case": 2 pods exist, 4 are created (6 in all)."""
    owner = job(
        "job1",
        task("task1", 6),
        uid=UID,
        phase="Pending",
        plugins={"svc": [], "ssh": [], "env": []},
    )
    pods = [job_pod(owner, "task1", 0), job_pod(owner, "task1", 1)]
    changes = sync(owner, pods, pod_group(owner, "Inqueue"))
    assert len(pods) + len(changes.create_pods) == 6


def test_upstream_sync_job_with_depends_on_missing_dependency() -> None:
    """TestSyncJobFunc "SyncJob with dependsOn job can't find the dependent task": 2 work pods
    exist, master-0 and work-2 are created (4 in all). The master task sets no minAvailable,
    so it counts as ready however many of its pods run (``isDependsOnPodsReady``)."""
    owner = job(
        "job1",
        task("master", 1),
        task("work", 3, depends_on={"name": ["master"]}),
        uid=UID,
        phase="Pending",
    )
    pods = [job_pod(owner, "work", 0), job_pod(owner, "work", 1)]
    changes = sync(owner, pods, pod_group(owner, "Inqueue"))
    assert created(changes) == ["job1-master-0", "job1-work-2"]
    assert len(pods) + len(changes.create_pods) == 4


# ------------------------------------------------------------------ dependsOn


def _run(owner: dict[str, Any], pods: list[dict[str, Any]]) -> JobRun:
    by_task: dict[str, dict[str, Any]] = {}
    for pod in pods:
        by_task.setdefault(pod["metadata"]["annotations"]["volcano.sh/task-spec"], {})[
            pod["metadata"]["name"]
        ] = pod
    plugins, _ = build_plugins(owner)
    return JobRun(
        job=owner,
        pod_group=None,
        pods_by_task=by_task,
        pods_by_name={p["metadata"]["name"]: p for p in pods},
        now=NOW,
        status=JobStatus.from_dict(owner.get("status", {})),
        plugins=plugins,
    )


@pytest.mark.parametrize(
    ("name", "replicas", "phases", "ready", "expected"),
    [
        ("DependsOn task has all pods succeeded", 2, ["Succeeded", "Succeeded"], None, True),
        ("DependsOn task has pods running and ready", 1, ["Running"], True, True),
        ("DependsOn task has pods running but not ready", 1, ["Running"], False, False),
    ],
)
def test_upstream_is_depends_on_pods_ready(
    name: str, replicas: int, phases: list[str], ready: bool | None, expected: bool
) -> None:
    """TestIsDependsOnPodsReady."""
    owner = job(
        "job1",
        task("task1", replicas, min_available=replicas),
        task("task2", 1, depends_on={"name": ["task1"]}),
    )
    pods = [job_pod(owner, "task1", i, p, ready=ready) for i, p in enumerate(phases)]
    assert dependencies_met(_run(owner, pods), owner["spec"]["tasks"][1]) is expected, name


def test_depends_on_gates_creation_until_dependency_runs() -> None:
    owner = job(
        "job1",
        task("master", 1, min_available=1),
        task("worker", 2, depends_on={"name": ["master"]}),
        uid=UID,
        phase="Pending",
    )
    first = sync(owner, [], pod_group(owner, "Inqueue"))
    assert created(first) == ["job1-master-0"]
    master = job_pod(owner, "master", 0, "Running", ready=True)
    second = sync(owner, [master], pod_group(owner, "Inqueue"))
    assert created(second) == ["job1-worker-0", "job1-worker-1"]


@pytest.mark.parametrize(("iteration", "expected"), [("any", True), ("all", False), (None, False)])
def test_depends_on_iteration(iteration: str | None, expected: bool) -> None:
    depends_on: dict[str, Any] = {"name": ["a", "b"]}
    if iteration is not None:
        depends_on["iteration"] = iteration
    owner = job(
        "job1",
        task("a", 1, min_available=1),
        task("b", 1, min_available=1),
        task("c", 1, depends_on=depends_on),
    )
    pods = [job_pod(owner, "a", 0, "Succeeded"), job_pod(owner, "b", 0, "Pending")]
    assert dependencies_met(_run(owner, pods), owner["spec"]["tasks"][2]) is expected


# ------------------------------------------------------------------ kills


def test_upstream_kill_job_success_case() -> None:
    """TestKillJobFunc "KillJob success Case": pods deleted, plugin objects removed."""
    owner = job(
        "job1",
        task("task1", 2),
        uid=UID,
        phase="Running",
        plugins={"svc": [], "ssh": [], "env": []},
        status={
            "controlledResources": {"plugin-svc": "svc", "plugin-ssh": "ssh", "plugin-env": "env"}
        },
    )
    pods = [job_pod(owner, "task1", 0), job_pod(owner, "task1", 1)]
    run = _run(owner, pods)
    run.pod_group = pod_group(owner, "Running")
    kill_pods(run, RETAIN_NONE, None, None)
    assert run.changes.delete_pods == ["job1-task1-0", "job1-task1-1"]
    assert sorted(run.changes.delete_objects) == [
        ("ConfigMap", "job1-svc"),
        ("NetworkPolicy", "job1"),
        ("Secret", "job1-ssh"),
        ("Service", "job1"),
    ]
    assert run.status.controlled_resources == {}
    assert run.status.version == 1
    assert run.changes.delete_pod_group


def test_upstream_kill_job_compatibility_with_legacy_pod_group() -> None:
    """TestKillJobFunc "KillJob compatibility with version lt 1.5 success case": the legacy
    group named after the job is deleted too."""
    owner = job("job2", task("task1", 2), uid=UID, phase="Running")
    run = _run(owner, [job_pod(owner, "task1", 0)])
    run.pod_group = {"metadata": {"name": "job2", "namespace": "default"}}
    kill_pods(run, RETAIN_NONE, None, None)
    assert run.changes.delete_pod_group


def _named_pods(owner: dict[str, Any], layout: dict[str, list[str]]) -> list[dict[str, Any]]:
    pods = []
    for task_name, names in layout.items():
        for index, pod_name in enumerate(names):
            pod = job_pod(owner, task_name, index)
            pod["metadata"]["name"] = pod_name
            pods.append(pod)
    return pods


@pytest.mark.parametrize(
    ("name", "layout", "target", "deleted"),
    [
        (
            "KillPods with TargetTypeTask",
            {"task1": ["pod1", "pod2"], "task2": ["pod3"]},
            Target("task", "task1"),
            ["pod1", "pod2"],
        ),
        (
            "KillPods with TargetTypePod",
            {"task1": ["pod1", "pod2"]},
            Target("pod", "task1", "pod1"),
            ["pod1"],
        ),
        ("KillPods with non-existent task", {"task1": ["pod1"]}, Target("task", "nonexistent"), []),
        (
            "KillPods with non-existent pod",
            {"task1": ["pod1"]},
            Target("pod", "task1", "nonexistent"),
            [],
        ),
    ],
)
def test_upstream_pods_to_kill(
    name: str, layout: dict[str, list[str]], target: Target, deleted: list[str]
) -> None:
    """TestPodsToKill."""
    owner = job("job1", task("task1", 2), task("task2", 1), uid=UID, phase="Running")
    run = _run(owner, _named_pods(owner, layout))
    kill_pods(run, RETAIN_NONE, target, None)
    assert run.changes.delete_pods == deleted, name


@pytest.mark.parametrize(
    ("name", "target", "gone"),
    [
        ("full job kill (target=nil) deletes PodGroup", None, True),
        (
            "targeted pod restart (target!=nil) keeps PodGroup",
            Target("pod", "task1", "job1-task1-0"),
            False,
        ),
    ],
)
def test_upstream_kill_pods_pod_group_deletion(
    name: str, target: Target | None, gone: bool
) -> None:
    """TestKillPodsPodGroupDeletion."""
    owner = job("job1", task("task1", 1), uid=UID, phase="Running")
    run = _run(owner, [job_pod(owner, "task1", 0)])
    run.pod_group = pod_group(owner, "Running")
    kill_pods(run, RETAIN_NONE, target, None)
    assert run.changes.delete_pod_group is gone, name


def test_kill_counts_already_terminating_pods_without_deleting_them() -> None:
    owner = job("job1", task("task1", 2), uid=UID, phase="Running")
    run = _run(owner, [job_pod(owner, "task1", 0, deleting=True), job_pod(owner, "task1", 1)])
    kill_pods(run, RETAIN_NONE, None, None)
    assert run.changes.delete_pods == ["job1-task1-1"]
    assert run.status.terminating == 2


# ------------------------------------------------------------------ TestAppendJobCondition


@pytest.mark.parametrize(
    ("name", "conditions", "phase", "expected"),
    [
        ("Append to empty conditions", [], "Pending", ["Pending"]),
        ("Replace existing condition with same phase", ["Pending", "Running"], "Pending",
         ["Running", "Pending"]),
        ("Append if phase is different", ["Pending", "Running"], "Completed",
         ["Pending", "Running", "Completed"]),
    ],
)  # fmt: skip
def test_upstream_append_job_condition(
    name: str, conditions: list[str], phase: str, expected: list[str]
) -> None:
    """TestAppendJobCondition."""
    status = JobStatus(phase=phase, conditions=[{"status": c} for c in conditions])
    status.record_transition(NOW)
    assert [c["status"] for c in status.conditions] == expected, name
    assert status.conditions[-1]["lastTransitionTime"] == NOW
