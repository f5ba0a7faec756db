"""User guide ``how_to_use_job_policy``: an event (or events) and an action, at job or task
level; a task's policy wins over the job's; ``timeout`` delays the action. Example 1: a job
level ``PodEvicted -> RestartJob`` holds for every task. Example 2: a task's ``[PodEvicted,
PodFailed] -> RestartJob``. Example 3: the ps task restarts its pod on ``PodFailed`` and the job
10 minutes after ``PodEvicted``; the workers' ``TaskCompleted -> CompleteJob`` completes the job
when both workers succeed, killing the ps still running.

Example 3 as published writes ``events: PodFailed`` (a string where the CRD wants a list; the
API server refuses it): the scenario here uses the list form. Pods that fail or are evicted in
``simulate`` need its run-time annotations (``exit-code``, ``evict-after-cycles``), not there
yet, so those events are fed to the controller's policy choice directly."""

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
