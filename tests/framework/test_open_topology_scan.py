"""Session open's scan for jobs with a network topology (``session._TOPOLOGY_SCAN_IN_C``,
issue 14: read in C, only jobs with sub-jobs asked about theirs) answers as asking every job
``contains_network_topology`` does."""

from __future__ import annotations

import pytest

from volcano_py.api.job import JobInfo
from volcano_py.api.sub_job import SubJobInfo
from volcano_py.framework import session as session_module


def _job(uid: str, topology: object, sub_job_topology: object | None = None) -> JobInfo:
    job = JobInfo(uid=uid)
    job.network_topology = topology  # type: ignore[assignment]
    if sub_job_topology is not None:
        sub_job = SubJobInfo.for_policy(uid, None, (), gid=uid, uid=f"{uid}/s")
        sub_job.network_topology = sub_job_topology  # type: ignore[assignment]
        job.sub_jobs[sub_job.uid] = sub_job
    return job


CASES = {
    "none": [_job("a", None), _job("b", None)],
    "empty": [],
    "one with a topology": [_job("a", None), _job("b", {"mode": "hard", "highestTierAllowed": 1})],
    "an empty topology is one": [_job("a", {})],
    "a sub-job's": [_job("a", None), _job("b", None, {"mode": "soft"})],
    "sub-jobs without": [_job("a", None, {}), _job("b", None)],
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_the_scan_in_c_answers_as_asking_each_job(case: str) -> None:
    jobs = {job.uid: job for job in CASES[case]}
    expected = any(job.contains_network_topology() for job in jobs.values())
    with pytest.MonkeyPatch.context() as monkeypatch:
        monkeypatch.setattr(session_module, "_TOPOLOGY_SCAN_IN_C", False)
        assert session_module._any_network_topology(jobs) is expected
    assert session_module._any_network_topology(jobs) is expected
