"""`volcano-py controllers` and a Volcano CronJob against the real control plane: a CronJob on
``* * * * *`` gets its Job ``<cronjob>-<minutes since the epoch>`` at the next minute
boundary (so this test waits up to a minute for it), the Job runs to completion on kwok, and
``successfulJobsHistoryLimit: 0`` then deletes it, leaving ``status.lastSuccessfulTime``.

The controllers run under the rules of ``deploy/base/controllers-rbac.yaml``, so a missing
rule (jobs create/delete, cronjobs/status update) fails this test.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
import test_controllers_process
import test_scheduler_process
from test_controllers_process import JOB_PATH, job_manifest, job_phase
from test_scheduler_process import SchedulerProcess, wait_until

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import ApiError, ControlPlane

pytestmark = pytest.mark.cluster

scheduler_name = test_scheduler_process.scheduler_name
scheduler_rbac = test_scheduler_process.scheduler_rbac
start_scheduler = test_scheduler_process.start_scheduler
controllers = test_controllers_process.controllers


def _cronjob(plane: ControlPlane, namespace: str, name: str) -> dict[str, Any]:
    found: dict[str, Any] = plane.request(
        "GET", f"{JOB_PATH}/namespaces/{namespace}/cronjobs/{name}"
    )
    return found


def _jobs(plane: ControlPlane, namespace: str) -> dict[str, dict[str, Any]]:
    items = plane.request("GET", f"{JOB_PATH}/namespaces/{namespace}/jobs")["items"]
    return {job["metadata"]["name"]: job for job in items}


def test_every_minute_cronjob_creates_its_job_and_the_history_limit_deletes_it(
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
    template = job_manifest("unused", scheduler_name, replicas=1)
    control_plane.create(
        {
            "apiVersion": "batch.volcano.sh/v1alpha1",
            "kind": "CronJob",
            "metadata": {"name": "every-minute"},
            "spec": {
                "schedule": "* * * * *",
                "successfulJobsHistoryLimit": 0,
                "jobTemplate": {
                    "metadata": {"labels": {"made-by": "cron"}},
                    "spec": template["spec"],
                },
            },
        },
        namespace,
    )
    created = _cronjob(control_plane, namespace, "every-minute")
    # The CRD's defaults, as upstream's.
    assert created["spec"]["concurrencyPolicy"] == "Allow"
    assert created["spec"]["failedJobsHistoryLimit"] == 1
    assert created["spec"]["suspend"] is False

    def diagnose() -> str:
        return "\n".join([
            f"cronjob: {_cronjob(control_plane, namespace, 'every-minute').get('status')}",
            f"jobs: {sorted(_jobs(control_plane, namespace))}",
            controllers.log(40),
        ])  # fmt: skip

    seen: dict[str, dict[str, Any]] = {}

    def job_created() -> bool:
        seen.update(_jobs(control_plane, namespace))
        return bool(seen)

    # The first schedule time is the next minute boundary after the CronJob's creation.
    wait_until("the CronJob's first Job", job_created, timeout=75.0, diagnose=diagnose)
    [(job_name, job)] = seen.items()
    minutes = int(job_name.removeprefix("every-minute-"))
    scheduled = datetime.fromtimestamp(minutes * 60, UTC)
    assert job["metadata"]["labels"] == {"made-by": "cron"}
    assert job["metadata"]["annotations"]["volcano.sh/cronjob-scheduled-timestamp"] == (
        scheduled.strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    owner = job["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("CronJob", "every-minute", True)
    status = _cronjob(control_plane, namespace, "every-minute").get("status") or {}
    assert status.get("lastScheduleTime") == scheduled.strftime("%Y-%m-%dT%H:%M:%SZ")

    # kwok completes the pod at once, the Job completes, and the limit of 0 deletes it.
    def deleted() -> bool:
        try:
            return job_phase(control_plane, namespace, job_name) == "NotFound"
        except ApiError as error:
            return error.status == 404

    def retired() -> bool:
        # The controller deletes the Job first and writes the CronJob's status after (as
        # upstream's syncCronJob): read right after the deletion, the status may lag.
        if not deleted():
            return False
        status = _cronjob(control_plane, namespace, "every-minute").get("status") or {}
        return bool(status.get("lastSuccessfulTime"))

    # Scheduler, kwok and two controllers in turn: generous on a loaded 2-core machine.
    wait_until(
        "the completed Job deleted and its success recorded",
        retired,
        timeout=60.0,
        diagnose=diagnose,
    )
    status = _cronjob(control_plane, namespace, "every-minute").get("status") or {}
    assert status.get("lastSuccessfulTime")
    # The deleted job has left status.active. (The next minute may already have started
    # the next job, which is then the only one there.)
    active = [ref["name"] for ref in status.get("active") or []]
    assert job_name not in active
    assert all(name > job_name for name in active)
    assert controllers.forbidden() == []
