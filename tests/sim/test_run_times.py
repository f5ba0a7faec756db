"""Pod run times in `volcano-py simulate` (docs/simulate.md, "Between cycles"): how pods end
(``run-cycles``, ``run-seconds``, ``exit-code``, ``evict-after-cycles``,
``activeDeadlineSeconds``), annotations on a Volcano Job's task template applying to its pods,
and the job policies they exercise offline. Bad values stop the run naming the object and
the annotation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.sim.simclock import job, node, refused, running_pod, simulate, simulate_yaml


def _terminated(pod: dict[str, Any]) -> dict[str, Any]:
    state: dict[str, Any] = pod["status"]["containerStatuses"][0]["state"]
    return dict(state["terminated"])


def test_exit_code_fails_the_pod_with_that_code(tmp_path: Path) -> None:
    objects = [
        node(),
        job("ok", {"volcano-py.sim/run-cycles": "2", "volcano-py.sim/exit-code": "0"}),
        job("bad", {"volcano-py.sim/run-seconds": "5", "volcano-py.sim/exit-code": "3"}),
    ]
    listed = simulate_yaml(tmp_path, objects, "--until", "1m")
    ok, bad = listed[("Pod", "ok-w-0")], listed[("Pod", "bad-w-0")]
    assert ok["status"]["phase"] == "Succeeded"
    assert _terminated(ok)["exitCode"] == 0 and _terminated(ok)["reason"] == "Completed"
    assert bad["status"]["phase"] == "Failed"
    assert _terminated(bad)["exitCode"] == 3 and _terminated(bad)["reason"] == "Error"
    assert _terminated(bad)["finishedAt"] == "2026-01-01T00:00:08Z"  # started at :03


def test_active_deadline_seconds_fails_the_pod_as_the_kubelet_does(tmp_path: Path) -> None:
    capped = job("capped", {"volcano-py.sim/run-seconds": "600"})
    capped["spec"]["tasks"][0]["template"]["spec"]["activeDeadlineSeconds"] = 30
    listed = simulate_yaml(tmp_path, [node(), capped], "--until", "1h")
    pod = listed[("Pod", "capped-w-0")]
    assert pod["status"]["phase"] == "Failed"
    assert pod["status"]["reason"] == "DeadlineExceeded"
    assert pod["status"]["message"] == (
        "Pod was active on the node longer than the specified deadline"
    )
    assert _terminated(pod)["finishedAt"] == "2026-01-01T00:00:33Z"
    # A run shorter than the deadline ends first.
    capped["spec"]["tasks"][0]["template"]["spec"]["activeDeadlineSeconds"] = 3600
    listed = simulate_yaml(tmp_path, [node(), capped], "--until", "1h")
    assert listed[("Pod", "capped-w-0")]["status"]["phase"] == "Succeeded"


def test_a_dump_pod_past_its_deadline_fails_at_once(tmp_path: Path) -> None:
    pod = running_pod("late", "n1", "2025-12-31T23:00:00Z")
    pod["spec"]["activeDeadlineSeconds"] = 600
    report = simulate(tmp_path, [node(), pod], "--until", "10s")
    assert report["pods"]["default/late"]["phase"] == "Failed"


def test_pod_failed_restarts_the_job_until_max_retry(tmp_path: Path) -> None:
    failing = job(
        "flaky",
        {"volcano-py.sim/run-cycles": "2", "volcano-py.sim/exit-code": "1"},
        policies=[{"event": "PodFailed", "action": "RestartJob"}],
        maxRetry=2,
    )
    report = simulate(tmp_path, [node(), failing], "--until", "5m")
    assert report["jobs"]["default/flaky"] == {"phase": "Failed", "retryCount": 2}


def test_task_completed_completes_the_job(tmp_path: Path) -> None:
    """A launcher that ends while its workers would run for ever: TaskCompleted ->
    CompleteJob ends the job (and its workers)."""
    launcher_and_workers = job("mpi", {"volcano-py.sim/run-cycles": "3"})
    worker = {
        "name": "worker",
        "replicas": 2,
        "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c"}]}},
    }
    launcher_and_workers["spec"]["tasks"][0]["policies"] = [
        {"event": "TaskCompleted", "action": "CompleteJob"}
    ]
    launcher_and_workers["spec"]["tasks"].append(worker)
    launcher_and_workers["spec"]["minAvailable"] = 3
    report = simulate(tmp_path, [node(), launcher_and_workers], "--until", "1m")
    assert report["jobs"]["default/mpi"]["phase"] == "Completed"
    assert report["pods"]["default/mpi-worker-0"]["phase"] in ("Deleted", "Succeeded", "Failed")


def test_an_api_eviction_is_seen_as_pod_evicted(tmp_path: Path) -> None:
    evicted = job(
        "drained",
        {"volcano-py.sim/evict-after-cycles": "2"},
        policies=[{"event": "PodEvicted", "action": "AbortJob"}],
    )
    report = simulate(tmp_path, [node(), evicted], "--until", "1m")
    assert report["evictions"] == ["default/drained-w-0"]
    assert report["jobs"]["default/drained"]["phase"] == "Aborted"
    assert report["pods"]["default/drained-w-0"]["phase"] == "Deleted"


def test_an_evicted_pod_is_recreated_under_restart_job(tmp_path: Path) -> None:
    evicted = job(
        "again",
        {"volcano-py.sim/evict-after-cycles": "2"},
        policies=[{"event": "PodEvicted", "action": "RestartJob"}],
        maxRetry=2,
    )
    report = simulate(tmp_path, [node(), evicted], "--until", "1m")
    # Restarted once (a new pod of the same name, evicted in turn), then out of retries.
    assert report["evictions"] == ["default/again-w-0", "default/again-w-0"]
    assert report["jobs"]["default/again"] == {"phase": "Failed", "retryCount": 2}


def test_a_bare_pod_is_evicted_and_gone(tmp_path: Path) -> None:
    pod = running_pod("web", "n1", None, {"volcano-py.sim/evict-after-cycles": "1"})
    listed = simulate_yaml(tmp_path, [node(), pod], "--until", "10s")
    assert ("Pod", "web") not in listed


@pytest.mark.parametrize(
    ("annotation", "value", "problem"),
    [
        ("run-seconds", "-5", "a run time cannot be negative"),
        ("run-cycles", "two", "expected an integer, got 'two'"),
        ("run-seconds", "1.5", "expected an integer, got '1.5'"),
        ("evict-after-cycles", "-1", "a run time cannot be negative"),
        ("exit-code", "x", "expected an integer, got 'x'"),
        ("exit-code", "300", "expected an exit code 0-255"),
    ],
)
def test_bad_run_time_annotations_are_refused_naming_them(
    tmp_path: Path, annotation: str, value: str, problem: str
) -> None:
    annotations = {f"volcano-py.sim/{annotation}": value}
    err = refused(tmp_path, [node(), job("j", annotations)])
    assert (
        f"Job default/j: spec.tasks[0].template.metadata.annotations."
        f"volcano-py.sim/{annotation}: {problem}"
    ) in err
    err = refused(tmp_path, [node(), running_pod("p", "n1", None, annotations)])
    assert f"Pod default/p: metadata.annotations.volcano-py.sim/{annotation}: {problem}" in err


def test_a_negative_active_deadline_is_refused(tmp_path: Path) -> None:
    pod = running_pod("p", "n1", None)
    pod["spec"]["activeDeadlineSeconds"] = -3
    err = refused(tmp_path, [node(), pod])
    assert "Pod default/p: spec.activeDeadlineSeconds: must be a positive integer" in err
