"""User guide ``how_to_use_job_ttl``: ``ttlSecondsAfterFinished`` deletes a finished job (and
its pods) that many seconds after it finished; unset, the job stays. The guide's job (made
with ``generateName``, in queue ``testing``) completes through ``TaskCompleted ->
CompleteJob``. Simulate runs on until the TTL is due (its clock jumps to it), so the guide's
600 s deletes the job as 0 and 5 do; with ``--until 5m`` it is still there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.guides.guide_sim import node, simulate, task, vcjob, vqueue


def _job(ttl: int | None) -> dict[str, Any]:
    extra = {} if ttl is None else {"ttlSecondsAfterFinished": ttl}
    job = vcjob(
        "test-job",
        [
            task(
                "sleeper",
                1,
                annotations={"volcano-py.sim/run-cycles": "2"},
                policies=[{"event": "TaskCompleted", "action": "CompleteJob"}],
            )
        ],
        minAvailable=1,
        queue="testing",
        policies=[{"event": "PodEvicted", "action": "RestartJob"}],
        **extra,
    )
    job["metadata"] = {"generateName": "test-job-", "namespace": "default"}
    return job


@pytest.mark.parametrize(("ttl", "kept"), [(None, True), (0, False), (5, False), (600, False)])
def test_finished_job_is_deleted_after_its_ttl(tmp_path: Path, ttl: int | None, kept: bool) -> None:
    report, objects, _ = simulate(tmp_path, [node("n1"), vqueue("testing", weight=1), _job(ttl)])
    jobs = [key for key in objects if key[0] == "Job"]
    pods = [key for key in objects if key[0] == "Pod"]
    if kept:
        (job_key,) = jobs
        assert job_key[2].startswith("test-job-")
        assert report["jobs"][f"default/{job_key[2]}"]["phase"] == "Completed"
        assert len(pods) == 1
    else:
        assert jobs == [] and pods == []


def test_a_job_whose_ttl_is_not_yet_due_stays(tmp_path: Path) -> None:
    """The guide's 600 s, with only five simulated minutes: the job is still there."""
    report, objects, _ = simulate(
        tmp_path, [node("n1"), vqueue("testing", weight=1), _job(600)], "--until", "5m"
    )
    (job_key,) = [key for key in objects if key[0] == "Job"]
    assert report["jobs"][f"default/{job_key[2]}"]["phase"] == "Completed"
