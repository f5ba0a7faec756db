"""Admission defaults and job validation (spec §1.4, §1.10; upstream
``webhooks/admission/jobs/mutate/mutate_job_test.go``, ``queues/mutate/mutate_queue_test.go``,
``podgroups/mutate/mutate_podgroup_test.go``, ``jobs/validate/admit_job_test.go``)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from controller_fixtures import queue

from volcano_py.controllers.admission import (
    mutate_job,
    mutate_pod_group,
    mutate_queue,
    validate_job,
)

TEMPLATE = {
    "metadata": {"labels": {"name": "test"}},
    "spec": {"containers": [{"name": "fake-name", "image": "busybox:1.24"}]},
}
QUEUES = {"default": queue("default"), "root": queue("root")}


def raw_task(**fields: Any) -> dict[str, Any]:
    return {"template": copy.deepcopy(TEMPLATE), **fields}


def raw_job(*tasks: dict[str, Any], name: str = "job1", **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": "test"},
        "spec": {"tasks": list(tasks), **spec},
    }


# ------------------------------------------------------------------ mutate_job


def test_job_defaults() -> None:
    """Spec §1.10: queue default, scheduler volcano, maxRetry 3, job minAvailable = sum of the
    tasks' (after their defaults)."""
    mutated = mutate_job(
        raw_job(raw_task(replicas=2), raw_task(name="w", replicas=3, minAvailable=1))
    )
    spec = mutated["spec"]
    assert (spec["queue"], spec["schedulerName"], spec["maxRetry"]) == ("default", "volcano", 3)
    assert spec["minAvailable"] == 3
    assert [t["name"] for t in spec["tasks"]] == ["default0", "w"]
    assert [t["minAvailable"] for t in spec["tasks"]] == [2, 1]
    assert [t["maxRetry"] for t in spec["tasks"]] == [3, 3]


def test_job_defaults_keep_given_values_and_input() -> None:
    original = raw_job(
        raw_task(name="t", replicas=2, maxRetry=5),
        queue="q",
        schedulerName="other",
        maxRetry=7,
        minAvailable=1,
    )
    snapshot = copy.deepcopy(original)
    spec = mutate_job(original)["spec"]
    assert (spec["queue"], spec["schedulerName"], spec["maxRetry"], spec["minAvailable"]) == (
        "q",
        "other",
        7,
        1,
    )
    assert spec["tasks"][0]["maxRetry"] == 5
    assert original == snapshot


def test_upstream_create_patch_execution_patch_default_task() -> None:
    """TestCreatePatchExecution "patch default task"."""
    topology = {"highestTierAllowed": 1, "mode": "hard"}
    tasks = [
        raw_task(replicas=1),
        raw_task(replicas=2, minAvailable=1),
        raw_task(
            replicas=1,
            partitionPolicy={
                "totalPartitions": 1,
                "minPartitions": 1,
                "partitionSize": 1,
                "networkTopology": topology,
            },
        ),
        raw_task(
            replicas=1,
            partitionPolicy={"totalPartitions": 1, "partitionSize": 1, "networkTopology": topology},
        ),
    ]
    mutated = mutate_job(raw_job(*tasks, name="path-task-name", minAvailable=1))
    got = [(t["name"], t["replicas"], t["minAvailable"]) for t in mutated["spec"]["tasks"]]
    assert got == [("default0", 1, 1), ("default1", 2, 1), ("default2", 1, 1), ("default3", 1, 1)]


@pytest.mark.parametrize(
    ("name", "partition", "min_available", "expected"),
    [
        (
            "MinAvailable is set to MinPartitions * PartitionSize when PartitionPolicy exists",
            {"totalPartitions": 3, "partitionSize": 2, "minPartitions": 2},
            None,
            4,
        ),
        (
            "MinAvailable falls back to Replicas when PartitionPolicy is set but MinPartitions is "
            "omitted",
            {"totalPartitions": 3, "partitionSize": 2},
            None,
            6,
        ),
        ("MinAvailable is set to Replicas when no PartitionPolicy", None, None, 6),
    ],
)
def test_upstream_mutate_spec_partition_policy_defaults(
    name: str, partition: dict[str, int] | None, min_available: int | None, expected: int
) -> None:
    """TestMutateSpecPartitionPolicyDefaults."""
    fields: dict[str, Any] = {"name": "task-1", "replicas": 6}
    if partition is not None:
        fields["partitionPolicy"] = partition
    mutated = mutate_job(raw_job(raw_task(**fields), name="test-job"))
    assert mutated["spec"]["tasks"][0]["minAvailable"] == expected, name


def test_host_network_gets_cluster_first_with_host_net() -> None:
    spec = raw_task(replicas=1)
    spec["template"]["spec"]["hostNetwork"] = True
    mutated = mutate_job(raw_job(spec))
    assert mutated["spec"]["tasks"][0]["template"]["spec"]["dnsPolicy"] == "ClusterFirstWithHostNet"


@pytest.mark.parametrize(
    ("plugins", "expected"),
    [
        ({"mpi": ["--master=m"]}, {"mpi": ["--master=m"], "svc": [], "ssh": []}),
        ({"tensorflow": []}, {"tensorflow": [], "svc": []}),
        ({"pytorch": [], "svc": ["--disable-network-policy"]},
         {"pytorch": [], "svc": ["--disable-network-policy"]}),
        ({"ray": []}, {"ray": [], "svc": []}),
        ({"env": []}, {"env": []}),
    ],
)  # fmt: skip
def test_default_plugins(plugins: dict[str, list[str]], expected: dict[str, list[str]]) -> None:
    """svc for tensorflow/mpi/pytorch/ray, ssh for mpi."""
    assert mutate_job(raw_job(raw_task(replicas=1), plugins=plugins))["spec"]["plugins"] == expected


def test_no_plugins_stay_absent() -> None:
    assert "plugins" not in mutate_job(raw_job(raw_task(replicas=1)))["spec"]


# ------------------------------------------------------------------ mutate_queue


def test_upstream_mutate_queues_refresh_reclaimable() -> None:
    """TestMutateQueues "Normal Case Refresh Default Open State and Reclaimable For Queue"."""
    mutated = mutate_queue(
        {"metadata": {"name": "normal-case-refresh-default-state"}, "spec": {"weight": 1}}
    )
    assert mutated["spec"] == {"weight": 1, "reclaimable": True}


def test_upstream_mutate_queues_append_root_to_hdrf() -> None:
    """TestMutateQueues "Normal Case Append Default Root to The HDRF Attributes"."""
    mutated = mutate_queue(
        {
            "metadata": {
                "name": "queue-without-root",
                "annotations": {
                    "volcano.sh/hierarchy": "a/b/c",
                    "volcano.sh/hierarchy-weights": "2/3/4",
                },
            },
            "spec": {"reclaimable": True, "weight": 1},
        }
    )
    assert mutated["metadata"]["annotations"] == {
        "volcano.sh/hierarchy": "root/a/b/c",
        "volcano.sh/hierarchy-weights": "1/2/3/4",
    }


def test_queue_weight_defaults_and_rooted_hierarchy_is_kept() -> None:
    mutated = mutate_queue(
        {
            "metadata": {
                "name": "q",
                "annotations": {
                    "volcano.sh/hierarchy": "root/a",
                    "volcano.sh/hierarchy-weights": "1/2",
                },
            },
            "spec": {"reclaimable": False},
        }
    )
    assert mutated["spec"] == {"reclaimable": False, "weight": 1}
    assert mutated["metadata"]["annotations"]["volcano.sh/hierarchy"] == "root/a"


# ------------------------------------------------------------------ mutate_pod_group


@pytest.mark.parametrize(
    ("name", "queue_name", "annotations", "expected"),
    [
        ("podgroup with non-default queue", "custom-queue", None, "custom-queue"),
        (
            "podgroup with default queue and namespace with queue annotation",
            "default",
            {"scheduling.volcano.sh/queue-name": "ns-queue"},
            "ns-queue",
        ),
        ("podgroup with default queue and namespace without queue annotation", "default", {},
         "default"),
        ("podgroup without queue takes the CRD default", "", {}, "default"),
    ],
)  # fmt: skip
def test_upstream_create_pod_group_patch(
    name: str, queue_name: str, annotations: dict[str, str] | None, expected: str
) -> None:
    """Test_createPodGroupPatch."""
    pg = {"metadata": {"name": "pg", "namespace": "test-ns"}, "spec": {}}
    if queue_name:
        pg["spec"]["queue"] = queue_name
    assert mutate_pod_group(pg, annotations)["spec"]["queue"] == expected, name


# ------------------------------------------------------------------ validate_job


def valid(**spec: Any) -> dict[str, Any]:
    return mutate_job(raw_job(raw_task(name="task-1", replicas=1), **spec))


def test_upstream_simple_valid_job() -> None:
    """TestValidateJobCreate "simple-valid-job"."""
    assert validate_job(valid(), QUEUES) == []


def test_upstream_simple_valid_job_with_policy() -> None:
    """TestValidateJobCreate "simple-valid-job-with-policy"."""
    job = valid(policies=[{"event": "PodEvicted", "action": "RestartJob"}])
    job["spec"]["tasks"][0]["policies"] = [{"event": "TaskCompleted", "action": "CompleteJob"}]
    assert validate_job(job, QUEUES) == []


def with_tasks(*tasks: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return mutate_job(raw_job(*tasks, **spec))


CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "duplicate-task-job",
        with_tasks(raw_task(name="worker", replicas=1), raw_task(name="worker", replicas=1)),
        "spec.tasks[1].name: duplicate task name 'worker'",
    ),
    (
        "job-policy-duplicated",
        valid(policies=[{"event": "PodFailed", "action": "AbortJob"},
                        {"event": "PodFailed", "action": "RestartJob"}]),
        "spec.policies[1].event: duplicate event 'PodFailed' across policies",
    ),
    (
        "Min Available illegal",
        valid(minAvailable=2),
        "spec.minAvailable: 2 should not be greater than total replicas in tasks (1)",
    ),
    (
        "Job Plugin illegal",
        valid(plugins={"big_plugin": []}),
        "spec.plugins.big_plugin: unable to find job plugin 'big_plugin'",
    ),
    ("no-task", raw_job(), "spec.tasks: no task specified in job spec"),
    (
        "replica-lessThanZero",
        with_tasks(raw_task(name="task-1", replicas=-1, minAvailable=0), minAvailable=1),
        "spec.tasks[0].replicas: must be >= 0 (got -1)",
    ),
    (
        "job-policy-withExitCode",
        valid(policies=[{"event": "PodFailed", "action": "AbortJob", "exitCode": 1}]),
        "spec.policies[0]: must not specify event and exitCode simultaneously",
    ),
    (
        "policy-noEvent-noExCode",
        valid(policies=[{"action": "AbortJob"}]),
        "spec.policies[0]: either event or exitCode should be specified",
    ),
    (
        "invalid-policy-event",
        valid(policies=[{"event": "fakeEvent", "action": "AbortJob"}]),
        "spec.policies[0].event: invalid policy event 'fakeEvent'",
    ),
    (
        "invalid-policy-action",
        valid(policies=[{"event": "PodEvicted", "action": "fakeAction"}]),
        "spec.policies[0].action: invalid policy action 'fakeAction'",
    ),
    (
        "policy-extcode-zero",
        valid(policies=[{"action": "AbortJob", "exitCode": 0}]),
        "spec.policies[0].exitCode: 0 is not a valid error code",
    ),
    (
        "duplicate-exitcode",
        valid(policies=[{"action": "AbortJob", "exitCode": 1},
                        {"action": "RestartJob", "exitCode": 1}]),
        "spec.policies[1].exitCode: duplicate exitCode 1",
    ),
    (
        "job-policy-withExitCode (* with others)",
        valid(policies=[{"event": "*", "action": "AbortJob"},
                        {"event": "PodFailed", "action": "RestartJob"}]),
        "spec.policies: if there's * here, no other policy should be here",
    ),
    (
        "invalid-mount-volume",
        valid(volumes=[{"mountPath": "", "volumeClaimName": "pvc1"}]),
        "spec.volumes[0].mountPath: is required",
    ),
    (
        "duplicate-mount-volume",
        valid(volumes=[{"mountPath": "/var", "volumeClaimName": "pvc1"},
                       {"mountPath": "/var", "volumeClaimName": "pvc2"}]),
        "spec.volumes[1].mountPath: duplicated mountPath '/var'",
    ),
    (
        "volume without VolumeClaimName and VolumeClaim",
        valid(volumes=[{"mountPath": "/var"}]),
        "spec.volumes[0]: either volumeClaim or volumeClaimName must be specified",
    ),
    (
        "job-with-noQueue",
        valid(queue="jobQueue"),
        "spec.queue: queue 'jobQueue' does not exist",
    ),
    (
        "job with invalid task depends on",
        with_tasks(raw_task(name="t1", replicas=1, dependsOn={"name": ["t2"]}),
                   raw_task(name="t2", replicas=1, dependsOn={"name": ["t1"]})),
        "spec.tasks[0].dependsOn: job has dependencies between tasks, but doesn't form a "
        "directed acyclic graph(DAG): t1 -> t2",
    ),
    (
        "PartitionSize-lessThanZero",
        with_tasks(raw_task(name="task-1", replicas=1,
                            partitionPolicy={"totalPartitions": 1, "partitionSize": -1})),
        "spec.tasks[0].partitionPolicy.partitionSize: must be greater than 0",
    ),
    (
        "TotalPartitions-lessThanZero",
        with_tasks(raw_task(name="task-1", replicas=1,
                            partitionPolicy={"totalPartitions": -1, "partitionSize": 1})),
        "spec.tasks[0].partitionPolicy.totalPartitions: must be greater than 0",
    ),
    (
        "task-with-invalid-PartitionPolicy",
        with_tasks(raw_task(name="task-1", replicas=5,
                            partitionPolicy={"totalPartitions": 2, "partitionSize": 2})),
        "spec.tasks[0].replicas: 5 is not totalPartitions*partitionSize (2*2=4)",
    ),
    (
        "job-with-invalid-NetworkTopology",
        valid(networkTopology={"mode": "hard", "highestTierAllowed": 1,
                               "highestTierName": "volcano.sh/hypernode"}),
        "spec.networkTopology: must not specify 'highestTierAllowed' and 'highestTierName' "
        "simultaneously",
    ),
    (
        "task-with-invalid-PartitionPolicy (network topology)",
        with_tasks(raw_task(name="task-1", replicas=4, partitionPolicy={
            "totalPartitions": 2, "partitionSize": 2,
            "networkTopology": {"highestTierAllowed": 1, "highestTierName": "x"}})),
        "spec.tasks[0].partitionPolicy.networkTopology: must not specify 'highestTierAllowed' "
        "and 'highestTierName' simultaneously",
    ),
    (
        "task-with-invalid-PartitionPolicy-MinPartitions-not-equal",
        with_tasks(raw_task(name="task-1", replicas=4, minAvailable=3, partitionPolicy={
            "totalPartitions": 2, "partitionSize": 2, "minPartitions": 1})),
        "spec.tasks[0].minAvailable: 3 is not minPartitions*partitionSize (1*2=2)",
    ),
    (
        "task minAvailable greater than replicas",
        with_tasks(raw_task(name="task-1", replicas=1, minAvailable=2), minAvailable=1),
        "spec.tasks[0].minAvailable: 2 is greater than replicas 1",
    ),
    (
        "pod name too long",
        with_tasks(raw_task(name="t" * 60, replicas=1)),
        "spec.tasks[0].name: pod name 'job1-" + "t" * 60 + "-0' must be no more than 63 "
        "characters",
    ),
    (
        "mpi master missing",
        valid(plugins={"mpi": ["--master=head"]}),
        "spec.plugins.mpi: the mpi master task 'head' is not a task of this job",
    ),
    (
        "bad policy timeout",
        valid(policies=[{"event": "PodPending", "action": "RestartPod", "timeout": "soon"}]),
        "spec.policies[0].timeout: invalid duration 'soon'",
    ),
    (
        "numa policy needs whole cpus",
        with_tasks(raw_task(name="task-1", replicas=1, topologyPolicy="single-numa-node")),
        "spec.tasks[0].template.spec.containers[0].resources: topologyPolicy single-numa-node "
        "needs an integer cpu request",
    ),
]  # fmt: skip


@pytest.mark.parametrize(("name", "job", "message"), CASES, ids=[c[0] for c in CASES])
def test_upstream_validate_job_create(name: str, job: dict[str, Any], message: str) -> None:
    """TestValidateJobCreate (cases named after upstream's; extra cases describe themselves).
    Each message names the field."""
    problems = validate_job(job, QUEUES)
    assert any(p.startswith(message) for p in problems), problems


def test_upstream_job_with_valid_task_depends_on() -> None:
    """TestValidateJobCreate "job with valid task depends on"."""
    job = with_tasks(
        raw_task(name="t1", replicas=1), raw_task(name="t2", replicas=1, dependsOn={"name": ["t1"]})
    )
    assert validate_job(job, QUEUES) == []


def test_upstream_valid_partition_policies() -> None:
    """TestValidateJobCreate "task-with-valid-PartitionPolicy",
    "task-with-valid-PartitionPolicy-MinPartitions", "...-MinPartitions-omitted"."""
    for partition in (
        {"totalPartitions": 2, "partitionSize": 2},
        {"totalPartitions": 2, "partitionSize": 2, "minPartitions": 1},
    ):
        job = with_tasks(raw_task(name="task-1", replicas=4, partitionPolicy=partition))
        assert validate_job(job, QUEUES) == [], partition


def test_depends_on_unknown_task() -> None:
    job = with_tasks(raw_task(name="t1", replicas=1, dependsOn={"name": ["ghost"]}))
    assert validate_job(job, QUEUES) == [
        "spec.tasks[0].dependsOn.name: 'ghost' is not a task of this job"
    ]


@pytest.mark.parametrize(
    ("queues", "queue_name", "message"),
    [
        ({"q": queue("q", "Closed")}, "q",
         "spec.queue: can only submit job to queue with state `Open`, queue `q` status is "
         "`Closed`"),
        ({"root": queue("root")}, "root", "spec.queue: can not submit job to root queue"),
        ({"p": queue("p"), "c": queue("c", parent="p")}, "p",
         "spec.queue: can only submit job to leaf queue, queue `p` has 1 child queues (c)"),
    ],
)  # fmt: skip
def test_queue_must_be_open_not_root_and_a_leaf(
    queues: dict[str, Any], queue_name: str, message: str
) -> None:
    assert validate_job(valid(queue=queue_name), queues) == [message]


def test_queue_without_status_counts_as_open() -> None:
    assert validate_job(valid(queue="q"), {"q": queue("q", None)}) == []


def test_every_problem_is_reported() -> None:
    job = with_tasks(
        raw_task(name="a", replicas=1, minAvailable=2),
        raw_task(name="a", replicas=1),
        minAvailable=5,
        queue="missing",
    )
    problems = validate_job(job, QUEUES)
    assert len(problems) == 4
