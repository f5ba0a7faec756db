"""User guide ``how_to_configure_priorityclass_for_job``: a task without its own
``priorityClassName`` takes the job's (and its priority); a task that names one keeps it, and
its priority counts: on a node with room for one pod, the task of priority 10 runs first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.guides.guide_sim import node, placements, pod, simulate, task, vcjob


def _priority_class(name: str, value: int, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": name},
        "value": value,
        **extra,
    }


def test_task_class_overrides_the_jobs(tmp_path: Path) -> None:
    job = vcjob(
        "job",
        [
            task("preempt-task", 1, priorityClassName="task-priority"),
            task("non-preempt-task", 1),
        ],
        priorityClassName="job-priority",
        minAvailable=1,
    )
    objects_in = [
        node("n1", cpu="1"),
        _priority_class("job-priority", 1, preemptionPolicy="Never"),
        _priority_class("task-priority", 10),
        job,
    ]
    report, objects, _ = simulate(tmp_path, objects_in)
    preempt = pod(objects, "job-preempt-task-0")["spec"]
    plain = pod(objects, "job-non-preempt-task-0")["spec"]
    assert preempt["priorityClassName"] == "task-priority"
    assert plain["priorityClassName"] == "job-priority"
    assert placements(report) == {
        "default/job-preempt-task-0": "n1",
        "default/job-non-preempt-task-0": None,
    }
