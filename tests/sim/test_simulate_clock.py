"""`volcano-py simulate`'s simulated clock (docs/simulate.md, "Command line" and "Between
cycles"): ``--start``, ``--until`` (inclusive), the schedule period, jumps over quiet cycles,
objects stamped with simulated time, and bad clock flags refused naming the flag."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.sim.roundtrip import simulate_text
from tests.sim.simclock import job, node, refused, running_pod, simulate, simulate_yaml
from volcano_py.framework.conf_check import load_default_conf
from volcano_py.scheduler.registry import PluginRegistry
from volcano_py.sim import engine
from volcano_py.sim.clock import SimClock, parse_start
from volcano_py.sim.engine import Simulation


def _simulation(objects: list[dict], **kwargs: object) -> Simulation:
    registry = PluginRegistry()
    simulation = Simulation(load_default_conf(registry), registry, **kwargs)  # type: ignore[arg-type]
    simulation.load(objects)
    return simulation


def test_cycle_n_runs_at_start_plus_n_periods(tmp_path: Path) -> None:
    objects = [node(), job("short", {"volcano-py.sim/run-cycles": "3"})]
    listed = simulate_yaml(tmp_path, objects, "--start", "2030-05-01T12:00:00Z", "--cycles", "6")
    pod = listed[("Pod", "short-w-0")]
    # Made at cycle 1, bound at cycle 2, running from cycle 3, finished at cycle 6.
    assert pod["metadata"]["creationTimestamp"] == "2030-05-01T12:00:01Z"
    assert pod["status"]["startTime"] == "2030-05-01T12:00:03Z"
    terminated = pod["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["finishedAt"] == "2030-05-01T12:00:06Z"
    # The job given without a creation time is stamped with the start.
    assert listed[("Job", "short")]["metadata"]["creationTimestamp"] == "2030-05-01T12:00:00Z"


def test_the_schedule_period_spaces_the_cycles(tmp_path: Path) -> None:
    objects = [node(), job("short", {"volcano-py.sim/run-cycles": "1"})]
    listed = simulate_yaml(tmp_path, objects, "--schedule-period", "10s", "--cycles", "3")
    assert listed[("Pod", "short-w-0")]["status"]["startTime"] == "2026-01-01T00:00:30Z"
    report = simulate(tmp_path, objects, "--schedule-period", "10s", "--until", "1m")
    assert report["cycles"] == 6


def test_until_is_inclusive(tmp_path: Path) -> None:
    """Running from cycle 3 (00:00:03) for 57 s: it finishes at exactly 00:01:00."""
    objects = [node(), job("short", {"volcano-py.sim/run-seconds": "57"})]
    assert simulate(tmp_path, objects, "--until", "1m")["pods"]["default/short-w-0"]["phase"] == (
        "Succeeded"
    )
    assert simulate(tmp_path, objects, "--until", "59s")["pods"]["default/short-w-0"]["phase"] == (
        "Running"
    )


def test_a_quiet_day_costs_a_handful_of_cycles() -> None:
    simulation = _simulation([node(), job("long", {"volcano-py.sim/run-seconds": "36000"})])
    simulation.run(until=86_400)
    assert simulation.cycles == 86_400
    assert simulation.cycles_run < 20
    pod = simulation.cluster.get("Pod", "default/long-w-0")
    assert pod is not None and pod["status"]["phase"] == "Succeeded"
    finished = pod["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"]
    assert finished == "2026-01-01T10:00:03Z"


def test_jumps_give_the_same_cluster_as_every_cycle(monkeypatch: pytest.MonkeyPatch) -> None:
    """The jumped-over cycles would have changed nothing: stepping through every cycle ends
    in the same objects."""
    objects = [
        node(),
        job("a", {"volcano-py.sim/run-seconds": "300"}, cpu=6),
        job("b", {"volcano-py.sim/run-seconds": "120"}, cpu=6),
        job("c", {"volcano-py.sim/run-cycles": "40"}, cpu=2, ttlSecondsAfterFinished=100),
    ]
    jumping = _simulation(objects)
    jumping.run(until=900)
    monkeypatch.setattr(Simulation, "may_jump", property(lambda self: False))
    stepping = _simulation(objects)
    stepping.run(until=900)
    assert jumping.cycles_run * 10 < stepping.cycles_run
    assert jumping.cycles == stepping.cycles == 900
    for kind in ("Pod", "Job", "PodGroup"):
        assert dict(jumping.cluster.items(kind)) == dict(stepping.cluster.items(kind)), kind
    assert jumping.forecast.started == stepping.forecast.started


def test_without_cycles_or_until_the_run_ends_when_nothing_is_left() -> None:
    simulation = _simulation([node(), job("short", {"volcano-py.sim/run-seconds": "3600"})])
    simulation.run()
    pod = simulation.cluster.get("Pod", "default/short-w-0")
    assert pod is not None and pod["status"]["phase"] == "Succeeded"
    assert simulation.cycles > 3600 and simulation.cycles_run < 20


def test_a_run_that_never_settles_is_cut_short_with_a_warning(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(engine, "DEFAULT_MAX_RUN_CYCLES", 30)
    deployment = {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {
                    "labels": {"app": "web"},
                    "annotations": {"volcano-py.sim/run-cycles": "1"},
                },
                "spec": {"schedulerName": "volcano", "containers": [{"name": "c"}]},
            },
        },
    }
    code, _out, err = simulate_text(tmp_path, yaml.safe_dump_all([node(), deployment]))
    assert code == 0
    assert "warning: stopped after 30 cycles with the cluster still changing" in err
    code, _out, err = simulate_text(tmp_path, yaml.safe_dump_all([node(), deployment]), "--strict")
    assert code == 2


def test_a_pod_from_a_dump_runs_its_assumed_runtime_from_its_start_time(tmp_path: Path) -> None:
    objects = [
        node(),
        running_pod("old", "n1", "2025-12-31T23:30:00Z"),  # 30 minutes before the start
        running_pod("older", "n1", "2025-12-31T22:00:00Z"),  # past its hour already
        running_pod("annotated", "n1", "2025-12-31T23:30:00Z", {"volcano-py.sim/run-cycles": "2"}),
    ]
    listed = simulate_yaml(tmp_path, objects, "--assume-runtime", "1h", "--until", "2h")

    def finished(name: str) -> str:
        pod = listed[("Pod", name)]
        assert pod["status"]["phase"] == "Succeeded"
        return str(pod["status"]["containerStatuses"][0]["state"]["terminated"]["finishedAt"])

    assert finished("old") == "2026-01-01T00:30:00Z"
    assert finished("older") == "2026-01-01T00:00:01Z"  # at once, in the first cycle
    assert finished("annotated") == "2026-01-01T00:00:03Z"  # its annotation wins
    # Without the flag a pod with no run time runs for ever.
    report = simulate(tmp_path, objects[:2], "--until", "2h")
    assert report["pods"]["default/old"]["phase"] == "Running"


def test_start_parses_rfc3339() -> None:
    assert parse_start("2026-03-01T08:30:00+02:00").isoformat() == "2026-03-01T06:30:00+00:00"
    clock = SimClock(parse_start("2025-12-31T23:59:00Z"), 30.0)
    assert clock.time_of_cycle(2) == -0.0
    assert clock.first_cycle_at_or_after(-30.0) == 1
    assert clock.first_cycle_at_or_after(-29.0) == 2
    assert clock.last_cycle_within(89.0) == 2


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--until", "5x"], "--until: invalid duration '5x'"),
        (["--until=-1h"], "--until: '-1h' ends before --start (2026-01-01T00:00:00Z)"),
        (["--start", "yesterday"], "--start: invalid RFC 3339 time 'yesterday'"),
        (["--start", "2026-01-01T00:00:00"], "--start: invalid RFC 3339 time"),
        (["--start", "2026-02-30T00:00:00Z"], "--start: invalid RFC 3339 time"),
        (["--assume-runtime=-5m"], "--assume-runtime: a duration cannot be negative"),
        (["--assume-runtime", "1d"], "--assume-runtime: invalid duration '1d'"),
        (["--schedule-period", "0s"], "--schedule-period: must be positive"),
        (["--cycles", "3", "--until", "1h"], "--cycles and --until: give one"),
    ],
)
def test_bad_clock_flags_are_refused_naming_the_flag(
    tmp_path: Path, flags: list[str], message: str
) -> None:
    assert message in refused(tmp_path, [node()], *flags)
