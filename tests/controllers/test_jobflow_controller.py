"""The pure JobFlow and JobTemplate controllers. Transcribed from upstream
``pkg/controllers/jobflow/jobflow_controller_action_test.go`` (TestSyncJobFlowFunc,
TestGetRunningHistoriesFunc, TestGetAllJobsCreatedByJobFlow, TestGetAllJobStatusFunc,
TestLoadJobTemplateAndSetJobFunc, TestDeployJobFunc, TestDeleteAllJobsCreateByJobFlowFunc),
``jobflow_controller_util_test.go`` (TestGetJobNameFunc, TestGetConnectionOfJobAndJobTemplate,
TestGetJobFlowNameByJob), ``state/running_test.go`` (TestRunningStateExecute) and
``pkg/controllers/jobtemplate`` (TestSyncJobTemplateFunc, TestGetConnectionOfJobAndJobTemplate,
TestAddJob); then the dependency order, the retain policy and the phases end to end."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from volcano_py.controllers.jobflow import (
    CREATED_BY_JOB_FLOW,
    CREATED_BY_JOB_TEMPLATE,
    all_job_status,
    job_from_template,
    job_name,
    job_template_status,
    jobflow_of_job,
    jobs_of,
    next_phase,
    object_string,
    running_histories,
    sync_jobflow,
    template_of_job,
)

NOW = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
NOW_TEXT = "2026-05-01T12:00:00Z"
JOB_SPEC = {"tasks": [{"name": "t", "replicas": 1, "template": {"spec": {"containers": []}}}]}


def _flow(name: str, *targets: str) -> dict[str, Any]:
    return {"name": name, "dependsOn": {"targets": list(targets)}} if targets else {"name": name}


def _jobflow(
    name: str = "jobflow",
    flows: list[dict[str, Any]] | None = None,
    policy: str | None = "retain",
    phase: str | None = None,
    flow_status: dict[str, Any] | None = None,
) -> dict[str, Any]:
    spec: dict[str, Any] = {"flows": flows if flows is not None else [_flow("jobtemplate")]}
    if policy is not None:
        spec["jobRetainPolicy"] = policy
    obj: dict[str, Any] = {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobFlow",
        "metadata": {"name": name, "namespace": "default", "uid": f"uid-{name}"},
        "spec": spec,
    }
    obj["status"] = dict(flow_status or {})
    if phase is not None:
        obj["status"]["state"] = {"phase": phase}
    return obj


def _template(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "flow.volcano.sh/v1alpha1",
        "kind": "JobTemplate",
        "metadata": {"name": name, "namespace": "default"},
        "spec": JOB_SPEC,
    }


def _job(
    flow: str,
    template: str,
    phase: str | None,
    *,
    created: str | None = None,
    **status: Any,
) -> dict[str, Any]:
    labels = {
        CREATED_BY_JOB_TEMPLATE: object_string("default", template),
        CREATED_BY_JOB_FLOW: object_string("default", flow),
    }
    job_status: dict[str, Any] = dict(status)
    if phase:
        job_status["state"] = {"phase": phase}
    meta: dict[str, Any] = {
        "name": job_name(flow, template),
        "namespace": "default",
        "uid": f"uid-{flow}-{template}",
        "labels": labels,
        "annotations": dict(labels),
        "ownerReferences": [
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": "JobFlow",
                "name": flow,
                "uid": f"uid-{flow}",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if created:
        meta["creationTimestamp"] = created
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta,
            "spec": JOB_SPEC, "status": job_status}  # fmt: skip


# -- jobflow_controller_action_test.go ------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "job_phase", "listed", "flow_phase"),
    [
        ("SyncJobFlow success case", "Running", "runningJobs", "Running"),
        ("SyncJobFlow success case with vcjob Status Failed", "Failed", "failedJobs", "Failed"),
        (
            "SyncJobFlow success case with vcjob Status Terminated",
            "Terminated",
            "terminatedJobs",
            "Failed",
        ),
    ],
)
def test_sync_jobflow(case: str, job_phase: str, listed: str, flow_phase: str) -> None:
    """TestSyncJobFlowFunc."""
    jobflow = _jobflow()
    changes = sync_jobflow(
        jobflow, {"jobtemplate": _template("jobtemplate")},
        [_job("jobflow", "jobtemplate", job_phase)], NOW,
    )  # fmt: skip
    assert changes.error is None
    assert changes.create_jobs == []
    assert changes.status == {
        listed: ["jobflow-jobtemplate"],
        "jobStatusList": [
            {
                "name": "jobflow-jobtemplate",
                "state": job_phase,
                "runningHistories": [{"startTimestamp": NOW_TEXT, "state": job_phase}],
            }
        ],
        "conditions": {"jobflow-jobtemplate": {"phase": job_phase}},
        "state": {"phase": flow_phase},
    }


def test_get_running_histories() -> None:
    """TestGetRunningHistoriesFunc: an unchanged phase keeps the history as it was."""
    history = [{"startTimestamp": "2026-05-01T11:00:00Z", "endTimestamp":
                "2026-05-01T11:00:01Z", "state": "Completed"}]  # fmt: skip
    previous = [{"name": "vcJobA", "state": "Completed", "runningHistories": history}]
    job = {"metadata": {"name": "vcJobA"}, "status": {"state": {"phase": "Completed"}}}
    assert running_histories(previous, job, NOW) == history


def test_running_histories_close_the_last_phase_on_a_change() -> None:
    previous = [{"name": "j", "runningHistories": [{"startTimestamp": "t0", "state": "Pending"}]}]
    job = {"metadata": {"name": "j"}, "status": {"state": {"phase": "Running"}}}
    assert running_histories(previous, job, NOW) == [
        {"startTimestamp": "t0", "endTimestamp": NOW_TEXT, "state": "Pending"},
        {"startTimestamp": NOW_TEXT, "state": "Running"},
    ]
    assert running_histories([], {"metadata": {"name": "j"}}, NOW) == []


def test_get_all_jobs_created_by_jobflow() -> None:
    """TestGetAllJobsCreatedByJobFlow: only JobflowA's jobs, by the createdByJobFlow label."""
    jobs = [
        _job("JobflowA", "A", "Completed"),
        _job("JobflowA", "B", "Running"),
        _job("JobflowB", "A", "Completed"),
        _job("JobflowB", "B", "Running"),
    ]
    flow = _jobflow("JobflowA", [_flow("A"), _flow("B", "A")], policy=None)
    assert sorted(j["metadata"]["name"] for j in jobs_of(flow, jobs)) == [
        "JobflowA-A",
        "JobflowA-B",
    ]


def test_get_all_job_status() -> None:
    """TestGetAllJobStatusFunc."""
    flow = _jobflow("jobFlowA", [_flow("A"), _flow("B", "A")], policy=None)
    job_a = _job("jobFlowA", "A", "Completed", created="2026-05-01T10:00:00Z", retryCount=1,
                 runningDuration="1s")  # fmt: skip
    job_b = _job("jobFlowA", "B", "Running", created="2026-05-01T10:00:01Z")
    assert all_job_status(flow, [job_a, job_b], NOW) == {
        "runningJobs": ["jobFlowA-B"],
        "completedJobs": ["jobFlowA-A"],
        "jobStatusList": [
            {
                "name": "jobFlowA-A",
                "state": "Completed",
                "startTimestamp": "2026-05-01T10:00:00Z",
                "endTimestamp": "2026-05-01T10:00:01Z",
                "restartCount": 1,
                "runningHistories": [{"startTimestamp": NOW_TEXT, "state": "Completed"}],
            },
            {
                "name": "jobFlowA-B",
                "state": "Running",
                "startTimestamp": "2026-05-01T10:00:01Z",
                "runningHistories": [{"startTimestamp": NOW_TEXT, "state": "Running"}],
            },
        ],
        "conditions": {
            "jobFlowA-A": {
                "phase": "Completed",
                "createTime": "2026-05-01T10:00:00Z",
                "runningDuration": "1s",
            },
            "jobFlowA-B": {"phase": "Running", "createTime": "2026-05-01T10:00:01Z"},
        },
        "state": {},
    }


def test_load_job_template_and_set_job() -> None:
    """TestLoadJobTemplateAndSetJobFunc: owner reference, annotations and labels."""
    job = job_from_template(_jobflow(), _template("jobtemplate"), "jobtemplate")
    created_by = {
        "volcano.sh/createdByJobTemplate": "default.jobtemplate",
        "volcano.sh/createdByJobFlow": "default.jobflow",
    }
    assert job["metadata"] == {
        "name": "jobflow-jobtemplate",
        "namespace": "default",
        "labels": created_by,
        "annotations": created_by,
        "ownerReferences": [
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": "JobFlow",
                "name": "jobflow",
                "uid": "uid-jobflow",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    assert job["spec"] == JOB_SPEC
    assert job["kind"] == "Job"
    assert job["apiVersion"] == "batch.volcano.sh/v1alpha1"


def test_deploy_job() -> None:
    """TestDeployJobFunc: a flow without dependencies gets its job at once."""
    changes = sync_jobflow(_jobflow(), {"jobtemplate": _template("jobtemplate")}, [], NOW)
    assert changes.error is None
    assert [j["metadata"]["name"] for j in changes.create_jobs] == ["jobflow-jobtemplate"]
    assert changes.events == [("Normal", "Created", "create a job named jobflow-jobtemplate!")]
    assert changes.status == {"state": {"phase": "Pending"}}


def test_delete_all_jobs_created_by_jobflow() -> None:
    """TestDeleteAllJobsCreateByJobFlowFunc: a job not labelled as the flow's is left alone;
    with jobRetainPolicy delete, a succeeded flow's own jobs are deleted (and no status
    written)."""
    stranger = {"metadata": {"name": "jobtemplate", "namespace": "default"}, "spec": {}}
    own = _job("jobflow", "jobtemplate", "Completed")
    changes = sync_jobflow(_jobflow(policy="delete", phase="Succeed"), {}, [stranger, own], NOW)
    assert [(d.name, d.uid) for d in changes.delete_jobs] == [
        ("jobflow-jobtemplate", "uid-jobflow-jobtemplate")
    ]
    assert changes.status is None
    retained = sync_jobflow(_jobflow(policy="retain", phase="Succeed"), {}, [own], NOW)
    assert retained.delete_jobs == []
    assert retained.status is not None
    assert retained.status["state"] == {"phase": "Succeed"}


# -- jobflow_controller_util_test.go ---------------------------------------------------------------


def test_get_job_name() -> None:
    """TestGetJobNameFunc."""
    assert job_name("jobFlowA", "jobTemplateA") == "jobFlowA-jobTemplateA"


def test_get_connection_of_job_and_job_template() -> None:
    """TestGetConnectionOfJobAndJobTemplate (jobflow and jobtemplate packages)."""
    assert object_string("default", "flow") == "default.flow"


def test_get_jobflow_name_by_job() -> None:
    """TestGetJobFlowNameByJob."""
    job = {"metadata": {"ownerReferences": [
        {"apiVersion": "flow.volcano.sh/v1alpha1", "kind": "JobFlow", "name": "jobflowtest",
         "uid": ""}]}}  # fmt: skip
    assert jobflow_of_job(job) == "jobflowtest"
    assert jobflow_of_job({"metadata": {}}) is None


# -- state/running_test.go -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("case", "status", "flows", "want"),
    [
        ("all jobs completed settles to Succeed", {"completedJobs": ["job-a"]}, 1, "Succeed"),
        ("a failed job settles to Failed", {"failedJobs": ["job-a"]}, 1, "Failed"),
        ("a terminated job settles to Failed", {"terminatedJobs": ["job-a"]}, 1, "Failed"),
        (
            "not every job is done yet so it stays Running",
            {"completedJobs": ["job-a"]},
            2,
            "Running",
        ),
    ],
)
def test_running_state_execute(case: str, status: dict[str, Any], flows: int, want: str) -> None:
    """TestRunningStateExecute."""
    assert next_phase("Running", status, flows) == want


def test_pending_state() -> None:
    """state/pending.go: Running once a job runs or completed (none failed), Failed once one
    failed or was terminated, else Pending; Failed and Terminating never move."""
    assert next_phase("", {}, 2) == "Pending"
    assert next_phase("Pending", {"runningJobs": ["a"]}, 2) == "Running"
    assert next_phase("Pending", {"completedJobs": ["a"], "failedJobs": ["b"]}, 2) == "Failed"
    assert next_phase("Pending", {"terminatedJobs": ["a"]}, 2) == "Failed"
    assert next_phase("Failed", {"completedJobs": ["a", "b"]}, 2) == "Failed"


# -- the flow end to end ---------------------------------------------------------------------------


def test_a_flow_runs_in_dependency_order() -> None:
    flows = [_flow("a"), _flow("b", "a"), _flow("c", "a", "b")]
    templates = {name: _template(name) for name in "abc"}
    flow = _jobflow("f", flows)
    first = sync_jobflow(flow, templates, [], NOW)
    assert [j["metadata"]["name"] for j in first.create_jobs] == ["f-a"]
    running = sync_jobflow(flow, templates, [_job("f", "a", "Running")], NOW)
    assert running.create_jobs == []
    assert running.status is not None and running.status["state"] == {"phase": "Running"}
    a_done = [_job("f", "a", "Completed")]
    second = sync_jobflow(flow, templates, a_done, NOW)
    assert [j["metadata"]["name"] for j in second.create_jobs] == ["f-b"]
    both = [_job("f", "a", "Completed"), _job("f", "b", "Completed")]
    third = sync_jobflow(_jobflow("f", flows, phase="Running"), templates, both, NOW)
    assert [j["metadata"]["name"] for j in third.create_jobs] == ["f-c"]
    everything = [*both, _job("f", "c", "Completed")]
    last = sync_jobflow(_jobflow("f", flows, phase="Running"), templates, everything, NOW)
    assert last.status is not None and last.status["state"] == {"phase": "Succeed"}
    assert last.status["completedJobs"] == ["f-a", "f-b", "f-c"]


def test_jobs_that_completed_before_the_flow_saw_them_settle_to_succeed() -> None:
    """Upstream needs one more job event to go Pending -> Running -> Succeed; settled here."""
    changes = sync_jobflow(_jobflow(phase="Pending"), {}, [_job("jobflow", "jobtemplate",
                           "Completed")], NOW)  # fmt: skip
    assert changes.status is not None and changes.status["state"] == {"phase": "Succeed"}


def test_a_missing_template_is_an_error_and_writes_no_status() -> None:
    changes = sync_jobflow(_jobflow(), {}, [], NOW)
    assert changes.error == "JobTemplate default/jobtemplate of flow 'jobtemplate' not found"
    assert changes.status is None


def test_failed_and_terminating_flows_do_nothing() -> None:
    for phase in ("Failed", "Terminating"):
        changes = sync_jobflow(_jobflow(phase=phase), {"jobtemplate": _template("jobtemplate")},
                               [], NOW)  # fmt: skip
        assert (changes.create_jobs, changes.status, changes.error) == ([], None, None)


def test_a_duplicate_flow_name_creates_one_job() -> None:
    flow = _jobflow("f", [_flow("a"), _flow("a")])
    changes = sync_jobflow(flow, {"a": _template("a")}, [], NOW)
    assert [j["metadata"]["name"] for j in changes.create_jobs] == ["f-a"]


def test_job_phase_histories_are_kept_across_syncs() -> None:
    earlier = {"jobStatusList": [{"name": "jobflow-jobtemplate", "state": "Pending",
               "runningHistories": [{"startTimestamp": "t0", "state": "Pending"}]}]}  # fmt: skip
    changes = sync_jobflow(_jobflow(phase="Pending", flow_status=earlier), {},
                           [_job("jobflow", "jobtemplate", "Running")], NOW)  # fmt: skip
    assert changes.status is not None
    assert changes.status["jobStatusList"][0]["runningHistories"] == [
        {"startTimestamp": "t0", "endTimestamp": NOW_TEXT, "state": "Pending"},
        {"startTimestamp": NOW_TEXT, "state": "Running"},
    ]


# -- pkg/controllers/jobtemplate ------------------------------------------------------------------


def test_sync_job_template() -> None:
    """TestSyncJobTemplateFunc: the jobs labelled as made from the template, in its status."""
    template = _template("jobtemplate")
    job = _job("jobflow", "jobtemplate", None)
    job["metadata"]["name"] = "job1"
    assert job_template_status(template, [job]) == {"jobDependsOnList": ["job1"]}
    assert job_template_status(template, []) is None


def test_add_job() -> None:
    """TestAddJob (jobtemplate handler): the template key from the createdByJobTemplate label."""
    job = {"metadata": {"labels": {CREATED_BY_JOB_TEMPLATE: "default.jobtemplate1"}}}
    assert template_of_job(job) == "default/jobtemplate1"
    assert template_of_job({"metadata": {"labels": {CREATED_BY_JOB_TEMPLATE: "a.b.c"}}}) is None
    assert template_of_job({"metadata": {}}) is None
