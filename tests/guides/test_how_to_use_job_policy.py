"""User guide ``how_to_use_job_policy``: an event (or events) and an action, at job or task
level; a task's policy wins over the job's; ``timeout`` delays the action. Example 1: a job
level ``PodEvicted -> RestartJob`` holds for every task. Example 2: a task's ``[PodEvicted,
PodFailed] -> RestartJob``. Example 3: the ps task restarts its pod on ``PodFailed`` and the job
10 minutes after ``PodEvicted``; the workers' ``TaskCompleted -> CompleteJob`` completes the job
when both workers succeed, killing the ps still running.

Example 3 as published writes ``events: PodFailed`` (a string where the CRD wants a list; the
API server refuses it): the scenario here uses the list form. The policy choices are checked
on the controller's policy code directly, and example 2 runs end to end in ``simulate`` with a
worker that fails (``volcano-py.sim/exit-code``) and one that is evicted
(``volcano-py.sim/evict-after-cycles``)."""

from __future__ import annotations

from pathlib import Path

from tests.guides.guide_sim import node, simulate, task, vcjob
from volcano_py.controllers.job_policy import apply_policies
from volcano_py.controllers.job_types import JobRequest

JOB = "tensorflow-dist-mnist"
COMPLETE_ON_WORKERS = [{"event": "TaskCompleted", "action": "CompleteJob"}]


def _decision(job: dict, event: str, task_name: str) -> tuple[str, float]:
    decision = apply_policies(job, JobRequest(event=event, task_name=task_name))
    return decision.action, decision.delay_seconds


def test_policies_choose_the_guides_actions() -> None:
    example_1 = vcjob(
        JOB,
        [task("ps", 1), task("worker", 2)],
        policies=[{"event": "PodEvicted", "action": "RestartJob"}],
    )
    assert _decision(example_1, "PodEvicted", "worker")[0] == "RestartJob"
    assert _decision(example_1, "PodFailed", "worker")[0] == "SyncJob"
    example_2 = vcjob(
        JOB,
        [
            task(
                "ps", 1, policies=[{"events": ["PodEvicted", "PodFailed"], "action": "RestartJob"}]
            ),
            task("worker", 2),
        ],
    )
    assert _decision(example_2, "PodFailed", "ps")[0] == "RestartJob"
    assert _decision(example_2, "PodFailed", "worker")[0] == "SyncJob"
    example_3 = vcjob(
        JOB,
        [
            task(
                "ps",
                1,
                policies=[
                    {"events": ["PodFailed"], "action": "RestartPod"},
                    {"events": ["PodEvicted"], "action": "RestartJob", "timeout": "10m"},
                ],
            ),
            task("worker", 2, policies=COMPLETE_ON_WORKERS),
        ],
        policies=[{"event": "PodFailed", "action": "AbortJob"}],
    )
    assert _decision(example_3, "PodFailed", "ps") == ("RestartPod", 0)
    assert _decision(example_3, "PodEvicted", "ps") == ("RestartJob", 600)
    # The task has no PodFailed policy: the job's applies.
    assert _decision(example_3, "PodFailed", "worker")[0] == "AbortJob"


def test_task_completed_completes_the_job(tmp_path: Path) -> None:
    two_cycles = {"volcano-py.sim/run-cycles": "2"}
    job = vcjob(
        JOB,
        [
            task("ps", 1),
            task("worker", 2, annotations=two_cycles, policies=COMPLETE_ON_WORKERS),
        ],
        minAvailable=3,
        plugins={"env": [], "svc": []},
        queue="default",
    )
    report, _, _ = simulate(tmp_path, [node("n1"), job])
    assert report["jobs"][f"default/{JOB}"]["phase"] == "Completed"
    phases = {name: entry["phase"] for name, entry in report["pods"].items()}
    # CompleteJob kills the ps pod still running.
    assert phases == {
        f"default/{JOB}-worker-0": "Succeeded",
        f"default/{JOB}-worker-1": "Succeeded",
        f"default/{JOB}-ps-0": "Deleted",
    }


def _example_2(tmp_path: Path, annotation: dict[str, str]) -> dict:
    worker = task(
        "worker", 1,
        annotations={"volcano-py.sim/run-cycles": "2", **annotation},
        policies=[{"events": ["PodEvicted", "PodFailed"], "action": "RestartJob"}],
    )  # fmt: skip
    job = vcjob(JOB, [task("ps", 1), worker], minAvailable=2, maxRetry=2)
    report, _objects, _err = simulate(tmp_path, [node("n1"), job])
    result: dict = report["jobs"][f"default/{JOB}"]
    return result


def test_example_2_a_failing_worker_restarts_the_job_until_max_retry(tmp_path: Path) -> None:
    """Each PodFailed restarts the whole job; after maxRetry (2) restarts it is Failed."""
    assert _example_2(tmp_path, {"volcano-py.sim/exit-code": "1"}) == {
        "phase": "Failed", "retryCount": 2,
    }  # fmt: skip


def test_example_2_an_evicted_worker_restarts_the_job_too(tmp_path: Path) -> None:
    job = _example_2(tmp_path, {"volcano-py.sim/evict-after-cycles": "1"})
    assert job["retryCount"] == 2 and job["phase"] == "Failed"
