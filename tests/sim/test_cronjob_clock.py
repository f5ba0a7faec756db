"""Volcano CronJobs in `volcano-py simulate` on the simulated clock: schedules (with
``timeZone``), ``startingDeadlineSeconds``, the concurrency policies and the history limits,
as ``pkg/controllers/cronjob`` runs them (the controller itself is ``controllers/cronjob.py``,
tested against upstream's tables in tests/controllers)."""

from __future__ import annotations

import copy
import datetime as dt
from pathlib import Path
from typing import Any

import yaml

from tests.sim.simclock import node, simulate, simulate_yaml

EXAMPLE = Path(__file__).resolve().parents[1] / "models/fixtures/examples/cronjob.yaml"


def _cronjob(run_seconds: int | None = 600, **spec: Any) -> dict[str, Any]:
    """The fixture's CronJob (every 15 minutes, Forbid, startingDeadlineSeconds 120, keeps 4
    successful and 2 failed jobs) with a 1-CPU eval task running ``run_seconds``."""
    cronjob: dict[str, Any] = copy.deepcopy(yaml.safe_load(EXAMPLE.read_text()))
    template = cronjob["spec"]["jobTemplate"]["spec"]["tasks"][0]["template"]
    template["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "1"}}
    if run_seconds is not None:
        template["metadata"] = {"annotations": {"volcano-py.sim/run-seconds": str(run_seconds)}}
    for key, value in spec.items():
        if value is None:
            cronjob["spec"].pop(key, None)
        else:
            cronjob["spec"][key] = value
    return cronjob


def _minutes(moment: str) -> int:
    return int(dt.datetime.fromisoformat(moment).timestamp()) // 60


def _jobs(report: dict[str, Any]) -> dict[str, str]:
    return {key: job["phase"] for key, job in report["jobs"].items()}


def test_schedules_run_on_the_clock_and_until_is_inclusive(tmp_path: Path) -> None:
    report = simulate(tmp_path, [node(), _cronjob()], "--until", "1h")
    names = {f"default/nightly-eval-{_minutes(f'2026-01-01T{t}:00+00:00')}" for t in
             ("00:15", "00:30", "00:45", "01:00")}  # fmt: skip
    assert set(report["jobs"]) == names
    assert report["jobs"][f"default/nightly-eval-{_minutes('2026-01-01T01:00:00+00:00')}"][
        "phase"
    ] in ("Pending", "Inqueue")
    starts = report["starts"]
    assert starts[f"default/nightly-eval-{_minutes('2026-01-01T00:15:00+00:00')}"] == (
        "2026-01-01T00:15:02Z"
    )


def test_a_day_of_schedules_costs_its_schedule_times() -> None:
    from volcano_py.framework.conf_check import load_default_conf
    from volcano_py.scheduler.registry import PluginRegistry
    from volcano_py.sim.engine import Simulation

    registry = PluginRegistry()
    simulation = Simulation(load_default_conf(registry), registry)
    simulation.load([node(), _cronjob(run_seconds=60, schedule="0 * * * *")])
    simulation.run(until=86_400)
    # 24 schedule times of a few cycles each, not 86,400 cycles.
    assert simulation.cycles == 86_400
    assert simulation.cycles_run < 24 * 8


def test_time_zone_decides_the_schedule(tmp_path: Path) -> None:
    """09:00 in Tokyo is midnight UTC: the first run is a day after the start."""
    cronjob = _cronjob(schedule="0 9 * * *", timeZone="Asia/Tokyo")
    listed = simulate_yaml(tmp_path, [node(), cronjob], "--until", "24h")
    (job,) = [item for (kind, _name), item in listed.items() if kind == "Job"]
    assert job["metadata"]["name"] == f"nightly-eval-{_minutes('2026-01-02T00:00:00+00:00')}"
    assert job["metadata"]["annotations"]["volcano.sh/cronjob-scheduled-timestamp"] == (
        "2026-01-02T09:00:00+09:00"
    )
    assert listed[("CronJob", "nightly-eval")]["status"]["lastScheduleTime"] == (
        "2026-01-02T00:00:00Z"
    )


def test_starting_deadline_skips_a_schedule_missed_before_the_start(tmp_path: Path) -> None:
    """Made at 23:00 for 23:30 daily; the simulation starts at 00:00, 30 minutes late."""
    cronjob = _cronjob(schedule="30 23 * * *", startingDeadlineSeconds=600)
    cronjob["metadata"]["creationTimestamp"] = "2025-12-31T23:00:00Z"
    assert simulate(tmp_path, [node(), cronjob], "--until", "1m")["jobs"] == {}
    cronjob["spec"]["startingDeadlineSeconds"] = 3600
    report = simulate(tmp_path, [node(), cronjob], "--until", "1m")
    assert list(report["jobs"]) == [f"default/nightly-eval-{_minutes('2025-12-31T23:30:00+00:00')}"]


def test_forbid_skips_a_run_while_one_is_active(tmp_path: Path) -> None:
    """Runs of 20 minutes every 15: 00:30 is skipped (the 00:15 run is active, and 5 minutes
    later it is past the 120 s starting deadline), 00:45 runs, 01:00 is skipped."""
    report = simulate(tmp_path, [node(), _cronjob(run_seconds=1200)], "--until", "1h")
    assert set(report["jobs"]) == {
        f"default/nightly-eval-{_minutes('2026-01-01T00:15:00+00:00')}",
        f"default/nightly-eval-{_minutes('2026-01-01T00:45:00+00:00')}",
    }
    allowed = _cronjob(run_seconds=1200, concurrencyPolicy="Allow")
    assert len(simulate(tmp_path, [node(), allowed], "--until", "1h")["jobs"]) == 4


def test_replace_deletes_the_active_run(tmp_path: Path) -> None:
    report = simulate(
        tmp_path, [node(), _cronjob(run_seconds=1200, concurrencyPolicy="Replace")], "--until", "1h"
    )
    # Each run is replaced by the next before it ends; only the last is left.
    assert list(report["jobs"]) == [f"default/nightly-eval-{_minutes('2026-01-01T01:00:00+00:00')}"]


def test_history_limits_delete_old_jobs(tmp_path: Path) -> None:
    cronjob = _cronjob(run_seconds=60, successfulJobsHistoryLimit=1)
    report = simulate(tmp_path, [node(), cronjob], "--until", "61m")
    assert _jobs(report) == {
        f"default/nightly-eval-{_minutes('2026-01-01T00:45:00+00:00')}": "Completed",
        f"default/nightly-eval-{_minutes('2026-01-01T01:00:00+00:00')}": "Running",
    }


def test_failed_history_defaults_to_one(tmp_path: Path) -> None:
    """``failedJobsHistoryLimit`` unset: the CRD's default, 1."""
    cronjob = _cronjob(run_seconds=None, failedJobsHistoryLimit=None, concurrencyPolicy="Allow")
    template = cronjob["spec"]["jobTemplate"]["spec"]["tasks"][0]["template"]
    template["metadata"] = {
        "annotations": {"volcano-py.sim/run-cycles": "1", "volcano-py.sim/exit-code": "1"}
    }
    template["spec"]["restartPolicy"] = "Never"
    cronjob["spec"]["jobTemplate"]["spec"]["policies"] = [
        {"event": "PodFailed", "action": "RestartJob"}
    ]
    cronjob["spec"]["jobTemplate"]["spec"]["maxRetry"] = 1
    report = simulate(tmp_path, [node(), cronjob], "--until", "50m")
    # Each run fails within seconds; only the last failed job is kept.
    assert _jobs(report) == {
        f"default/nightly-eval-{_minutes('2026-01-01T00:45:00+00:00')}": "Failed"
    }


# ---------------------------------------------------------------------- batch/v1 CronJob


def _batch_cronjob(**spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "hello", "namespace": "default"},
        "spec": {
            "schedule": "*/10 * * * *",
            "jobTemplate": {
                "spec": {
                    "template": {
                        "metadata": {"annotations": {"volcano-py.sim/run-seconds": "120"}},
                        "spec": {
                            "schedulerName": "volcano",
                            "restartPolicy": "Never",
                            "containers": [{"name": "c", "resources": {"requests": {"cpu": "1"}}}],
                        },
                    }
                }
            },
            **spec,
        },
    }


def test_a_batch_cronjob_makes_batch_jobs_on_the_clock(tmp_path: Path) -> None:
    """Every 10 minutes a batch/v1 Job ``hello-<minutes>`` (its pod runs 2 minutes); the
    default history keeps the last 3 successful jobs, their pods deleted with the others."""
    listed = simulate_yaml(tmp_path, [node(), _batch_cronjob()], "--until", "1h")
    jobs = sorted(name for kind, name in listed if kind == "Job")
    expected = [f"hello-{_minutes(f'2026-01-01T00:{m}:00+00:00')}" for m in ("30", "40", "50")]
    assert jobs == [*expected, f"hello-{_minutes('2026-01-01T01:00:00+00:00')}"]
    job = listed[("Job", expected[0])]
    assert job["apiVersion"] == "batch/v1"
    assert job["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"] == (
        "2026-01-01T00:30:00Z"
    )
    assert job["metadata"]["ownerReferences"][0]["apiVersion"] == "batch/v1"
    assert [c["type"] for c in job["status"]["conditions"]] == ["SuccessCriteriaMet", "Complete"]
    cronjob = listed[("CronJob", "hello")]
    assert cronjob["status"]["lastScheduleTime"] == "2026-01-01T01:00:00Z"
    assert cronjob["status"]["active"][0]["apiVersion"] == "batch/v1"
    pods = [name for kind, name in listed if kind == "Pod"]
    assert len(pods) == 4 and all(name.startswith(tuple(jobs)) for name in pods)


def test_a_batch_cronjob_and_a_volcano_one_of_one_name_are_two(tmp_path: Path) -> None:
    volcano = _cronjob(run_seconds=60)
    volcano["metadata"]["name"] = "hello"
    report = simulate(tmp_path, [node(), _batch_cronjob(), volcano], "--until", "15m")
    assert list(report["jobs"]) == [f"default/hello-{_minutes('2026-01-01T00:15:00+00:00')}"]
    batch_pods = f"default/hello-{_minutes('2026-01-01T00:10:00+00:00')}-"
    assert len([key for key in report["pods"] if key.startswith(batch_pods)]) == 1


def test_a_bad_batch_cronjob_is_refused_naming_the_field(tmp_path: Path) -> None:
    from tests.sim.simclock import refused

    err = refused(tmp_path, [node(), _batch_cronjob(schedule="*/10 * *")])
    assert "CronJob default/hello: spec.schedule:" in err
    bad_template = _batch_cronjob()
    template = bad_template["spec"]["jobTemplate"]["spec"]["template"]
    template["spec"]["restartPolicy"] = "Always"
    err = refused(tmp_path, [node(), bad_template])
    assert (
        "CronJob default/hello: spec.jobTemplate.spec.template.spec.restartPolicy:"
        ' Unsupported value: "Always"'
    ) in err
    template["spec"]["restartPolicy"] = "Never"
    template["metadata"]["annotations"]["volcano-py.sim/run-seconds"] = "-1"
    err = refused(tmp_path, [node(), bad_template])
    assert (
        "CronJob default/hello: spec.jobTemplate.spec.template.metadata.annotations."
        "volcano-py.sim/run-seconds: a run time cannot be negative"
    ) in err
