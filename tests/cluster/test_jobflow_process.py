"""`volcano-py controllers` and a Volcano JobFlow against the real control plane: JobTemplates
``a`` and ``b`` and a JobFlow ``a -> b`` (b dependsOn a). The controllers create the Job
``<flow>-a`` at once and ``<flow>-b`` only once ``<flow>-a`` has completed (kwok completes the
pods; b's creation time is not before a's Completed transition), the flow's status goes to
Succeed with ``jobRetainPolicy: retain`` keeping both jobs; patching the policy to ``delete``
then deletes them (upstream's update handler). The templates' status lists their jobs.

The controllers run under the rules of ``deploy/base/controllers-rbac.yaml``, so a missing
rule (jobflows/status update, jobs create/delete) fails this test.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
import test_controllers_process
import test_scheduler_process
from test_controllers_process import JOB_PATH, job_manifest
from test_scheduler_process import SchedulerProcess, wait_until

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import ControlPlane

pytestmark = pytest.mark.cluster

scheduler_name = test_scheduler_process.scheduler_name
scheduler_rbac = test_scheduler_process.scheduler_rbac
start_scheduler = test_scheduler_process.start_scheduler
controllers = test_controllers_process.controllers

FLOW_PATH = "/apis/flow.volcano.sh/v1alpha1"


def _get(plane: ControlPlane, path: str) -> dict[str, Any]:
    found: dict[str, Any] = plane.request("GET", path)
    return found


def _jobs(plane: ControlPlane, namespace: str) -> dict[str, dict[str, Any]]:
    items = plane.request("GET", f"{JOB_PATH}/namespaces/{namespace}/jobs")["items"]
    return {job["metadata"]["name"]: job for job in items}


def test_flow_a_then_b(
    controllers: ControllersProcess,
    start_scheduler: Callable[..., SchedulerProcess],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
) -> None:
    make_nodes("cpu", 1)
    scheduler = start_scheduler()
    scheduler.wait_ready()
    for template_name in ("a", "b"):
        control_plane.create(
            {
                "apiVersion": "flow.volcano.sh/v1alpha1",
                "kind": "JobTemplate",
                "metadata": {"name": template_name},
                "spec": job_manifest("unused", scheduler_name, replicas=1)["spec"],
            },
            namespace,
        )
    control_plane.create(
        {
            "apiVersion": "flow.volcano.sh/v1alpha1",
            "kind": "JobFlow",
            "metadata": {"name": "pipeline"},
            "spec": {
                "jobRetainPolicy": "retain",
                "flows": [{"name": "a"}, {"name": "b", "dependsOn": {"targets": ["a"]}}],
            },
        },
        namespace,
    )
    flow_path = f"{FLOW_PATH}/namespaces/{namespace}/jobflows/pipeline"

    def diagnose() -> str:
        phases = {
            name: (job.get("status") or {}).get("state")
            for name, job in _jobs(control_plane, namespace).items()
        }
        return "\n".join([
            f"jobflow: {_get(control_plane, flow_path).get('status')}",
            f"jobs: {phases}",
            controllers.log(40),
        ])  # fmt: skip

    def phase() -> str:
        state = (_get(control_plane, flow_path).get("status") or {}).get("state") or {}
        return str(state.get("phase") or "")

    wait_until("the flow Succeed", lambda: phase() == "Succeed", timeout=90.0, diagnose=diagnose)
    jobs = _jobs(control_plane, namespace)
    assert sorted(jobs) == ["pipeline-a", "pipeline-b"]
    job_a, job_b = jobs["pipeline-a"], jobs["pipeline-b"]
    assert job_a["metadata"]["labels"] == {
        "volcano.sh/createdByJobFlow": f"{namespace}.pipeline",
        "volcano.sh/createdByJobTemplate": f"{namespace}.a",
    }
    owner = job_a["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("JobFlow", "pipeline", True)
    # b was created only once a had completed (both in whole seconds).
    a_completed = [
        condition["lastTransitionTime"]
        for condition in job_a["status"]["conditions"]
        if condition["status"] == "Completed"
    ]
    assert a_completed, job_a["status"]
    assert _moment(job_b["metadata"]["creationTimestamp"]) >= _moment(a_completed[0])
    assert job_b["status"]["state"]["phase"] == "Completed"
    flow_status = _get(control_plane, flow_path)["status"]
    assert flow_status["completedJobs"] == ["pipeline-a", "pipeline-b"]
    assert set(flow_status["conditions"]) == {"pipeline-a", "pipeline-b"}
    template_a = _get(control_plane, f"{FLOW_PATH}/namespaces/{namespace}/jobtemplates/a")
    assert template_a.get("status") == {"jobDependsOnList": ["pipeline-a"]}

    # jobRetainPolicy delete on a succeeded flow: its jobs are deleted.
    control_plane.request(
        "PATCH", flow_path, {"spec": {"jobRetainPolicy": "delete"}},
        content_type="application/merge-patch+json",
    )  # fmt: skip
    wait_until(
        "jobRetainPolicy delete",
        lambda: not _jobs(control_plane, namespace),
        timeout=30.0,
        diagnose=diagnose,
    )
    assert controllers.forbidden() == []


def _moment(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))
