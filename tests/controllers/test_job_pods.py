"""The pods the job controller builds (spec §5.1 "Pod built for a task"; upstream
``TestMakePodName``, ``TestCreateJobPod_*``, ``TestCreatePodWithPartitionPolicy``,
``TestPartitionPolicy*`` in ``job_controller_util_test.go``)."""

from __future__ import annotations

import pytest
from controller_fixtures import NOW, job, pod_group, task

from volcano_py.controllers.job import JobRequest, sync_job
from volcano_py.controllers.job_plugins import make_pod_name
from volcano_py.controllers.job_pods import build_job_pod
from volcano_py.controllers.job_status import JobStatus


def test_upstream_make_pod_name() -> None:
    """TestMakePodName "Test MakePodName function"."""
    assert make_pod_name("job1", "task1", 1) == "job1-task1-1"


def test_every_link_annotation_and_label() -> None:
    """Spec §5.1: the annotations and labels a job pod carries."""
    owner = job(
        "job1",
        task("worker", 2),
        uid="abc",
        queue="q1",
        annotations={
            "volcano.sh/preemptable": "true",
            "volcano.sh/cooldown-time": "60s",
            "volcano.sh/revocable-zone": "*",
            "volcano.sh/jdb-min-available": "1",
            "volcano.sh/jdb-max-unavailable": "2",
            "other": "not-copied",
        },
        labels={"volcano.sh/preemptable": "false", "volcano.sh/cooldown-time": "30s", "x": "y"},
    )
    owner["spec"]["tasks"][0]["topologyPolicy"] = "single-numa-node"
    status = JobStatus(version=3, retry_count=2)
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 1, status)
    assert pod["metadata"]["name"] == "job1-worker-1"
    assert pod["metadata"]["namespace"] == "default"
    assert pod["metadata"]["ownerReferences"] == [
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "Job",
            "name": "job1",
            "uid": "abc",
            "controller": True,
            "blockOwnerDeletion": True,
        }
    ]
    assert pod["metadata"]["annotations"] == {
        "volcano.sh/task-index": "1",
        "volcano.sh/task-spec": "worker",
        "scheduling.k8s.io/group-name": "job1-abc",
        "volcano.sh/job-name": "job1",
        "volcano.sh/queue-name": "q1",
        "volcano.sh/job-version": "3",
        "volcano.sh/template-uid": "job1-worker",
        "volcano.sh/job-retry-count": "2",
        "volcano.sh/numa-topology-policy": "single-numa-node",
        "volcano.sh/preemptable": "true",
        "volcano.sh/cooldown-time": "60s",
        "volcano.sh/revocable-zone": "*",
        "volcano.sh/jdb-min-available": "1",
    }
    assert pod["metadata"]["labels"] == {
        "volcano.sh/task-index": "1",
        "volcano.sh/job-name": "job1",
        "volcano.sh/task-spec": "worker",
        "volcano.sh/job-namespace": "default",
        "volcano.sh/queue-name": "q1",
        "volcano.sh/preemptable": "false",
        "volcano.sh/cooldown-time": "30s",
    }
    assert pod["spec"]["schedulerName"] == "volcano"
    assert pod["status"] == {"phase": "Pending"}


def test_jdb_max_unavailable_copied_without_min_available() -> None:
    owner = job("job1", task("worker", 1), annotations={"volcano.sh/jdb-max-unavailable": "20%"})
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus())
    assert pod["metadata"]["annotations"]["volcano.sh/jdb-max-unavailable"] == "20%"


def test_template_labels_and_annotations_are_kept() -> None:
    owner = job(
        "job1",
        task("worker", 1, template_meta={"labels": {"app": "test"}, "annotations": {"a": "b"}}),
    )
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus())
    assert pod["metadata"]["labels"]["app"] == "test"
    assert pod["metadata"]["annotations"]["a"] == "b"
    # The job's template is left untouched.
    assert owner["spec"]["tasks"][0]["template"]["metadata"] == {
        "labels": {"app": "test"},
        "annotations": {"a": "b"},
    }


def test_upstream_create_job_pod_basic() -> None:
    """TestCreateJobPod_Basic."""
    owner = job(
        "test-job", task("test-task", 1), namespace="test-ns", uid="u-1", queue="test-queue"
    )
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus(version=1))
    assert pod["metadata"]["name"] == "test-job-test-task-0"
    assert pod["metadata"]["namespace"] == "test-ns"
    assert pod["spec"]["schedulerName"] == "volcano"
    assert pod["metadata"]["labels"]["volcano.sh/job-name"] == "test-job"
    assert pod["metadata"]["labels"]["volcano.sh/task-index"] == "0"
    assert pod["metadata"]["annotations"]["volcano.sh/job-version"] == "1"
    assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "test-job-u-1"


def test_upstream_create_job_pod_scheduler_name_override() -> None:
    """TestCreateJobPod_SchedulerNameOverride: the template's scheduler wins."""
    owner = job("test-job", task("test-task", 1, schedulerName="template-scheduler"))
    owner["spec"]["schedulerName"] = "job-scheduler"
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus())
    assert pod["spec"]["schedulerName"] == "template-scheduler"


def test_upstream_create_job_pod_priority_class() -> None:
    """TestCreateJobPod_PriorityClass: the job's class fills in, the template's wins."""
    owner = job(
        "job1",
        task("task1", 1),
        task("task2", 1, priority_class="highest-priority"),
        priorityClassName="high-priority",
    )
    first = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus())
    second = build_job_pod(owner, owner["spec"]["tasks"][1], 0, JobStatus())
    assert first["spec"]["priorityClassName"] == "high-priority"
    assert second["spec"]["priorityClassName"] == "highest-priority"


def test_upstream_create_job_pod_volumes() -> None:
    """TestCreateJobPod_Volumes."""
    owner = job(
        "vol-job",
        task("vol-task", 1),
        volumes=[
            {"volumeClaimName": "pvc-1", "mountPath": "/data1"},
            {"volumeClaimName": "pvc-2", "mountPath": "/data2"},
        ],
    )
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus())
    claims = [v["persistentVolumeClaim"]["claimName"] for v in pod["spec"]["volumes"]]
    assert claims == ["pvc-1", "pvc-2"]
    mounts = pod["spec"]["containers"][0]["volumeMounts"]
    assert [m["mountPath"] for m in mounts] == ["/data1", "/data2"]
    assert {m["name"] for m in mounts} == {v["name"] for v in pod["spec"]["volumes"]}


def test_upstream_create_job_pod_duplicate_volumes() -> None:
    """TestCreateJobPod_DuplicateVolumes: a duplicate claim is skipped."""
    owner = job(
        "dup-job",
        task("dup-task", 1),
        volumes=[
            {"volumeClaimName": "pvc-1", "mountPath": "/data1"},
            {"volumeClaimName": "pvc-1", "mountPath": "/data1"},
        ],
    )
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus())
    assert len(pod["spec"]["volumes"]) == 1


def test_upstream_create_job_pod_job_forwarding() -> None:
    """TestCreateJobPod_JobForwarding."""
    owner = job("forward-job", task("forward-task", 1))
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus(), forwarding=True)
    assert pod["metadata"]["annotations"]["volcano.sh/job-forwarding"] == "true"
    assert pod["metadata"]["labels"]["volcano.sh/job-forwarding"] == "true"


@pytest.mark.parametrize(
    ("name", "size", "index", "expected"),
    [
        ("TestCreateJobPod_PartitionPolicy index 0", 2, 0, "0"),
        ("TestCreateJobPod_PartitionPolicy index 3", 2, 3, "1"),
        ("partition size 2, index 0", 2, 0, "0"),
        ("partition size 2, index 1", 2, 1, "0"),
        ("partition size 2, index 2", 2, 2, "1"),
        ("partition size 5, index 10", 5, 10, "2"),
        ("partition size 1, index 0", 1, 0, "0"),
        ("partition size 0 (invalid), index 5", 0, 5, "0"),
        ("negative index (invalid), size 3", 3, -2, "0"),
    ],
)
def test_upstream_partition_id_label(name: str, size: int, index: int, expected: str) -> None:
    """TestCreatePodWithPartitionPolicy and TestPartitionPolicyEdgeCases."""
    owner = job("test-job", task("test-task", 1, partition={"partitionSize": size}))
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], index, JobStatus())
    assert pod["metadata"]["labels"]["volcano.sh/partition-id"] == expected, name
    assert pod["metadata"]["labels"]["volcano.sh/task-spec"] == "test-task"


def test_upstream_partition_policy_without_policy() -> None:
    """TestPartitionPolicyWithoutPolicy."""
    owner = job("test-job", task("test-task", 1))
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus())
    assert "volcano.sh/partition-id" not in pod["metadata"]["labels"]


def test_generated_claim_is_created_once_and_mounted() -> None:
    owner = job(
        "job1",
        task("worker", 1),
        volumes=[{"mountPath": "/data", "volumeClaim": {"accessModes": ["ReadWriteOnce"]}}],
    )
    first = sync_job(owner, None, [], JobRequest(event="OutOfSync"), now=NOW)
    claims = [o for o in first.extra_objects if o["kind"] == "PersistentVolumeClaim"]
    assert len(claims) == 1
    claim_name = claims[0]["metadata"]["name"]
    assert claim_name.startswith("job1-pvc-") and len(claim_name) == len("job1-pvc-") + 12
    assert first.status is not None
    assert first.status["controlledResources"] == {f"volume-pvc-{claim_name}": claim_name}

    owner["status"] = first.status
    second = sync_job(
        owner, pod_group(owner, "Inqueue"), [], JobRequest(event="OutOfSync"), now=NOW
    )
    assert not [o for o in second.extra_objects if o["kind"] == "PersistentVolumeClaim"]
    pod = second.create_pods[0]
    assert pod["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"] == claim_name


def test_job_without_uid_uses_the_legacy_group_name() -> None:
    owner = job("job1", task("worker", 1), uid="")
    pod = build_job_pod(owner, owner["spec"]["tasks"][0], 0, JobStatus())
    assert pod["metadata"]["annotations"]["scheduling.k8s.io/group-name"] == "job1"
