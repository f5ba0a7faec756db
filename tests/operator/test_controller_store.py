"""The live controllers' ObjectStore keeps its indexes (a job's pods by task, a queue's
PodGroups by phase, objects by namespace) in step with the events it applies."""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

# The controller tests' fixtures (Jobs and the pods the job controller makes for them).
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "controllers"))

from controller_fixtures import job, job_pod, task

from volcano_py.controllers.job_pod_index import TaskTally
from volcano_py.operator.controllers.store import ObjectStore

OWNER = job("job1", task("worker", 2), task("ps", 1))


def _versioned(obj: dict[str, Any], version: int) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    obj["metadata"]["resourceVersion"] = str(version)
    return obj


def _pod_group(name: str, queue: str, phase: str, version: int) -> dict[str, Any]:
    return {
        "kind": "PodGroup",
        "metadata": {"name": name, "namespace": "default", "resourceVersion": str(version)},
        "spec": {"queue": queue},
        "status": {"phase": phase},
    }


def test_pods_of_job_follow_adds_updates_and_deletes() -> None:
    store = ObjectStore()
    worker = _versioned(job_pod(OWNER, "worker", 0, "Running"), 1)
    ps = _versioned(job_pod(OWNER, "ps", 0, "Pending"), 2)
    store.apply("Pod", "ADDED", worker)
    store.apply("Pod", "ADDED", ps)
    pods = store.pods_of_job("default/job1")
    assert set(pods.by_task) == {"worker", "ps"}

    done = _versioned(job_pod(OWNER, "worker", 0, "Succeeded"), 3)
    store.apply("Pod", "MODIFIED", done)
    assert store.pods_of_job("default/job1").tally("worker") == TaskTally(succeeded=1)
    # An older version that arrives late is not applied, nor filed.
    store.apply("Pod", "MODIFIED", worker)
    assert store.pods_of_job("default/job1").by_task["worker"]["job1-worker-0"] is done

    store.apply("Pod", "DELETED", ps)
    assert set(store.pods_of_job("default/job1").by_task) == {"worker"}
    assert [p["metadata"]["name"] for p in store.pods_of_job("default/job1").pods()] == [
        "job1-worker-0"
    ]
    assert [key for key, _ in store.in_namespace("Pod", "default")] == ["default/job1-worker-0"]


def test_pod_group_phases_of_a_queue_are_counted_as_they_change() -> None:
    store = ObjectStore()
    store.apply("PodGroup", "ADDED", _pod_group("a", "q1", "Pending", 1))
    store.apply("PodGroup", "ADDED", _pod_group("b", "q1", "Running", 2))
    store.apply("PodGroup", "ADDED", _pod_group("c", "q2", "Running", 3))
    assert store.pod_group_phases_of_queue("q1") == {"Pending": 1, "Running": 1}
    store.apply("PodGroup", "MODIFIED", _pod_group("a", "q1", "Running", 4))
    assert store.pod_group_phases_of_queue("q1") == {"Running": 2}
    # Moved to another queue.
    store.apply("PodGroup", "MODIFIED", _pod_group("b", "q2", "Running", 5))
    assert store.pod_group_phases_of_queue("q1") == {"Running": 1}
    assert store.pod_group_phases_of_queue("q2") == {"Running": 2}
    store.apply("PodGroup", "DELETED", _pod_group("c", "q2", "Running", 6))
    assert store.pod_group_phases_of_queue("q2") == {"Running": 1}
    assert store.pod_group_phases_of_queue("nowhere") == {}
