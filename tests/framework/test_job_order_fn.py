"""``Session.job_order_fn`` walks the job-order plugins itself instead of through
``job_compare`` (a job queue asks it a few hundred thousand times a 10k-job session), and
``JobInfo.is_ready`` counts in one pass. Both must answer what the composed forms answer:
each case runs both ways and compares, verdicts that ``int`` truncates to 0 included."""

from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.framework.fake_plugins import open_fake_session, plugin
from volcano_py.api.job import JobInfo
from volcano_py.api.types import TaskStatus
from volcano_py.framework.session import _created_first

VERDICTS = st.sampled_from([0, 1, -1, 2, -3, 0.5, -0.5, 0.0, True, False])


def _job(uid: str, created: str) -> JobInfo:
    return JobInfo(uid=uid, creation_timestamp=created)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(VERDICTS, min_size=0, max_size=3), min_size=1, max_size=2),
    st.sampled_from(["a", "b"]),
    st.sampled_from(["2024-01-01T00:00:00Z", "2024-01-02T00:00:00Z"]),
)
def test_job_order_fn_answers_what_job_compare_and_the_fallback_answer(
    tiers: list[list[object]], uid: str, created: str
) -> None:
    specs = [
        [
            plugin(f"p{t}{i}", "enableJobOrder", job_order=lambda _l, _r, v=verdict: v)
            for i, verdict in enumerate(tier)
        ]
        for t, tier in enumerate(tiers)
    ]
    ssn = open_fake_session(specs)
    left, right = _job(uid, created), _job("a", "2024-01-01T00:00:00Z")
    compared = ssn.job_compare(left, right)
    expected = compared < 0 if compared != 0 else _created_first(left, right)
    assert ssn.job_order_fn(left, right) is expected


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(st.sampled_from(list(TaskStatus)), st.integers(0, 3)),
    st.dictionaries(st.sampled_from(["", "w", "ps"]), st.integers(-1, 3)),
    st.integers(0, 8),
)
def test_is_ready_counts_what_its_parts_count(
    by_status: dict[TaskStatus, int], best_effort: dict[str, int], min_available: int
) -> None:
    job = JobInfo(uid="j", min_available=min_available)
    job.task_status_index = {
        status: {f"{status.name}-{i}": None for i in range(count)}  # type: ignore[misc]
        for status, count in by_status.items()
    }
    job.best_effort_pending = Counter(best_effort)
    expected = job.ready_task_num() + job.pending_best_effort_task_num() >= min_available
    assert job.is_ready() is expected
