"""``simulate`` records no per-job series and no per-task observations (metrics/recording.py):
it serves no /metrics and reports no metric. Each example runs with recording on (as a live
scheduler records) and off (as the command runs): the outputs must be the same text, and the
switch must really keep the series out."""

from __future__ import annotations

import contextlib
from pathlib import Path

import pytest

from volcano_py import metrics
from volcano_py.cli import simulate as simulate_command
from volcano_py.cli.main import main
from volcano_py.metrics.recording import RECORDING, recording_off

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
# Jobs that place tasks, jobs left unschedulable, reclaim and preemption (evictions).
CASES = [
    "gang-deadlock.yaml",
    "three-queues.yaml",
    "seed002-reclaim-capacity.yaml",
    "seed002-reclaim-proportion.yaml",
    "gang-preempt.yaml",
]
PER_JOB_FAMILIES = (
    metrics.JOB_SHARE,
    metrics.E2E_JOB_SCHEDULING_START_TIME,
    metrics.E2E_JOB_SCHEDULING_DURATION,
    metrics.E2E_JOB_SCHEDULING_LAST_TIME,
    metrics.UNSCHEDULE_TASK_COUNT,
)


def _series() -> int:
    return sum(len(next(iter(family.collect())).samples) for family in PER_JOB_FAMILIES)


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, int]:
    for family in PER_JOB_FAMILIES:
        family.clear()
    assert main(["simulate", *args]) == 0
    return capsys.readouterr().out, _series()


@pytest.mark.parametrize("example", CASES)
@pytest.mark.parametrize("output", ["json", "yaml", "table"])
def test_the_output_is_the_same_with_recording_on(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, example: str, output: str
) -> None:
    args = (str(EXAMPLES / example), "--format", output)
    as_run, series_off = _run(capsys, *args)
    monkeypatch.setattr(simulate_command, "recording_off", contextlib.nullcontext)
    recorded, series_on = _run(capsys, *args)
    assert as_run == recorded
    assert series_off == 0
    assert series_on > 0  # the comparison above did run the recording code


def test_recording_off_restores_the_previous_state() -> None:
    assert RECORDING.on
    with recording_off():
        assert not RECORDING.on
        with recording_off():
            assert not RECORDING.on
        assert not RECORDING.on
    assert RECORDING.on
    with contextlib.suppress(RuntimeError), recording_off():
        raise RuntimeError
    assert RECORDING.on
