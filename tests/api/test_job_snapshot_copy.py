"""``JobInfo.snapshot_copy`` built in one constructor call (``job._FLAT_SNAPSHOT_COPY``, issue
14, "Session": a snapshot takes one copy per job, 5k running jobs at 5k nodes) gives the copy
``_shell`` and its containers give: the same fields, the same containers (its own), the same
Pending tasks cloned and the others shared, the same sub-jobs.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.builders import build_pod, build_pod_group, build_sub_group_policy
from volcano_py.api import job as job_module
from volcano_py.api.job import JobInfo, PodGroupInfo
from volcano_py.api.task import TaskInfo


def _job(policies: list[dict[str, Any]] | None, default_sub_job: bool) -> JobInfo:
    group = build_pod_group("pg1", "ns", "q", 2, sub_group_policy=policies)
    group["status"] = {
        "phase": "Running",
        "running": 1,
        "conditions": [{"type": "Scheduled", "status": "True", "transitionID": "s-1"}],
    }
    job = JobInfo(uid="ns/pg1")
    job.set_pod_group(PodGroupInfo.from_dict(group))
    pods = [
        build_pod("ns", "a0", "n1", "Running", {"cpu": "1"}, "pg1", {"rack": "0"}),
        build_pod("ns", "a1", "", "Pending", {"cpu": "1"}, "pg1", {"rack": "0"}),
        build_pod("ns", "b0", "", "Pending", {"cpu": "2", "nvidia.com/gpu": "1"}, "pg1", {}),
        build_pod("ns", "c0", "n2", "Succeeded", {"cpu": "1"}, "pg1", {"rack": "1"}),
    ]
    for pod in pods:
        job.add_task(TaskInfo.from_pod(pod))
    if default_sub_job:
        job.default_sub_job().allocated_hyper_node = "hn-1"
    job.allocated_hyper_node = "hn-0"
    job.job_fit_errors = "why"
    return job


def _described(original: JobInfo, copy: JobInfo) -> Any:
    """Every field of the copy, its containers' and tasks' identity against the original's."""
    fields: dict[str, Any] = {}
    for name in JobInfo.__slots__:
        value = getattr(copy, name)
        if name in ("tasks", "task_status_index", "sub_jobs", "pod_group"):
            continue
        fields[name] = repr(value)
    tasks = {uid: (repr(task), task is original.tasks.get(uid)) for uid, task in copy.tasks.items()}
    index = {
        status: [(uid, task is copy.tasks[uid]) for uid, task in bucket.items()]
        for status, bucket in copy.task_status_index.items()
    }
    sub_jobs = {
        uid: (
            sub_job.gid,
            sub_job.min_available,
            sub_job.allocated_hyper_node,
            sorted(sub_job.tasks),
            sub_job.tasks is copy.tasks,
            sub_job is original.sub_jobs.get(uid),
        )
        for uid, sub_job in copy.sub_jobs.items()
    }
    assert copy.pod_group is not None and original.pod_group is not None
    pod_group = (
        repr(copy.pod_group),
        copy.pod_group is original.pod_group,
        copy.pod_group.conditions is original.pod_group.conditions,
    )
    own = [
        getattr(copy, name) is getattr(original, name)
        for name in (
            "tasks",
            "task_status_index",
            "allocated",
            "total_request",
            "role_counts",
            "best_effort_pending",
            "task_min_available",
            "min_sub_jobs",
            "nodes_fit_errors",
            "sub_jobs",
            "task_to_sub_job",
        )
    ]
    shared = [copy.sums_memo is original.sums_memo, copy.memo is original.memo]
    return fields, tasks, index, sub_jobs, pod_group, own, shared


@pytest.mark.parametrize(
    ("policies", "default_sub_job"),
    [
        (None, False),
        (None, True),
        ([build_sub_group_policy("g", ["rack"], sub_group_size=1, min_sub_groups=1)], False),
    ],
    ids=["plain", "default sub-job", "sub-group policy"],
)
def test_the_flat_copy_is_the_reference_copy(
    policies: list[dict[str, Any]] | None, default_sub_job: bool
) -> None:
    original = _job(policies, default_sub_job)
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(job_module, "_FLAT_SNAPSHOT_COPY", False)
        reference = _described(original, original.snapshot_copy())
    flat = _described(original, original.snapshot_copy())
    assert flat == reference
    # The promise itself: own containers, Pending tasks cloned, the others shared.
    _fields, tasks, _index, _sub_jobs, pod_group, own, shared = flat
    assert not any(own) and shared == [True, True]
    assert pod_group[1:] == (False, False)
    assert {uid for uid, (_, same) in tasks.items() if not same} == {"ns-a1", "ns-b0"}
