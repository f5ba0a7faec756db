"""Upstream ``pkg/scheduler/actions/backfill/backfill_test.go`` transcribed.

``TestPickUpPendingTasks`` is a white-box test of ``pickUpPendingTasks``; our counterpart is
``Backfill._pending_best_effort_tasks``. ``TestBackfillWithShard`` (backfill_shard_test.go) needs
scheduler sharding, which volcano-py does not implement.
"""

from __future__ import annotations

import contextlib

import pytest
from builders import build_pod, build_pod_group, build_priority_class, build_queue
from harness import Case
from upstream_fixtures import open_case_session

from volcano_py.actions.backfill import Backfill
from volcano_py.framework.statement import StatementError

PICK_UP_TIER = {
    "priority": ["enablePreemptable", "enableTaskOrder", "enableJobOrder"],
    "drf": ["enableQueueOrder"],
}


def _pod(name: str, best_effort: bool, group: str, priority: int) -> dict:
    requests = {} if best_effort else {"cpu": "500m"}
    return build_pod("default", name, "", "Pending", requests, group, priority=priority)


def _pods(group: str, indices: tuple[int, ...]) -> list[dict]:
    pods = []
    for index in indices:
        pods.append(_pod(f"{group}-besteffort-task-{index}", True, group, index))
        pods.append(_pod(f"{group}-unbesteffort-task-{index}", False, group, index))
    return pods


def test_pick_up_pending_tasks() -> None:
    """backfill_test.go TestPickUpPendingTasks, case "test".

    The "pipelined" pods are pipelined onto "node1", a node the session does not have; upstream's
    ``Statement.Pipeline`` then fails and rolls the task back to Pending (the test ignores the
    error), so they are picked up like the pending ones."""
    pending = _pods("pg1", (1, 3)) + _pods("pg2", (1, 3))
    pipelined = _pods("pg1", (2, 4)) + _pods("pg2", (2, 4))
    case = Case(
        name="test",
        plugins=PICK_UP_TIER,
        queues=[build_queue("q1", 1, None)],
        pod_groups=[
            build_pod_group(
                "pg1", "default", "q1", 1, {"": 3}, "Inqueue", priority_class_name="job-priority-1"
            ),
            build_pod_group(
                "pg2", "default", "q1", 1, {"": 3}, "Inqueue", priority_class_name="job-priority-2"
            ),
        ],
        priority_classes=[
            build_priority_class("job-priority-1", 1),
            build_priority_class("job-priority-2", 2),
        ],
        pods=pending + pipelined,
    )
    ssn = open_case_session(case)
    for pod in pipelined:
        meta = pod["metadata"]
        job = ssn.jobs[f"default/{meta['annotations']['scheduling.k8s.io/group-name']}"]
        task = next(t for t in job.tasks.values() if t.name == meta["name"])
        statement = ssn.statement()
        with contextlib.suppress(StatementError):
            statement.pipeline(task, "node1", False)

    tasks = Backfill._pending_best_effort_tasks(ssn)

    assert [task.name for task in tasks] == [
        "pg2-besteffort-task-4",
        "pg2-besteffort-task-3",
        "pg2-besteffort-task-2",
        "pg2-besteffort-task-1",
        "pg1-besteffort-task-4",
        "pg1-besteffort-task-3",
        "pg1-besteffort-task-2",
        "pg1-besteffort-task-1",
    ]


@pytest.mark.parametrize(
    "upstream",
    [
        "hard sharding mode - backfill to node in shard",
        "soft sharding mode - prefer node in shard",
        "soft sharding mode - identical nodes prefer shard node",
    ],
)
def test_backfill_with_shard(upstream: str) -> None:
    """backfill_shard_test.go TestBackfillWithShard."""
    pytest.skip(f"{upstream}: scheduler sharding is not implemented in volcano-py")
