"""The installed ``vcctl`` (and vjobs, vqueues, vsuspend, vresume, vcancel) against the real
API server, with ``volcano-py controllers`` and ``volcano-py scheduler`` running.

One story, as a user would tell it: create a queue and operate it (close, open, update its
weight); run a job into it from a file and another from flags; list and view them; suspend
the first while it waits for nodes (the job controller consumes the Command: Aborted), resume
it once there are nodes (it runs to completion); list its pods; delete the jobs and the queue.
Every command runs as a separate process through its console script, with the control plane's
admin kubeconfig in ``KUBECONFIG``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import test_controllers_process
import test_scheduler_process
import yaml
from test_controllers_process import BUS_PATH, JOB_PATH, job_manifest, job_phase
from test_scheduler_process import PG_PATH, SchedulerProcess, wait_until

from e2e.controllers_process import ControllersProcess
from e2e.controlplane import ApiError, ControlPlane

pytestmark = pytest.mark.cluster

scheduler_name = test_scheduler_process.scheduler_name
scheduler_rbac = test_scheduler_process.scheduler_rbac
start_scheduler = test_scheduler_process.start_scheduler
controllers = test_controllers_process.controllers

BIN = Path(sys.executable).parent


def cli(tool: str, *argv: str) -> subprocess.CompletedProcess[str]:
    """One run of an installed console script (KUBECONFIG: the control plane's admin)."""
    return subprocess.run(
        [str(BIN / tool), *argv],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
        check=False,
    )


def ok(tool: str, *argv: str) -> str:
    result = cli(tool, *argv)
    assert result.returncode == 0, (tool, argv, result.stdout, result.stderr)
    assert "Traceback" not in result.stderr
    return result.stdout


def queue_state(name: str) -> str:
    rows = ok("vcctl", "queue", "get", "-n", name).splitlines()
    return rows[1].split()[2] if len(rows[1].split()) > 2 else ""


def view_phase(namespace: str, name: str) -> str:
    for line in ok("vcctl", "job", "view", "-n", namespace, "-N", name).splitlines():
        if line.startswith("    Phase:\t"):
            return line.split("\t", 1)[1]
    return ""


def test_vcctl_queue_and_job_lifecycle(
    controllers: ControllersProcess,
    start_scheduler: Callable[..., SchedulerProcess],
    control_plane: ControlPlane,
    namespace: str,
    make_nodes: Callable[..., list[str]],
    scheduler_name: str,
    tmp_path: Path,
) -> None:
    queue = f"q-{namespace[-6:]}"
    scheduler = start_scheduler()
    scheduler.wait_ready()
    try:
        _queue_verbs(control_plane, queue)
        _job_story(control_plane, namespace, queue, scheduler_name, tmp_path, make_nodes)
    finally:
        with contextlib.suppress(ApiError):
            control_plane.request("DELETE", f"{PG_PATH}/queues/{queue}")
    assert controllers.forbidden() == []


def _queue_verbs(plane: ControlPlane, queue: str) -> None:
    assert ok("vcctl", "queue", "create", "-n", queue, "-w", "2") == ""
    wait_until("the queue Open", lambda: queue_state(queue) == "Open")
    listed = ok("vcctl", "queue", "list").splitlines()
    assert listed[0].split() == ["Name", "Weight", "State", "Parent", "Inqueue", "Pending",
                                 "Running", "Unknown", "Completed"]  # fmt: skip
    row = next(line for line in listed if line.startswith(queue + " "))
    assert row.split() == [queue, "2", "Open", "root", "0", "0", "0", "0", "0"]
    assert ok("vcctl", "queue", "operate", "-n", queue, "-a", "close") == ""
    wait_until("the queue Closed", lambda: queue_state(queue) == "Closed")
    ok("vcctl", "queue", "operate", "-n", queue, "-a", "open")
    wait_until("the queue Open again", lambda: queue_state(queue) == "Open")
    ok("vcctl", "queue", "operate", "-n", queue, "-a", "update", "-w", "5")
    assert ok("vqueues", "-n", queue).splitlines()[1].split()[:3] == [queue, "5", "Open"]

    # The queue Commands were created in namespace default, as upstream, and consumed.
    def ours_left() -> list[object]:
        items = plane.request("GET", f"{BUS_PATH}/namespaces/default/commands")["items"]
        return [c for c in items if (c.get("target") or {}).get("name") == queue]

    wait_until("the queue's Commands consumed", lambda: ours_left() == [])
    missing = cli("vcctl", "queue", "get", "-n", "no-such-queue-x")
    assert missing.returncode == 255
    assert missing.stdout == (
        'Failed to get queue: queues.scheduling.volcano.sh "no-such-queue-x" not found\n'
    )


def _job_story(
    plane: ControlPlane,
    namespace: str,
    queue: str,
    scheduler_name: str,
    tmp_path: Path,
    make_nodes: Callable[..., list[str]],
) -> None:
    manifest = job_manifest("job1", scheduler_name, replicas=2, queue=queue)
    manifest["metadata"]["namespace"] = namespace
    job_file = tmp_path / "job1.yaml"
    job_file.write_text(yaml.safe_dump(manifest))
    assert ok("vcctl", "job", "run", "-n", namespace, "-f", str(job_file)) == (
        "run job job1 successfully\n"
    )
    assert ok(
        "vcctl", "job", "run", "-n", namespace, "-N", "job2", "-S", "nobody-schedules-this",
        "-r", "3", "-m", "2", "-R", "cpu=500m,memory=64Mi",
    ) == "run job job2 successfully\n"  # fmt: skip
    job2 = plane.request("GET", f"{JOB_PATH}/namespaces/{namespace}/jobs/job2")
    container = job2["spec"]["tasks"][0]["template"]["spec"]["containers"][0]
    assert container["resources"]["requests"] == {"cpu": "500m", "memory": "64Mi"}
    assert container["resources"]["limits"] == {"cpu": "1", "memory": "100Mi"}

    # No nodes yet: job1 waits Pending.
    wait_until("job1 Pending", lambda: view_phase(namespace, "job1") == "Pending")
    listed = ok("vcctl", "job", "list", "-n", namespace, "--queue", queue).splitlines()
    assert listed[0].split()[:4] == ["Name", "Creation", "Phase", "JobType"]
    assert [line.split()[0] for line in listed[1:]] == ["job1"]
    assert listed[1].split()[2:5] == ["Pending", "Batch", "2"]
    everywhere = ok("vcctl", "job", "list", "--all-namespaces", "--selector", "job").splitlines()
    assert everywhere[0].startswith("Namespace")
    assert {(r.split()[0], r.split()[1]) for r in everywhere[1:]} >= {
        (namespace, "job1"), (namespace, "job2"),
    }  # fmt: skip
    view = ok("vcctl", "job", "view", "-n", namespace, "-N", "job1")
    assert f"Namespace:  \t{namespace}\n" in view
    assert f"  Scheduler Name:    \t{scheduler_name}\n" in view
    assert "          Image:\tbusybox\n" in view

    # Suspend: an AbortJob Command the job controller consumes.
    assert ok("vcctl", "job", "suspend", "-n", namespace, "-N", "job1") == ""
    wait_until("job1 Aborted", lambda: job_phase(plane, namespace, "job1") == "Aborted")
    commands = f"{BUS_PATH}/namespaces/{namespace}/commands"
    wait_until("the Commands consumed", lambda: plane.request("GET", commands)["items"] == [])

    # Resume once there are nodes: it runs to completion (kwok completes the pods).
    make_nodes("cpu", 2)
    assert ok("vresume", "-N", namespace, "-n", "job1") == ""
    wait_until("job1 Completed", lambda: job_phase(plane, namespace, "job1") == "Completed", 60.0)
    assert "Completed" in ok("vjobs", "-N", namespace, "--selector", "job1")
    pods = ok("vcctl", "pod", "list", "-n", namespace, "-j", "job1").splitlines()
    assert pods[0].split() == ["Name", "Ready", "Status", "Restart", "Age"]
    assert sorted(line.split()[0] for line in pods[1:]) == ["job1-worker-0", "job1-worker-1"]

    # vsuspend on job2 creates its Command too; then delete both jobs.
    assert ok("vsuspend", "-N", namespace, "-n", "job2") == ""
    assert ok("vcctl", "job", "delete", "-n", namespace, "-N", "job1") == (
        "delete job job1 successfully\n"
    )
    assert ok("vcancel", "-N", namespace, "-n", "job2") == "cancel job job2 successfully\n"
    wait_until(
        "both jobs gone",
        lambda: ok("vcctl", "job", "list", "-n", namespace) == "No resources found\n",
    )
    missing = cli("vcctl", "job", "view", "-n", namespace, "-N", "job1")
    assert missing.returncode == 255
    assert missing.stdout == 'Failed to view job: jobs.batch.volcano.sh "job1" not found\n'

    assert ok("vcctl", "queue", "delete", "-n", queue) == ""
    gone = cli("vcctl", "queue", "get", "-n", queue)
    assert gone.returncode == 255 and "not found" in gone.stdout
